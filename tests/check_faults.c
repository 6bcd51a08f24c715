/*
 * check_faults.c - every allocation of an operation fails in turn (fault_inject.h), CPU backend:
 * the build and find of each hashing structure, a dynamic table's insert and erase, a reference
 * build, an image query, a voxel step
 * and a video frame. Each trial k fails the operation's k-th allocation; the operation must
 * return an error (or succeed with the right answer where it can do without), leak nothing
 * (the heap holds what it held before the trial), and leave its objects valid: the structure
 * answers as before the call or as empty, and the same call without a fault then works.
 * A walk ends at the first k the operation does not reach.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_inject.h"
#include "ghm_dynmap.h"
#include "ghm_image.h"
#include "ghm_index.h"
#include "ghm_map.h"
#include "ghm_match.h"
#include "ghm_multimap.h"
#include "ghm_pointcloud.h"
#include "ghm_set.h"
#include "ghm_sorted.h"
#include "ghm_video.h"
#include "ghm_voxel.h"
#include "test_support.h"

enum { NA = 3000, NB = 2000 };

typedef struct Trial {
    void *(*setup)(void);                /* unarmed */
    int (*run)(void *state);             /* armed: the operation */
    void (*check)(void *state, int ret); /* unarmed: answers right, or the objects still valid */
    void (*teardown)(void *state);
} Trial;

static GhmContext *ctx;
static GhmMapScheme map_scheme; /* the scheme map_setup creates (test_map_build walks each) */

/* Fails allocation 1, 2, ... of t's operation until one k is not reached; returns how many
 * allocations the operation makes (the last k reached), also printed under name. The heap
 * comparison needs glibc's per-thread cache off (CMake sets GLIBC_TUNABLES for this test):
 * chunks it keeps count as in use. */
static long walk(const char *name, const Trial *t)
{
    const char *tun = getenv("GLIBC_TUNABLES");
    ck_assert_msg(tun && strstr(tun, "glibc.malloc.tcache_count=0"),
                  "run with GLIBC_TUNABLES=glibc.malloc.tcache_count=0 (ctest sets it)");
    void *st = t->setup(); /* a warm-up run: caches and thread pools exist before the baseline */
    t->check(st, t->run(st));
    t->teardown(st);
    long k = 1;
    for (;; k++) {
        size_t before = fault_heap_in_use();
        st = t->setup();
        fault_arm(k);
        int ret = t->run(st);
        int hit = fault_hit();
        fault_disarm();
        t->check(st, ret);
        t->teardown(st);
        ck_assert_msg(fault_heap_in_use() == before, "allocation %ld failed: %zu bytes leaked", k,
                      fault_heap_in_use() - before);
        if (!hit)
            break;
    }
    printf("faults: %s: each of its %ld allocations failed in turn\n", name, k - 1);
    return k - 1;
}

static void keys_of(uint32_t *k, size_t n, uint32_t first)
{
    for (size_t i = 0; i < n; i++)
        k[i] = first + (uint32_t)(i * 7919u);
}

/* --- map: rebuilt from content A to content B under faults ------------------------------- */

typedef struct MapState {
    GhmMap *map;
    uint32_t ka[NA], kb[NB], vb[NB];
} MapState;

static void *map_setup(void)
{
    MapState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    GhmMapOptions o = ghm_map_defaults();
    o.scheme = map_scheme;
    ck_assert_int_eq(ghm_map_create(ctx, &o, &s->map), GHM_OK);
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
    return ghm_map_build(s->map, s->kb, s->vb, NB);
}

/* Content B (1), A (0) or nothing (-1) answered for A's and B's keys; fails on a mixture. */
static int map_content(MapState *s)
{
    uint32_t ra[NA], rb[NB];
    ck_assert_int_eq(ghm_map_find(s->map, s->ka, NA, ra), GHM_OK);
    ck_assert_int_eq(ghm_map_find(s->map, s->kb, NB, rb), GHM_OK);
    int a = 1, b = 1, none = 1;
    for (size_t i = 0; i < NA; i++)
        a &= ra[i] == i, b &= ra[i] == GHM_NOT_FOUND, none &= ra[i] == GHM_NOT_FOUND;
    for (size_t i = 0; i < NB; i++)
        a &= rb[i] == GHM_NOT_FOUND, b &= rb[i] == s->vb[i], none &= rb[i] == GHM_NOT_FOUND;
    ck_assert_msg(a || b || none, "the map answers neither its old content, the new one nor empty");
    return b ? 1 : a ? 0 : -1;
}

static void map_check(void *p, int ret)
{
    MapState *s = p;
    int content = map_content(s);
    if (ret == GHM_OK) {
        ck_assert_int_eq(content, 1);
        return;
    }
    ck_assert_int_eq(ret, GHM_ERR_NOMEM);
    ck_assert_int_eq(map_run(s), GHM_OK); /* the same call without the fault */
    ck_assert_int_eq(map_content(s), 1);
}

static void map_teardown(void *p)
{
    MapState *s = p;
    ghm_map_free(&s->map);
    free(s);
}

START_TEST(test_map_build)
{
    Trial t = {map_setup, map_run, map_check, map_teardown};
    /* Open addressing reuses its larger table for the smaller content B and allocates nothing
     * here, which is right; cuckoo, Robin Hood (its duplicate list) and chaining (its sort
     * scratch) always allocate. */
    for (int s = 0; s < GHM_MAP_SCHEMES; s++) {
        char name[64];
        map_scheme = (GhmMapScheme)s;
        snprintf(name, sizeof name, "map build (%s)", ghm_map_scheme_name(map_scheme));
        long k = walk(name, &t);
        if (s == GHM_MAP_CUCKOO || s >= GHM_MAP_ROBIN_HOOD)
            ck_assert_int_gt(k, 0);
    }
}
END_TEST

/* --- multimap, set, sorted: rebuilt under faults, then the same call without ------------- */

typedef struct MultiState {
    GhmMultimap *mm;
    uint32_t k[NB], v[NB];
} MultiState;

static void *multi_setup(void)
{
    MultiState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ghm_multimap_create(ctx, 0.0, &s->mm), GHM_OK);
    for (size_t i = 0; i < NB; i++)
        s->k[i] = (uint32_t)(i % 500) * 13u + 5u, s->v[i] = (uint32_t)i;
    ck_assert_int_eq(ghm_multimap_build(s->mm, s->k, s->v, NB / 2), GHM_OK);
    return s;
}

static int multi_run(void *p)
{
    MultiState *s = p;
    return ghm_multimap_build(s->mm, s->k, s->v, NB);
}

static void multi_answers(MultiState *s)
{
    uint32_t first[NB], count[NB];
    ck_assert_int_eq(ghm_multimap_find(s->mm, s->k, NB, first, count), GHM_OK);
    for (size_t i = 0; i < NB; i++)
        ck_assert_uint_eq(count[i], NB / 500);
}

static void multi_check(void *p, int ret)
{
    MultiState *s = p;
    uint32_t first[NB], count[NB];
    const uint32_t *values = NULL;
    size_t nv = 0;
    /* after a failure: the old content (NB / 2 pairs) or none, whole: counts and values agree */
    ck_assert_int_eq(ghm_multimap_find(s->mm, s->k, NB, first, count), GHM_OK);
    ck_assert_int_eq(ghm_multimap_values(s->mm, &values, &nv), GHM_OK);
    ck_assert(nv == NB || nv == NB / 2 || nv == 0);
    for (size_t i = 0; i < NB; i++)
        ck_assert(count[i] == 0 ? nv == 0 : first[i] + count[i] <= nv);
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
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

START_TEST(test_multimap_build)
{
    Trial t = {multi_setup, multi_run, multi_check, multi_teardown};
    ck_assert_int_gt(walk("multimap build", &t), 0);
}
END_TEST

typedef struct SetState {
    GhmSet *set;
    GhmSorted *sorted;
    uint32_t k[NB], v[NB];
} SetState;

static void *set_setup(void)
{
    SetState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ghm_set_create(ctx, 0.0, &s->set), GHM_OK);
    ck_assert_int_eq(ghm_sorted_create(ctx, &s->sorted), GHM_OK);
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
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
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

START_TEST(test_set_and_sorted_build)
{
    Trial t = {set_setup, set_run, set_check, set_teardown};
    ck_assert_int_gt(walk("set and sorted build", &t), 0);
}
END_TEST

/* --- dynmap: insert B (enough to need a second super block), then erase A ------------------ */

enum { DYN_WORDS = 10, DYN_A = 3000, DYN_B = 40000 }; /* B: about 20000 slabs, 1.2 super blocks */

typedef struct DynState {
    GhmDynmap *dm;
    uint32_t *a, *b; /* DYN_A and DYN_B items */
} DynState;

static void dyn_item(uint32_t id, uint32_t *out)
{
    for (int j = 0; j < DYN_WORDS; j++)
        out[j] = id * 2654435761u + (uint32_t)j + 1;
}

static void *dyn_setup(void)
{
    DynState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->a = malloc((size_t)DYN_A * DYN_WORDS * sizeof *s->a);
    s->b = malloc((size_t)DYN_B * DYN_WORDS * sizeof *s->b);
    ck_assert(s->a && s->b);
    for (uint32_t i = 0; i < DYN_A; i++)
        dyn_item(i, s->a + (size_t)i * DYN_WORDS);
    for (uint32_t i = 0; i < DYN_B; i++)
        dyn_item(DYN_A + i, s->b + (size_t)i * DYN_WORDS);
    GhmDynmapOptions o = ghm_dynmap_defaults();
    o.item_words = DYN_WORDS;
    o.capacity = DYN_B; /* many short buckets: B needs a second super block */
    ck_assert_int_eq(ghm_dynmap_create(ctx, &o, &s->dm), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_insert(s->dm, s->a, DYN_A, NULL, NULL), GHM_OK);
    return s;
}

static int dyn_run(void *p)
{
    DynState *s = p;
    int ret = ghm_dynmap_insert(s->dm, s->b, DYN_B, NULL, NULL);
    return ret < 0 ? ret : ghm_dynmap_erase(s->dm, s->a, DYN_A, NULL);
}

/* How many of n items are stored (found with their content). */
static size_t dyn_stored(DynState *s, const uint32_t *items, size_t n)
{
    uint32_t *out = malloc(n * DYN_WORDS * sizeof *out);
    ck_assert_ptr_nonnull(out);
    ck_assert_int_eq(ghm_dynmap_find(s->dm, items, n, NULL, out), GHM_OK);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += !memcmp(out + i * DYN_WORDS, items + i * DYN_WORDS, DYN_WORDS * sizeof *out);
    free(out);
    return k;
}

/* After a failure the table holds A (the insert failed, unchanged) or A and B (the erase
 * failed); the same calls then finish the job. */
static void dyn_check(void *p, int ret)
{
    DynState *s = p;
    size_t a = dyn_stored(s, s->a, DYN_A), b = dyn_stored(s, s->b, DYN_B);
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
        ck_assert_uint_eq(a, DYN_A);
        ck_assert(b == 0 || b == DYN_B);
        ck_assert_uint_eq(ghm_dynmap_size(s->dm), DYN_A + b);
        ck_assert_int_eq(dyn_run(s), GHM_OK);
        a = dyn_stored(s, s->a, DYN_A), b = dyn_stored(s, s->b, DYN_B);
    }
    ck_assert_uint_eq(a, 0);
    ck_assert_uint_eq(b, DYN_B);
    ck_assert_uint_eq(ghm_dynmap_size(s->dm), DYN_B);
}

static void dyn_teardown(void *p)
{
    DynState *s = p;
    ghm_dynmap_free(&s->dm);
    free(s->a);
    free(s->b);
    free(s);
}

START_TEST(test_dynmap_insert_erase)
{
    Trial t = {dyn_setup, dyn_run, dyn_check, dyn_teardown};
    ck_assert_int_gt(walk("dynmap insert and erase", &t), 0);
}
END_TEST

/* --- index build, and a multimap retrieve (the one find that allocates) ------------------ */

typedef struct IndexState {
    GhmIndex *ix;
    GhmMultimap *mm;
    uint32_t k[NB], v[NB], offsets[NB + 1], out[NB];
    size_t total;
} IndexState;

static void *index_setup(void)
{
    IndexState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ghm_index_create(ctx, 0.0, &s->ix), GHM_OK);
    ck_assert_int_eq(ghm_multimap_create(ctx, 0.0, &s->mm), GHM_OK);
    for (size_t i = 0; i < NB; i++)
        s->k[i] = (uint32_t)(i % 700) * 31u + 3u, s->v[i] = (uint32_t)i;
    ck_assert_int_eq(ghm_multimap_build(s->mm, s->k, s->v, NB), GHM_OK);
    return s;
}

static int index_run(void *p)
{
    IndexState *s = p;
    int ret = ghm_index_build(s->ix, s->k, NB);
    if (ret < 0)
        return ret;
    return ghm_multimap_retrieve(s->mm, s->k, NB, s->offsets, s->out, NB, &s->total);
}

static void index_check(void *p, int ret)
{
    IndexState *s = p;
    if (ret != GHM_OK && ret != GHM_ERR_TOO_LARGE) {
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
        ret = index_run(s);
    }
    /* NB keys with 2 or 3 values each (NB / 700 rounds): the total passes NB, so TOO_LARGE with
     * the total filled in is the right answer for a buffer of NB. */
    ck_assert_int_eq(ret, GHM_ERR_TOO_LARGE);
    ck_assert_uint_gt(s->total, NB);
    ck_assert_uint_eq(ghm_index_size(s->ix), 700);
    uint32_t ids[NB];
    ck_assert_int_eq(ghm_index_ids(s->ix, s->k, NB, ids), GHM_OK);
    for (size_t i = 0; i < NB; i++)
        ck_assert_uint_lt(ids[i], 700);
}

static void index_teardown(void *p)
{
    IndexState *s = p;
    ghm_index_free(&s->ix);
    ghm_multimap_free(&s->mm);
    free(s);
}

START_TEST(test_index_build_and_retrieve)
{
    Trial t = {index_setup, index_run, index_check, index_teardown};
    ck_assert_int_gt(walk("index build and multimap retrieve", &t), 0);
}
END_TEST

/* --- matching: a reference build, and a query against a built reference ------------------ */

static GhmImage *query_img;
static GhmMatchParams match_params;

static void load_pair(void)
{
    char why[256];
    match_params = ghm_match_defaults();
    if (!query_img)
        ck_assert_int_eq(ghm_image_load(GHM_TEST_DATA "/images/box.png", &query_img, why,
                                        sizeof why),
                         GHM_OK);
}

typedef struct MatchState {
    GhmMatcher *m;
    GhmMatchResult res;
} MatchState;

static void *ref_setup(void)
{
    load_pair();
    return calloc(1, sizeof(MatchState));
}

static int ref_run(void *p)
{
    MatchState *s = p;
    return ghm_matcher_create(ctx, query_img, &match_params, &s->m); /* box.png: a small one */
}

static void ref_check(void *p, int ret)
{
    MatchState *s = p;
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
        ck_assert_ptr_null(s->m);
        ck_assert_int_eq(ref_run(s), GHM_OK);
    }
    ck_assert_int_eq(ghm_matcher_match(s->m, query_img, &s->res), GHM_OK);
    ck_assert(s->res.found);
}

static void ref_teardown(void *p)
{
    MatchState *s = p;
    ghm_matcher_free(&s->m);
    free(s);
}

START_TEST(test_reference_build)
{
    Trial t = {ref_setup, ref_run, ref_check, ref_teardown};
    ck_assert_int_gt(walk("reference build", &t), 0);
}
END_TEST

/* A fresh matcher per trial (the reference is box.png itself, a small one): a matcher keeps
 * scratch between queries, which the heap comparison would take for a leak. */
static void *query_setup(void)
{
    load_pair();
    MatchState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(ghm_matcher_create(ctx, query_img, &match_params, &s->m), GHM_OK);
    return s;
}

static int query_run(void *p)
{
    MatchState *s = p;
    return ghm_matcher_match(s->m, query_img, &s->res);
}

static void query_check(void *p, int ret)
{
    MatchState *s = p;
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
        ck_assert_int_eq(query_run(s), GHM_OK); /* the matcher still works */
    }
    ck_assert(s->res.found);
    ck_assert_double_lt(fabs(s->res.scale - 1.0), 0.01);
}

static void query_teardown(void *p) { ref_teardown(p); }

START_TEST(test_image_query)
{
    Trial t = {query_setup, query_run, query_check, query_teardown};
    ck_assert_int_gt(walk("image query", &t), 0);
}
END_TEST

/* --- a voxel step ------------------------------------------------------------------------- */

static GhmPointCloud *sphere(size_t n, double r, double cx)
{
    GhmPointCloud *pc = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(n, 1, 0, &pc), GHM_OK);
    const double golden = M_PI * (3.0 - sqrt(5.0));
    for (size_t i = 0; i < n; i++) {
        double z = 1.0 - 2.0 * (i + 0.5) / n, rad = sqrt(1.0 - z * z), phi = golden * i;
        double u[3] = {rad * cos(phi), rad * sin(phi), z};
        for (int k = 0; k < 3; k++) {
            pc->xyz[3 * i + k] = (float)((k == 0 ? cx : 0.0) + r * u[k]);
            pc->normals[3 * i + k] = (float)u[k];
        }
    }
    return pc;
}

typedef struct VoxelState {
    GhmPointCloud *a, *b;
    GhmVoxelGrid grid;
    GhmVoxelOptions opt;
    GhmVoxelResult *r;
} VoxelState;

static void *voxel_setup(void)
{
    VoxelState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->a = sphere(3000, 1.0, 0.0);
    s->b = sphere(1500, 0.6, 0.9);
    s->opt = ghm_voxel_defaults();
    s->opt.grid = 32;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(s->a, s->b, NULL, 0, &s->opt, &s->grid, why, sizeof why),
                     GHM_OK);
    return s;
}

static int voxel_run(void *p)
{
    VoxelState *s = p;
    return ghm_voxel_intersect(ctx, s->a, s->b, NULL, &s->grid, &s->opt, &s->r);
}

static void voxel_check(void *p, int ret)
{
    VoxelState *s = p;
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
        ck_assert_ptr_null(s->r);
        ck_assert_int_eq(voxel_run(s), GHM_OK);
    }
    ck_assert_uint_gt(s->r->side[0].voxels, 0);
    ck_assert_uint_gt(s->r->side[0].label_count[1], 0); /* some of A lies inside B */
}

static void voxel_teardown(void *p)
{
    VoxelState *s = p;
    ghm_voxel_result_free(&s->r);
    ghm_pointcloud_free(&s->a);
    ghm_pointcloud_free(&s->b);
    free(s);
}

START_TEST(test_voxel_step)
{
    Trial t = {voxel_setup, voxel_run, voxel_check, voxel_teardown};
    ck_assert_int_gt(walk("voxel step", &t), 0);
}
END_TEST

/* --- a video frame (YUV4MPEG2 from memory) ------------------------------------------------ */

typedef struct VideoState {
    char data[256];
    size_t size;
    FILE *f;
    GhmVideo *v;
    GhmVideoFrame frame;
} VideoState;

static void *video_setup(void)
{
    VideoState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    const char head[] = "YUV4MPEG2 W8 H6 F25:1 C420jpeg\n";
    memcpy(s->data, head, sizeof head - 1);
    s->size = sizeof head - 1;
    for (int fr = 0; fr < 2; fr++) {
        memcpy(s->data + s->size, "FRAME\n", 6);
        s->size += 6;
        for (int i = 0; i < 8 * 6 + 2 * 4 * 3; i++)
            s->data[s->size++] = (char)(i * 5 + fr);
    }
    s->f = fmemopen(s->data, s->size, "rb");
    ck_assert_ptr_nonnull(s->f);
    return s;
}

static int video_run(void *p)
{
    VideoState *s = p; /* no check assertion here: Check allocates, and it is linked in */
    char why[256];
    int ret = ghm_video_open_y4m(s->f, &s->v, why, sizeof why);
    return ret < 0 ? ret : ghm_video_read(s->v, &s->frame, why, sizeof why);
}

static void video_check(void *p, int ret)
{
    VideoState *s = p;
    if (ret < 0) {
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
        ck_assert_ptr_null(s->frame.image);
        ghm_video_free(&s->v);
        rewind(s->f);
        ck_assert_int_eq(video_run(s), GHM_VIDEO_FRAME);
    }
    ck_assert_int_eq(ret < 0 ? GHM_VIDEO_FRAME : ret, GHM_VIDEO_FRAME);
    ck_assert_ptr_nonnull(s->frame.image);
    ck_assert_int_eq(s->frame.image->width, 8);
}

static void video_teardown(void *p)
{
    VideoState *s = p;
    ghm_image_free(&s->frame.image);
    ghm_video_free(&s->v);
    if (s->f)
        fclose(s->f);
    free(s);
}

START_TEST(test_video_frame)
{
    Trial t = {video_setup, video_run, video_check, video_teardown};
    ck_assert_int_gt(walk("video frame", &t), 0);
}
END_TEST

static void make_context(void)
{
    GhmContextOptions o = ghm_context_defaults();
    o.backend = GHM_BACKEND_CPU;
    o.threads = 2;
    ck_assert_int_eq(ghm_context_create(&o, &ctx), GHM_OK);
}

static void free_context(void)
{
    ghm_image_free(&query_img);
    ghm_context_free(&ctx);
}

static Suite *faults_suite(void)
{
    Suite *s = suite_create("faults");
    TCase *tables = tcase_create("tables");
    tcase_add_checked_fixture(tables, make_context, free_context);
    tcase_add_test(tables, test_map_build);
    tcase_add_test(tables, test_multimap_build);
    tcase_add_test(tables, test_set_and_sorted_build);
    tcase_add_test(tables, test_index_build_and_retrieve);
    tcase_add_test(tables, test_dynmap_insert_erase);
    suite_add_tcase(s, tables);
    TCase *pipelines = tcase_create("pipelines");
    tcase_add_checked_fixture(pipelines, make_context, free_context);
    tcase_set_timeout(pipelines, 600);
    tcase_add_test(pipelines, test_reference_build);
    tcase_add_test(pipelines, test_image_query);
    tcase_add_test(pipelines, test_voxel_step);
    tcase_add_test(pipelines, test_video_frame);
    suite_add_tcase(s, pipelines);
    return s;
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 77; /* the sanitizers replace the allocation functions themselves */
#else
    return ghm_test_main(faults_suite());
#endif
}
