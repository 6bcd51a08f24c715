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

/* ---- retrieve: find (first, count), exclusive sum of the counts in 64 bits, copy ---------- */

/* The find emitter of retrieve: first index and a 64-bit count (the scan input). */
struct EmitFirstCount {
    const uint32_t *offsets;
    uint32_t *first;
    unsigned long long *count;
    __device__ void operator()(size_t i, uint32_t key, uint32_t run) const
    {
        uint32_t f = 0, c = 0;
        if (run != GHM_NOT_FOUND) {
            f = offsets[run];
            c = offsets[run + 1] - f;
        }
        first[i] = f;
        count[i] = c;
    }
};

__global__ void narrow_offsets(const unsigned long long *wide, size_t n, uint32_t *offsets)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        offsets[i] = (uint32_t)wide[i];
}

/* RETR_LANES consecutive lanes per key; multiplicity ~8 fills them and each group's reads and
 * writes are contiguous. */
#define RETR_LANES 8
__global__ void copy_values(const uint32_t *first, const uint32_t *offsets, size_t n,
                            const uint32_t *values, uint32_t *out)
{
    size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t i = t / RETR_LANES;
    if (i >= n)
        return;
    uint32_t f = first[i], o = offsets[i], c = offsets[i + 1] - o;
    for (uint32_t j = t % RETR_LANES; j < c; j += RETR_LANES)
        out[o + j] = values[f + j];
}

/* Scratch of one retrieve: first indices, 64-bit counts then their sums, CUB temp storage. */
typedef struct RetrScratch {
    uint32_t *first;
    unsigned long long *count, *sums;
    void *temp;
    size_t temp_bytes;
} RetrScratch;

static int retr_scratch(GhmContext *ctx, size_t n, RetrScratch *sc)
{
    int ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, sc->temp_bytes, sc->count, sc->sums,
                                                     n + 1, ghm_cuda_stream(ctx)));
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, n * 4, (void **)&sc->first);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, (n + 1) * 8, (void **)&sc->count);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, (n + 1) * 8, (void **)&sc->sums);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, sc->temp_bytes ? sc->temp_bytes : 16, &sc->temp);
    return ret;
}

static void retr_scratch_free(GhmContext *ctx, RetrScratch *sc)
{
    ghmi_cuda_release(ctx, sc->first);
    ghmi_cuda_release(ctx, sc->count);
    ghmi_cuda_release(ctx, sc->sums);
    ghmi_cuda_release(ctx, sc->temp);
}

/* Counts of the n device keys, their exclusive sum into the device offsets (n + 1) and the
 * total on the host. */
static int retr_offsets(const CudaMultimap *mm, const uint32_t *dk, size_t n, RetrScratch *sc,
                        uint32_t *doff, unsigned long long *total)
{
    cudaStream_t s = ghm_cuda_stream(mm->ctx);
    int ret = GHM_CUDA(cudaMemsetAsync(sc->count + n, 0, 8, s));
    if (ret >= 0 && n) {
        EmitFirstCount emit = {mm->offsets, sc->first, sc->count};
        ret = ghmi_map_find_launch(ghmi_cuda_map_get_ref(mm->map), dk, n, emit, s);
    }
    size_t bytes = sc->temp_bytes;
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(sc->temp, bytes, sc->count, sc->sums, n + 1,
                                                     s));
    if (ret >= 0) {
        narrow_offsets<<<(unsigned)((n + 256) / 256), 256, 0, s>>>(sc->sums, n, doff);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(total, sc->sums + n, 8, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaStreamSynchronize(s)); /* *total is read next */
    return ret;
}

/* Copies the values once the offsets are known and fit; values_out staged if on the host. */
static int retr_copy(const CudaMultimap *mm, size_t n, const RetrScratch *sc,
                     const uint32_t *doff, uint32_t *values_out, size_t total)
{
    GhmContext *ctx = mm->ctx;
    void *dv = NULL, *ov = NULL;
    int ret = ghmi_cuda_output(ctx, values_out, total * 4, &dv, &ov);
    if (ret >= 0 && total) {
        size_t threads = n * RETR_LANES;
        copy_values<<<(unsigned)((threads + 255) / 256), 256, 0, ghm_cuda_stream(ctx)>>>(
            sc->first, doff, n, mm->values, (uint32_t *)dv);
        ret = GHM_CUDA_LAUNCH();
    }
    int fin = ghmi_cuda_output_finish(ctx, values_out, ret < 0 ? NULL : ov, total * 4);
    ghmi_cuda_release(ctx, ov);
    return ret < 0 ? ret : fin;
}

static int multimap_retrieve(const void *impl, const uint32_t *keys, size_t n, uint32_t *offsets,
                             uint32_t *values_out, size_t capacity, size_t *total)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    GhmContext *ctx = mm->ctx;
    RetrScratch sc = {};
    const void *dk;
    void *ok = NULL, *doff = NULL, *ooff = NULL;
    unsigned long long sum = 0;
    int ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_output(ctx, offsets, (n + 1) * 4, &doff, &ooff);
    if (ret >= 0)
        ret = retr_scratch(ctx, n, &sc);
    if (ret >= 0)
        ret = retr_offsets(mm, (const uint32_t *)dk, n, &sc, (uint32_t *)doff, &sum);
    if (ret >= 0) {
        *total = (size_t)sum;
        if (sum > 0xFFFFFFFFull || sum > capacity)
            ret = GHM_ERR_TOO_LARGE;
    }
    if (ret >= 0)
        ret = retr_copy(mm, n, &sc, (const uint32_t *)doff, values_out, (size_t)sum);
    /* offsets are filled even when the values do not fit (the caller sizes its buffer) */
    int fin = ghmi_cuda_output_finish(ctx, offsets,
                                      ret >= 0 || ret == GHM_ERR_TOO_LARGE ? ooff : NULL,
                                      (n + 1) * 4);
    retr_scratch_free(ctx, &sc);
    ghmi_cuda_release(ctx, ok);
    ghmi_cuda_release(ctx, ooff);
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
    /* .retrieve = */ multimap_retrieve,
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
