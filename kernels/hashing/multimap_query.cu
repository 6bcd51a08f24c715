/*
 * multimap_query.cu - the queries of a CUDA GhmMultimap (multimap.cu builds it): find (the map
 * gives the run, two adjacent offsets its first value and count), retrieve (every value of the
 * keys asked for, copied out), and the values array and key count. A queued build is settled
 * (waited for) by the first of them.
 *
 * Kernels: the bulk find of hash_cuda_internal.cuh with emitters that turn a run number into
 * (first, count); narrow_offsets and copy_values for retrieve.
 */
#include <cub/cub.cuh>

#include "multimap_internal.cuh"

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

int ghmi_cuda_multimap_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *first,
                            uint32_t *count)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    if (n && !keys && (first || count))
        return GHM_ERR_INVALID;
    int ret = ghmi_cuda_multimap_settle((CudaMultimap *)mm); /* a queued build, read lazily */
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

/* Scratch of one retrieve, one block: first indices, 64-bit counts then their sums, CUB temp
 * storage. */
typedef struct RetrScratch {
    void *block;
    uint32_t *first;
    unsigned long long *count, *sums;
    void *temp;
    size_t temp_bytes;
} RetrScratch;

static void retr_layout(GhmiCarve *c, size_t n, RetrScratch *sc)
{
    sc->first = (uint32_t *)ghmi_carve(c, n * 4);
    sc->count = (unsigned long long *)ghmi_carve(c, (n + 1) * 8);
    sc->sums = (unsigned long long *)ghmi_carve(c, (n + 1) * 8);
    sc->temp = ghmi_carve(c, sc->temp_bytes ? sc->temp_bytes : 16); /* NULL: CUB would size */
}

static int retr_scratch(GhmContext *ctx, size_t n, RetrScratch *sc)
{
    int ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, sc->temp_bytes, sc->count, sc->sums,
                                                     n + 1, ghm_cuda_stream(ctx)));
    GhmiCarve c = ghmi_carve_start(NULL);
    retr_layout(&c, n, sc);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, c.used, &sc->block);
    c = ghmi_carve_start(sc->block);
    retr_layout(&c, n, sc);
    return ret;
}

static void retr_scratch_free(GhmContext *ctx, RetrScratch *sc)
{
    ghmi_device_free(ctx, sc->block);
    sc->block = NULL;
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
        ret = GHM_CUDA(ghm_cuda_wait(s)); /* *total is read next */
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
            sc->first, doff, n, mm->vbuf[mm->cur], (uint32_t *)dv);
        ret = GHM_CUDA_LAUNCH();
    }
    int fin = ghmi_cuda_output_finish(ctx, values_out, ret < 0 ? NULL : ov, total * 4);
    ghmi_cuda_release(ctx, ov);
    return ret < 0 ? ret : fin;
}

int ghmi_cuda_multimap_retrieve(const void *impl, const uint32_t *keys, size_t n,
                                uint32_t *offsets, uint32_t *values_out, size_t capacity,
                                size_t *total)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    GhmContext *ctx = mm->ctx;
    RetrScratch sc = {};
    const void *dk;
    void *ok = NULL, *doff = NULL, *ooff = NULL;
    unsigned long long sum = 0;
    int ret = ghmi_cuda_multimap_settle((CudaMultimap *)mm);
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

int ghmi_cuda_multimap_values(const void *impl, const uint32_t **values, size_t *n)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    int ret = ghmi_cuda_multimap_settle((CudaMultimap *)mm);
    *values = mm->vbuf[mm->cur];
    *n = mm->n;
    return ret;
}

size_t ghmi_cuda_multimap_num_keys(const void *impl)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    ghmi_cuda_multimap_settle((CudaMultimap *)mm); /* a failed queued build leaves 0 keys */
    return mm->num_keys;
}
