/*
 * voxel.h - the CUDA launchers of the voxel pipeline: voxelize.cu (keys, table, per-voxel sums,
 * neighbours, contact), labels.cu (classify, fill), normals.cu (estimated normals) and edit.cu
 * (a voxel edit's lists of changes), the device twins of vision/voxel/voxelize.c, labels.c,
 * normals.c and edit.c. The host module is
 * vision/voxel/voxel_device.c, which reaches them through the backend's voxel op table
 * (vision/voxel/voxel_backend_internal.h, filled in kernels/vision/voxel/ops.cu).
 *
 * Usage: as the GhmVoxelOps members of the same names; arguments and results as documented
 * there. All arrays are device memory; work is queued on ctx's stream; nothing is waited for.
 * Each returns GHM_OK, GHM_ERR_INVALID (NULL array with a non-zero size, a radius
 * out of range), GHM_ERR_TOO_LARGE (sizes beyond 31-bit indexing) or GHM_ERR_CUDA.
 */
#ifndef GHM_KERNELS_VOXEL_VOXEL_H
#define GHM_KERNELS_VOXEL_VOXEL_H

#include "vision/voxel/voxel_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

int ghm_cuda_voxel_rows(GhmContext *ctx, const GhmVoxelGridArgs *g, const int32_t *lo,
                        const int32_t *hi, const uint64_t *start, size_t nr, size_t n, float *xyz);
int ghm_cuda_voxel_row_voxels(GhmContext *ctx, const GhmVoxelGridArgs *g, const int32_t *lo,
                              const int32_t *hi, const uint64_t *start, size_t nr, size_t n,
                              uint32_t *keys, uint32_t *counts, float *normals);
int ghm_cuda_voxel_keys(GhmContext *ctx, GhmMultimap *table, const float *xyz, size_t na,
                        size_t nb, const GhmVoxelPose *pose, const GhmVoxelGridArgs *g,
                        GhmVoxelInfo *info);
int ghm_cuda_voxel_table(GhmContext *ctx, GhmMultimap *table, size_t n, int key_bits, int attempt,
                         GhmVoxelInfo *info);
int ghm_cuda_voxel_build(GhmContext *ctx, const GhmMultimap *table, size_t runs, size_t runs_a,
                         const float *xyz, const float *pnormals, const GhmVoxelPose *pose,
                         const GhmVoxelGridArgs *g, const GhmVoxelPair *p);
int ghm_cuda_voxel_neighbours(GhmContext *ctx, const GhmMultimap *table,
                              const GhmVoxelGridArgs *g, const GhmVoxelPair *p,
                              const int do_side[2], GhmVoxelInfo *info);
int ghm_cuda_voxel_contact(GhmContext *ctx, const GhmMultimap *table, const GhmVoxelGridArgs *g,
                           int rho, const GhmVoxelPair *p, GhmVoxelInfo *info);
int ghm_cuda_voxel_classify(GhmContext *ctx, const GhmVoxelGridArgs *g, double t_out, double t_in,
                            const GhmVoxelPair *p);
int ghm_cuda_voxel_fill(GhmContext *ctx, int max_rounds, const GhmVoxelPair *p,
                        GhmVoxelFillControl *ctl, GhmVoxelInfo *info);
int ghm_cuda_voxel_normals(GhmContext *ctx, const GhmVoxelGridArgs *g, const GhmVoxelPair *p,
                           const int do_side[2], const GhmVoxelEstimate *e,
                           GhmVoxelOrientControl *ctl);
int ghm_cuda_voxel_edit_select(GhmContext *ctx, const uint32_t *keys, const uint8_t *labels,
                               size_t n, int label, uint32_t *out, uint32_t *counts);
int ghm_cuda_voxel_edit_cut(GhmContext *ctx, GhmDynmap *set, int subtract, int32_t nx,
                            const int32_t *lo, const int32_t *hi, const uint64_t *start,
                            const uint8_t *labels, const uint32_t *keys, const uint32_t *counts,
                            const float *normals, size_t K, uint32_t *cuts);
int ghm_cuda_voxel_edit_add_items(GhmContext *ctx, const uint32_t *keys, const uint32_t *counts,
                                  const float *normals, size_t K, const uint32_t *inside,
                                  size_t n, uint32_t *items);
int ghm_cuda_voxel_edit_add_present(GhmContext *ctx, GhmDynmap *set, const uint32_t *items,
                                    const GhmDynmapHandle *handles, const uint8_t *stored,
                                    size_t K, size_t total, uint32_t *relabelled);
int ghm_cuda_voxel_edit_spans(GhmContext *ctx, const int dims[3], const uint32_t *keys,
                              size_t K, int d, int32_t *lo, int32_t *hi, uint64_t *start,
                              uint64_t *total);
int ghm_cuda_voxel_edit_encloses(GhmContext *ctx, const int dims[3], const uint32_t *keys,
                                 const uint8_t *labels, size_t n, const int32_t *lo,
                                 const int32_t *hi, const uint64_t *start, int rho,
                                 uint32_t *found);
int ghm_cuda_voxel_edit_preload(GhmContext *ctx);

#ifdef __cplusplus
}
#endif

#endif /* GHM_KERNELS_VOXEL_VOXEL_H */
