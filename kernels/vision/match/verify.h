/*
 * verify.h - the CUDA launchers of candidate verification (kernels/vision/match/verify.cu):
 * GhmVisionOps.verify_*, documented in
 * vision/match/vision_backend_internal.h. Arrays are device memory; work is queued on ctx's stream.
 */
#ifndef GHM_KERNELS_VISION_VERIFY_H
#define GHM_KERNELS_VISION_VERIFY_H

#include "vision/match/vision_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

int ghm_cuda_verify_score(GhmContext *ctx, const GhmVerifyRef *ref, const GhmVerifyQuery *q,
                          const GhmVerifyPoint *pts, size_t npts, const GhmSimilarity *hyps, size_t nh,
                          double radius, double cos_tol, int backward, const uint32_t *check_range,
                          GhmVerifyCounts *counts);
int ghm_cuda_verify_refine(GhmContext *ctx, const GhmVerifyRef *ref, const GhmVerifyQuery *q,
                           const GhmVerifyPoint *pts, size_t npts, GhmSimilarity *hyps, size_t nh,
                           const GhmRefineSteps *steps, double cos_tol, double *partials,
                           size_t npartials);
int ghm_cuda_verify_ranges(GhmContext *ctx, const GhmSimilarity *hyps, size_t nh,
                           const GhmCheckGrids *grids, int qw, int qh, uint32_t *ranges);
int ghm_cuda_verify_prepare(GhmContext *ctx, const GhmVerifyQuery *q, const uint32_t *idx,
                            size_t n, GhmVerifyPoint *out);
int ghm_cuda_verify_inliers(GhmContext *ctx, const GhmVerifyRef *ref, const GhmVerifyQuery *q,
                            const GhmVerifyPoint *pts, size_t npts, const GhmSimilarity *hyp,
                            double radius, double cos_tol, float (*xy)[2]);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VISION_VERIFY_H */
