/*
 * ops.cu - the CUDA backend's voxel op table (GhmVoxelOps,
 * vision/voxel/voxel_backend_internal.h): the launchers of voxelize.cu, labels.cu, normals.cu and
 * edit.cu, a stream-ordered allocator, page-locked host memory, queued copies and event timers
 * for the host module, named by the module ghm_cuda_module_voxel at the end.
 * vision/voxel/voxel_device.c finds them through ghmi_voxel_ops(ctx); backends without the
 * table keep the CPU path of vision/voxel/.
 */
#include <stdlib.h>

#include "hashing/ghm_backend_internal.h"
#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/backend_cuda.h"
#include "kernels/hashing/device_memory.h"
#include "voxel.h"

/* The one device allocator (kernels/hashing/device_memory.h): stream-ordered, from the
 * device's pool, so arrays cost no cudaMalloc and no device-wide synchronisation
 * (ghm_buffer_alloc zeroes them too). */
static int voxel_scratch(GhmContext *ctx, size_t bytes, void **out)
{
    return ghmi_device_alloc(ctx, bytes ? bytes : 1, out);
}

static void voxel_release(GhmContext *ctx, void *p) { ghmi_device_free(ctx, p); }

static int voxel_memset(GhmContext *ctx, void *p, int value, size_t bytes)
{
    return bytes ? GHM_CUDA(cudaMemsetAsync(p, value, bytes, ghm_cuda_stream(ctx))) : GHM_OK;
}

static int voxel_host_alloc(GhmContext *ctx, size_t bytes, void **out)
{
    (void)ctx;
    *out = NULL;
    int ret = GHM_CUDA(cudaMallocHost(out, bytes ? bytes : 1));
    if (ret < 0)
        *out = NULL;
    return ret;
}

static void voxel_host_free(GhmContext *ctx, void *p)
{
    if (!p)
        return;
    ghm_cuda_wait(ghm_cuda_stream(ctx));
    cudaFreeHost(p);
}

static int voxel_upload(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    /* the kind from the pointers (unified addressing): a source may be device memory */
    return bytes ? GHM_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault,
                                            ghm_cuda_stream(ctx)))
                 : GHM_OK;
}

static int voxel_download(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    return bytes ? GHM_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
                                            ghm_cuda_stream(ctx)))
                 : GHM_OK;
}

typedef struct VoxelTimer {
    int n;
    cudaEvent_t ev[1];
} VoxelTimer;

static void voxel_timer_free(void *p)
{
    VoxelTimer *t = (VoxelTimer *)p;
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        if (t->ev[i])
            cudaEventDestroy(t->ev[i]);
    free(t);
}

static int voxel_timer_create(GhmContext *ctx, int n, void **out)
{
    *out = NULL;
    if (n < 1)
        return GHM_ERR_INVALID;
    ghm_cuda_bind(ctx); /* events belong to the device current when they are made */
    VoxelTimer *t = (VoxelTimer *)calloc(1, sizeof *t + (size_t)n * sizeof(cudaEvent_t));
    if (!t)
        return GHM_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        int ret = GHM_CUDA(cudaEventCreate(&t->ev[i]));
        if (ret < 0) {
            voxel_timer_free(t);
            return ret;
        }
        t->n = i + 1;
    }
    *out = t;
    return GHM_OK;
}

static int voxel_timer_mark(GhmContext *ctx, void *p, int i)
{
    VoxelTimer *t = (VoxelTimer *)p;
    if (!t || i < 0 || i >= t->n)
        return GHM_ERR_INVALID;
    return GHM_CUDA(cudaEventRecord(t->ev[i], ghm_cuda_stream(ctx)));
}

static int voxel_timer_elapsed(void *p, int i, int j, double *ms)
{
    VoxelTimer *t = (VoxelTimer *)p;
    if (!t || !ms || i < 0 || j < 0 || i >= t->n || j >= t->n)
        return GHM_ERR_INVALID;
    float f = 0;
    int ret = GHM_CUDA(cudaEventElapsedTime(&f, t->ev[i], t->ev[j]));
    *ms = f;
    return ret;
}

static const GhmVoxelOps ghm_cuda_voxel_ops = {
    /* .scratch = */ voxel_scratch,
    /* .release = */ voxel_release,
    /* .memset = */ voxel_memset,
    /* .host_alloc = */ voxel_host_alloc,
    /* .host_free = */ voxel_host_free,
    /* .upload = */ voxel_upload,
    /* .download = */ voxel_download,
    /* .timer_create = */ voxel_timer_create,
    /* .timer_mark = */ voxel_timer_mark,
    /* .timer_elapsed = */ voxel_timer_elapsed,
    /* .timer_free = */ voxel_timer_free,
    /* .rows = */ ghm_cuda_voxel_rows,
    /* .row_voxels = */ ghm_cuda_voxel_row_voxels,
    /* .keys = */ ghm_cuda_voxel_keys,
    /* .table = */ ghm_cuda_voxel_table,
    /* .build = */ ghm_cuda_voxel_build,
    /* .neighbours = */ ghm_cuda_voxel_neighbours,
    /* .contact = */ ghm_cuda_voxel_contact,
    /* .classify = */ ghm_cuda_voxel_classify,
    /* .fill = */ ghm_cuda_voxel_fill,
    /* .normals = */ ghm_cuda_voxel_normals,
    /* .edit_select = */ ghm_cuda_voxel_edit_select,
    /* .edit_add_items = */ ghm_cuda_voxel_edit_add_items,
    /* .edit_add_present = */ ghm_cuda_voxel_edit_add_present,
    /* .edit_cut = */ ghm_cuda_voxel_edit_cut,
    /* .edit_spans = */ ghm_cuda_voxel_edit_spans,
    /* .edit_encloses = */ ghm_cuda_voxel_edit_encloses,
    /* .edit_preload = */ ghm_cuda_voxel_edit_preload,
};

/* The registry finds the table through this module (see GhmDeviceModule). */
extern "C" const GhmDeviceModule ghm_cuda_module_voxel = {"voxel", GHM_BACKEND_CUDA,
                                                        &ghm_cuda_voxel_ops};
