/*
 * map_two_level_cpu.c - the CPU backend's two-level cuckoo GhmMap (Alcantara et al. 2009,
 * section 4; thesis chapter 5), the same table as kernels/hashing/map_two_level.cu with the
 * sizing and hashes of two_level_family.h, in the paper's two phases:
 *
 * Phase 1 splits the pairs into buckets by the first-level hash: every pair counts itself in its
 * bucket with an atomic increment that also gives it its offset there, a prefix sum over the
 * counts places the buckets, and a scatter copies each pair to its bucket's start plus its
 * offset, so that every bucket's pairs are contiguous.
 *
 * Phase 2 builds every bucket on its own, a thread per bucket (OpenMP), by sequential cuckoo
 * hashing into a local array of the bucket's three sub-tables: a key first looks at its three
 * slots (its own earlier copy: keep the smaller value; an empty one: take it), else it evicts the
 * key in sub-table 0 and the evicted key moves on to its next sub-table, for at most
 * GHMI_TL_ROUNDS evictions. A bucket that fails starts again alone with its next seed; the
 * finished bucket is copied out to its place in the three sub-table arrays with its seed. A
 * bucket out of seeds (one that drew too many keys) fails the attempt, and phase 1 starts again
 * with new constants, at most max_rebuilds times.
 *
 * The bucket's pairs are inserted in whatever order the scatter left them, which depends on the
 * thread timing, and so does the slot a key ends up in; the answers do not (each key keeps its
 * smallest value).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "map_cpu_internal.h"
#include "two_level_family.h"

typedef struct TwoLevelMap {
    GhmContext *ctx;
    GhmMapOptions opt;
    uint64_t *slots;      /* ghmi_tl_slots(&t); NULL before a build that allocated */
    uint32_t *seeds;      /* t.buckets: the seed number each bucket was built with */
    size_t alloc_buckets; /* buckets allocated, kept from build to build */
    GhmiTwoLevelTable t;
    int built;
    int have_oob; /* the key 0xFFFFFFFF (the empty marker) was inserted: out of band */
    uint32_t oob_value;
    size_t size;
    int rebuilds;
    unsigned deepest; /* the last sub-table (1 .. 3) that holds a key */
} TwoLevelMap;

/* Phase 1's working arrays, for one build. */
typedef struct Split {
    _Atomic uint32_t *count; /* buckets: pairs per bucket */
    size_t *start;           /* buckets + 1: where each bucket's pairs begin in buf */
    uint32_t *offset;        /* n: each pair's place within its bucket */
    uint64_t *buf;           /* n: the pairs, bucket after bucket, key << 32 | value */
    size_t cap_buckets;
} Split;

static int threads_of(const TwoLevelMap *m) { return m->ctx->threads > 0 ? m->ctx->threads : 1; }

static int two_level_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    TwoLevelMap *m = calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->opt = *opt;
    *impl = m;
    return GHM_OK;
}

static void release_table(TwoLevelMap *m)
{
    free(m->slots);
    free(m->seeds);
    m->slots = NULL;
    m->seeds = NULL;
    m->alloc_buckets = 0;
}

static void two_level_destroy(void *impl)
{
    TwoLevelMap *m = impl;
    if (!m)
        return;
    release_table(m);
    free(m);
}

static int reserve(TwoLevelMap *m, size_t buckets)
{
    if (m->slots && m->alloc_buckets >= buckets)
        return GHM_OK;
    release_table(m);
    m->slots = ghmi_cpu_alloc_table(buckets * GHMI_TL_BUCKET_SLOTS * sizeof *m->slots);
    m->seeds = malloc(buckets * sizeof *m->seeds);
    if (!m->slots || !m->seeds) {
        release_table(m);
        return GHM_ERR_NOMEM;
    }
    m->alloc_buckets = buckets;
    return GHM_OK;
}

static void split_free(Split *sp)
{
    free(sp->count);
    free(sp->start);
    free(sp->offset);
    free(sp->buf);
    memset(sp, 0, sizeof *sp);
}

static int split_reserve(Split *sp, size_t n, size_t buckets)
{
    if (!sp->buf) {
        sp->offset = malloc((n ? n : 1) * sizeof *sp->offset);
        sp->buf = malloc((n ? n : 1) * sizeof *sp->buf);
        if (!sp->offset || !sp->buf)
            return GHM_ERR_NOMEM;
    }
    if (sp->cap_buckets < buckets) {
        free(sp->count);
        free(sp->start);
        sp->count = malloc(buckets * sizeof *sp->count);
        sp->start = malloc((buckets + 1) * sizeof *sp->start);
        sp->cap_buckets = sp->count && sp->start ? buckets : 0;
        if (!sp->cap_buckets)
            return GHM_ERR_NOMEM;
    }
    return GHM_OK;
}

/* Phase 1: count, prefix sum, scatter. Pairs with the key 0xFFFFFFFF stay out of every bucket. */
static void split_pairs(const TwoLevelMap *m, Split *sp, const uint32_t *keys,
                        const uint32_t *values, size_t n)
{
    const GhmiTwoLevelTable *t = &m->t;
    size_t nb = t->buckets;
    for (size_t b = 0; b < nb; b++)
        atomic_init(&sp->count[b], 0);
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (n > 65536)
    for (size_t i = 0; i < n; i++)
        if (keys[i] != GHMI_EMPTY_KEY)
            sp->offset[i] = atomic_fetch_add_explicit(&sp->count[ghmi_tl_bucket(t, keys[i])], 1,
                                                      memory_order_relaxed);
    size_t run = 0;
    for (size_t b = 0; b < nb; b++) {
        sp->start[b] = run;
        run += atomic_load_explicit(&sp->count[b], memory_order_relaxed);
    }
    sp->start[nb] = run;
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (n > 65536)
    for (size_t i = 0; i < n; i++)
        if (keys[i] != GHMI_EMPTY_KEY)
            sp->buf[sp->start[ghmi_tl_bucket(t, keys[i])] + sp->offset[i]] =
                ghmi_pack(keys[i], values[i]);
}

/* Inserts one pair into a bucket's local sub-tables (tab[i * GHMI_TL_SUB + pos]) built with seed
 * s. Returns 1 for a new key, 0 for a copy of a stored key (merged: the smaller value stays), -1
 * when GHMI_TL_ROUNDS evictions did not end (a key is then left out: the bucket starts over). */
static int insert_local(const GhmiTwoLevelTable *t, uint32_t s, uint64_t *tab, uint64_t pair)
{
    uint32_t key = ghmi_slot_key(pair);
    uint64_t *empty = NULL;
    for (int i = 0; i < GHMI_TL_TABLES; i++) {
        uint64_t *p = &tab[i * GHMI_TL_SUB + ghmi_tl_pos(t, i, s, key)];
        if (ghmi_slot_key(*p) == key) {
            if (ghmi_slot_value(pair) < ghmi_slot_value(*p))
                *p = pair;
            return 0;
        }
        if (*p == GHMI_EMPTY_SLOT && !empty)
            empty = p;
    }
    if (empty) {
        *empty = pair;
        return 1;
    }
    uint64_t cur = pair;
    for (int step = 0, i = 0; step < GHMI_TL_ROUNDS; step++, i = (i + 1) % GHMI_TL_TABLES) {
        uint64_t *p = &tab[i * GHMI_TL_SUB + ghmi_tl_pos(t, i, s, ghmi_slot_key(cur))];
        uint64_t old = *p;
        *p = cur;
        if (old == GHMI_EMPTY_SLOT)
            return 1;
        cur = old; /* it was in sub-table i: it tries the next one */
    }
    return -1;
}

/* Phase 2 for bucket b: its cnt pairs at items. Returns the distinct keys, or -1 when every
 * seed failed; raises *deepest to the last sub-table holding a key. */
static long build_bucket(TwoLevelMap *m, uint32_t b, const uint64_t *items, size_t cnt,
                         unsigned *deepest)
{
    const GhmiTwoLevelTable *t = &m->t;
    uint64_t tab[GHMI_TL_BUCKET_SLOTS];
    for (uint32_t s = 0; s < GHMI_TL_SEEDS; s++) {
        for (int p = 0; p < GHMI_TL_BUCKET_SLOTS; p++)
            tab[p] = GHMI_EMPTY_SLOT;
        long distinct = 0;
        size_t j = 0;
        for (; j < cnt; j++) {
            int r = insert_local(t, s, tab, items[j]);
            if (r < 0)
                break;
            distinct += r;
        }
        if (j < cnt)
            continue;
        for (int i = 0; i < GHMI_TL_TABLES; i++) {
            uint64_t *dst = &m->slots[ghmi_tl_slot(t, i, b, 0)];
            memcpy(dst, &tab[i * GHMI_TL_SUB], GHMI_TL_SUB * sizeof *tab);
            for (int p = 0; p < GHMI_TL_SUB; p++)
                if (tab[i * GHMI_TL_SUB + p] != GHMI_EMPTY_SLOT && (unsigned)i + 1 > *deepest)
                    *deepest = (unsigned)i + 1;
        }
        m->seeds[b] = s;
        return distinct;
    }
    return -1;
}

static int try_build(TwoLevelMap *m, Split *sp, int attempt, const uint32_t *keys,
                     const uint32_t *values, size_t n)
{
    int ret = ghmi_two_level_table(n, m->opt.load_factor, m->ctx->seed, attempt, &m->t);
    size_t nb = m->t.buckets;
    if (ret >= 0)
        ret = reserve(m, nb);
    if (ret >= 0)
        ret = split_reserve(sp, n, nb);
    if (ret < 0)
        return ret;
    split_pairs(m, sp, keys, values, n);
    size_t distinct = 0;
    unsigned deepest = 0;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_of(m)) if (nb > 16)        \
    reduction(+ : distinct) reduction(max : deepest) reduction(| : failed)
    for (size_t b = 0; b < nb; b++) {
        if (failed) /* this thread's own earlier bucket failed: the attempt is lost */
            continue;
        unsigned d = 0;
        long got = build_bucket(m, (uint32_t)b, sp->buf + sp->start[b],
                                sp->start[b + 1] - sp->start[b], &d);
        if (got < 0)
            failed = 1;
        else
            distinct += (size_t)got;
        deepest = d > deepest ? d : deepest;
    }
    if (failed)
        return GHM_ERR_BUILD_FAILED;
    m->size += distinct;
    m->deepest = deepest;
    return GHM_OK;
}

static int two_level_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    TwoLevelMap *m = impl;
    m->built = 0;
    m->size = 0;
    m->have_oob = 0;
    uint32_t oob_min = UINT32_MAX;
    int oob_seen = 0;
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (n > 65536)           \
    reduction(min : oob_min) reduction(| : oob_seen)
    for (size_t i = 0; i < n; i++)
        if (keys[i] == GHMI_EMPTY_KEY) {
            oob_seen = 1;
            oob_min = values[i] < oob_min ? values[i] : oob_min;
        }
    Split sp = {0};
    int ret = GHM_ERR_BUILD_FAILED;
    int attempt = 0;
    for (; attempt <= m->opt.max_rebuilds && ret == GHM_ERR_BUILD_FAILED; attempt++)
        ret = try_build(m, &sp, attempt, keys, values, n);
    split_free(&sp);
    m->rebuilds = attempt - 1;
    if (ret < 0) { /* empty and valid, its memory returned */
        release_table(m);
        m->size = 0;
        return ret;
    }
    m->have_oob = oob_seen;
    m->oob_value = oob_min;
    m->size += (size_t)oob_seen;
    m->built = 1;
    return GHM_OK;
}

/* A batch in three prefetched steps: the buckets' seeds (a small array, mostly in cache), then
 * each key's slots in sub-tables 0 and 1 together, then sub-table 2's for the keys in neither.
 * Most keys are in the first two (at load 0.7, 41 % and most of the rest), so a present key reads
 * about 2.2 lines instead of 3 while its misses still overlap with each other's and the batch's
 * others; 2-core finds of 2^24 present keys 54-57 -> 62-65 M keys/s, absent ones (3 lines, the
 * last one later) 57-60 -> 54-56 (docs/BENCHMARKS.md). Sub-table 0 alone first read fewer lines
 * but measured slower: half the keys then wait for a second miss. */
_Static_assert(GHMI_TL_TABLES == 3, "find_batch reads sub-tables 0 and 1, then 2");
static void find_batch(const TwoLevelMap *m, const uint32_t *keys, size_t cnt, uint32_t *out)
{
    const GhmiTwoLevelTable *t = &m->t;
    uint32_t bucket[GHMI_CPU_BATCH];
    uint32_t slot[GHMI_CPU_BATCH][GHMI_TL_TABLES];
    for (size_t i = 0; i < cnt; i++) {
        bucket[i] = ghmi_tl_bucket(t, keys[i]);
        __builtin_prefetch(m->seeds + bucket[i]);
    }
    for (size_t i = 0; i < cnt; i++) {
        uint32_t s = m->seeds[bucket[i]];
        for (int j = 0; j < GHMI_TL_TABLES; j++)
            slot[i][j] = ghmi_tl_slot(t, j, bucket[i], ghmi_tl_pos(t, j, s, keys[i]));
        __builtin_prefetch(m->slots + slot[i][0]);
        __builtin_prefetch(m->slots + slot[i][1]);
    }
    size_t late[GHMI_CPU_BATCH], nlate = 0;
    for (size_t i = 0; i < cnt; i++) {
        uint32_t k = keys[i], v = GHM_NOT_FOUND;
        if (k == GHMI_EMPTY_KEY) {
            v = m->have_oob ? m->oob_value : GHM_NOT_FOUND;
        } else {
            uint64_t e0 = m->slots[slot[i][0]], e1 = m->slots[slot[i][1]];
            if (ghmi_slot_key(e0) == k)
                v = ghmi_slot_value(e0);
            else if (ghmi_slot_key(e1) == k)
                v = ghmi_slot_value(e1);
            else if (m->deepest > 2) {
                __builtin_prefetch(m->slots + slot[i][2]);
                late[nlate++] = i;
            }
        }
        out[i] = v;
    }
    for (size_t j = 0; j < nlate; j++) {
        size_t i = late[j];
        uint64_t e = m->slots[slot[i][2]];
        if (ghmi_slot_key(e) == keys[i])
            out[i] = ghmi_slot_value(e);
    }
}

static int two_level_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const TwoLevelMap *m = impl;
    if (!m->built) {
        for (size_t i = 0; i < n; i++)
            out[i] = GHM_NOT_FOUND;
        return GHM_OK;
    }
    size_t nbatch = (n + GHMI_CPU_BATCH - 1) / GHMI_CPU_BATCH;
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads_of(m)) if (n > 4096)
    for (size_t bi = 0; bi < nbatch; bi++) {
        size_t lo = bi * GHMI_CPU_BATCH;
        size_t cnt = lo + GHMI_CPU_BATCH < n ? GHMI_CPU_BATCH : n - lo;
        find_batch(m, keys + lo, cnt, out + lo);
    }
    return GHM_OK;
}

static int two_level_stats(const void *impl, GhmMapStats *out)
{
    const TwoLevelMap *m = impl;
    size_t buckets = m->built ? m->t.buckets : 0;
    out->size = m->size;
    out->capacity = buckets * GHMI_TL_BUCKET_SLOTS;
    out->rebuilds = m->rebuilds;
    out->bytes = out->capacity * sizeof *m->slots + buckets * sizeof *m->seeds;
    out->max_probes = m->built ? m->deepest : 0;
    return GHM_OK;
}

const GhmMapOps ghm_cpu_two_level_map_ops = {
    .create = two_level_create,
    .build = two_level_build,
    .find = two_level_find,
    .stats = two_level_stats,
    .destroy = two_level_destroy,
};
