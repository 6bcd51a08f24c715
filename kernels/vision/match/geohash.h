/*
 * geohash.h - the CUDA launchers of geometric hashing's voting (kernels/vision/match/geohash.cu); the
 * host module is vision/match/geohash.c, which reaches them through the backend's vision op table
 * (vision/match/vision_backend_internal.h, filled in kernels/vision/ops.cu).
 *
 * Usage: as GhmVisionOps.geo_vote / geo_best; arguments and results as documented there. All
 * arrays are device memory; work is queued on ctx's stream; nothing is allocated or waited for.
 * Each returns GHM_OK, GHM_ERR_INVALID (NULL array with a non-zero size, table not on this
 * backend), GHM_ERR_TOO_LARGE (sizes beyond 32-bit indexing) or GHM_ERR_CUDA.
 */
#ifndef GHM_KERNELS_VISION_GEOHASH_H
#define GHM_KERNELS_VISION_GEOHASH_H

#include "vision/match/vision_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

int ghm_cuda_geo_vote(GhmContext *ctx, const GhmMultimap *table, size_t nbases,
                      const GhmGeoFrame *frames, size_t mb, const GhmGeoPoint *coded, size_t nc,
                      const GhmGeoSigParams *sp, uint32_t *votes, uint32_t *seen,
                      unsigned long long *counters);

int ghm_cuda_geo_best(GhmContext *ctx, const uint32_t *votes, size_t mb, size_t nbases,
                      uint32_t *best);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VISION_GEOHASH_H */
