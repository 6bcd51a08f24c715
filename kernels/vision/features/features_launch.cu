/*
 * features_launch.cu - how a run of the device feature chain (features.cu) is launched.
 *
 * The chain is about twenty kernels and CUB passes per image; the matcher runs it on three
 * pyramid levels per query. Measured on the H100 (2026-11-23), the GPU finished a 640x480
 * query's three chains 0.01 ms after the host had queued them, and queuing took 0.6 ms: the
 * cost was the host's launches, not the GPU's work. So a workspace that sees the same image
 * size and parameters twice in a row captures its chain as a CUDA graph and from then on
 * launches it with one call, the image uploaded before it from a pinned staging buffer. A
 * one-off image (ghm_edges_detect_ctx) is launched directly: capturing costs more than it saves
 * once.
 *
 * Each workspace has its own stream: it waits for the context's stream before the run (the
 * buffers may still be read by work queued there) and the context's stream waits for it after,
 * so the pyramid's levels overlap on the GPU. A level after the first is not uploaded: its run
 * (ghm_cuda_features_start_halved) halves the level before's image on the device, after that
 * image's upload (the event `placed`), so the host queues every level at once instead of
 * halving 2.6 M pixels of a 1080p query itself between them.
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

/* Grows the pinned staging buffer to bytes. */
static int reserve_staging(GhmFeatureWorkspace *ws, size_t bytes)
{
    if (bytes <= ws->cap_staging)
        return GHM_OK;
    cudaFreeHost(ws->staging);
    ws->staging = NULL;
    ws->cap_staging = 0;
    int ret = GHM_CUDA(cudaMallocHost((void **)&ws->staging, bytes));
    if (ret == GHM_OK)
        ws->cap_staging = bytes;
    return ret;
}

/* Captures the chain for key k into ws->graph. A failed capture ends the capture (the stream is
 * usable again) and leaves no graph. */
static int capture(GhmFeatureWorkspace *ws, const GhmFeatureKey *k)
{
    cudaGraph_t g = NULL;
    int ret = GHM_CUDA(cudaStreamBeginCapture(ws->stream, cudaStreamCaptureModeThreadLocal));
    if (ret < 0)
        return ret;
    int queued = ghmi_features_enqueue(ws, k->w, k->h, &k->p);
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

/* Counts the runs with key k in a row; whether this one is launched as the graph. */
static int repeated(GhmFeatureWorkspace *ws, const GhmFeatureKey *k)
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
    return ws->key_runs >= GRAPH_AFTER_RUNS;
}

/* Queues the chain on ws->stream from the image in ws->pixels: as the graph when the key has
 * repeated, else directly. */
static int launch(GhmFeatureWorkspace *ws, const GhmFeatureKey *k, int as_graph)
{
    if (!as_graph)
        return ghmi_features_enqueue(ws, k->w, k->h, &k->p);
    int ret = ws->graph ? GHM_OK : capture(ws, k);
    return ret < 0 ? ret : GHM_CUDA(cudaGraphLaunch(ws->graph, ws->stream));
}

/* Queues the upload of a host image into ws->pixels (rows w bytes apart). A repeated size goes
 * through the pinned staging buffer, so that the copy is queued without the driver's wait for
 * pageable memory. */
static int upload(GhmFeatureWorkspace *ws, const uint8_t *pixels, size_t stride, int w, int h,
                  int staged)
{
    if (!staged)
        return GHM_CUDA(cudaMemcpy2DAsync(ws->pixels, (size_t)w, pixels, stride, (size_t)w,
                                          (size_t)h, cudaMemcpyHostToDevice, ws->stream));
    int ret = reserve_staging(ws, (size_t)w * (size_t)h);
    /* The previous run's upload has finished (features_finish waited for it) unless a run was
     * started and never finished: then wait before the staging buffer is overwritten. */
    if (ret < 0 || (ret = GHM_CUDA(ghm_cuda_wait_event_pending(ws->done))) < 0)
        return ret;
    for (int y = 0; y < h; y++)
        memcpy(ws->staging + (size_t)y * w, pixels + (size_t)y * stride, (size_t)w);
    return GHM_CUDA(cudaMemcpyAsync(ws->pixels, ws->staging, (size_t)w * (size_t)h,
                                    cudaMemcpyHostToDevice, ws->stream));
}

static int check_params(const GhmFeatureParams *p)
{
    return p->blur.radius < 0 || p->blur.radius > GHM_EDGE_MAX_RADIUS ||
                   (p->corners && (p->tensor.radius < 0 || p->tensor.radius > GHM_EDGE_MAX_RADIUS ||
                                   p->radius < 1))
               ? GHM_ERR_INVALID
               : GHM_OK;
}

/* A run of w x h: the buffers grown, the chain's stream after the context's (which may still
 * read the buffers) and, with src, after src's image is in place. */
static int begin(GhmContext *ctx, GhmFeatureWorkspace *ws, int w, int h,
                 const GhmFeatureParams *p, GhmFeatureKey *k, const GhmFeatureWorkspace *src)
{
    memset(k, 0, sizeof *k);
    k->w = w;
    k->h = h;
    memcpy(&k->p, p, sizeof k->p);
    int ret = ghmi_features_reserve(ws, w, h);
    if (ret < 0 || (ret = GHM_CUDA(cudaEventRecord(ws->ready, ghm_cuda_stream(ctx)))) < 0 ||
        (ret = GHM_CUDA(cudaStreamWaitEvent(ws->stream, ws->ready, 0))) < 0)
        return ret;
    return src ? GHM_CUDA(cudaStreamWaitEvent(ws->stream, src->placed, 0)) : GHM_OK;
}

/* The image is in ws->pixels: the chain, then the context's stream after it. */
static int run_chain(GhmContext *ctx, GhmFeatureWorkspace *ws, const GhmFeatureKey *k,
                     int as_graph)
{
    int ret = GHM_CUDA(cudaEventRecord(ws->placed, ws->stream));
    if (ret < 0 || (ret = launch(ws, k, as_graph)) < 0 ||
        (ret = GHM_CUDA(cudaEventRecord(ws->done, ws->stream))) < 0 ||
        (ret = GHM_CUDA(cudaStreamWaitEvent(ghm_cuda_stream(ctx), ws->done, 0))) < 0)
        return ret;
    ws->width = k->w;
    ws->height = k->h;
    return GHM_OK;
}

extern "C" int ghm_cuda_features_start(GhmContext *ctx, GhmFeatureWorkspace *ws,
                                       const uint8_t *pixels, int w, int h, size_t stride,
                                       const GhmFeatureParams *p)
{
    if (!ctx || !ws || !pixels || !p || w < 1 || h < 1 || stride < (size_t)w ||
        check_params(p) < 0)
        return GHM_ERR_INVALID;
    GhmFeatureKey k;
    int ret = begin(ctx, ws, w, h, p, &k, NULL);
    if (ret < 0)
        return ret;
    int as_graph = repeated(ws, &k);
    if ((ret = upload(ws, pixels, stride, w, h, as_graph)) < 0)
        return ret;
    return run_chain(ctx, ws, &k, as_graph);
}

extern "C" int ghm_cuda_features_start_halved(GhmContext *ctx, GhmFeatureWorkspace *ws,
                                              const GhmFeatureWorkspace *src,
                                              const GhmFeatureParams *p)
{
    if (!ctx || !ws || !src || src == ws || !p || !src->cap_pix || src->width < 2 ||
        src->height < 2 || check_params(p) < 0)
        return GHM_ERR_INVALID;
    int w = src->width / 2, h = src->height / 2;
    GhmFeatureKey k;
    int ret = begin(ctx, ws, w, h, p, &k, src);
    if (ret < 0 || (ret = ghmi_features_halve(ws->stream, src->pixels, (size_t)src->width, w, h,
                                              ws->pixels)) < 0)
        return ret;
    return run_chain(ctx, ws, &k, repeated(ws, &k));
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
