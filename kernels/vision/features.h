/*
 * features.h - the CUDA launchers of the device feature chain (kernels/vision/features.cu):
 * GhmVisionOps.features_create / features_free / features_run, documented in
 * vision/vision_backend_internal.h.
 */
#ifndef GHM_KERNELS_VISION_FEATURES_H
#define GHM_KERNELS_VISION_FEATURES_H

#include "../../vision/vision_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

int ghm_cuda_features_create(GhmContext *ctx, GhmFeatureWorkspace **out);
void ghm_cuda_features_free(GhmContext *ctx, GhmFeatureWorkspace **ws);
int ghm_cuda_features_run(GhmContext *ctx, GhmFeatureWorkspace *ws, const uint8_t *pixels, int w,
                          int h, size_t stride, const GhmFeatureParams *p, GhmDeviceFeatures *out);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VISION_FEATURES_H */
