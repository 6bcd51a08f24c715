/*
 * features.h - the CUDA launchers of the device feature chain (features.cu, launched by
 * features_launch.cu) and of the grid sampling of its points (sample.cu): GhmVisionOps.features_*,
 * documented in vision/match/vision_backend_internal.h.
 */
#ifndef GHM_KERNELS_VISION_FEATURES_H
#define GHM_KERNELS_VISION_FEATURES_H

#include "vision/match/vision_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

int ghm_cuda_features_create(GhmContext *ctx, GhmFeatureWorkspace **out);
void ghm_cuda_features_free(GhmContext *ctx, GhmFeatureWorkspace **ws);
int ghm_cuda_features_run(GhmContext *ctx, GhmFeatureWorkspace *ws, const uint8_t *pixels, int w,
                          int h, size_t stride, const GhmFeatureParams *p, GhmDeviceFeatures *out);
int ghm_cuda_features_start(GhmContext *ctx, GhmFeatureWorkspace *ws, const uint8_t *pixels,
                            int w, int h, size_t stride, const GhmFeatureParams *p);
int ghm_cuda_features_start_halved(GhmContext *ctx, GhmFeatureWorkspace *ws,
                                   const GhmFeatureWorkspace *src, const GhmFeatureParams *p);
int ghm_cuda_features_finish(GhmContext *ctx, GhmFeatureWorkspace *ws, GhmDeviceFeatures *out);
int ghm_cuda_features_sample(GhmContext *ctx, GhmFeatureWorkspace *ws, double cell, uint32_t *idx,
                             size_t *kept);
int ghm_cuda_features_sample_batch(GhmContext *ctx, const GhmSampleJob *jobs, int n,
                                   uint32_t *kept);
int ghm_cuda_features_gather(GhmContext *ctx, GhmFeatureWorkspace *ws, const uint32_t *idx,
                             size_t n, int level, GhmGeoPoint *out);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VISION_FEATURES_H */
