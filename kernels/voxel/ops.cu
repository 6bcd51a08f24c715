/*
 * ops.cu - the CUDA backend's voxel op table (GhmVoxelOps, vision/voxel_backend_internal.h): the
 * launchers of kernels/voxel/voxel.cu and a stream-ordered allocator for the host module's
 * device arrays, which ghm_cuda_backend.voxel points at. vision/voxel_device.c finds them
 * through ghmi_voxel_ops(ctx); backends without the table keep the CPU path of vision/voxel.c.
 */
#include "../../hashing/ghm_backend_internal.h"
#include "../cuda_check.cuh"
#include "../hashing/backend_cuda.h"
#include "voxel.h"

/* cudaMallocAsync draws from the device's pool, so a step's arrays cost no cudaMalloc and no
 * device-wide synchronisation (ghm_buffer_alloc zeroes and waits). */
static int voxel_scratch(GhmContext *ctx, size_t bytes, void **out)
{
    *out = NULL;
    int ret = GHM_CUDA(cudaMallocAsync(out, bytes ? bytes : 1, ghm_cuda_stream(ctx)));
    if (ret < 0)
        *out = NULL;
    return ret;
}

static void voxel_release(GhmContext *ctx, void *p)
{
    if (p)
        cudaFreeAsync(p, ghm_cuda_stream(ctx));
}

static int voxel_zero(GhmContext *ctx, void *p, size_t bytes)
{
    return bytes ? GHM_CUDA(cudaMemsetAsync(p, 0, bytes, ghm_cuda_stream(ctx))) : GHM_OK;
}

extern "C" const GhmVoxelOps ghm_cuda_voxel_ops = {
    /* .scratch = */ voxel_scratch,
    /* .release = */ voxel_release,
    /* .zero = */ voxel_zero,
    /* .keys = */ ghm_cuda_voxel_keys,
    /* .accumulate = */ ghm_cuda_voxel_accumulate,
    /* .normalise = */ ghm_cuda_voxel_normalise,
    /* .neighbours = */ ghm_cuda_voxel_neighbours,
    /* .contact = */ ghm_cuda_voxel_contact,
    /* .classify = */ ghm_cuda_voxel_classify,
    /* .fill = */ ghm_cuda_voxel_fill,
    /* .fill_labels = */ ghm_cuda_voxel_fill_labels,
    /* .seeds = */ ghm_cuda_voxel_seeds,
};
