/*
 * ops.cu - the CUDA backend's vision op table (GhmVisionOps, vision/match/vision_backend_internal.h):
 * the launchers of kernels/vision/, which the module ghm_cuda_module_vision at the end
 * names. The host modules of
 * vision/ find them through ghmi_vision_ops(ctx) and keep their CPU path for backends without.
 */
#include "hashing/ghm_backend_internal.h"
#include "kernels/vision/features/features.h"
#include "geohash.h"
#include "verify.h"

static const GhmVisionOps ghm_cuda_vision_ops = {
    /* .geo_vote = */ ghm_cuda_geo_vote,
    /* .geo_best = */ ghm_cuda_geo_best,
    /* .features_create = */ ghm_cuda_features_create,
    /* .features_free = */ ghm_cuda_features_free,
    /* .features_run = */ ghm_cuda_features_run,
    /* .features_start = */ ghm_cuda_features_start,
    /* .features_finish = */ ghm_cuda_features_finish,
    /* .features_sample = */ ghm_cuda_features_sample,
    /* .features_gather = */ ghm_cuda_features_gather,
    /* .verify_prepare = */ ghm_cuda_verify_prepare,
    /* .verify_score = */ ghm_cuda_verify_score,
    /* .verify_refine = */ ghm_cuda_verify_refine,
    /* .verify_inliers = */ ghm_cuda_verify_inliers,
};

/* The registry finds the table through this module (see GhmDeviceModule). */
extern "C" const GhmDeviceModule ghm_cuda_module_vision = {"vision", GHM_BACKEND_CUDA,
                                                        &ghm_cuda_vision_ops};
