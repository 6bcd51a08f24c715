/*
 * map_scheme.cu - the generic part of the CUDA map schemes (map_scheme.cuh).
 */
#include <stdlib.h>
#include <string.h>

#include "map_scheme.cuh"

int ghmi_scheme_create(GhmContext *ctx, const GhmMapOptions *opt, const GhmiSchemeOps *ops,
                       void **impl)
{
    GhmiSchemeMap *m = (GhmiSchemeMap *)calloc(1, ops->state_bytes);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ops = ops;
    m->ctx = ctx;
    m->opt = *opt;
    m->oob_value = GHM_NOT_FOUND;
    int ret = ghmi_device_alloc(ctx, ops->meta_bytes, &m->meta);
    if (ret < 0) {
        free(m);
        return ret;
    }
    *impl = m;
    return GHM_OK;
}

void ghmi_scheme_destroy(void *impl)
{
    GhmiSchemeMap *m = (GhmiSchemeMap *)impl;
    if (!m)
        return;
    m->ops->release(m);
    ghmi_cuda_release(m->ctx, m->meta);
    ghm_cuda_wait(ghm_cuda_stream(m->ctx));
    free(m);
}

/* Empty, its memory returned: what a failed build leaves. */
static void forget(GhmiSchemeMap *m)
{
    m->ops->release(m);
    m->built = 0;
    m->size = 0;
    m->oob_value = GHM_NOT_FOUND;
}

static int build_device(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    GhmiSchemeMap *m = (GhmiSchemeMap *)impl;
    m->built = 0;
    m->size = 0;
    int ret = m->ops->build(m, keys, values, n);
    if (ret < 0) {
        forget(m);
        return ret;
    }
    m->built = 1;
    return GHM_OK;
}

int ghmi_scheme_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    GhmiSchemeMap *m = (GhmiSchemeMap *)impl;
    if (n > m->ops->max_pairs) { /* before staging: the arrays are not read */
        forget(m);
        return GHM_ERR_TOO_LARGE;
    }
    return ghmi_cuda_staged_build(m->ctx, m, build_device, keys, values, n);
}

static int find_device(const void *impl, const uint32_t *keys, size_t n, uint32_t *out,
                       cudaStream_t s)
{
    const GhmiSchemeMap *m = (const GhmiSchemeMap *)impl;
    unsigned grid = 1;
    int ret = ghmi_cuda_grid(n, 256, &grid);
    if (ret < 0)
        return ret;
    if (!m->built)
        return GHM_CUDA(cudaMemsetAsync(out, 0xFF, n * 4, s));
    m->ops->find(m, keys, n, out, grid, s);
    return GHM_CUDA_LAUNCH();
}

int ghmi_scheme_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const GhmiSchemeMap *m = (const GhmiSchemeMap *)impl;
    return ghmi_cuda_staged_find(m->ctx, m, find_device, keys, n, out);
}

int ghmi_scheme_find_queued(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const GhmiSchemeMap *m = (const GhmiSchemeMap *)impl;
    return n ? find_device(m, keys, n, out, ghm_cuda_stream(m->ctx)) : GHM_OK;
}

int ghmi_scheme_stats(const void *impl, GhmMapStats *out)
{
    const GhmiSchemeMap *m = (const GhmiSchemeMap *)impl;
    out->size = m->size;
    out->rebuilds = m->rebuilds;
    if (m->built)
        m->ops->stats(m, out);
    return GHM_OK;
}
