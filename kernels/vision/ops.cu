/*
 * ops.cu - the CUDA backend's vision op table (GhmVisionOps, vision/vision_backend_internal.h):
 * the launchers of kernels/vision/, which ghm_cuda_backend.vision points at. The host modules of
 * vision/ find them through ghmi_vision_ops(ctx) and keep their CPU path for backends without.
 */
#include "../../hashing/ghm_backend_internal.h"
#include "edges.h"
#include "geohash.h"

extern "C" const GhmVisionOps ghm_cuda_vision_ops = {
    /* .geo_vote = */ ghm_cuda_geo_vote,
    /* .geo_best = */ ghm_cuda_geo_best,
    /* .edge_gradients = */ ghm_cuda_edge_gradients,
    /* .edge_suppress = */ ghm_cuda_edge_suppress,
};
