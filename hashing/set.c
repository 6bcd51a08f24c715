/*
 * set.c - GhmSet: the public API and the CPU backend. The CPU set is a CPU GhmIndex (sorted
 * distinct keys plus a key -> rank cuckoo map): membership is "has an id", and the sorted keys
 * that ghm_set_keys() promises are already there.
 */
#include "ghm_set.h"

#include <stdlib.h>
#include <string.h>

#include "ghm_backend_internal.h"
#include "hash_internal.h"

struct GhmSet {
    GhmContext *ctx;
    const GhmSetOps *ops;
    void *impl;
};

int ghm_set_create(GhmContext *ctx, double load_factor, GhmSet **out)
{
    if (!ctx || !out || !ghmi_load_factor_ok(load_factor))
        return GHM_ERR_INVALID;
    *out = NULL;
    const GhmSetOps *ops = ctx->backend->set;
    if (!ops)
        return GHM_ERR_UNSUPPORTED;
    GhmSet *set = calloc(1, sizeof *set);
    if (!set)
        return GHM_ERR_NOMEM;
    set->ctx = ctx;
    set->ops = ops;
    int ret = ops->create(ctx, load_factor, &set->impl);
    if (ret < 0) {
        free(set);
        return ret;
    }
    *out = set;
    return GHM_OK;
}

int ghm_set_build(GhmSet *set, const uint32_t *keys, size_t n)
{
    if (!set || (n && !keys))
        return GHM_ERR_INVALID;
    if (n >= GHM_NOT_FOUND)
        return GHM_ERR_TOO_LARGE;
    return set->ops->build(set->impl, keys, n);
}

size_t ghm_set_size(const GhmSet *set) { return set ? set->ops->size(set->impl) : 0; }

int ghm_set_contains(const GhmSet *set, const uint32_t *keys, size_t n, uint8_t *out)
{
    if (!set || (n && (!keys || !out)))
        return GHM_ERR_INVALID;
    return set->ops->contains(set->impl, keys, n, out);
}

int ghm_set_keys(const GhmSet *set, uint32_t *out)
{
    if (!set || !out)
        return GHM_ERR_INVALID;
    return set->ops->keys(set->impl, out);
}

void ghm_set_free(GhmSet **set)
{
    if (!set || !*set)
        return;
    (*set)->ops->destroy((*set)->impl);
    free(*set);
    *set = NULL;
}

/* ---------------------------------------------------------------------------------------------
 * The CPU backend.
 */

typedef struct CpuSet {
    GhmContext *ctx;
    void *index; /* CPU GhmIndex impl */
} CpuSet;

static void cpu_set_destroy(void *impl)
{
    CpuSet *s = impl;
    if (!s)
        return;
    if (s->index)
        ghm_cpu_index_ops.destroy(s->index);
    free(s);
}

static int cpu_set_create(GhmContext *ctx, double load_factor, void **impl)
{
    CpuSet *s = calloc(1, sizeof *s);
    if (!s)
        return GHM_ERR_NOMEM;
    s->ctx = ctx;
    int ret = ghm_cpu_index_ops.create(ctx, load_factor, &s->index);
    if (ret < 0) {
        cpu_set_destroy(s);
        return ret;
    }
    *impl = s;
    return GHM_OK;
}

static int cpu_set_build(void *impl, const uint32_t *keys, size_t n)
{
    CpuSet *s = impl;
    return ghm_cpu_index_ops.build(s->index, keys, n);
}

static size_t cpu_set_size(const void *impl)
{
    const CpuSet *s = impl;
    return ghm_cpu_index_ops.size(s->index);
}

#define CHUNK ((size_t)1 << 18) /* queries whose ids are looked up per call into the index */

static int cpu_set_contains(const void *impl, const uint32_t *keys, size_t n, uint8_t *out)
{
    const CpuSet *s = impl;
    uint32_t *ids = malloc((n < CHUNK ? (n ? n : 1) : CHUNK) * sizeof *ids);
    if (!ids)
        return GHM_ERR_NOMEM;
    int ret = GHM_OK;
    for (size_t lo = 0; lo < n && ret == GHM_OK; lo += CHUNK) {
        size_t cnt = n - lo < CHUNK ? n - lo : CHUNK;
        if ((ret = ghm_cpu_index_ops.ids(s->index, keys + lo, cnt, ids)) < 0)
            break;
#pragma omp parallel for schedule(static) num_threads(s->ctx->threads) if (cnt > 65536)
        for (size_t i = 0; i < cnt; i++)
            out[lo + i] = ids[i] != GHM_NOT_FOUND;
    }
    free(ids);
    return ret;
}

static int cpu_set_keys(const void *impl, uint32_t *out)
{
    const CpuSet *s = impl;
    const uint32_t *keys = NULL;
    int ret = ghm_cpu_index_ops.key_array(s->index, &keys);
    if (ret == GHM_OK)
        memcpy(out, keys, ghm_cpu_index_ops.size(s->index) * sizeof *out);
    return ret;
}

const GhmSetOps ghm_cpu_set_ops = {
    .create = cpu_set_create,
    .build = cpu_set_build,
    .size = cpu_set_size,
    .contains = cpu_set_contains,
    .keys = cpu_set_keys,
    .destroy = cpu_set_destroy,
};
