/*
 * sorted.cu - GhmSorted on the CUDA backend, the baseline the hash tables are measured against:
 * CUB radix sort of the (key, value) pairs, CUB reduce-by-key with a minimum so that each
 * distinct key keeps its smallest value (as GhmMap does), then one thread per query doing a
 * lower-bound binary search over the distinct keys.
 */
#include <cub/cub.cuh>
#include <stdlib.h>

#include "hash_cuda_internal.cuh"
#include "sorted_ref.cuh"

struct CudaSorted {
    GhmContext *ctx;
    uint32_t *keys;   /* distinct keys, ascending */
    uint32_t *values; /* the smallest value of each */
    size_t size;
};

struct MinOp {
    __device__ uint32_t operator()(uint32_t a, uint32_t b) const { return a < b ? a : b; }
};

static __global__ __launch_bounds__(256) void binary_search_kernel(
    const uint32_t *__restrict__ keys, const uint32_t *__restrict__ values, size_t size,
    const uint32_t *__restrict__ queries, size_t n, uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t q = queries[i];
    size_t lo = ghm_sorted_lower_bound(keys, size, q);
    out[i] = lo < size && keys[lo] == q ? values[lo] : GHM_NOT_FOUND;
}

static void release_arrays(CudaSorted *st)
{
    ghmi_device_free(st->ctx, st->keys);
    ghmi_device_free(st->ctx, st->values);
    st->keys = NULL;
    st->values = NULL;
    st->size = 0;
}

static int sorted_create(GhmContext *ctx, void **impl)
{
    CudaSorted *st = (CudaSorted *)calloc(1, sizeof *st);
    if (!st)
        return GHM_ERR_NOMEM;
    st->ctx = ctx;
    *impl = st;
    return GHM_OK;
}

static void sorted_destroy(void *impl)
{
    CudaSorted *st = (CudaSorted *)impl;
    if (!st)
        return;
    release_arrays(st);
    ghm_cuda_wait(ghm_cuda_stream(st->ctx));
    free(st);
}

/* sort_reduce's scratch, one block: the sorted pairs, CUB's temp storage for the larger of its
 * passes, the run count (phase 1 with a NULL carve base: the size). */
typedef struct ReduceScratch {
    uint32_t *sk, *sv;
    void *temp;
    size_t temp_bytes;
    unsigned long long *dnum;
} ReduceScratch;

static void reduce_layout(GhmiCarve *c, size_t n, ReduceScratch *sc)
{
    sc->sk = (uint32_t *)ghmi_carve(c, n * 4);
    sc->sv = (uint32_t *)ghmi_carve(c, n * 4);
    sc->temp = ghmi_carve(c, sc->temp_bytes ? sc->temp_bytes : 1); /* NULL: CUB would only size */
    sc->dnum = (unsigned long long *)ghmi_carve(c, sizeof *sc->dnum);
}

/* Sort by key, then the minimum value of each run of equal keys. */
static int sort_reduce(CudaSorted *st, const uint32_t *keys, const uint32_t *values, size_t n)
{
    GhmContext *ctx = st->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    ReduceScratch sc = {};
    void *block = NULL;
    unsigned long long num = 0;
    size_t b_sort = 0, b_red = 0;
    int ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b_sort, keys, sc.sk, values, sc.sv,
                                                       n, 0, 32, s));
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceReduce::ReduceByKey(NULL, b_red, sc.sk, st->keys, sc.sv,
                                                      st->values, sc.dnum, MinOp(), n, s));
    sc.temp_bytes = b_sort > b_red ? b_sort : b_red;
    GhmiCarve c = ghmi_carve_start(NULL);
    reduce_layout(&c, n, &sc);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, c.used, &block);
    if (ret >= 0) {
        c = ghmi_carve_start(block);
        reduce_layout(&c, n, &sc);
        ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(sc.temp, b_sort, keys, sc.sk, values, sc.sv,
                                                       n, 0, 32, s));
    }
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceReduce::ReduceByKey(sc.temp, b_red, sc.sk, st->keys, sc.sv,
                                                      st->values, sc.dnum, MinOp(), n, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&num, sc.dnum, sizeof num, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    ghmi_device_free(ctx, block);
    st->size = (size_t)num;
    return ret;
}

static int sorted_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaSorted *st = (CudaSorted *)impl;
    if (n && (!keys || !values))
        return GHM_ERR_INVALID;
    release_arrays(st);
    const void *dk, *dv;
    void *ok = NULL, *ov = NULL;
    int ret = ghmi_cuda_input(st->ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_input(st->ctx, values, n * 4, &dv, &ov);
    if (ret >= 0)
        ret = ghmi_device_alloc(st->ctx, n * 4, (void **)&st->keys);
    if (ret >= 0)
        ret = ghmi_device_alloc(st->ctx, n * 4, (void **)&st->values);
    if (ret >= 0 && n)
        ret = sort_reduce(st, (const uint32_t *)dk, (const uint32_t *)dv, n);
    ghmi_cuda_release(st->ctx, ok);
    ghmi_cuda_release(st->ctx, ov);
    if (ret < 0)
        release_arrays(st);
    int sync = GHM_CUDA(ghm_cuda_wait(ghm_cuda_stream(st->ctx)));
    return ret < 0 ? ret : sync;
}

static int sorted_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const CudaSorted *st = (const CudaSorted *)impl;
    if (n == 0)
        return GHM_OK;
    if (!keys || !out)
        return GHM_ERR_INVALID;
    GhmContext *ctx = st->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    const void *dk;
    void *ok = NULL, *dout = NULL, *oo = NULL;
    int ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_output(ctx, out, n * 4, &dout, &oo);
    if (ret >= 0) {
        unsigned grid = (unsigned)((n + 255) / 256);
        binary_search_kernel<<<grid, 256, 0, s>>>(st->keys, st->values, st->size,
                                                  (const uint32_t *)dk, n, (uint32_t *)dout);
        ret = GHM_CUDA_LAUNCH();
    }
    int fin = ghmi_cuda_output_finish(ctx, out, ret < 0 ? NULL : oo, n * 4);
    ghmi_cuda_release(ctx, ok);
    ghmi_cuda_release(ctx, oo);
    return ret < 0 ? ret : fin;
}

extern "C" const GhmSortedOps ghm_cuda_sorted_ops = {
    /* .create = */ sorted_create,
    /* .build = */ sorted_build,
    /* .find = */ sorted_find,
    /* .destroy = */ sorted_destroy,
};
