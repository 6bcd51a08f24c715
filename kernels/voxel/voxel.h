/*
 * voxel.h - the CUDA launchers of the voxel pipeline (kernels/voxel/voxel.cu); the host module
 * is vision/voxel_device.c, which reaches them through the backend's voxel op table
 * (vision/voxel_backend_internal.h, filled in kernels/voxel/ops.cu).
 *
 * Usage: as the GhmVoxelOps members of the same names; arguments and results as documented
 * there. All arrays are device memory; work is queued on ctx's stream; nothing is allocated or
 * waited for. Each returns GHM_OK, GHM_ERR_INVALID (NULL array with a non-zero size, an index
 * not on this backend, a radius out of range), GHM_ERR_TOO_LARGE (sizes beyond 32-bit
 * indexing) or GHM_ERR_CUDA.
 */
#ifndef GHM_KERNELS_VOXEL_VOXEL_H
#define GHM_KERNELS_VOXEL_VOXEL_H

#include "../../vision/voxel_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

int ghm_cuda_voxel_keys(GhmContext *ctx, const float *xyz, size_t n, const GhmVoxelPose *pose,
                        const GhmVoxelGridArgs *g, uint32_t *pkey);
int ghm_cuda_voxel_accumulate(GhmContext *ctx, const uint32_t *pid, size_t n, size_t K,
                              const float *normals, const GhmVoxelPose *pose, uint32_t *counts,
                              unsigned long long *nsum);
int ghm_cuda_voxel_normalise(GhmContext *ctx, size_t K, const unsigned long long *nsum,
                             float *normals);
int ghm_cuda_voxel_neighbours(GhmContext *ctx, const GhmIndex *ix, const uint32_t *keys,
                              size_t K, const GhmVoxelGridArgs *g, int radius, uint32_t *nbr,
                              uint32_t *hist);
int ghm_cuda_voxel_contact(GhmContext *ctx, const uint32_t *keys, size_t K, const GhmIndex *other,
                           size_t other_K, const float *onormals, const GhmVoxelGridArgs *g,
                           int rho, uint32_t *cross, uint8_t *barrier, float *plane);
int ghm_cuda_voxel_classify(GhmContext *ctx, const uint32_t *keys, size_t K,
                            const GhmVoxelGridArgs *g, int radius, const uint32_t *nbr,
                            const uint32_t *cross, const uint8_t *barrier, const float *plane,
                            double t_out, double t_in, uint8_t *label, uint8_t *ring,
                            uint8_t *seed);
int ghm_cuda_voxel_fill(GhmContext *ctx, size_t K, int nn, const uint32_t *nbr,
                       const uint8_t *barrier, const uint8_t *seed, unsigned long long *state,
                       uint32_t *queue, uint32_t *cnt);
int ghm_cuda_voxel_fill_labels(GhmContext *ctx, size_t K, int nn, const uint32_t *nbr,
                               const uint8_t *barrier, const uint8_t *ring, const uint8_t *seed,
                               const unsigned long long *state, uint8_t *label, uint8_t *drop,
                               unsigned long long *counters);
int ghm_cuda_voxel_seeds(GhmContext *ctx, size_t K, const uint8_t *drop, uint8_t *seed,
                         unsigned long long *counters);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VOXEL_VOXEL_H */
