/*
 * ops.cu - the CUDA backend's vision op table (GhmVisionOps, vision/match/vision_backend_internal.h):
 * the launchers of kernels/vision/, which the module ghm_cuda_module_vision at the end
 * names. The host modules of
 * vision/ find them through ghmi_vision_ops(ctx) and keep their CPU path for backends without.
 */
#include "hashing/ghm_backend_internal.h"
#include "kernels/hashing/backend_cuda.h"
#include "kernels/hashing/cuda_check.cuh"
#include "kernels/vision/features/features.h"
#include "geohash.h"
#include "verify.h"

/* Staging memory is pinned: a copy from or into it is a DMA queued on the stream, which the host
 * does not wait for (from pageable memory the driver would wait for the stream first). */
static int stage_reserve(GhmContext *ctx, void **p, size_t *cap, size_t bytes)
{
    (void)ctx;
    if (!p || !cap)
        return GHM_ERR_INVALID;
    if (bytes <= *cap && *p)
        return GHM_OK;
    cudaFreeHost(*p);
    *p = NULL;
    *cap = 0;
    int ret = GHM_CUDA(cudaMallocHost(p, bytes ? bytes : 1));
    if (ret < 0)
        *p = NULL;
    else
        *cap = bytes;
    return ret;
}

static void stage_free(GhmContext *ctx, void **p, size_t *cap)
{
    (void)ctx;
    if (p && *p)
        cudaFreeHost(*p);
    if (p)
        *p = NULL;
    if (cap)
        *cap = 0;
}

static int copy_async(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    if (!ctx || (bytes && (!dst || !src)))
        return GHM_ERR_INVALID;
    return bytes ? GHM_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault,
                                            ghm_cuda_stream(ctx)))
                 : GHM_OK;
}

static const GhmVisionOps ghm_cuda_vision_ops = {
    /* .geo_vote = */ ghm_cuda_geo_vote,
    /* .geo_best = */ ghm_cuda_geo_best,
    /* .features_create = */ ghm_cuda_features_create,
    /* .features_free = */ ghm_cuda_features_free,
    /* .features_run = */ ghm_cuda_features_run,
    /* .features_start = */ ghm_cuda_features_start,
    /* .features_start_halved = */ ghm_cuda_features_start_halved,
    /* .features_finish = */ ghm_cuda_features_finish,
    /* .features_sample = */ ghm_cuda_features_sample,
    /* .features_sample_batch = */ ghm_cuda_features_sample_batch,
    /* .features_gather = */ ghm_cuda_features_gather,
    /* .verify_prepare = */ ghm_cuda_verify_prepare,
    /* .verify_score = */ ghm_cuda_verify_score,
    /* .verify_refine = */ ghm_cuda_verify_refine,
    /* .verify_ranges = */ ghm_cuda_verify_ranges,
    /* .verify_inliers = */ ghm_cuda_verify_inliers,
    /* .stage_reserve = */ stage_reserve,
    /* .stage_free = */ stage_free,
    /* .copy_async = */ copy_async,
};

/* The registry finds the table through this module (see GhmDeviceModule). */
extern "C" const GhmDeviceModule ghm_cuda_module_vision = {"vision", GHM_BACKEND_CUDA,
                                                        &ghm_cuda_vision_ops};
