/*
 * multimap.cu - GhmMultimap on the CUDA backend (thesis 6.3, algorithm 6.4): a stable CUB radix
 * sort of the (key, value) pairs makes each key's values contiguous in input order (the values
 * array), run-length encoding gives the distinct keys and their counts, an exclusive sum the
 * offset of each run (offsets[K] = n closes the last one), and a bucketed cuckoo map sends each
 * distinct key to its run number. A query costs one map probe plus one read of two adjacent
 * offsets.
 *
 * Kernel: the bulk find of hash_cuda_internal.cuh with an emitter that turns a run number into
 * (first, count); either output may be NULL.
 */
#include <cub/cub.cuh>
#include <stdlib.h>

#include "hash_cuda_internal.cuh"

struct CudaMultimap {
    GhmContext *ctx;
    CudaMap *map;
    uint32_t *values;  /* n values grouped by key, ascending keys, input order within a key */
    uint32_t *offsets; /* num_keys + 1 */
    size_t n;
    size_t num_keys;
};

struct EmitRun {
    const uint32_t *offsets;
    uint32_t *first;
    uint32_t *count;
    __device__ void operator()(size_t i, uint32_t key, uint32_t run) const
    {
        uint32_t f = GHM_NOT_FOUND, c = 0;
        if (run != GHM_NOT_FOUND) {
            f = offsets[run];
            c = offsets[run + 1] - f;
        }
        if (first)
            first[i] = f;
        if (count)
            count[i] = c;
    }
};

static void release_arrays(CudaMultimap *mm)
{
    ghmi_cuda_release(mm->ctx, mm->values);
    ghmi_cuda_release(mm->ctx, mm->offsets);
    mm->values = NULL;
    mm->offsets = NULL;
    mm->n = 0;
    mm->num_keys = 0;
}

static void multimap_destroy(void *impl)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    if (!mm)
        return;
    ghmi_cuda_map_destroy(mm->map);
    release_arrays(mm);
    cudaStreamSynchronize(ghm_cuda_stream(mm->ctx));
    free(mm);
}

static int multimap_create(GhmContext *ctx, double load_factor, void **impl)
{
    if (load_factor < 0.0 || load_factor > 0.99)
        return GHM_ERR_INVALID;
    CudaMultimap *mm = (CudaMultimap *)calloc(1, sizeof *mm);
    if (!mm)
        return GHM_ERR_NOMEM;
    mm->ctx = ctx;
    GhmMapOptions opt = {load_factor, GHM_MAP_BUCKETED, 2, 8};
    int ret = ghmi_cuda_map_create(ctx, &opt, &mm->map);
    if (ret >= 0)
        ret = ghmi_cuda_map_build(mm->map, NULL, NULL, 0, 1);
    if (ret < 0) {
        multimap_destroy(mm);
        return ret;
    }
    *impl = mm;
    return GHM_OK;
}

/* Scratch of one build: sorted keys, distinct keys, counts, CUB temp storage, the run count. */
typedef struct Scratch {
    uint32_t *sorted_keys, *uniq, *counts;
    void *temp;
    size_t temp_bytes;
    unsigned long long *num_runs;
} Scratch;

static void free_scratch(GhmContext *ctx, Scratch *sc)
{
    ghmi_cuda_release(ctx, sc->sorted_keys);
    ghmi_cuda_release(ctx, sc->uniq);
    ghmi_cuda_release(ctx, sc->counts);
    ghmi_cuda_release(ctx, sc->temp);
}

static int alloc_scratch(GhmContext *ctx, const uint32_t *keys, const uint32_t *values, size_t n,
                         uint32_t *values_out, Scratch *sc)
{
    cudaStream_t s = ghm_cuda_stream(ctx);
    size_t b_sort = 0, b_rle = 0, b_scan = 0;
    int ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b_sort, keys, sc->sorted_keys,
                                                       values, values_out, n, 0, 32, s));
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceRunLengthEncode::Encode(NULL, b_rle, sc->sorted_keys, sc->uniq,
                                                          sc->counts, sc->num_runs, n, s));
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, b_scan, sc->counts, sc->counts, n, s));
    size_t temp = b_sort > b_rle ? b_sort : b_rle;
    temp = temp > b_scan ? temp : b_scan;
    temp = (temp + 15) & ~(size_t)15;
    sc->temp_bytes = temp;
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, n * 4, (void **)&sc->sorted_keys);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, n * 4, (void **)&sc->uniq);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, n * 4, (void **)&sc->counts);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, temp + sizeof(unsigned long long), &sc->temp);
    if (ret >= 0)
        sc->num_runs = (unsigned long long *)((char *)sc->temp + temp);
    return ret;
}

/* Sort, run-length encode, scan: fills mm->values and mm->offsets and the distinct keys. */
static int group_runs(CudaMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n,
                      Scratch *sc)
{
    GhmContext *ctx = mm->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    size_t bytes = sc->temp_bytes;
    unsigned long long runs = 0;
    int ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(sc->temp, bytes, keys, sc->sorted_keys,
                                                       values, mm->values, n, 0, 32, s));
    bytes = sc->temp_bytes;
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceRunLengthEncode::Encode(sc->temp, bytes, sc->sorted_keys,
                                                          sc->uniq, sc->counts, sc->num_runs,
                                                          n, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&runs, sc->num_runs, sizeof runs, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaStreamSynchronize(s));
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, ((size_t)runs + 1) * 4, (void **)&mm->offsets);
    bytes = sc->temp_bytes;
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(sc->temp, bytes, sc->counts, mm->offsets,
                                                     (size_t)runs, s));
    uint32_t total = (uint32_t)n;
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(mm->offsets + runs, &total, 4, cudaMemcpyHostToDevice, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaStreamSynchronize(s)); /* `total` lives on this stack frame */
    mm->num_keys = (size_t)runs;
    return ret;
}

static int build_device(CudaMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n)
{
    GhmContext *ctx = mm->ctx;
    Scratch sc = {};
    release_arrays(mm);
    int ret = ghmi_cuda_alloc(ctx, n * 4, (void **)&mm->values);
    if (ret >= 0 && n == 0)
        ret = ghmi_cuda_alloc(ctx, 4, (void **)&mm->offsets);
    if (ret >= 0 && n == 0)
        ret = GHM_CUDA(cudaMemsetAsync(mm->offsets, 0, 4, ghm_cuda_stream(ctx)));
    if (ret >= 0 && n)
        ret = alloc_scratch(ctx, keys, values, n, mm->values, &sc);
    if (ret >= 0 && n)
        ret = group_runs(mm, keys, values, n, &sc);
    if (ret >= 0)
        ret = ghmi_cuda_map_build(mm->map, sc.uniq, NULL, mm->num_keys, 1);
    free_scratch(ctx, &sc);
    if (ret >= 0)
        mm->n = n;
    else
        release_arrays(mm);
    return ret;
}

static int multimap_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    if (n && (!keys || !values))
        return GHM_ERR_INVALID;
    if (n > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE; /* offsets are 32-bit */
    const void *dk, *dv;
    void *ok = NULL, *ov = NULL;
    int ret = ghmi_cuda_input(mm->ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_input(mm->ctx, values, n * 4, &dv, &ov);
    if (ret >= 0)
        ret = build_device(mm, (const uint32_t *)dk, (const uint32_t *)dv, n);
    ghmi_cuda_release(mm->ctx, ok);
    ghmi_cuda_release(mm->ctx, ov);
    int sync = GHM_CUDA(cudaStreamSynchronize(ghm_cuda_stream(mm->ctx)));
    return ret < 0 ? ret : sync;
}

static int multimap_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *first,
                         uint32_t *count)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    if (n == 0 || (!first && !count))
        return GHM_OK;
    if (!keys)
        return GHM_ERR_INVALID;
    GhmContext *ctx = mm->ctx;
    const void *dk;
    void *ok = NULL, *df = NULL, *of = NULL, *dc = NULL, *oc = NULL;
    int ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0 && first)
        ret = ghmi_cuda_output(ctx, first, n * 4, &df, &of);
    if (ret >= 0 && count)
        ret = ghmi_cuda_output(ctx, count, n * 4, &dc, &oc);
    if (ret >= 0) {
        EmitRun emit = {mm->offsets, (uint32_t *)df, (uint32_t *)dc};
        ret = ghmi_map_find_launch(ghmi_cuda_map_get_ref(mm->map), (const uint32_t *)dk, n, emit,
                                   ghm_cuda_stream(ctx));
    }
    cudaStream_t s = ghm_cuda_stream(ctx);
    if (ret >= 0 && of)
        ret = GHM_CUDA(cudaMemcpyAsync(first, of, n * 4, cudaMemcpyDeviceToHost, s));
    int fin = ghmi_cuda_output_finish(ctx, count, ret < 0 ? NULL : oc, n * 4);
    ghmi_cuda_release(ctx, ok);
    ghmi_cuda_release(ctx, of);
    ghmi_cuda_release(ctx, oc);
    return ret < 0 ? ret : fin;
}

static int multimap_values(const void *impl, const uint32_t **values, size_t *n)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    *values = mm->values;
    *n = mm->n;
    return GHM_OK;
}

static size_t multimap_num_keys(const void *impl)
{
    return ((const CudaMultimap *)impl)->num_keys;
}

extern "C" const GhmMultimapOps ghm_cuda_multimap_ops = {
    /* .create = */ multimap_create,
    /* .build = */ multimap_build,
    /* .find = */ multimap_find,
    /* .values = */ multimap_values,
    /* .num_keys = */ multimap_num_keys,
    /* .destroy = */ multimap_destroy,
};

/* The pieces of a multimap a device reference needs (refs.cu). */
int ghmi_cuda_multimap_parts(const void *impl, const GhmMapRef **map, const uint32_t **offsets,
                             const uint32_t **values, size_t *num_keys, size_t *n)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    *map = ghmi_cuda_map_get_ref(mm->map);
    *offsets = mm->offsets;
    *values = mm->values;
    *num_keys = mm->num_keys;
    *n = mm->n;
    return GHM_OK;
}
