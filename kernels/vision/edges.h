/*
 * edges.h - the CUDA launchers of the edge detector's per-pixel stages (kernels/vision/edges.cu);
 * the host module is vision/edges.c, which reaches them through the backend's vision op table
 * (vision/vision_backend_internal.h, filled in kernels/vision/ops.cu).
 *
 * Usage: as GhmVisionOps.edge_gradients / edge_suppress; arguments as documented there. Arrays
 * are device memory; work is queued on ctx's stream; nothing is allocated or waited for. Each
 * returns GHM_OK, GHM_ERR_INVALID (NULL array, size below 1, radius out of range) or
 * GHM_ERR_CUDA.
 */
#ifndef GHM_KERNELS_VISION_EDGES_H
#define GHM_KERNELS_VISION_EDGES_H

#include "../../vision/vision_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

int ghm_cuda_edge_gradients(GhmContext *ctx, const uint8_t *pixels, int w, int h, size_t stride,
                            const GhmEdgeTaps *taps, float *tmp, float *blur, float *gx, float *gy,
                            float *mag);

int ghm_cuda_edge_suppress(GhmContext *ctx, const float *mag, const float *gx, const float *gy,
                           int w, int h, float floor_mag, float *nms, float *off);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VISION_EDGES_H */
