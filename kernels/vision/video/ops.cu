/*
 * ops.cu - the CUDA backend's video table (GhmVideoDecodeOps, vision/video/
 * video_backend_internal.h): the device's primary context and a stream of it for FFmpeg's
 * CUDA decoders (vision/video/video_gpu_decode.c), named by the module ghm_cuda_module_video at
 * the end.
 */
#include <cuda.h>

#include "hashing/ghm_backend_internal.h"
#include "kernels/hashing/cuda_check.cuh"
#include "video_backend_internal.h"

/* The calling thread's current context: cuCtxGetCurrent through the runtime's entry point, so
 * that the library does not link the driver library itself (the runtime loads it). */
static int current_context(CUcontext *out)
{
    void *fn = NULL;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !fn) {
        cudaGetLastError();
        return GHM_ERR_CUDA;
    }
    return ((CUresult(*)(CUcontext *))fn)(out) == CUDA_SUCCESS && *out ? GHM_OK : GHM_ERR_CUDA;
}

/* The caller's current device is left as it was: the thread may be matching on another. */
static int video_open_stream(int device, void **cu_context, void **cu_stream)
{
    int before = 0;
    if (cudaGetDevice(&before) != cudaSuccess || cudaSetDevice(device) != cudaSuccess ||
        cudaFree(NULL) != cudaSuccess) {
        cudaGetLastError();
        return GHM_ERR_NO_DEVICE;
    }
    CUcontext ctx = NULL;
    cudaStream_t stream = NULL;
    int ret = current_context(&ctx);
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    cudaSetDevice(before);
    if (ret == GHM_OK) {
        *cu_context = ctx;
        *cu_stream = stream;
    }
    return ret;
}

static void video_close_stream(int device, void *cu_stream)
{
    int before = 0;
    if (!cu_stream || cudaGetDevice(&before) != cudaSuccess)
        return;
    cudaSetDevice(device);
    cudaStreamDestroy((cudaStream_t)cu_stream);
    cudaSetDevice(before);
}

static const GhmVideoDecodeOps ghm_cuda_video_ops = {
    /* .open_stream = */ video_open_stream,
    /* .close_stream = */ video_close_stream,
};

/* The registry finds the table through this module (see GhmDeviceModule). */
extern "C" const GhmDeviceModule ghm_cuda_module_video = {"video", GHM_BACKEND_CUDA,
                                                        &ghm_cuda_video_ops};
