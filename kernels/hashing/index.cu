/*
 * index.cu - GhmIndex on the CUDA backend (2009 paper 4.3, the compacting table): the distinct
 * keys sorted ascending (CUB radix sort + unique), so that a key's id is its rank on both
 * backends, and a bucketed cuckoo map key -> id (map.cu) for the forward direction; id -> key is
 * a gather from the sorted array. GhmSet (set.cu) is the same structure answering membership.
 *
 * Kernels: the bulk find of hash_cuda_internal.cuh (one thread per key) and
 * gather_keys_kernel, one thread per id, which flags ids >= K.
 */
#include <cub/cub.cuh>
#include <stdlib.h>

#include "hash_cuda_internal.cuh"

struct CudaIndex {
    GhmContext *ctx;
    double load_factor; /* as created: a clone is created alike */
    CudaMap *map;
    uint32_t *keys; /* size distinct keys, ascending */
    size_t size;
};

static __global__ __launch_bounds__(256) void gather_keys_kernel(
    const uint32_t *__restrict__ sorted, size_t size, const uint32_t *__restrict__ ids, size_t n,
    uint32_t *__restrict__ out, unsigned int *bad)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t id = ids[i];
    if (id < size) {
        out[i] = sorted[id];
    } else {
        out[i] = GHM_NOT_FOUND;
        *bad = 1;
    }
}

int ghmi_cuda_index_create(GhmContext *ctx, double load_factor, CudaIndex **out)
{
    if (load_factor < 0.0 || load_factor > 0.99)
        return GHM_ERR_INVALID;
    CudaIndex *ix = (CudaIndex *)calloc(1, sizeof *ix);
    if (!ix)
        return GHM_ERR_NOMEM;
    ix->ctx = ctx;
    ix->load_factor = load_factor;
    GhmMapOptions opt = {load_factor, GHM_MAP_BUCKETED, 2, 8};
    int ret = ghmi_cuda_map_create(ctx, &opt, &ix->map);
    if (ret >= 0)
        ret = ghmi_cuda_map_build(ix->map, NULL, NULL, 0, 1);
    if (ret < 0) {
        ghmi_cuda_index_destroy(ix);
        return ret;
    }
    *out = ix;
    return GHM_OK;
}

void ghmi_cuda_index_destroy(CudaIndex *ix)
{
    if (!ix)
        return;
    ghmi_cuda_map_destroy(ix->map);
    if (ix->keys)
        ghmi_device_free(ix->ctx, ix->keys);
    ghm_cuda_wait(ghm_cuda_stream(ix->ctx));
    free(ix);
}

/* sort_unique's scratch, one block: CUB's temp storage for the larger of its passes, then the
 * run count (phase 1 with a NULL carve base: the size). */
static void unique_layout(GhmiCarve *c, size_t temp_bytes, void **temp, unsigned long long **dnum)
{
    *temp = ghmi_carve(c, temp_bytes ? temp_bytes : 1); /* NULL would make CUB size, not run */
    *dnum = (unsigned long long *)ghmi_carve(c, sizeof **dnum);
}

/* Sorts keys into sorted[] and writes the distinct ones to uniq[], their count to *k. */
static int sort_unique(GhmContext *ctx, const uint32_t *keys, size_t n, uint32_t *sorted,
                       uint32_t *uniq, size_t *k)
{
    cudaStream_t s = ghm_cuda_stream(ctx);
    unsigned long long *dnum = NULL, num = 0;
    void *block = NULL, *temp = NULL;
    size_t sort_bytes = 0, uniq_bytes = 0;
    int ret = GHM_CUDA(cub::DeviceRadixSort::SortKeys(NULL, sort_bytes, keys, sorted, n, 0, 32, s));
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceSelect::Unique(NULL, uniq_bytes, sorted, uniq, dnum, n, s));
    size_t temp_bytes = sort_bytes > uniq_bytes ? sort_bytes : uniq_bytes;
    GhmiCarve c = ghmi_carve_start(NULL);
    unique_layout(&c, temp_bytes, &temp, &dnum);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, c.used, &block);
    if (ret >= 0) {
        c = ghmi_carve_start(block);
        unique_layout(&c, temp_bytes, &temp, &dnum);
        ret = GHM_CUDA(cub::DeviceRadixSort::SortKeys(temp, sort_bytes, keys, sorted, n, 0, 32, s));
    }
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceSelect::Unique(temp, uniq_bytes, sorted, uniq, dnum, n, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&num, dnum, sizeof num, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    ghmi_device_free(ctx, block);
    *k = (size_t)num;
    return ret;
}

int ghmi_cuda_index_build(CudaIndex *ix, const uint32_t *keys, size_t n)
{
    GhmContext *ctx = ix->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    if (n > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE; /* ids are 32-bit */
    if (ix->keys)
        ghmi_device_free(ctx, ix->keys);
    ix->keys = NULL;
    ix->size = 0;
    uint32_t *sorted = NULL, *uniq = NULL;
    size_t k = 0;
    int ret = ghmi_device_alloc(ctx, n * 4, (void **)&sorted);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, n * 4, (void **)&uniq);
    if (ret >= 0 && n)
        ret = sort_unique(ctx, keys, n, sorted, uniq, &k);
    ghmi_device_free(ctx, sorted);
    /* Keep an exactly sized copy when duplicates made the unique array much shorter. */
    if (ret >= 0 && k < n / 2) {
        ret = ghmi_device_alloc(ctx, k * 4, (void **)&ix->keys);
        if (ret >= 0 && k)
            ret = GHM_CUDA(cudaMemcpyAsync(ix->keys, uniq, k * 4, cudaMemcpyDeviceToDevice, s));
        ghmi_device_free(ctx, uniq);
    } else if (ret >= 0) {
        ix->keys = uniq;
    } else {
        ghmi_device_free(ctx, uniq);
    }
    if (ret >= 0)
        ret = ghmi_cuda_map_build(ix->map, ix->keys, NULL, k, 1);
    if (ret >= 0)
        ix->size = k;
    else /* empty, not the old map answering ids of keys that are gone */
        ghmi_cuda_map_forget(ix->map);
    int sync = GHM_CUDA(ghm_cuda_wait(s));
    return ret < 0 ? ret : sync;
}

size_t ghmi_cuda_index_size(const CudaIndex *ix) { return ix->size; }
GhmContext *ghmi_cuda_index_context(const CudaIndex *ix) { return ix->ctx; }
const uint32_t *ghmi_cuda_index_keys(const CudaIndex *ix) { return ix->keys; }
const GhmMapRef *ghmi_cuda_index_map_ref(const CudaIndex *ix)
{
    return ghmi_cuda_map_get_ref(ix->map);
}

/* ---- the op table ---------------------------------------------------------------------------- */

static int index_create(GhmContext *ctx, double load_factor, void **impl)
{
    return ghmi_cuda_index_create(ctx, load_factor, (CudaIndex **)impl);
}

static int index_build(void *impl, const uint32_t *keys, size_t n)
{
    CudaIndex *ix = (CudaIndex *)impl;
    if (n && !keys)
        return GHM_ERR_INVALID;
    const void *dk;
    void *owned = NULL;
    int ret = ghmi_cuda_input(ix->ctx, keys, n * 4, &dk, &owned);
    if (ret >= 0)
        ret = ghmi_cuda_index_build(ix, (const uint32_t *)dk, n);
    ghmi_cuda_release(ix->ctx, owned);
    int sync = GHM_CUDA(ghm_cuda_wait(ghm_cuda_stream(ix->ctx)));
    return ret < 0 ? ret : sync;
}

static size_t index_size(const void *impl) { return ((const CudaIndex *)impl)->size; }

static int index_ids(const void *impl, const uint32_t *keys, size_t n, uint32_t *ids)
{
    const CudaIndex *ix = (const CudaIndex *)impl;
    if (n == 0)
        return GHM_OK;
    if (!keys || !ids)
        return GHM_ERR_INVALID;
    const void *dk;
    void *ok = NULL, *dout = NULL, *oo = NULL;
    int ret = ghmi_cuda_input(ix->ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_output(ix->ctx, ids, n * 4, &dout, &oo);
    if (ret >= 0) {
        GhmiEmitValue emit = {(uint32_t *)dout};
        ret = ghmi_map_find_launch(ghmi_cuda_map_get_ref(ix->map), (const uint32_t *)dk, n, emit,
                                   ghm_cuda_stream(ix->ctx));
    }
    int fin = ghmi_cuda_output_finish(ix->ctx, ids, ret < 0 ? NULL : oo, n * 4);
    ghmi_cuda_release(ix->ctx, ok);
    ghmi_cuda_release(ix->ctx, oo);
    return ret < 0 ? ret : fin;
}

static int index_keys(const void *impl, const uint32_t *ids, size_t n, uint32_t *keys)
{
    const CudaIndex *ix = (const CudaIndex *)impl;
    if (n == 0)
        return GHM_OK;
    if (!ids || !keys)
        return GHM_ERR_INVALID;
    cudaStream_t s = ghm_cuda_stream(ix->ctx);
    const void *di;
    void *oi = NULL, *dout = NULL, *oo = NULL;
    unsigned int *dbad = NULL, bad = 0;
    int ret = ghmi_cuda_input(ix->ctx, ids, n * 4, &di, &oi);
    if (ret >= 0)
        ret = ghmi_cuda_output(ix->ctx, keys, n * 4, &dout, &oo);
    if (ret >= 0)
        ret = ghmi_device_alloc(ix->ctx, sizeof bad, (void **)&dbad);
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(dbad, 0, sizeof bad, s));
    if (ret >= 0) {
        unsigned grid = (unsigned)((n + 255) / 256);
        gather_keys_kernel<<<grid, 256, 0, s>>>(ix->keys, ix->size, (const uint32_t *)di, n,
                                                (uint32_t *)dout, dbad);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&bad, dbad, sizeof bad, cudaMemcpyDeviceToHost, s));
    int fin = ghmi_cuda_output_finish(ix->ctx, keys, ret < 0 ? NULL : oo, n * 4);
    ghmi_cuda_release(ix->ctx, oi);
    ghmi_cuda_release(ix->ctx, oo);
    ghmi_device_free(ix->ctx, dbad);
    if (ret < 0 || fin < 0)
        return ret < 0 ? ret : fin;
    return bad ? GHM_ERR_INVALID : GHM_OK;
}

static int index_key_array(const void *impl, const uint32_t **keys)
{
    *keys = ((const CudaIndex *)impl)->keys;
    return GHM_OK;
}

static void index_destroy(void *impl) { ghmi_cuda_index_destroy((CudaIndex *)impl); }

/* Built again in ctx from the source's sorted keys (in place on the same device, through the
 * host from another: ghmi_cuda_clone_input): a build from sorted distinct keys is one map
 * insert, and the ids are the keys' ranks, so they are the source's whatever ctx's seed. */
static int index_clone(GhmContext *ctx, const void *src, void **impl)
{
    const CudaIndex *s = (const CudaIndex *)src;
    const uint32_t *keys = NULL;
    uint32_t *owned = NULL;
    int ret = ghmi_cuda_clone_input(ctx, s->ctx, s->keys, s->size, &keys, &owned);
    if (ret >= 0)
        ret = index_create(ctx, s->load_factor, impl);
    if (ret >= 0 && (ret = index_build(*impl, keys, s->size)) < 0) {
        index_destroy(*impl);
        *impl = NULL;
    }
    free(owned);
    return ret;
}

extern "C" const GhmIndexOps ghm_cuda_index_ops = {
    /* .create = */ index_create,
    /* .build = */ index_build,
    /* .size = */ index_size,
    /* .ids = */ index_ids,
    /* .keys = */ index_keys,
    /* .key_array = */ index_key_array,
    /* .destroy = */ index_destroy,
    /* .clone = */ index_clone,
};
