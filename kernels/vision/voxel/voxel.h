/*
 * voxel.h - the CUDA launchers of the voxel pipeline (kernels/vision/voxel/voxel.cu); the host module
 * is vision/voxel/voxel_device.c, which reaches them through the backend's voxel op table
 * (vision/voxel/voxel_backend_internal.h, filled in kernels/voxel/ops.cu).
 *
 * Usage: as the GhmVoxelOps members of the same names; arguments and results as documented
 * there. All arrays are device memory; work is queued on ctx's stream; nothing is allocated or
 * waited for. Each returns GHM_OK, GHM_ERR_INVALID (NULL array with a non-zero size, a radius
 * out of range), GHM_ERR_TOO_LARGE (sizes beyond 31-bit indexing) or GHM_ERR_CUDA.
 */
#ifndef GHM_KERNELS_VOXEL_VOXEL_H
#define GHM_KERNELS_VOXEL_VOXEL_H

#include "vision/voxel/voxel_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

int ghm_cuda_voxel_keys(GhmContext *ctx, const float *xyz, size_t na, size_t nb,
                        const GhmVoxelPose *pose, const GhmVoxelGridArgs *g, uint32_t *ckey,
                        uint32_t *idx, GhmVoxelInfo *info);
int ghm_cuda_voxel_sort(GhmContext *ctx, void *temp, size_t *temp_bytes, uint32_t *keys[2],
                        uint32_t *vals[2], size_t n, int end_bit, int *which);
int ghm_cuda_voxel_heads(GhmContext *ctx, void *temp, size_t *temp_bytes, const uint32_t *skey,
                         size_t n, size_t na, uint32_t *head, GhmVoxelInfo *info);
int ghm_cuda_voxel_build(GhmContext *ctx, const uint32_t *skey, const uint32_t *sidx,
                         const uint32_t *head, size_t n, size_t runs, size_t runs_a,
                         const float *xyz, const float *pnormals, const GhmVoxelPose *pose,
                         const GhmVoxelGridArgs *g, GhmVoxelTable table, const GhmVoxelPair *p);
int ghm_cuda_voxel_neighbours(GhmContext *ctx, GhmVoxelTable table, const GhmVoxelGridArgs *g,
                              const GhmVoxelPair *p, const int do_side[2], GhmVoxelInfo *info);
int ghm_cuda_voxel_contact(GhmContext *ctx, GhmVoxelTable table, const GhmVoxelGridArgs *g,
                           int rho, const GhmVoxelPair *p);
int ghm_cuda_voxel_classify(GhmContext *ctx, const GhmVoxelGridArgs *g, double t_out, double t_in,
                            const GhmVoxelPair *p);
int ghm_cuda_voxel_fill(GhmContext *ctx, int max_rounds, const GhmVoxelPair *p,
                        GhmVoxelFillControl *ctl, GhmVoxelInfo *info);
int ghm_cuda_voxel_normals(GhmContext *ctx, const GhmVoxelGridArgs *g, const GhmVoxelPair *p,
                           const int do_side[2], const GhmVoxelEstimate *e,
                           GhmVoxelOrientControl *ctl);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VOXEL_VOXEL_H */
