/*
 * index.c - GhmIndex, the compacting table (2009 paper, 4.3): the public API and the CPU
 * backend. The CPU build sorts a copy of the keys with the parallel radix sort, keeps the first
 * key of every run (so ids are ranks in ascending key order, whatever the input order or thread
 * count), and maps key -> id with the CPU GhmMap; id -> key is the sorted array itself.
 */
#include "ghm_index.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_sort_internal.h"
#include "ghm_backend_internal.h"
#include "hash_internal.h"

struct GhmIndex {
    GhmContext *ctx;
    const GhmIndexOps *ops;
    void *impl;
};

int ghm_index_create(GhmContext *ctx, double load_factor, GhmIndex **out)
{
    if (!ctx || !out || !ghmi_load_factor_ok(load_factor))
        return GHM_ERR_INVALID;
    *out = NULL;
    const GhmIndexOps *ops = ctx->backend->index;
    if (!ops)
        return GHM_ERR_UNSUPPORTED;
    GhmIndex *ix = calloc(1, sizeof *ix);
    if (!ix)
        return GHM_ERR_NOMEM;
    ix->ctx = ctx;
    ix->ops = ops;
    int ret = ops->create(ctx, load_factor, &ix->impl);
    if (ret < 0) {
        free(ix);
        return ret;
    }
    *out = ix;
    return GHM_OK;
}

int ghm_index_build(GhmIndex *ix, const uint32_t *keys, size_t n)
{
    if (!ix || (n && !keys))
        return GHM_ERR_INVALID;
    if (n >= GHM_NOT_FOUND)
        return GHM_ERR_TOO_LARGE;
    return ix->ops->build(ix->impl, keys, n);
}

size_t ghm_index_size(const GhmIndex *ix) { return ix ? ix->ops->size(ix->impl) : 0; }

int ghm_index_ids(const GhmIndex *ix, const uint32_t *keys, size_t n, uint32_t *ids)
{
    if (!ix || (n && (!keys || !ids)))
        return GHM_ERR_INVALID;
    return ix->ops->ids(ix->impl, keys, n, ids);
}

int ghm_index_keys(const GhmIndex *ix, const uint32_t *ids, size_t n, uint32_t *keys)
{
    if (!ix || (n && (!ids || !keys)))
        return GHM_ERR_INVALID;
    return ix->ops->keys(ix->impl, ids, n, keys);
}

int ghm_index_key_array(const GhmIndex *ix, const uint32_t **keys)
{
    if (!ix || !keys)
        return GHM_ERR_INVALID;
    return ix->ops->key_array(ix->impl, keys);
}

int ghm_index_clone(GhmContext *ctx, const GhmIndex *ix, GhmIndex **out)
{
    if (!ctx || !ix || !out || ctx->backend != ix->ctx->backend)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmIndex *c = calloc(1, sizeof *c);
    if (!c)
        return GHM_ERR_NOMEM;
    c->ctx = ctx;
    c->ops = ix->ops;
    int ret = ix->ops->clone(ctx, ix->impl, &c->impl);
    if (ret < 0) {
        free(c);
        return ret;
    }
    *out = c;
    return GHM_OK;
}

void ghm_index_free(GhmIndex **ix)
{
    if (!ix || !*ix)
        return;
    (*ix)->ops->destroy((*ix)->impl);
    free(*ix);
    *ix = NULL;
}

/* ---------------------------------------------------------------------------------------------
 * The CPU backend.
 */

typedef struct CpuIndex {
    GhmContext *ctx;
    void *map;      /* CPU GhmMap impl: key -> id */
    uint32_t *keys; /* the K distinct keys, ascending; never NULL after create */
    size_t k;
} CpuIndex;

static void cpu_index_destroy(void *impl)
{
    CpuIndex *ix = impl;
    if (!ix)
        return;
    if (ix->map)
        ghm_cpu_map_ops.destroy(ix->map);
    free(ix->keys);
    free(ix);
}

static int cpu_index_create(GhmContext *ctx, double load_factor, void **impl)
{
    CpuIndex *ix = calloc(1, sizeof *ix);
    if (!ix)
        return GHM_ERR_NOMEM;
    ix->ctx = ctx;
    GhmMapOptions mo = ghmi_inner_map_options(load_factor);
    int ret = ghm_cpu_map_ops.create(ctx, &mo, &ix->map);
    if (ret == GHM_OK && !(ix->keys = malloc(sizeof *ix->keys)))
        ret = GHM_ERR_NOMEM;
    if (ret < 0) {
        cpu_index_destroy(ix);
        return ret;
    }
    *impl = ix;
    return GHM_OK;
}

/* Sorted distinct keys of keys[0..n) in a new array (at least one element allocated). */
static int distinct_sorted(int threads, const uint32_t *keys, size_t n, uint32_t **out, size_t *k)
{
    uint32_t *sorted = malloc((n ? n : 1) * sizeof *sorted);
    uint32_t *starts = NULL;
    if (!sorted)
        return GHM_ERR_NOMEM;
    if (n)
        memcpy(sorted, keys, n * sizeof *keys);
    int ret = ghmi_cpu_sort_pairs(threads, sorted, NULL, n);
    if (ret == GHM_OK)
        ret = ghmi_cpu_runs(threads, sorted, n, &starts, k);
    if (ret < 0) {
        free(sorted);
        return ret;
    }
    size_t runs = *k;
    /* Gather into a fresh array: an in-place parallel compaction would overlap. */
    uint32_t *uniq = malloc((runs ? runs : 1) * sizeof *uniq);
    if (uniq) {
#pragma omp parallel for schedule(static) num_threads(threads) if (runs > 65536)
        for (size_t r = 0; r < runs; r++)
            uniq[r] = sorted[starts[r]];
    }
    free(sorted);
    free(starts);
    *out = uniq;
    return uniq ? GHM_OK : GHM_ERR_NOMEM;
}

static int cpu_index_build(void *impl, const uint32_t *keys, size_t n)
{
    CpuIndex *ix = impl;
    int threads = ix->ctx->threads > 0 ? ix->ctx->threads : 1;
    uint32_t *uniq = NULL;
    size_t k = 0;
    int ret = distinct_sorted(threads, keys, n, &uniq, &k);
    if (ret < 0)
        return ret;
    uint32_t *ids = malloc((k ? k : 1) * sizeof *ids);
    if (!ids) {
        free(uniq);
        return GHM_ERR_NOMEM;
    }
#pragma omp parallel for schedule(static) num_threads(threads) if (k > 65536)
    for (size_t r = 0; r < k; r++)
        ids[r] = (uint32_t)r;
    ret = ghm_cpu_map_ops.build(ix->map, uniq, ids, k);
    free(ids);
    if (ret < 0) {
        free(uniq);
        ix->k = 0;
        return ret;
    }
    free(ix->keys);
    ix->keys = uniq;
    ix->k = k;
    return GHM_OK;
}

static size_t cpu_index_size(const void *impl) { return ((const CpuIndex *)impl)->k; }

static int cpu_index_ids(const void *impl, const uint32_t *keys, size_t n, uint32_t *ids)
{
    const CpuIndex *ix = impl;
    return ghm_cpu_map_ops.find(ix->map, keys, n, ids);
}

static int cpu_index_keys(const void *impl, const uint32_t *ids, size_t n, uint32_t *keys)
{
    const CpuIndex *ix = impl;
    int bad = 0;
    /* Out-of-range ids get GHM_NOT_FOUND and an error after the call, as on the CUDA backend. */
#pragma omp parallel for schedule(static) reduction(| : bad) num_threads(ix->ctx->threads) \
    if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        uint32_t id = ids[i];
        if (id < ix->k)
            keys[i] = ix->keys[id];
        else {
            keys[i] = GHM_NOT_FOUND;
            bad = 1;
        }
    }
    return bad ? GHM_ERR_INVALID : GHM_OK;
}

static int cpu_index_key_array(const void *impl, const uint32_t **keys)
{
    *keys = ((const CpuIndex *)impl)->keys;
    return GHM_OK;
}

static int cpu_index_clone(GhmContext *ctx, const void *src, void **impl)
{
    const CpuIndex *s = src;
    CpuIndex *ix = calloc(1, sizeof *ix);
    if (!ix)
        return GHM_ERR_NOMEM;
    ix->ctx = ctx;
    ix->k = s->k;
    ix->keys = ghmi_copy_words(s->keys, s->k);
    int ret = ix->keys ? ghmi_cpu_map_clone(ctx, s->map, &ix->map) : GHM_ERR_NOMEM;
    if (ret < 0) {
        cpu_index_destroy(ix);
        return ret;
    }
    *impl = ix;
    return GHM_OK;
}

const GhmIndexOps ghm_cpu_index_ops = {
    .create = cpu_index_create,
    .build = cpu_index_build,
    .size = cpu_index_size,
    .ids = cpu_index_ids,
    .keys = cpu_index_keys,
    .key_array = cpu_index_key_array,
    .destroy = cpu_index_destroy,
    .clone = cpu_index_clone,
};
