/*
 * dist_map_cpu.c - a GhmDistMap shard's steps on the CPU backend (GhmDistOps): the count and
 * the split by part on the context's threads, each thread over one contiguous chunk of the keys
 * (so the split is stable: a part's keys keep their order), and plain copies between contexts.
 * Every context's memory is the host's, so calls are direct (reach: a split writes straight into
 * the parts' arrays); the copies serve the tests that force them.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_backend_internal.h"
#include "hash_family.h"

/* Chunk t of nt over n items: [*lo, *hi). Chunks, not threads, fix the order, so a region
 * that gets fewer threads than it asked for still splits the same way. */
static void chunk(size_t n, int t, int nt, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)t / (size_t)nt;
    *hi = n * (size_t)(t + 1) / (size_t)nt;
}

/* counts[t * parts + q]: thread t's keys of part q. */
static void count_chunks(const uint32_t *keys, size_t n, GhmiDistConsts c, int nt,
                         size_t *counts)
{
#pragma omp parallel num_threads(nt)
    for (int t = omp_get_thread_num(); t < nt; t += omp_get_num_threads()) {
        size_t lo, hi, *mine = counts + (size_t)t * c.parts;
        chunk(n, t, nt, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            mine[ghmi_dist_part(keys[i], c)]++;
    }
}

/* Threads a split uses: the context's, fewer for small shards (a thread's histogram costs
 * parts words to clear and add). */
static int split_threads(const GhmContext *ctx, size_t n)
{
    int nt = ghm_context_threads(ctx);
    size_t most = n / 4096 + 1;
    return (size_t)nt > most ? (int)most : nt;
}

static int cpu_count(GhmContext *ctx, const uint32_t *keys, size_t n, GhmiDistConsts c,
                     size_t *counts)
{
    int nt = split_threads(ctx, n);
    size_t *per = calloc((size_t)nt * c.parts, sizeof *per);
    if (!per)
        return GHM_ERR_NOMEM;
    count_chunks(keys, n, c, nt, per);
    for (uint32_t q = 0; q < c.parts; q++) {
        counts[q] = 0;
        for (int t = 0; t < nt; t++)
            counts[q] += per[(size_t)t * c.parts + q];
    }
    free(per);
    return GHM_OK;
}

/* The way back is each key's position: the key at split position s is keys[perm[s]]. */
static int cpu_split(GhmContext *ctx, const uint32_t *keys, const uint32_t *values, size_t n,
                     GhmiDistConsts c, const GhmiDistDest *dest, uint32_t *perm)
{
    int nt = split_threads(ctx, n);
    size_t *at = calloc((size_t)nt * c.parts, sizeof *at);
    if (!at)
        return GHM_ERR_NOMEM;
    count_chunks(keys, n, c, nt, at);
    /* where thread t puts its first key of part q: the earlier threads' keys of that part on */
    for (uint32_t q = 0; q < c.parts; q++) {
        size_t pos = 0;
        for (int t = 0; t < nt; t++) {
            size_t k = at[(size_t)t * c.parts + q];
            at[(size_t)t * c.parts + q] = pos;
            pos += k;
        }
    }
#pragma omp parallel num_threads(nt)
    for (int t = omp_get_thread_num(); t < nt; t += omp_get_num_threads()) {
        size_t lo, hi, *next = at + (size_t)t * c.parts;
        chunk(n, t, nt, &lo, &hi);
        for (size_t i = lo; i < hi; i++) {
            uint32_t q = ghmi_dist_part(keys[i], c);
            size_t s = next[q]++;
            dest->keys[q][s] = keys[i];
            if (perm)
                perm[dest->start[q] + s] = (uint32_t)i;
            if (values)
                dest->values[q][s] = values[i];
        }
    }
    free(at);
    return GHM_OK;
}

static size_t cpu_way_back_words(size_t n, uint32_t parts)
{
    (void)parts;
    return n;
}

static int cpu_unsplit(GhmContext *ctx, const uint32_t *keys, const uint32_t *in,
                       const uint32_t *perm, size_t n, GhmiDistConsts c, uint32_t *out)
{
    (void)keys, (void)c;
#pragma omp parallel for num_threads(split_threads(ctx, n)) schedule(static)
    for (size_t s = 0; s < n; s++)
        out[perm[s]] = in[s];
    return GHM_OK;
}

static int cpu_copy(GhmContext *dst_ctx, void *dst, GhmContext *src_ctx, const void *src,
                    size_t bytes)
{
    (void)dst_ctx;
    (void)src_ctx;
    memcpy(dst, src, bytes);
    return GHM_OK;
}

/* Every context's temporaries are host memory. */
static int cpu_reach(GhmContext *const *ctx, int parts)
{
    (void)ctx, (void)parts;
    return 1;
}

/* calloc's pages come zeroed by the kernel, untouched until written: no pass to save */
const GhmDistOps ghm_cpu_dist_ops = {.count = cpu_count,
                                     .split = cpu_split,
                                     .way_back_words = cpu_way_back_words,
                                     .unsplit = cpu_unsplit,
                                     .copy = cpu_copy,
                                     .alloc = ghm_buffer_alloc,
                                     .reach = cpu_reach};
