/*
 * set.cu - GhmSet on the CUDA backend: the index of index.cu (sorted distinct keys plus a
 * bucketed cuckoo map key -> rank) answering membership. The sorted array gives
 * ghm_set_keys() its ascending order for free; the thesis's set (6.3) would need a sort for it
 * anyway.
 *
 * Kernel: the bulk find of hash_cuda_internal.cuh with an emitter that writes one byte per key.
 */
#include "hash_cuda_internal.cuh"

struct EmitFlag {
    uint8_t *out;
    __device__ void operator()(size_t i, uint32_t key, uint32_t v) const
    {
        out[i] = v != GHM_NOT_FOUND;
    }
};

static int set_create(GhmContext *ctx, double load_factor, void **impl)
{
    return ghmi_cuda_index_create(ctx, load_factor, (CudaIndex **)impl);
}

static int set_build(void *impl, const uint32_t *keys, size_t n)
{
    return ghm_cuda_index_ops.build(impl, keys, n);
}

static size_t set_size(const void *impl) { return ghmi_cuda_index_size((const CudaIndex *)impl); }

static int set_contains(const void *impl, const uint32_t *keys, size_t n, uint8_t *out)
{
    const CudaIndex *ix = (const CudaIndex *)impl;
    if (n == 0)
        return GHM_OK;
    if (!keys || !out)
        return GHM_ERR_INVALID;
    GhmContext *ctx = ghmi_cuda_index_context(ix);
    const void *dk;
    void *ok = NULL, *dout = NULL, *oo = NULL;
    int ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_output(ctx, out, n, &dout, &oo);
    if (ret >= 0) {
        EmitFlag emit = {(uint8_t *)dout};
        ret = ghmi_map_find_launch(ghmi_cuda_index_map_ref(ix), (const uint32_t *)dk, n, emit,
                                   ghm_cuda_stream(ctx));
    }
    int fin = ghmi_cuda_output_finish(ctx, out, ret < 0 ? NULL : oo, n);
    ghmi_cuda_release(ctx, ok);
    ghmi_cuda_release(ctx, oo);
    return ret < 0 ? ret : fin;
}

static int set_keys(const void *impl, uint32_t *out)
{
    const CudaIndex *ix = (const CudaIndex *)impl;
    size_t k = ghmi_cuda_index_size(ix);
    if (k == 0)
        return GHM_OK;
    if (!out)
        return GHM_ERR_INVALID;
    GhmContext *ctx = ghmi_cuda_index_context(ix);
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(out, ghmi_cuda_index_keys(ix), k * 4, cudaMemcpyDefault, s));
    int sync = GHM_CUDA(ghm_cuda_wait(s));
    return ret < 0 ? ret : sync;
}

static void set_destroy(void *impl) { ghmi_cuda_index_destroy((CudaIndex *)impl); }

extern "C" const GhmSetOps ghm_cuda_set_ops = {
    /* .create = */ set_create,
    /* .build = */ set_build,
    /* .size = */ set_size,
    /* .contains = */ set_contains,
    /* .keys = */ set_keys,
    /* .destroy = */ set_destroy,
};
