/*
 * map_chain_cpu.c - the CPU backend's chaining GhmMap, built by radix sort (Alcantara's thesis,
 * chapter 4), the same table as kernels/hashing/map_chain.cu with probe_family.h's numbering:
 *
 *   1. each pair's code (a bijective hash of its key) beside its value;
 *   2. the (code, value) pairs sorted by code with cpu_sort.c's stable LSD radix sort - the order
 *      of the buckets, and within a bucket of the codes, so copies of a key are neighbours;
 *   3. one pass that keeps the first pair of each run of equal codes with the run's smallest value
 *      (the map keeps the smallest value of a duplicated key, as every scheme does), packed as
 *      code << 32 | value;
 *   4. starts[] by the thesis's boundary search
 *      (listing 4.1): the pair at j, first of its bucket, starts every bucket after the previous
 *      pair's up to its own.
 *
 * A find hashes the key to its bucket, reads the bucket's two starts and scans its run, stopping
 * at the first code not below the key's, in three pipelined stages (find_chunk): the starts
 * prefetched, then read and the run prefetched, then scanned, so that many misses are in flight
 * per core.
 *
 * Nothing can fail but an allocation (or a table past 32-bit positions); either leaves the map
 * empty, with its memory released.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_find_lanes.h" /* GHMI_FIND_CHUNK */
#include "cpu_sort_internal.h"
#include "map_cpu_internal.h"
#include "probe_family.h"

typedef struct ChainMap {
    GhmContext *ctx;
    GhmMapOptions opt;
    uint64_t *pairs;     /* size entries (room for t.pairs), code << 32 | value, sorted by code */
    uint32_t *starts;    /* t.buckets + 1 */
    size_t pairs_alloc;  /* entries allocated, kept from build to build */
    size_t starts_alloc;
    GhmiChainTable t;
    int built;
    size_t size;
} ChainMap;

static int threads_of(const ChainMap *m) { return m->ctx->threads > 0 ? m->ctx->threads : 1; }

static int chain_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    ChainMap *m = calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->opt = *opt;
    *impl = m;
    return GHM_OK;
}

static void release(ChainMap *m)
{
    free(m->pairs);
    free(m->starts);
    m->pairs = NULL;
    m->starts = NULL;
    m->pairs_alloc = 0;
    m->starts_alloc = 0;
}

static void chain_destroy(void *impl)
{
    ChainMap *m = impl;
    if (!m)
        return;
    release(m);
    free(m);
}

/* Grows *p to at least `want` elements of `size` bytes (at least one), keeping a larger one. */
static int reserve(void **p, size_t *alloc, size_t want, size_t size)
{
    if (want == 0)
        want = 1;
    if (*p && *alloc >= want)
        return GHM_OK;
    free(*p);
    *p = ghmi_cpu_alloc_table(want * size); /* read at random by finds */
    *alloc = *p ? want : 0;
    return *p ? GHM_OK : GHM_ERR_NOMEM;
}

static void chunk_of(size_t n, int t, int nt, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)t / (size_t)nt;
    *hi = n * (size_t)(t + 1) / (size_t)nt;
}

/* Step 3: counts the runs of equal codes in sorted codes[0 .. n) and writes each run's code with
 * its smallest value. Each thread takes the runs that start in its chunk of positions (a run may
 * reach into the next chunk: it is only read there). */
static int compact_runs(ChainMap *m, const uint32_t *codes, const uint32_t *values, size_t n,
                        size_t *distinct)
{
    int nt = threads_of(m);
    if (n < 65536)
        nt = 1;
    size_t *count = calloc((size_t)nt + 1, sizeof *count);
    if (!count)
        return GHM_ERR_NOMEM;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), got = omp_get_num_threads();
        size_t lo, hi, c = 0;
        chunk_of(n, t, got, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            c += i == 0 || codes[i] != codes[i - 1];
        count[t + 1] = c;
#pragma omp barrier
#pragma omp single
        {
            for (int u = 0; u < got; u++)
                count[u + 1] += count[u];
            *distinct = count[got];
        }
        size_t out = count[t];
        for (size_t i = lo; i < hi; i++) {
            if (i > 0 && codes[i] == codes[i - 1])
                continue;
            uint32_t v = values[i];
            for (size_t j = i + 1; j < n && codes[j] == codes[i]; j++)
                v = values[j] < v ? values[j] : v;
            m->pairs[out++] = ghmi_pack(codes[i], v);
        }
    }
    free(count);
    return GHM_OK;
}

/* Step 4: starts[] from the sorted pairs (thesis listing 4.1, with buckets + 1 entries so that
 * bucket b is starts[b] .. starts[b + 1]); each entry is written by exactly one position. Then
 * the longest run. */
static void find_boundaries(ChainMap *m, size_t size)
{
    const GhmiChainTable *t = &m->t;
    uint32_t *starts = m->starts;
    const uint64_t *pairs = m->pairs;
    uint32_t nb = t->buckets;
    if (size == 0) {
        memset(starts, 0, ((size_t)nb + 1) * sizeof *starts);
        m->t.max_chain = 0;
        return;
    }
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (size > 65536)
    for (size_t j = 0; j < size; j++) {
        uint32_t mine = ghmi_chain_bucket(t, ghmi_slot_key(pairs[j]));
        /* buckets after the previous pair's (all from 0 for the first pair) start here */
        uint32_t from = j ? ghmi_chain_bucket(t, ghmi_slot_key(pairs[j - 1])) + 1 : 0;
        for (uint32_t b = from; b <= mine; b++)
            starts[b] = (uint32_t)j;
        if (j == size - 1) /* the last pair closes its bucket and every empty one after it */
            for (uint32_t b = mine + 1; b <= nb; b++)
                starts[b] = (uint32_t)size;
    }
    uint32_t longest = 0;
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (nb > 65536)           \
    reduction(max : longest)
    for (size_t b = 0; b < nb; b++) {
        uint32_t len = starts[b + 1] - starts[b];
        longest = len > longest ? len : longest;
    }
    m->t.max_chain = longest;
}

static int build_table(ChainMap *m, const uint32_t *keys, const uint32_t *values, size_t n)
{
    int ret = ghmi_chain_table(n, m->opt.load_factor, m->ctx->seed, &m->t);
    if (ret < 0)
        return ret;
    const GhmiChainTable *t = &m->t;
    size_t size = 0;
    uint32_t *codes = malloc((n ? n : 1) * sizeof *codes);
    uint32_t *vals = malloc((n ? n : 1) * sizeof *vals);
    if (!codes || !vals) {
        ret = GHM_ERR_NOMEM;
        goto done;
    }
    if ((ret = reserve((void **)&m->pairs, &m->pairs_alloc, n, sizeof *m->pairs)) < 0)
        goto done;
    ret = reserve((void **)&m->starts, &m->starts_alloc, (size_t)t->buckets + 1,
                  sizeof *m->starts);
    if (ret < 0)
        goto done;
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        codes[i] = ghmi_chain_code(t, keys[i]);
        vals[i] = values[i];
    }
    if ((ret = ghmi_cpu_sort_pairs(threads_of(m), codes, vals, n)) < 0)
        goto done;
    if ((ret = compact_runs(m, codes, vals, n, &size)) < 0)
        goto done;
    find_boundaries(m, size);
    m->size = size;
done:
    free(codes);
    free(vals);
    return ret;
}

static int chain_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    ChainMap *m = impl;
    m->built = 0;
    m->size = 0;
    int ret = build_table(m, keys, values, n);
    if (ret < 0) {
        release(m);
        m->size = 0;
        return ret;
    }
    m->built = 1;
    return GHM_OK;
}

/* The value of the pair with code `code` in pairs[lo .. hi), sorted by code. */
static uint32_t scan_run(const uint64_t *pairs, uint32_t lo, uint32_t hi, uint32_t code)
{
    for (uint32_t j = lo; j < hi; j++) {
        uint64_t e = pairs[j];
        uint32_t c = ghmi_slot_key(e);
        if (c >= code)
            return c == code ? ghmi_slot_value(e) : GHM_NOT_FOUND;
    }
    return GHM_NOT_FOUND;
}

/* A find in three stages: the key's bucket and its starts prefetched, then the starts read and
 * the run's first line prefetched, then the run scanned. They run as a software pipeline: key i
 * enters the first stage while key i - PIPE is in the second and key i - 2 PIPE in the third, so
 * PIPE misses of each stage are always in flight. Batches of 32 keys stage by stage (as the maps
 * of map_cpu.c and map_two_level_cpu.c go) let them drain to none between a batch's last stage
 * and the next one's first: the pipeline finds 1.15-1.45x as many keys a second on 2 cores from
 * 2^20 keys up, and as many on a 16-core Xeon whose L3 held the table (docs/BENCHMARKS.md,
 * 2026-11-30). The bucketed cuckoo map was slower this way on small tables and on that Xeon, and
 * keeps its batches. */
enum {
    PIPE = 12,
    RING = 32 /* a power of two above 2 PIPE: every key in flight */
};

static void find_chunk(const ChainMap *m, const uint32_t *keys, size_t cnt, uint32_t *out)
{
    const GhmiChainTable *t = &m->t;
    uint32_t code[RING], bucket[RING], lo[RING], hi[RING];
    for (size_t i = 0; i < cnt + 2 * PIPE; i++) {
        if (i < cnt) {
            size_t r = i % RING;
            code[r] = ghmi_chain_code(t, keys[i]);
            bucket[r] = ghmi_chain_bucket(t, code[r]);
            __builtin_prefetch(m->starts + bucket[r]);
        }
        if (i >= PIPE && i - PIPE < cnt) {
            size_t r = (i - PIPE) % RING;
            lo[r] = m->starts[bucket[r]];
            hi[r] = m->starts[bucket[r] + 1];
            __builtin_prefetch(m->pairs + lo[r]);
        }
        if (i >= 2 * PIPE && i - 2 * PIPE < cnt) {
            size_t j = i - 2 * PIPE, r = j % RING;
            out[j] = scan_run(m->pairs, lo[r], hi[r], code[r]);
        }
    }
}

static int chain_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const ChainMap *m = impl;
    if (!m->built) {
        for (size_t i = 0; i < n; i++)
            out[i] = GHM_NOT_FOUND;
        return GHM_OK;
    }
    /* work items of GHMI_FIND_CHUNK keys, as the pipelined finds of cpu_find_lanes.h: the
     * pipeline's fill and drain stay rare */
    size_t nchunk = (n + GHMI_FIND_CHUNK - 1) / GHMI_FIND_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_of(m)) if (n > GHMI_FIND_CHUNK)
    for (size_t c = 0; c < nchunk; c++) {
        size_t lo = c * GHMI_FIND_CHUNK;
        find_chunk(m, keys + lo, lo + GHMI_FIND_CHUNK < n ? GHMI_FIND_CHUNK : n - lo, out + lo);
    }
    return GHM_OK;
}

static int chain_stats(const void *impl, GhmMapStats *out)
{
    const ChainMap *m = impl;
    if (!m->built)
        return GHM_OK;
    out->size = m->size;
    out->capacity = ghmi_chain_capacity(&m->t);
    out->bytes = ghmi_chain_bytes(&m->t);
    out->max_probes = m->t.max_chain;
    return GHM_OK;
}

const GhmMapOps ghm_cpu_chain_map_ops = {
    .create = chain_create,
    .build = chain_build,
    .find = chain_find,
    .stats = chain_stats,
    .destroy = chain_destroy,
};
