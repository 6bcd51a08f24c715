/*
 * refs.cu - the C-callable getters of hash_refs.h: a device reference to a structure built on
 * the CUDA backend. A public handle begins with {ctx, ops, impl} (GhmiHandle,
 * ghm_backend_internal.h); a handle whose ops is not the CUDA table belongs to another backend
 * and is refused, so the impl is only ever read as the CUDA state it is.
 */
#include "dynmap_cuda_internal.cuh"
#include "hash_cuda_internal.cuh"
#include "multimap_ref.cuh"

static const void *cuda_impl(const void *handle, const void *cuda_ops)
{
    const GhmiHandle *h = (const GhmiHandle *)handle;
    return h && h->ops == cuda_ops ? h->impl : NULL;
}

extern "C" int ghm_cuda_map_ref(const GhmMap *map, GhmMapRef *out)
{
    const void *impl = cuda_impl(map, &ghm_cuda_map_ops);
    if (!impl || !out)
        return GHM_ERR_INVALID;
    *out = *ghmi_cuda_map_get_ref((const CudaMap *)impl);
    return GHM_OK;
}

extern "C" int ghm_cuda_multimap_ref(const GhmMultimap *mm, GhmMultimapRef *out)
{
    const void *impl = cuda_impl(mm, &ghm_cuda_multimap_ops);
    if (!impl || !out)
        return GHM_ERR_INVALID;
    ghmi_cuda_multimap_get_ref(impl, out);
    return GHM_OK;
}

extern "C" int ghm_cuda_dynmap_ref(const GhmDynmap *dm, GhmDynmapRef *out)
{
    const CudaDynmap *d = (const CudaDynmap *)cuda_impl(dm, &ghm_cuda_dynmap_ops);
    if (!d || !out)
        return GHM_ERR_INVALID;
    *out = d->ref;
    return GHM_OK;
}

extern "C" int ghm_cuda_dynmap_refresh(GhmDynmap *dm)
{
    CudaDynmap *d = (CudaDynmap *)cuda_impl(dm, &ghm_cuda_dynmap_ops);
    return d ? ghmi_dyn_read_counters(d) : GHM_ERR_INVALID;
}

extern "C" int ghm_cuda_multimap_build_queued(GhmMultimap *mm, const uint32_t *keys,
                                              const uint32_t *values, size_t n,
                                              const GhmQueuedBuild *q, GhmMultimapRef *out)
{
    void *impl = (void *)cuda_impl(mm, &ghm_cuda_multimap_ops);
    if (!impl || !q || q->attempt < 0)
        return GHM_ERR_INVALID;
    int ret = ghmi_cuda_multimap_build_queued(impl, keys, values, n, q->key_bits, q->attempt,
                                              q->failed);
    if (ret >= 0 && out)
        ghmi_cuda_multimap_get_ref(impl, out);
    return ret;
}

extern "C" int ghm_cuda_multimap_input(GhmMultimap *mm, size_t n, uint32_t **keys,
                                       uint32_t **values)
{
    void *impl = (void *)cuda_impl(mm, &ghm_cuda_multimap_ops);
    return impl ? ghmi_cuda_multimap_input(impl, n, keys, values) : GHM_ERR_INVALID;
}

extern "C" int ghm_cuda_map_build_queued(GhmMap *map, const uint32_t *keys,
                                         const uint32_t *values, const uint32_t *count, size_t n,
                                         const GhmQueuedBuild *q, GhmMapRef *out)
{
    CudaMap *m = (CudaMap *)cuda_impl(map, &ghm_cuda_map_ops);
    if (!m || !q || q->attempt < 0 || (n && (!keys || !values || !count)))
        return GHM_ERR_INVALID;
    int ret = ghmi_cuda_map_build_queued(m, keys, values, count, n, 0, q->attempt, q->failed);
    if (ret >= 0 && out)
        *out = *ghmi_cuda_map_get_ref(m);
    return ret;
}

static void index_ref(const CudaIndex *ix, GhmIndexRef *out)
{
    out->map = *ghmi_cuda_index_map_ref(ix);
    out->keys = ghmi_cuda_index_keys(ix);
    out->size = (uint32_t)ghmi_cuda_index_size(ix);
}

extern "C" int ghm_cuda_index_ref(const GhmIndex *ix, GhmIndexRef *out)
{
    const void *impl = cuda_impl(ix, &ghm_cuda_index_ops);
    if (!impl || !out)
        return GHM_ERR_INVALID;
    index_ref((const CudaIndex *)impl, out);
    return GHM_OK;
}

extern "C" int ghm_cuda_set_ref(const GhmSet *set, GhmIndexRef *out)
{
    const void *impl = cuda_impl(set, &ghm_cuda_set_ops);
    if (!impl || !out)
        return GHM_ERR_INVALID;
    index_ref((const CudaIndex *)impl, out);
    return GHM_OK;
}

/* ---- probes through a reference, one thread per key ------------------------------------------ */

static __global__ __launch_bounds__(256) void map_ref_probe_kernel(GhmMapRef ref,
                                                                   const uint32_t *keys, size_t n,
                                                                   uint32_t *out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = ghm_map_ref_find(&ref, keys[i]);
}

static __global__ __launch_bounds__(256) void multimap_ref_probe_kernel(GhmMultimapRef ref,
                                                                        const uint32_t *keys,
                                                                        size_t n, uint32_t *first,
                                                                        uint32_t *count)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t f, c;
    ghm_multimap_ref_find(&ref, keys[i], &f, &c);
    first[i] = f;
    count[i] = c;
}

static int check_probe(GhmContext *ctx, const uint32_t *keys, size_t n)
{
    return ctx && ctx->backend->kind == GHM_BACKEND_CUDA && (n == 0 || keys) ? GHM_OK
                                                                        : GHM_ERR_INVALID;
}

extern "C" int ghm_cuda_map_ref_probe(GhmContext *ctx, const GhmMapRef *ref, const uint32_t *keys,
                                      size_t n, uint32_t *out)
{
    if (!ref || !out || check_probe(ctx, keys, n) < 0)
        return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    cudaStream_t s = ghm_cuda_stream(ctx);
    const void *dk;
    void *ok = NULL, *dout = NULL, *oo = NULL;
    int ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_output(ctx, out, n * 4, &dout, &oo);
    if (ret >= 0) {
        map_ref_probe_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(
            *ref, (const uint32_t *)dk, n, (uint32_t *)dout);
        ret = GHM_CUDA_LAUNCH();
    }
    int fin = ghmi_cuda_output_finish(ctx, out, ret < 0 ? NULL : oo, n * 4);
    ghmi_cuda_release(ctx, ok);
    ghmi_cuda_release(ctx, oo);
    return ret < 0 ? ret : fin;
}

extern "C" int ghm_cuda_multimap_ref_probe(GhmContext *ctx, const GhmMultimapRef *ref,
                                           const uint32_t *keys, size_t n, uint32_t *first,
                                           uint32_t *count)
{
    if (!ref || !first || !count || check_probe(ctx, keys, n) < 0)
        return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    cudaStream_t s = ghm_cuda_stream(ctx);
    const void *dk;
    void *ok = NULL, *df = NULL, *of = NULL, *dc = NULL, *oc = NULL;
    int ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_output(ctx, first, n * 4, &df, &of);
    if (ret >= 0)
        ret = ghmi_cuda_output(ctx, count, n * 4, &dc, &oc);
    if (ret >= 0) {
        multimap_ref_probe_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(
            *ref, (const uint32_t *)dk, n, (uint32_t *)df, (uint32_t *)dc);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0 && of)
        ret = GHM_CUDA(cudaMemcpyAsync(first, of, n * 4, cudaMemcpyDeviceToHost, s));
    int fin = ghmi_cuda_output_finish(ctx, count, ret < 0 ? NULL : oc, n * 4);
    ghmi_cuda_release(ctx, ok);
    ghmi_cuda_release(ctx, of);
    ghmi_cuda_release(ctx, oc);
    return ret < 0 ? ret : fin;
}
