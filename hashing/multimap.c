/*
 * multimap.c - GhmMultimap: the public API and the CPU backend (thesis 6.3, Algorithm 6.4):
 * stable radix sort of the (key, value) pairs by key, the run boundaries of the sorted keys, and
 * a CPU GhmMap from each distinct key to its run number r; run r's values are
 * values[starts[r] .. starts[r + 1]). Because the sort is stable, each run keeps the input order.
 */
#include "ghm_multimap.h"

#include <stdlib.h>
#include <string.h>

#include "cpu_sort_internal.h"
#include "ghm_backend_internal.h"
#include "hash_internal.h"

struct GhmMultimap {
    GhmContext *ctx;
    const GhmMultimapOps *ops;
    void *impl;
};

int ghm_multimap_create(GhmContext *ctx, double load_factor, GhmMultimap **out)
{
    if (!ctx || !out || !ghmi_load_factor_ok(load_factor))
        return GHM_ERR_INVALID;
    *out = NULL;
    const GhmMultimapOps *ops = ctx->backend->multimap;
    if (!ops)
        return GHM_ERR_UNSUPPORTED;
    GhmMultimap *mm = calloc(1, sizeof *mm);
    if (!mm)
        return GHM_ERR_NOMEM;
    mm->ctx = ctx;
    mm->ops = ops;
    int ret = ops->create(ctx, load_factor, &mm->impl);
    if (ret < 0) {
        free(mm);
        return ret;
    }
    *out = mm;
    return GHM_OK;
}

int ghm_multimap_build(GhmMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n)
{
    if (!mm || (n && (!keys || !values)))
        return GHM_ERR_INVALID;
    if (n >= GHM_NOT_FOUND) /* first indices are 32-bit, GHM_NOT_FOUND reserved */
        return GHM_ERR_TOO_LARGE;
    return mm->ops->build(mm->impl, keys, values, n);
}

int ghm_multimap_find(const GhmMultimap *mm, const uint32_t *keys, size_t n, uint32_t *first,
                      uint32_t *count)
{
    if (!mm || (n && !keys))
        return GHM_ERR_INVALID;
    return mm->ops->find(mm->impl, keys, n, first, count);
}

int ghm_multimap_retrieve(const GhmMultimap *mm, const uint32_t *keys, size_t n,
                          uint32_t *offsets, uint32_t *values_out, size_t capacity,
                          size_t *total)
{
    if (!mm || !offsets || !total || (n && !keys) || (capacity && !values_out))
        return GHM_ERR_INVALID;
    return mm->ops->retrieve(mm->impl, keys, n, offsets, values_out, capacity, total);
}

int ghm_multimap_values(const GhmMultimap *mm, const uint32_t **values, size_t *n)
{
    if (!mm || !values || !n)
        return GHM_ERR_INVALID;
    return mm->ops->values(mm->impl, values, n);
}

size_t ghm_multimap_keys(const GhmMultimap *mm) { return mm ? mm->ops->num_keys(mm->impl) : 0; }

int ghm_multimap_clone(GhmContext *ctx, const GhmMultimap *mm, GhmMultimap **out)
{
    if (!ctx || !mm || !out || ctx->backend != mm->ctx->backend)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmMultimap *c = calloc(1, sizeof *c);
    if (!c)
        return GHM_ERR_NOMEM;
    c->ctx = ctx;
    c->ops = mm->ops;
    int ret = mm->ops->clone(ctx, mm->impl, &c->impl);
    if (ret < 0) {
        free(c);
        return ret;
    }
    *out = c;
    return GHM_OK;
}

void ghm_multimap_free(GhmMultimap **mm)
{
    if (!mm || !*mm)
        return;
    (*mm)->ops->destroy((*mm)->impl);
    free(*mm);
    *mm = NULL;
}

/* ---------------------------------------------------------------------------------------------
 * The CPU backend.
 */

typedef struct CpuMultimap {
    GhmContext *ctx;
    void *map;        /* CPU GhmMap impl: distinct key -> run number */
    uint32_t *values; /* n values grouped by key; never NULL after create */
    size_t n;
    uint32_t *starts; /* runs + 1 run boundaries; never NULL after create */
    size_t runs;
} CpuMultimap;

static int threads_of(const CpuMultimap *mm) { return mm->ctx->threads > 0 ? mm->ctx->threads : 1; }

static void cpu_multimap_destroy(void *impl)
{
    CpuMultimap *mm = impl;
    if (!mm)
        return;
    if (mm->map)
        ghm_cpu_map_ops.destroy(mm->map);
    free(mm->values);
    free(mm->starts);
    free(mm);
}

static int cpu_multimap_create(GhmContext *ctx, double load_factor, void **impl)
{
    CpuMultimap *mm = calloc(1, sizeof *mm);
    if (!mm)
        return GHM_ERR_NOMEM;
    mm->ctx = ctx;
    GhmMapOptions mo = ghmi_inner_map_options(load_factor);
    int ret = ghm_cpu_map_ops.create(ctx, &mo, &mm->map);
    if (ret == GHM_OK) {
        mm->values = malloc(sizeof *mm->values);
        mm->starts = calloc(1, sizeof *mm->starts);
        if (!mm->values || !mm->starts)
            ret = GHM_ERR_NOMEM;
    }
    if (ret < 0) {
        cpu_multimap_destroy(mm);
        return ret;
    }
    *impl = mm;
    return GHM_OK;
}

/* Distinct keys (the first of each run) and their run numbers, the input of the inner map. */
static int run_heads(int threads, const uint32_t *sorted, const uint32_t *starts, size_t runs,
                     uint32_t **heads, uint32_t **numbers)
{
    *heads = malloc((runs ? runs : 1) * sizeof **heads);
    *numbers = malloc((runs ? runs : 1) * sizeof **numbers);
    if (!*heads || !*numbers) { /* the caller frees what it gets: hand back nothing */
        free(*heads);
        free(*numbers);
        *heads = *numbers = NULL;
        return GHM_ERR_NOMEM;
    }
    uint32_t *h = *heads, *num = *numbers;
#pragma omp parallel for schedule(static) num_threads(threads) if (runs > 65536)
    for (size_t r = 0; r < runs; r++) {
        h[r] = sorted[starts[r]];
        num[r] = (uint32_t)r;
    }
    return GHM_OK;
}

/* No pairs: what a failed rebuild of the inner map leaves (its old run numbers are gone). */
static void make_empty(CpuMultimap *mm)
{
    free(mm->values);
    free(mm->starts);
    mm->values = NULL;
    mm->starts = NULL;
    mm->n = 0;
    mm->runs = 0;
    ghm_cpu_map_ops.build(mm->map, NULL, NULL, 0); /* no keys: nothing to allocate */
}

static int cpu_multimap_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CpuMultimap *mm = impl;
    int threads = threads_of(mm);
    uint32_t *k = malloc((n ? n : 1) * sizeof *k);
    uint32_t *v = malloc((n ? n : 1) * sizeof *v);
    uint32_t *starts = NULL, *heads = NULL, *numbers = NULL;
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
        ret = run_heads(threads, k, starts, runs, &heads, &numbers);
    int inner = ret == GHM_OK; /* the inner map is rebuilt: its old runs are lost */
    if (inner)
        ret = ghm_cpu_map_ops.build(mm->map, heads, numbers, runs);
    free(k);
    free(heads);
    free(numbers);
    if (ret < 0) {
        free(v);
        free(starts);
        if (inner) /* a failed inner build left it empty or half-built: all of it empty */
            make_empty(mm);
        return ret; /* else the old content stands, whole */
    }
    free(mm->values);
    free(mm->starts);
    mm->values = v;
    mm->n = n;
    mm->starts = starts;
    mm->runs = runs;
    return GHM_OK;
}

static int cpu_multimap_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *first,
                             uint32_t *count)
{
    const CpuMultimap *mm = impl;
    /* The run numbers land in one of the outputs first, then become (first, count) in place. */
    uint32_t *runs = first ? first : count;
    if (!runs || !n)
        return GHM_OK;
    int ret = ghm_cpu_map_ops.find(mm->map, keys, n, runs);
    if (ret < 0)
        return ret;
    const uint32_t *starts = mm->starts;
#pragma omp parallel for schedule(static) num_threads(threads_of(mm)) if (n > 65536)
    for (size_t i = 0; i < n; i++) {
        uint32_t r = runs[i];
        uint32_t f = r == GHM_NOT_FOUND ? GHM_NOT_FOUND : starts[r];
        uint32_t c = r == GHM_NOT_FOUND ? 0 : starts[r + 1] - starts[r];
        if (first)
            first[i] = f;
        if (count)
            count[i] = c;
    }
    return GHM_OK;
}

/* Exclusive sum of count[0..n) into offsets[0..n]; the total in 64 bits (may pass 2^32). */
static uint64_t exclusive_sum(const uint32_t *count, size_t n, uint32_t *offsets)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        offsets[i] = (uint32_t)sum;
        sum += count[i];
    }
    offsets[n] = (uint32_t)sum;
    return sum;
}

/* Counts (via find), their exclusive sum, then one memcpy per key in parallel. */
static int cpu_multimap_retrieve(const void *impl, const uint32_t *keys, size_t n,
                                 uint32_t *offsets, uint32_t *values_out, size_t capacity,
                                 size_t *total)
{
    const CpuMultimap *mm = impl;
    uint32_t *first = malloc((n ? n : 1) * sizeof *first);
    uint32_t *count = malloc((n ? n : 1) * sizeof *count);
    int ret = first && count ? cpu_multimap_find(impl, keys, n, first, count) : GHM_ERR_NOMEM;
    uint64_t sum = ret == GHM_OK ? exclusive_sum(count, n, offsets) : 0;
    if (ret == GHM_OK) {
        *total = (size_t)sum;
        if (sum > 0xFFFFFFFFu || sum > capacity)
            ret = GHM_ERR_TOO_LARGE;
    }
    if (ret == GHM_OK) {
        const uint32_t *vals = mm->values;
#pragma omp parallel for schedule(static) num_threads(threads_of(mm)) if (n > 65536)
        for (size_t i = 0; i < n; i++)
            if (count[i])
                memcpy(values_out + offsets[i], vals + first[i], count[i] * sizeof *vals);
    }
    free(first);
    free(count);
    return ret;
}

static int cpu_multimap_values(const void *impl, const uint32_t **values, size_t *n)
{
    const CpuMultimap *mm = impl;
    *values = mm->values;
    *n = mm->n;
    return GHM_OK;
}

static size_t cpu_multimap_num_keys(const void *impl) { return ((const CpuMultimap *)impl)->runs; }

static int cpu_multimap_clone(GhmContext *ctx, const void *src, void **impl)
{
    const CpuMultimap *s = src;
    CpuMultimap *mm = calloc(1, sizeof *mm);
    if (!mm)
        return GHM_ERR_NOMEM;
    mm->ctx = ctx;
    mm->n = s->n;
    mm->runs = s->runs;
    mm->values = ghmi_copy_words(s->values, s->n);
    mm->starts = ghmi_copy_words(s->starts, s->runs ? s->runs + 1 : 0);
    int ret = mm->values && mm->starts ? ghmi_cpu_map_clone(ctx, s->map, &mm->map) : GHM_ERR_NOMEM;
    if (ret < 0) {
        cpu_multimap_destroy(mm);
        return ret;
    }
    *impl = mm;
    return GHM_OK;
}

const GhmMultimapOps ghm_cpu_multimap_ops = {
    .create = cpu_multimap_create,
    .build = cpu_multimap_build,
    .find = cpu_multimap_find,
    .retrieve = cpu_multimap_retrieve,
    .values = cpu_multimap_values,
    .num_keys = cpu_multimap_num_keys,
    .destroy = cpu_multimap_destroy,
    .clone = cpu_multimap_clone,
};
