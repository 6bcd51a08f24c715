/*
 * multimap.cu - GhmMultimap on the CUDA backend (thesis 6.3, algorithm 6.4): a stable CUB radix
 * sort of the (key, value) pairs makes each key's values contiguous in input order (the values
 * array); a select of the run heads gives each run's offset (offsets[K] = n closes the last one),
 * a gather the distinct keys, and a bucketed cuckoo map sends each distinct key to its run
 * number. A query costs one map probe plus one read of two adjacent offsets.
 *
 * The grouping waits for nothing: the number of runs K stays on the device (key_count). A build
 * from the API then reads K (one wait) and sizes the map for it exactly (one more); a queued build
 * (hash_refs.h) sizes the map for the bound n and queues its one attempt too, so that a pipeline
 * probes the map in its next kernels and learns K with its own next download. Arrays are kept
 * from build to build and only grow.
 *
 * Kernels: run_keys_kernel (the distinct keys from the run heads), the bulk find of
 * hash_cuda_internal.cuh with an emitter that turns a run number into (first, count).
 */
#include <cub/cub.cuh>
#include <stdlib.h>
#include <thrust/iterator/counting_iterator.h>

#include "hash_cuda_internal.cuh"

struct CudaMultimap {
    GhmContext *ctx;
    CudaMap *map;
    uint32_t *values;    /* n values grouped by key, ascending keys, input order within a key */
    uint32_t *offsets;   /* num_keys + 1: run r's values are values[offsets[r] .. offsets[r + 1]) */
    uint32_t *keys;      /* num_keys distinct keys, ascending (run r's key) */
    uint32_t *sorted;    /* scratch: the n sorted keys */
    uint32_t *key_count; /* device: num_keys */
    void *temp;          /* CUB scratch */
    size_t temp_bytes;
    size_t cap;          /* pairs the arrays hold */
    size_t n;
    size_t num_keys;     /* after a queued build, until settled: the bound n */
    int pending;         /* a queued build whose key count the host has not read */
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

/* Run heads of sorted keys: index 0 and every index whose key differs from its predecessor's. */
struct HeadOf {
    const uint32_t *k;
    __device__ __forceinline__ bool operator()(uint32_t i) const
    {
        return i == 0 || k[i] != k[i - 1];
    }
};

/* keys[r] = the key of run r; offsets[K] = n closes the last run. A grid-stride loop over the K
 * runs, which only the device knows. */
static __global__ __launch_bounds__(256) void run_keys_kernel(const uint32_t *__restrict__ sorted,
                                                              uint32_t *offsets,
                                                              const uint32_t *key_count,
                                                              uint32_t n, uint32_t *keys)
{
    uint32_t runs = *key_count;
    for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < runs; r += gridDim.x * blockDim.x)
        keys[r] = sorted[offsets[r]];
    if (blockIdx.x == 0 && threadIdx.x == 0)
        offsets[runs] = n;
}

static void release_arrays(CudaMultimap *mm)
{
    void **arrays[] = {(void **)&mm->values, (void **)&mm->offsets, (void **)&mm->keys,
                       (void **)&mm->sorted, &mm->temp};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        ghmi_cuda_release(mm->ctx, *arrays[i]);
        *arrays[i] = NULL;
    }
    mm->cap = mm->temp_bytes = mm->n = mm->num_keys = 0;
}

static void multimap_destroy(void *impl)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    if (!mm)
        return;
    ghmi_cuda_map_destroy(mm->map);
    release_arrays(mm);
    ghmi_cuda_release(mm->ctx, mm->key_count);
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
        ret = ghmi_cuda_alloc(ctx, sizeof *mm->key_count, (void **)&mm->key_count);
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(mm->key_count, 0, sizeof *mm->key_count,
                                       ghm_cuda_stream(ctx)));
    if (ret >= 0)
        ret = ghmi_cuda_map_build(mm->map, NULL, NULL, 0, 1);
    if (ret < 0) {
        multimap_destroy(mm);
        return ret;
    }
    *impl = mm;
    return GHM_OK;
}

/* Room for n pairs and the CUB scratch of sorting them on end_bit bits (stream-ordered, so the
 * old arrays are released behind the work queued on them). */
static int reserve(CudaMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n,
                   int end_bit)
{
    GhmContext *ctx = mm->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    size_t b_sort = 0, b_select = 0;
    int ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b_sort, keys, mm->sorted, values,
                                                       mm->values, n, 0, end_bit, s));
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceSelect::If(NULL, b_select, thrust::counting_iterator<uint32_t>(0),
                                             mm->offsets, mm->key_count, n, HeadOf{mm->sorted},
                                             s));
    size_t temp = b_sort > b_select ? b_sort : b_select;
    if (ret < 0 || (mm->cap >= n && mm->temp_bytes >= temp && mm->offsets))
        return ret;
    size_t want = n > mm->cap ? n : mm->cap;
    release_arrays(mm);
    ret = ghmi_cuda_alloc(ctx, want * 4 + 4, (void **)&mm->values);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, want * 4 + 4, (void **)&mm->offsets);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, want * 4 + 4, (void **)&mm->keys);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, want * 4 + 4, (void **)&mm->sorted);
    if (ret >= 0)
        ret = ghmi_cuda_alloc(ctx, temp + 16, &mm->temp);
    if (ret < 0) {
        release_arrays(mm);
        return ret;
    }
    mm->cap = want;
    mm->temp_bytes = temp + 16;
    return GHM_OK;
}

/* Sort, run heads, distinct keys: values, offsets, keys and *key_count on the device, queued. */
static int group_runs(CudaMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n,
                      int end_bit)
{
    GhmContext *ctx = mm->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = reserve(mm, keys, values, n, end_bit);
    if (ret < 0)
        return ret;
    if (n == 0) { /* one offset, no runs */
        ret = GHM_CUDA(cudaMemsetAsync(mm->key_count, 0, sizeof *mm->key_count, s));
        return ret < 0 ? ret : GHM_CUDA(cudaMemsetAsync(mm->offsets, 0, 4, s));
    }
    size_t bytes = mm->temp_bytes;
    ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(mm->temp, bytes, keys, mm->sorted, values,
                                                   mm->values, n, 0, end_bit, s));
    bytes = mm->temp_bytes;
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceSelect::If(mm->temp, bytes,
                                             thrust::counting_iterator<uint32_t>(0), mm->offsets,
                                             mm->key_count, n, HeadOf{mm->sorted}, s));
    int dev = 0, sms = 0;
    if (ret >= 0)
        ret = GHM_CUDA(cudaGetDevice(&dev));
    if (ret >= 0)
        ret = GHM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (ret < 0)
        return ret;
    size_t grid = (n + 255) / 256, full = (size_t)(sms > 0 ? sms : 1) * 8;
    run_keys_kernel<<<(unsigned)(grid < full ? grid : full), 256, 0, s>>>(
        mm->sorted, mm->offsets, mm->key_count, (uint32_t)n, mm->keys);
    return GHM_CUDA_LAUNCH();
}

/* Reads the key count of a queued build and its map's outcome (one wait). On failure the
 * multimap is left empty. */
static int settle(CudaMultimap *mm)
{
    if (!mm->pending)
        return GHM_OK;
    uint32_t k = 0;
    cudaStream_t s = ghm_cuda_stream(mm->ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(&k, mm->key_count, sizeof k, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = ghmi_cuda_map_settle(mm->map); /* waits for the copy too */
    mm->pending = 0;
    mm->num_keys = ret >= 0 ? k : 0;
    if (ret < 0)
        mm->n = 0;
    return ret;
}

static int build_device(CudaMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n)
{
    mm->pending = 0;
    mm->n = mm->num_keys = 0;
    uint32_t k = 0;
    cudaStream_t s = ghm_cuda_stream(mm->ctx);
    int ret = group_runs(mm, keys, values, n, 32);
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&k, mm->key_count, sizeof k, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaStreamSynchronize(s));
    if (ret >= 0)
        ret = ghmi_cuda_map_build(mm->map, mm->keys, NULL, k, 1);
    if (ret >= 0) {
        mm->n = n;
        mm->num_keys = k;
    }
    return ret;
}

int ghmi_cuda_multimap_build_queued(void *impl, const uint32_t *keys, const uint32_t *values,
                                    size_t n, int key_bits, int attempt, unsigned int *failed)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    if (n && (!keys || !values))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu || key_bits < 0 || key_bits > 32)
        return n > 0x7FFFFFFFu ? GHM_ERR_TOO_LARGE : GHM_ERR_INVALID;
    mm->pending = 0;
    mm->n = mm->num_keys = 0;
    int ret = group_runs(mm, keys, values, n, key_bits ? key_bits : 32);
    if (ret >= 0)
        ret = ghmi_cuda_map_build_queued(mm->map, mm->keys, NULL, mm->key_count, n, 1, attempt,
                                         failed);
    if (ret >= 0) {
        mm->pending = 1;
        mm->n = mm->num_keys = n;
    }
    return ret;
}

static int multimap_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    if (n && (!keys || !values))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE; /* CUB's item counts */
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
    if (n && !keys && (first || count))
        return GHM_ERR_INVALID;
    int ret = settle((CudaMultimap *)mm); /* a queued build's outcome, read lazily */
    if (ret < 0 || n == 0 || (!first && !count))
        return ret;
    GhmContext *ctx = mm->ctx;
    const void *dk;
    void *ok = NULL, *df = NULL, *of = NULL, *dc = NULL, *oc = NULL;
    ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
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
    int ret = settle((CudaMultimap *)mm);
    if (ret >= 0)
        ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
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
    int ret = settle((CudaMultimap *)mm);
    *values = mm->values;
    *n = mm->n;
    return ret;
}

static size_t multimap_num_keys(const void *impl)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    settle((CudaMultimap *)mm); /* a failed queued build leaves 0 keys */
    return mm->num_keys;
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

/* A device reference (refs.cu): the pending one of a queued build, without waiting for it. */
void ghmi_cuda_multimap_get_ref(const void *impl, GhmMultimapRef *out)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    out->map = *ghmi_cuda_map_get_ref(mm->map);
    out->offsets = mm->offsets;
    out->values = mm->values;
    out->keys = mm->keys;
    out->key_count = mm->key_count;
    out->num_keys = (uint32_t)mm->num_keys;
    out->num_values = (uint32_t)mm->n;
}
