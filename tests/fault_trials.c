/*
 * fault_trials.c - the hashing structures' trials of fault_trials.h (the pipelines' are in
 * fault_trials_pipelines.c). Each owns its state (a heap block made by setup, freed by teardown),
 * so a walk can count what an operation leaks from the live allocations before the setup and
 * after the teardown.
 */
#include <stdlib.h>
#include <string.h>

#include "fault_trials.h"
#include "ghm_dist_map.h"
#include "ghm_dynmap.h"
#include "ghm_index.h"
#include "ghm_multimap.h"
#include "ghm_set.h"
#include "ghm_sorted.h"
#include "test_support.h"

enum { NA = 3000, NB = 2000, PER_KEY = 4 };

GhmContext *fault_ctx;
int fault_error = GHM_ERR_NOMEM;
GhmMapScheme fault_map_scheme;

static void keys_of(uint32_t *k, size_t n, uint32_t first)
{
    for (size_t i = 0; i < n; i++)
        k[i] = first + (uint32_t)(i * 7919u);
}

/* --- map: rebuilt from content A to content B, then B's keys found ------------------------ */

typedef struct MapState {
    GhmMap *map;
    uint32_t ka[NA], kb[NB], vb[NB], rb[NB];
} MapState;

static void *map_setup(void)
{
    MapState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    GhmMapOptions o = ghm_map_defaults();
    o.scheme = fault_map_scheme;
    ck_assert_int_eq(ghm_map_create(fault_ctx, &o, &s->map), GHM_OK);
    uint32_t va[NA];
    keys_of(s->ka, NA, 1);
    for (size_t i = 0; i < NA; i++)
        va[i] = (uint32_t)i;
    keys_of(s->kb, NB, 100000001u);
    for (size_t i = 0; i < NB; i++)
        s->vb[i] = (uint32_t)(3 * i + 1);
    ck_assert_int_eq(ghm_map_build(s->map, s->ka, va, NA), GHM_OK);
    return s;
}

static int map_run(void *p)
{
    MapState *s = p;
    memset(s->rb, 0, sizeof s->rb);
    int ret = ghm_map_build(s->map, s->kb, s->vb, NB);
    return ret < 0 ? ret : ghm_map_find(s->map, s->kb, NB, s->rb);
}

/* Which content a map's answers for A's keys (ra; A maps key i to i) and B's keys (rb; B's
 * values vb) show: B (1), A (0) or nothing (-1); fails on a mixture. */
static int content_of(const uint32_t *ra, const uint32_t *rb, const uint32_t *vb)
{
    int a = 1, b = 1, none = 1;
    size_t a_as_a = 0, b_as_b = 0, b_other = 0;
    for (size_t i = 0; i < NA; i++) {
        a &= ra[i] == i, b &= ra[i] == GHM_NOT_FOUND, none &= ra[i] == GHM_NOT_FOUND;
        a_as_a += ra[i] == i;
    }
    for (size_t i = 0; i < NB; i++) {
        a &= rb[i] == GHM_NOT_FOUND, b &= rb[i] == vb[i], none &= rb[i] == GHM_NOT_FOUND;
        b_as_b += rb[i] == vb[i];
        b_other += rb[i] != vb[i] && rb[i] != GHM_NOT_FOUND;
    }
    ck_assert_msg(a || b || none,
                  "the map answers neither its old content, the new one nor empty (old keys "
                  "found: %zu of %d; new keys with their values: %zu of %d, with others: %zu)",
                  a_as_a, NA, b_as_b, NB, b_other);
    return b ? 1 : a ? 0 : -1;
}

static int map_content(MapState *s)
{
    uint32_t ra[NA], rb[NB];
    ck_assert_int_eq(ghm_map_find(s->map, s->ka, NA, ra), GHM_OK);
    ck_assert_int_eq(ghm_map_find(s->map, s->kb, NB, rb), GHM_OK);
    return content_of(ra, rb, s->vb);
}

static void map_check(void *p, int ret)
{
    MapState *s = p;
    int content = map_content(s);
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_int_eq(map_run(s), GHM_OK); /* the same call without the fault */
        content = map_content(s);
    }
    ck_assert_int_eq(content, 1);
    CHECK_EACH(NB, s->rb[i] == s->vb[i]);
}

static void map_teardown(void *p)
{
    MapState *s = p;
    ghm_map_free(&s->map);
    free(s);
}

/* --- split map: two parts (fault_ctx and a second context like it), rebuilt from content A to
 * content B from uneven shards, then B's keys found ------------------------------------------ */

typedef struct DistState {
    GhmContext *other;
    GhmDistMap *dm;
    int ranked; /* one rank of a ranked map: a shard of every key */
    uint32_t ka[NA], va[NA], kb[NB], vb[NB], rb[NB];
} DistState;

/* The host messages of a run with one rank: each a copy to itself. */
static int self_all_to_all(void *user, const uint64_t *send, uint64_t *recv)
{
    (void)user;
    recv[0] = send[0];
    return 0;
}

static int self_all_to_all_v(void *user, const uint32_t *send, const size_t *send_n,
                             const size_t *send_at, uint32_t *recv, const size_t *recv_n,
                             const size_t *recv_at)
{
    (void)user, (void)send_n;
    if (recv_n[0])
        memcpy(recv + recv_at[0], send + send_at[0], recv_n[0] * 4);
    return 0;
}

static int self_broadcast(void *user, void *buf, size_t bytes, int root)
{
    (void)user, (void)buf, (void)bytes, (void)root;
    return 0;
}

static void *dist_setup_with(int ranked)
{
    DistState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->ranked = ranked;
    GhmMapOptions mo = ghm_map_defaults();
    if (ranked) {
        GhmDistRanks dr = {0, 1, NULL, self_all_to_all, self_all_to_all_v, self_broadcast};
        ck_assert_int_eq(ghm_dist_map_create_ranked(fault_ctx, &dr, &mo, &s->dm), GHM_OK);
    } else {
        s->other = ghm_test_context_opt(ghm_context_options(fault_ctx));
        GhmContext *ctx[2] = {fault_ctx, s->other};
        ck_assert_int_eq(ghm_dist_map_create(ctx, 2, &mo, &s->dm), GHM_OK);
    }
    keys_of(s->ka, NA, 1);
    keys_of(s->kb, NB, 100000001u);
    for (size_t i = 0; i < NA; i++)
        s->va[i] = (uint32_t)i;
    for (size_t i = 0; i < NB; i++)
        s->vb[i] = (uint32_t)(3 * i + 1);
    const uint32_t *k[2] = {s->ka, s->ka + NA / 3}, *v[2] = {s->va, s->va + NA / 3};
    size_t n[2] = {NA / 3, NA - NA / 3};
    if (ranked)
        n[0] = NA;
    ck_assert_int_eq(ghm_dist_map_build(s->dm, k, v, n), GHM_OK);
    return s;
}

static void *dist_setup(void) { return dist_setup_with(0); }
static void *ranked_setup(void) { return dist_setup_with(1); }

static int dist_run(void *p)
{
    DistState *s = p;
    memset(s->rb, 0, sizeof s->rb);
    const uint32_t *k[2] = {s->kb, s->kb + NB / 4}, *v[2] = {s->vb, s->vb + NB / 4};
    size_t n[2] = {NB / 4, NB - NB / 4};
    uint32_t *o[2] = {s->rb, s->rb + NB / 4};
    if (s->ranked) /* the one rank's shard: every key */
        n[0] = NB;
    int ret = ghm_dist_map_build(s->dm, k, v, n);
    return ret < 0 ? ret : ghm_dist_map_find(s->dm, k, n, o);
}

static int dist_content(DistState *s)
{
    uint32_t ra[NA], rb[NB];
    const uint32_t *qa[2] = {s->ka, NULL}, *qb[2] = {s->kb, NULL};
    size_t na[2] = {NA, 0}, nb[2] = {NB, 0};
    uint32_t *oa[2] = {ra, NULL}, *ob[2] = {rb, NULL};
    ck_assert_int_eq(ghm_dist_map_find(s->dm, qa, na, oa), GHM_OK);
    ck_assert_int_eq(ghm_dist_map_find(s->dm, qb, nb, ob), GHM_OK);
    return content_of(ra, rb, s->vb);
}

static void dist_check(void *p, int ret)
{
    DistState *s = p;
    int content = dist_content(s);
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_int_eq(dist_run(s), GHM_OK); /* the same call without the fault */
        content = dist_content(s);
    }
    ck_assert_int_eq(content, 1);
    CHECK_EACH(NB, s->rb[i] == s->vb[i]);
}

static void dist_teardown(void *p)
{
    DistState *s = p;
    ghm_dist_map_free(&s->dm);
    ghm_context_free(&s->other);
    free(s);
}

/* --- multimap: rebuilt from half the pairs to all, then every key's values retrieved ------- */

typedef struct MultiState {
    GhmMultimap *mm;
    uint32_t k[NB], v[NB], offsets[NB + 1], out[NB * PER_KEY];
    size_t total;
} MultiState;

static void *multi_setup(void)
{
    MultiState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ghm_multimap_create(fault_ctx, 0.0, &s->mm), GHM_OK);
    for (size_t i = 0; i < NB; i++) /* NB / PER_KEY keys, PER_KEY values each */
        s->k[i] = (uint32_t)(i % (NB / PER_KEY)) * 13u + 5u, s->v[i] = (uint32_t)i;
    ck_assert_int_eq(ghm_multimap_build(s->mm, s->k, s->v, NB / 2), GHM_OK);
    return s;
}

static int multi_run(void *p)
{
    MultiState *s = p;
    s->total = 0;
    int ret = ghm_multimap_build(s->mm, s->k, s->v, NB);
    return ret < 0 ? ret
                   : ghm_multimap_retrieve(s->mm, s->k, NB, s->offsets, s->out, NB * PER_KEY,
                                           &s->total);
}

/* Every key's PER_KEY values, each a value of that key. */
static void multi_answers(MultiState *s)
{
    ck_assert_uint_eq(s->total, NB * PER_KEY);
    CHECK_EACH(NB, s->offsets[i + 1] - s->offsets[i] == PER_KEY);
    CHECK_EACH(NB * PER_KEY, s->out[i] < NB && s->k[s->out[i]] == s->k[i / PER_KEY]);
}

static void multi_check(void *p, int ret)
{
    MultiState *s = p;
    uint32_t first[NB], count[NB];
    size_t nv = 0;
    const uint32_t *values = NULL;
    /* after a failure: the old content (NB / 2 pairs) or none, whole: counts and values agree */
    ck_assert_int_eq(ghm_multimap_find(s->mm, s->k, NB, first, count), GHM_OK);
    ck_assert_int_eq(ghm_multimap_values(s->mm, &values, &nv), GHM_OK);
    ck_assert(nv == NB || nv == NB / 2 || nv == 0);
    CHECK_EACH(NB, count[i] == 0 ? nv == 0 : first[i] + count[i] <= nv);
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_int_eq(multi_run(s), GHM_OK);
    }
    multi_answers(s);
}

static void multi_teardown(void *p)
{
    MultiState *s = p;
    ghm_multimap_free(&s->mm);
    free(s);
}

/* --- index: rebuilt from 300 distinct keys to 700 ------------------------------------------ */

enum { OLD_KEYS = 300, NEW_KEYS = 700 };

typedef struct IndexState {
    GhmIndex *ix;
    uint32_t old[OLD_KEYS], k[NB];
} IndexState;

static void *index_setup(void)
{
    IndexState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ghm_index_create(fault_ctx, 0.0, &s->ix), GHM_OK);
    for (size_t i = 0; i < OLD_KEYS; i++)
        s->old[i] = (uint32_t)i * 17u + 900000u; /* ascending: key i has id i */
    for (size_t i = 0; i < NB; i++)
        s->k[i] = (uint32_t)(i % NEW_KEYS) * 31u + 3u;
    ck_assert_int_eq(ghm_index_build(s->ix, s->old, OLD_KEYS), GHM_OK);
    return s;
}

static int index_run(void *p)
{
    IndexState *s = p;
    return ghm_index_build(s->ix, s->k, NB);
}

static void index_check(void *p, int ret)
{
    IndexState *s = p;
    uint32_t ids[NB], back[NB];
    if (ret != GHM_OK) { /* as before the call, or empty */
        ck_assert_int_eq(ret, fault_error);
        size_t size = ghm_index_size(s->ix);
        ck_assert(size == OLD_KEYS || size == 0);
        ck_assert_int_eq(ghm_index_ids(s->ix, s->old, OLD_KEYS, ids), GHM_OK);
        CHECK_EACH(OLD_KEYS, ids[i] == (size ? (uint32_t)i : GHM_NOT_FOUND));
        ck_assert_int_eq(index_run(s), GHM_OK);
    }
    ck_assert_uint_eq(ghm_index_size(s->ix), NEW_KEYS);
    ck_assert_int_eq(ghm_index_ids(s->ix, s->k, NB, ids), GHM_OK);
    CHECK_EACH(NB, ids[i] < NEW_KEYS);
    ck_assert_int_eq(ghm_index_keys(s->ix, ids, NB, back), GHM_OK);
    CHECK_EACH(NB, back[i] == s->k[i]);
}

static void index_teardown(void *p)
{
    IndexState *s = p;
    ghm_index_free(&s->ix);
    free(s);
}

/* --- set and sorted: built under faults, then the same call without ---------------------- */

typedef struct SetState {
    GhmSet *set;
    GhmSorted *sorted;
    uint32_t k[NB], v[NB];
} SetState;

static void *set_setup(void)
{
    SetState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ghm_set_create(fault_ctx, 0.0, &s->set), GHM_OK);
    ck_assert_int_eq(ghm_sorted_create(fault_ctx, &s->sorted), GHM_OK);
    keys_of(s->k, NB, 42);
    for (size_t i = 0; i < NB; i++)
        s->v[i] = (uint32_t)(NB - i);
    return s;
}

static int set_run(void *p)
{
    SetState *s = p;
    int ret = ghm_set_build(s->set, s->k, NB);
    return ret < 0 ? ret : ghm_sorted_build(s->sorted, s->k, s->v, NB);
}

static void set_check(void *p, int ret)
{
    SetState *s = p;
    uint8_t in[NB];
    uint32_t out[NB];
    ck_assert_int_eq(ghm_set_contains(s->set, s->k, NB, in), GHM_OK);
    ck_assert_int_eq(ghm_sorted_find(s->sorted, s->k, NB, out), GHM_OK);
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_int_eq(set_run(s), GHM_OK);
    }
    ck_assert_int_eq(ghm_set_contains(s->set, s->k, NB, in), GHM_OK);
    ck_assert_int_eq(ghm_sorted_find(s->sorted, s->k, NB, out), GHM_OK);
    for (size_t i = 0; i < NB; i++) {
        ck_assert_uint_eq(in[i], 1);
        ck_assert_uint_eq(out[i], s->v[i]);
    }
}

static void set_teardown(void *p)
{
    SetState *s = p;
    ghm_set_free(&s->set);
    ghm_sorted_free(&s->sorted);
    free(s);
}

/* --- dynmap: items inserted (the allocator grows), some erased, slabs collected ------------ */

enum { DW = 6, DA = 3000, DB = 40000, DU = DA + DB };

typedef struct DynState {
    GhmDynmap *dm;
    uint32_t items[DU * DW]; /* item of id i: i < DA in the table before the run */
    GhmDynmapHandle ha[DA];  /* their handles */
    uint32_t found[DU * DW];
    GhmDynmapHandle h[DU];
    uint32_t gone[DU * DW];  /* the items the run erases */
} DynState;

static void dyn_item(uint32_t id, uint32_t *out)
{
    for (int j = 0; j < DW; j++)
        out[j] = id * 2654435761u + (uint32_t)j * 40503u + 1u;
    out[0] = id + 1; /* distinct and never zero */
}

/* Whether the run erases id (a third of the ids). */
static int dyn_erased(uint32_t id) { return id % 3 == 1; }

static void *dyn_setup(void)
{
    DynState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    GhmDynmapOptions o = ghm_dynmap_defaults();
    o.item_words = DW;
    o.capacity = DA;
    ck_assert_int_eq(ghm_dynmap_create(fault_ctx, &o, &s->dm), GHM_OK);
    for (uint32_t i = 0; i < DU; i++)
        dyn_item(i, s->items + (size_t)i * DW);
    ck_assert_int_eq(ghm_dynmap_insert(s->dm, s->items, DA, s->ha, NULL), GHM_OK);
    return s;
}

/* Inserts every id (those of the table again: duplicates of stored items), erases a third,
 * collects; 40000 new items need more slabs than the first super block has. */
static int dyn_run(void *p)
{
    DynState *s = p;
    size_t ng = 0, released = 0;
    int ret = ghm_dynmap_insert(s->dm, s->items, DU, NULL, NULL);
    for (uint32_t i = 0; i < DU; i++)
        if (dyn_erased(i))
            memcpy(s->gone + ng++ * DW, s->items + (size_t)i * DW, DW * 4);
    if (ret >= 0)
        ret = ghm_dynmap_erase(s->dm, s->gone, ng, NULL);
    return ret < 0 ? ret : ghm_dynmap_gc(s->dm, &released);
}

/* A valid table: every item found is intact, at the handle it had before the run if it was
 * there, the size counts what is found, and reading by handle agrees. Returns how many ids are
 * found. */
static size_t dyn_valid(DynState *s)
{
    ck_assert_int_eq(ghm_dynmap_find(s->dm, s->items, DU, s->h, s->found), GHM_OK);
    size_t n = 0;
    for (uint32_t i = 0; i < DU; i++) {
        if (s->h[i] == GHM_DYNMAP_NO_HANDLE)
            continue;
        n++;
        ck_assert_mem_eq(s->found + (size_t)i * DW, s->items + (size_t)i * DW, DW * 4);
        if (i < DA)
            ck_assert(s->h[i] == s->ha[i]);
    }
    ck_assert_uint_eq(ghm_dynmap_size(s->dm), n);
    return n;
}

static void dyn_check(void *p, int ret)
{
    DynState *s = p;
    dyn_valid(s);
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_int_eq(dyn_run(s), GHM_OK); /* the same call without the fault */
    }
    size_t n = dyn_valid(s);
    CHECK_EACH(DU, (s->h[i] == GHM_DYNMAP_NO_HANDLE) == dyn_erased((uint32_t)i));
    ck_assert_uint_eq(n, DU - DU / 3);
}

static void dyn_teardown(void *p)
{
    DynState *s = p;
    ghm_dynmap_free(&s->dm);
    free(s);
}

/* --- the trials ---------------------------------------------------------------------------- */

const FaultTrial fault_map_trial = {map_setup, map_run, map_check, map_teardown};
const FaultTrial fault_multi_trial = {multi_setup, multi_run, multi_check, multi_teardown};
const FaultTrial fault_dist_trial = {dist_setup, dist_run, dist_check, dist_teardown};
const FaultTrial fault_ranked_trial = {ranked_setup, dist_run, dist_check, dist_teardown};
const FaultTrial fault_set_trial = {set_setup, set_run, set_check, set_teardown};
const FaultTrial fault_index_trial = {index_setup, index_run, index_check, index_teardown};
const FaultTrial fault_dynmap_trial = {dyn_setup, dyn_run, dyn_check, dyn_teardown};
