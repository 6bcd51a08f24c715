/*
 * edges.h - the CUDA launchers of the edge detector's per-pixel stages (kernels/vision/features/edges.cu);
 * the host module is vision/features/edges.c, which reaches them through the backend's vision op table
 * (vision/match/vision_backend_internal.h, filled in kernels/vision/ops.cu).
 *
 * Usage: by the device feature chain (features.cu), arguments as documented below. Arrays
 * are device memory; work is queued on stream s (the feature workspace's); nothing is allocated or waited for. Each
 * returns GHM_OK, GHM_ERR_INVALID (NULL array, size below 1, radius out of range) or
 * GHM_ERR_CUDA.
 */
#ifndef GHM_KERNELS_VISION_EDGES_H
#define GHM_KERNELS_VISION_EDGES_H

#include <cuda_runtime.h>

#include "vision/match/vision_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The grey image pixels (device, rows stride bytes apart) blurred by the separable taps
 * (clamped borders; tmp and blur: w * h floats of scratch), Sobel / 8 into gx and gy, and the
 * magnitude into mag. */
int ghm_cuda_edge_gradients(cudaStream_t s, const uint8_t *pixels, int w, int h, size_t stride,
                            const GhmEdgeTaps *taps, float *tmp, float *blur, float *gx, float *gy,
                            float *mag);

/* Non-maximum suppression across the edge as edges.c's suppress(): nms = the magnitude of
 * maxima above *floor_mag (0 elsewhere), off = their sub-pixel offset along the gradient.
 * floor_mag is device memory (one float: the chain computes it on the device). */
int ghm_cuda_edge_suppress(cudaStream_t s, const float *mag, const float *gx, const float *gy,
                           int w, int h, const float *floor_mag, float *nms, float *off);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VISION_EDGES_H */
