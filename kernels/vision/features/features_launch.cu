/*
 * features_launch.cu - how a run of the device feature chain (features.cu) is launched.
 *
 * The chain is about twenty kernels and CUB passes per image; the matcher runs it on three
 * pyramid levels per query. Measured on the H100 (2026-11-23), the GPU finished a 640x480
 * query's three chains 0.01 ms after the host had queued them, and queuing took 0.6 ms: the
 * cost was the host's launches, not the GPU's work. So a workspace that sees the same image
 * size and parameters twice in a row captures its chain as a CUDA graph and from then on
 * launches it with one call, the image uploaded from a pinned staging buffer the graph names.
 * A one-off image (ghm_edges_detect_ctx) is launched directly: capturing costs more than it
 * saves once.
 *
 * Each workspace has its own stream: it waits for the context's stream before the run (the
 * buffers may still be read by work queued there) and the context's stream waits for it after,
 * so the pyramid's levels overlap on the GPU while the next level's image is made on the host.
 */
#include <string.h>

#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/backend_cuda.h"
#include "features.h"
#include "features_internal.cuh"

/* A run key seen this many times in a row is captured. */
#define GRAPH_AFTER_RUNS 2

static int same_key(const GhmFeatureKey *a, const GhmFeatureKey *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

/* Grows the pinned staging buffer to bytes (the graph must be captured again: it names it). */
static int reserve_staging(GhmFeatureWorkspace *ws, size_t bytes)
{
    if (bytes <= ws->cap_staging)
        return GHM_OK;
    cudaFreeHost(ws->staging);
    ws->staging = NULL;
    ws->cap_staging = 0;
    if (ws->graph)
        cudaGraphExecDestroy(ws->graph);
    ws->graph = NULL;
    int ret = GHM_CUDA(cudaMallocHost((void **)&ws->staging, bytes));
    if (ret == GHM_OK)
        ws->cap_staging = bytes;
    return ret;
}

/* Captures the chain for key k from the staging buffer into ws->graph. A failed capture ends
 * the capture (the stream is usable again) and leaves no graph. */
static int capture(GhmFeatureWorkspace *ws, const GhmFeatureKey *k)
{
    cudaGraph_t g = NULL;
    int ret = GHM_CUDA(cudaStreamBeginCapture(ws->stream, cudaStreamCaptureModeThreadLocal));
    if (ret < 0)
        return ret;
    int queued = ghmi_features_enqueue(ws, ws->staging, (size_t)k->w, k->w, k->h, &k->p);
    ret = GHM_CUDA(cudaStreamEndCapture(ws->stream, &g));
    if (queued < 0)
        ret = queued;
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaGraphInstantiate(&ws->graph, g, 0));
    if (g)
        cudaGraphDestroy(g);
    if (ret < 0)
        ws->graph = NULL;
    return ret;
}

/* Queues the run on ws->stream: as the graph when the key has repeated, else directly. */
static int launch(GhmFeatureWorkspace *ws, const uint8_t *pixels, size_t stride,
                  const GhmFeatureKey *k)
{
    if (ws->key_runs > 0 && same_key(&ws->key, k)) {
        if (ws->key_runs < GRAPH_AFTER_RUNS)
            ws->key_runs++;
    } else {
        if (ws->graph)
            cudaGraphExecDestroy(ws->graph);
        ws->graph = NULL;
        memcpy(&ws->key, k, sizeof *k);
        ws->key_runs = 1;
    }
    if (ws->key_runs < GRAPH_AFTER_RUNS)
        return ghmi_features_enqueue(ws, pixels, stride, k->w, k->h, &k->p);
    size_t bytes = (size_t)k->w * (size_t)k->h;
    int ret = reserve_staging(ws, bytes);
    if (ret < 0 || (!ws->graph && (ret = capture(ws, k)) < 0))
        return ret;
    /* The previous run's upload has finished (features_finish waited for it) unless a run was
     * started and never finished: then wait before the staging buffer is overwritten. */
    if ((ret = GHM_CUDA(ghm_cuda_wait_event_pending(ws->done))) < 0)
        return ret;
    for (int y = 0; y < k->h; y++)
        memcpy(ws->staging + (size_t)y * k->w, pixels + (size_t)y * stride, (size_t)k->w);
    return GHM_CUDA(cudaGraphLaunch(ws->graph, ws->stream));
}

extern "C" int ghm_cuda_features_start(GhmContext *ctx, GhmFeatureWorkspace *ws,
                                       const uint8_t *pixels, int w, int h, size_t stride,
                                       const GhmFeatureParams *p)
{
    if (!ctx || !ws || !pixels || !p || w < 1 || h < 1 || stride < (size_t)w ||
        p->blur.radius < 0 || p->blur.radius > GHM_EDGE_MAX_RADIUS ||
        (p->corners && (p->tensor.radius < 0 || p->tensor.radius > GHM_EDGE_MAX_RADIUS ||
                        p->radius < 1)))
        return GHM_ERR_INVALID;
    GhmFeatureKey k;
    memset(&k, 0, sizeof k);
    k.w = w;
    k.h = h;
    memcpy(&k.p, p, sizeof k.p);
    int ret = ghmi_features_reserve(ws, w, h);
    if (ret < 0 || (ret = GHM_CUDA(cudaEventRecord(ws->ready, ghm_cuda_stream(ctx)))) < 0 ||
        (ret = GHM_CUDA(cudaStreamWaitEvent(ws->stream, ws->ready, 0))) < 0 ||
        (ret = launch(ws, pixels, stride, &k)) < 0 ||
        (ret = GHM_CUDA(cudaEventRecord(ws->done, ws->stream))) < 0 ||
        (ret = GHM_CUDA(cudaStreamWaitEvent(ghm_cuda_stream(ctx), ws->done, 0))) < 0)
        return ret;
    ws->width = w;
    ws->height = h;
    return GHM_OK;
}

extern "C" int ghm_cuda_features_finish(GhmContext *ctx, GhmFeatureWorkspace *ws,
                                        GhmDeviceFeatures *out)
{
    if (!ctx || !ws || !out || !ws->cap_pix)
        return GHM_ERR_INVALID;
    /* No wait when the caller already waited for the context's stream, which waits for ours. */
    int ret = GHM_CUDA(ghm_cuda_wait_event_pending(ws->done));
    if (ret < 0)
        return ret;
    const Levels *lv = ws->host_levels;
    ws->npoints = lv->npoints;
    out->width = ws->width;
    out->height = ws->height;
    out->noise = lv->noise;
    out->threshold = lv->threshold;
    out->npoints = lv->npoints;
    out->points = ws->points;
    out->pixel_point = ws->pixel_point;
    out->gx = ws->f[F_GX];
    out->gy = ws->f[F_GY];
    out->ncand = lv->ncand;
    out->cand = ws->cand;
    return GHM_OK;
}

extern "C" int ghm_cuda_features_run(GhmContext *ctx, GhmFeatureWorkspace *ws,
                                     const uint8_t *pixels, int w, int h, size_t stride,
                                     const GhmFeatureParams *p, GhmDeviceFeatures *out)
{
    if (!out)
        return GHM_ERR_INVALID;
    int ret = ghm_cuda_features_start(ctx, ws, pixels, w, h, stride, p);
    return ret < 0 ? ret : ghm_cuda_features_finish(ctx, ws, out);
}
