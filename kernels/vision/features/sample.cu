/*
 * sample.cu - the device twin of edges.c's grid sampling (ghm_edges_grid_sample: cells of `cell`
 * pixels, the strongest point of each) over a feature run's points, for a batch of samplings
 * at once, and the gathering of the kept points as coded points: the matcher's query pyramid
 * (vision/match/match_device.c) reaches them through GhmVisionOps.features_sample_batch and
 * features_gather.
 *
 * A sampling is five small passes (clear the cells, the best key per cell, keep the best,
 * scan the kept, scatter their indices); a batch runs each pass once for all its samplings
 * (blockIdx.y = the sampling), and one scan over their flags laid end to end serves all of
 * them: a query's round of five samplings is seven launches, not thirty-five.
 */
#include <cub/cub.cuh>

#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/backend_cuda.h"
#include "kernels/hashing/device_memory.h"
#include "features.h"
#include "features_internal.cuh"

/* The cell of point p for cells of `cell` pixels, as edges.c's ghm_edges_grid_sample. */
static __device__ __forceinline__ size_t cell_of(const GhmEdgePoint &p, double cell, int cw, int ch)
{
    int cx = (int)__ddiv_rn((double)__fadd_rn(p.x, 0.5f), cell);
    int cy = (int)__ddiv_rn((double)__fadd_rn(p.y, 0.5f), cell);
    cx = cx < 0 ? 0 : cx > cw - 1 ? cw - 1 : cx;
    cy = cy < 0 ? 0 : cy > ch - 1 ? ch - 1 : cy;
    return (size_t)cy * cw + cx;
}

/* The CPU keeps the strongest point of a cell, the first one on a tie: the largest key of
 * (strength, -index). Strengths are positive, so their bits order as integers. */
static __device__ __forceinline__ unsigned long long sample_key(const GhmEdgePoint &p, size_t i)
{
    return ((unsigned long long)__float_as_uint(p.strength) << 32) | (0xffffffffull - i);
}

/* A batch of samplings as the kernels see it: job blockIdx.y samples pts[0..npts) into idx, its
 * flags and ranks at [first, first + npts) of the batch's arrays. */
typedef struct SampleJobs {
    struct {
        const GhmEdgePoint *pts;
        uint32_t npts, first;
        double cell;
        int cw, ch;
        unsigned long long *cells;
        uint32_t *idx;
    } j[GHM_SAMPLE_MAX_JOBS];
} SampleJobs;

static __global__ void sample_clear_kernel(SampleJobs jobs, uint32_t *counts)
{
    const auto &j = jobs.j[blockIdx.y];
    size_t ncells = (size_t)j.cw * j.ch;
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < ncells;
         c += (size_t)gridDim.x * blockDim.x)
        j.cells[c] = 0;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        counts[blockIdx.y] = 0;
}

static __global__ void sample_best_kernel(SampleJobs jobs)
{
    const auto &j = jobs.j[blockIdx.y];
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < j.npts)
        atomicMax(&j.cells[cell_of(j.pts[i], j.cell, j.cw, j.ch)], sample_key(j.pts[i], i));
}

static __global__ void sample_keep_kernel(SampleJobs jobs, uint32_t *flags)
{
    const auto &j = jobs.j[blockIdx.y];
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < j.npts)
        flags[j.first + i] =
            j.cells[cell_of(j.pts[i], j.cell, j.cw, j.ch)] == sample_key(j.pts[i], i);
}

/* One scan serves the whole batch: a job's ranks start at its first flag's. */
static __global__ void sample_scatter_kernel(SampleJobs jobs, const uint32_t *flags,
                                             const uint32_t *rank, uint32_t *counts)
{
    const auto &j = jobs.j[blockIdx.y];
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= j.npts)
        return;
    uint32_t r = rank[j.first + i] - rank[j.first], f = flags[j.first + i];
    if (f)
        j.idx[r] = (uint32_t)i;
    if (i == j.npts - 1)
        counts[blockIdx.y] = r + f;
}

/* The batch's table; *total = its points. GHM_ERR_INVALID for a bad job. */
static int sample_jobs(const GhmSampleJob *in, int n, SampleJobs *out, size_t *total,
                       size_t *most, size_t *most_cells)
{
    *total = *most = *most_cells = 0;
    for (int k = 0; k < n; k++) {
        const GhmFeatureWorkspace *ws = in[k].ws;
        if (!ws || !in[k].idx || !(in[k].cell >= 1.0) || !ws->cap_pix)
            return GHM_ERR_INVALID;
        auto &j = out->j[k];
        j.pts = ws->points;
        j.npts = (uint32_t)ws->npoints;
        j.first = (uint32_t)*total;
        j.cell = in[k].cell;
        j.cw = (int)ceil(ws->width / in[k].cell);
        j.ch = (int)ceil(ws->height / in[k].cell);
        j.cells = in[k].cells ? in[k].cells : ws->cells;
        j.idx = in[k].idx;
        *total += ws->npoints;
        *most = ws->npoints > *most ? ws->npoints : *most;
        size_t cells = (size_t)j.cw * j.ch;
        *most_cells = cells > *most_cells ? cells : *most_cells;
    }
    return *total > (size_t)INT32_MAX ? GHM_ERR_TOO_LARGE : GHM_OK;
}

/* The batch's scratch, one block: counts, flags, ranks, CUB's. */
typedef struct SampleScratch {
    uint32_t *counts, *flags, *rank;
    void *cub;
    size_t cub_bytes;
} SampleScratch;

static void sample_layout(GhmiCarve *c, SampleScratch *t, int n, size_t total)
{
    t->counts = (uint32_t *)ghmi_carve(c, (size_t)n * sizeof(uint32_t));
    t->flags = (uint32_t *)ghmi_carve(c, (total + 1) * sizeof(uint32_t));
    t->rank = (uint32_t *)ghmi_carve(c, (total + 1) * sizeof(uint32_t));
    t->cub = ghmi_carve(c, t->cub_bytes ? t->cub_bytes : 1);
}

/* Queues the passes of the batch on s (every job's pass in one launch). */
static int sample_queue(cudaStream_t s, const SampleJobs &jobs, int n, size_t total, size_t most,
                        size_t most_cells, SampleScratch *t)
{
    unsigned clear_blocks = linear_blocks(most_cells < 65536 ? most_cells : 65536);
    sample_clear_kernel<<<dim3(clear_blocks, (unsigned)n), LINEAR_THREADS, 0, s>>>(jobs,
                                                                                 t->counts);
    int ret = GHM_CUDA_LAUNCH();
    if (ret < 0 || total == 0)
        return ret;
    dim3 grid(linear_blocks(most), (unsigned)n);
    sample_best_kernel<<<grid, LINEAR_THREADS, 0, s>>>(jobs);
    if ((ret = GHM_CUDA_LAUNCH()) < 0)
        return ret;
    sample_keep_kernel<<<grid, LINEAR_THREADS, 0, s>>>(jobs, t->flags);
    if ((ret = GHM_CUDA_LAUNCH()) < 0 ||
        (ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(t->cub, t->cub_bytes, t->flags, t->rank,
                                                      (int)total, s))) < 0)
        return ret;
    sample_scatter_kernel<<<grid, LINEAR_THREADS, 0, s>>>(jobs, t->flags, t->rank, t->counts);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_features_sample_batch(GhmContext *ctx, const GhmSampleJob *jobs, int n,
                                              uint32_t *kept)
{
    if (!ctx || !jobs || !kept || n < 1 || n > GHM_SAMPLE_MAX_JOBS)
        return GHM_ERR_INVALID;
    SampleJobs table;
    memset(&table, 0, sizeof table);
    size_t total, most, most_cells;
    int ret = sample_jobs(jobs, n, &table, &total, &most, &most_cells);
    SampleScratch t = {NULL, NULL, NULL, NULL, 0};
    if (ret == GHM_OK)
        ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, t.cub_bytes, (const uint32_t *)NULL,
                                                     (uint32_t *)NULL, (int)total));
    if (ret < 0)
        return ret;
    GhmiCarve c = ghmi_carve_start(NULL);
    sample_layout(&c, &t, n, total);
    void *block = NULL;
    if ((ret = ghmi_device_alloc(ctx, c.used, &block)) < 0)
        return ret;
    c = ghmi_carve_start(block);
    sample_layout(&c, &t, n, total);
    cudaStream_t s = ghm_cuda_stream(ctx);
    ret = sample_queue(s, table, n, total, most, most_cells, &t);
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaMemcpyAsync(kept, t.counts, (size_t)n * sizeof(uint32_t),
                                       cudaMemcpyDeviceToHost, s));
    ghmi_device_free(ctx, block); /* behind the queued work */
    return ret;
}

extern "C" int ghm_cuda_features_sample(GhmContext *ctx, GhmFeatureWorkspace *ws, double cell,
                                        uint32_t *idx, size_t *kept)
{
    if (!ws || !kept)
        return GHM_ERR_INVALID; /* the batch checks the rest */
    GhmSampleJob job = {ws, cell, idx, NULL};
    *kept = 0;
    int ret = ghm_cuda_features_sample_batch(ctx, &job, 1, &ws->host_levels->nsample);
    if (ret < 0 || (ret = GHM_CUDA(ghm_cuda_wait(ghm_cuda_stream(ctx)))) < 0)
        return ret;
    *kept = ws->host_levels->nsample;
    return GHM_OK;
}

/* A point of pyramid level L has the full-image coordinate x * 2^L + (2^L - 1) / 2
 * (match_internal.h's ghmi_level_to_full): the product is exact, the sum rounds once, as on the
 * host. */
static __global__ void gather_kernel(const GhmEdgePoint *pts, const uint32_t *idx, size_t n,
                                     float scale, float offset, GhmGeoPoint *out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    GhmEdgePoint p = pts[idx[i]];
    GhmGeoPoint g;
    g.x = __fadd_rn(__fmul_rn(p.x, scale), offset);
    g.y = __fadd_rn(__fmul_rn(p.y, scale), offset);
    g.angle = p.angle;
    out[i] = g;
}

extern "C" int ghm_cuda_features_gather(GhmContext *ctx, GhmFeatureWorkspace *ws,
                                        const uint32_t *idx, size_t n, int level,
                                        GhmGeoPoint *out)
{
    if (!ctx || !ws || (n && (!idx || !out)) || level < 0 || level > 16)
        return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    float scale = (float)(1 << level);
    gather_kernel<<<linear_blocks(n), LINEAR_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        ws->points, idx, n, scale, 0.5f * (scale - 1.0f), out);
    return GHM_CUDA_LAUNCH();
}
