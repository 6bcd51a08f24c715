/*
 * sorted.c - GhmSorted, the baseline: the public API and the CPU backend. The CPU build sorts
 * the pairs with the parallel radix sort and keeps one entry per distinct key holding the
 * smallest of its values (so duplicates answer like GhmMap); find runs branch-free binary searches
 * in groups.
 */
#include "ghm_sorted.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_sort_internal.h"
#include "ghm_backend_internal.h"
#include "ghm_map.h"

struct GhmSorted {
    GhmContext *ctx;
    const GhmSortedOps *ops;
    void *impl;
};

int ghm_sorted_create(GhmContext *ctx, GhmSorted **out)
{
    if (!ctx || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    const GhmSortedOps *ops = ctx->backend->sorted;
    if (!ops)
        return GHM_ERR_UNSUPPORTED;
    GhmSorted *s = calloc(1, sizeof *s);
    if (!s)
        return GHM_ERR_NOMEM;
    s->ctx = ctx;
    s->ops = ops;
    int ret = ops->create(ctx, &s->impl);
    if (ret < 0) {
        free(s);
        return ret;
    }
    *out = s;
    return GHM_OK;
}

int ghm_sorted_build(GhmSorted *s, const uint32_t *keys, const uint32_t *values, size_t n)
{
    if (!s || (n && (!keys || !values)))
        return GHM_ERR_INVALID;
    if (n >= GHM_NOT_FOUND)
        return GHM_ERR_TOO_LARGE;
    return s->ops->build(s->impl, keys, values, n);
}

int ghm_sorted_find(const GhmSorted *s, const uint32_t *keys, size_t n, uint32_t *out)
{
    if (!s || (n && (!keys || !out)))
        return GHM_ERR_INVALID;
    return s->ops->find(s->impl, keys, n, out);
}

void ghm_sorted_free(GhmSorted **s)
{
    if (!s || !*s)
        return;
    (*s)->ops->destroy((*s)->impl);
    free(*s);
    *s = NULL;
}

/* ---------------------------------------------------------------------------------------------
 * The CPU backend.
 */

typedef struct CpuSorted {
    GhmContext *ctx;
    uint32_t *keys; /* distinct keys, ascending */
    uint32_t *values;
    size_t k;
} CpuSorted;

static void cpu_sorted_destroy(void *impl)
{
    CpuSorted *s = impl;
    if (!s)
        return;
    free(s->keys);
    free(s->values);
    free(s);
}

static int cpu_sorted_create(GhmContext *ctx, void **impl)
{
    CpuSorted *s = calloc(1, sizeof *s);
    if (!s)
        return GHM_ERR_NOMEM;
    s->ctx = ctx;
    *impl = s;
    return GHM_OK;
}

/* One entry per run of the sorted pairs: its key and the smallest of its values. */
static int compact_runs(int threads, const uint32_t *k, const uint32_t *v, const uint32_t *starts,
                        size_t runs, CpuSorted *s)
{
    uint32_t *keys = malloc((runs ? runs : 1) * sizeof *keys);
    uint32_t *vals = malloc((runs ? runs : 1) * sizeof *vals);
    if (!keys || !vals) {
        free(keys);
        free(vals);
        return GHM_ERR_NOMEM;
    }
#pragma omp parallel for schedule(dynamic, 4096) num_threads(threads) if (runs > 65536)
    for (size_t r = 0; r < runs; r++) {
        uint32_t best = v[starts[r]];
        for (uint32_t i = starts[r] + 1; i < starts[r + 1]; i++)
            best = v[i] < best ? v[i] : best;
        keys[r] = k[starts[r]];
        vals[r] = best;
    }
    free(s->keys);
    free(s->values);
    s->keys = keys;
    s->values = vals;
    s->k = runs;
    return GHM_OK;
}

static int cpu_sorted_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CpuSorted *s = impl;
    int threads = s->ctx->threads > 0 ? s->ctx->threads : 1;
    uint32_t *k = malloc((n ? n : 1) * sizeof *k);
    uint32_t *v = malloc((n ? n : 1) * sizeof *v);
    uint32_t *starts = NULL;
    size_t runs = 0;
    int ret = k && v ? GHM_OK : GHM_ERR_NOMEM;
    if (ret == GHM_OK && n) {
        memcpy(k, keys, n * sizeof *k);
        memcpy(v, values, n * sizeof *v);
    }
    if (ret == GHM_OK)
        ret = ghmi_cpu_sort_pairs(threads, k, v, n);
    if (ret == GHM_OK)
        ret = ghmi_cpu_runs(threads, k, n, &starts, &runs);
    if (ret == GHM_OK)
        ret = compact_runs(threads, k, v, starts, runs, s);
    if (ret < 0)
        s->k = 0;
    free(k);
    free(v);
    free(starts);
    return ret;
}

#define GROUP 16 /* searches run in lockstep, so their cache misses overlap */

/* Finds keys[0..cnt), cnt <= GROUP: branch-free lower bounds over the k sorted keys, one level
 * of all searches at a time (a lone binary search waits for each of its ~lg k misses in turn). */
static void find_group(const CpuSorted *s, const uint32_t *keys, size_t cnt, uint32_t *out)
{
    const uint32_t *base[GROUP];
    for (size_t g = 0; g < cnt; g++)
        base[g] = s->keys;
    for (size_t len = s->k; len > 1;) {
        size_t half = len / 2;
        for (size_t g = 0; g < cnt; g++)
            base[g] = base[g][half - 1] < keys[g] ? base[g] + half : base[g];
        len -= half;
    }
    for (size_t g = 0; g < cnt; g++) {
        size_t p = (size_t)(base[g] - s->keys) + (*base[g] < keys[g]);
        out[g] = p < s->k && s->keys[p] == keys[g] ? s->values[p] : GHM_NOT_FOUND;
    }
}

static int cpu_sorted_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const CpuSorted *s = impl;
    if (s->k == 0) {
        for (size_t i = 0; i < n; i++)
            out[i] = GHM_NOT_FOUND;
        return GHM_OK;
    }
    size_t ngroups = (n + GROUP - 1) / GROUP;
#pragma omp parallel for schedule(dynamic, 256) num_threads(s->ctx->threads) if (n > 4096)
    for (size_t gi = 0; gi < ngroups; gi++) {
        size_t lo = gi * GROUP, cnt = n - lo < GROUP ? n - lo : GROUP;
        find_group(s, keys + lo, cnt, out + lo);
    }
    return GHM_OK;
}

const GhmSortedOps ghm_cpu_sorted_ops = {
    .create = cpu_sorted_create,
    .build = cpu_sorted_build,
    .find = cpu_sorted_find,
    .destroy = cpu_sorted_destroy,
};
