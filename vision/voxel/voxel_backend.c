/*
 * voxel_backend.c - the bridge from the voxel pipeline to the backend mechanism (see
 * voxel_backend_internal.h): it asks the registry for the "voxel" device module of the
 * context's backend, so that voxel.c never learns which backends were compiled in.
 */
#include "voxel_backend_internal.h"

#include "ghm_backend_internal.h"

const GhmVoxelOps *ghmi_voxel_ops(const GhmContext *ctx)
{
    return ghmi_backend_module(ctx, "voxel");
}
