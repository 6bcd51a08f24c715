/*
 * backend_cuda.h - what other CUDA sources need from the CUDA backend's per-context state.
 */
#ifndef GHM_BACKEND_CUDA_H
#define GHM_BACKEND_CUDA_H

#include <cuda_runtime.h>

#include "hashing/ghm_backend_internal.h"

/* The CUDA backend's per-context state (backend_cuda.cu creates and frees it). Defined here so
 * that the two helpers below are inline: the structures' sources then call nothing in
 * backend_cuda.cu, whose op tables call them (no cycle between the files). */
typedef struct CudaState {
    int device;
    cudaStream_t stream;
} CudaState;

/* The CUDA device ordinal of ctx. */
static inline int ghm_cuda_device(const GhmContext *ctx)
{
    return ((const CudaState *)ctx->state)->device;
}

/* Makes ctx's device the calling thread's current CUDA device. CUDA's current device is a
 * per-thread setting and a stream belongs to one device, so one thread may use contexts of
 * several devices in turn (the video mode creates its workers' contexts on one thread and
 * frees them on it): ghm_cuda_stream calls this, and the library's CUDA work on a context asks
 * for its stream, or binds, before anything else. Reading the current device is a thread-local
 * read. */
static inline void ghm_cuda_bind(const GhmContext *ctx)
{
    int device = ((const CudaState *)ctx->state)->device, current = -1;
    if (cudaGetDevice(&current) != cudaSuccess || current != device)
        cudaSetDevice(device);
}

/* Loads n of this build's kernels on ctx's device now. CUDA loads a kernel at its first launch
 * (lazy loading, its default since 12.2), and the call that launches it waits for that: a
 * caller that knows which kernels its timed calls will need loads them ahead, on a thread of
 * its own (a voxel edit's first subtract was 0.3-0.7 ms longer than the next, H200,
 * 2026-12-01). Touches nothing of ctx but its device. */
static inline cudaError_t ghm_cuda_load_kernels(const GhmContext *ctx, const void *const *kernels,
                                                size_t n)
{
    ghm_cuda_bind(ctx);
    cudaError_t err = cudaSuccess;
    for (size_t i = 0; i < n && err == cudaSuccess; i++) {
        cudaFuncAttributes a; /* asking for them loads the kernel */
        err = cudaFuncGetAttributes(&a, kernels[i]);
    }
    return err;
}

/* The stream all of ctx's work is queued on, with ctx's device made current (ghm_cuda_bind). */
static inline cudaStream_t ghm_cuda_stream(const GhmContext *ctx)
{
    ghm_cuda_bind(ctx);
    return ((const CudaState *)ctx->state)->stream;
}

/* The SMs of ctx's device; *out is at least 1 whatever CUDA answers. */
static inline cudaError_t ghm_cuda_sm_count(const GhmContext *ctx, int *out)
{
    cudaError_t err = cudaDeviceGetAttribute(out, cudaDevAttrMultiProcessorCount,
                                             ghm_cuda_device(ctx));
    *out = err == cudaSuccess && *out > 0 ? *out : 1;
    return err;
}

/* The blocks of `threads` threads of kernel that fit on ctx's device at once (at least 1): the
 * grid of a kernel whose blocks loop over their work, or of a cooperative launch. */
static inline cudaError_t ghm_cuda_resident_blocks(const GhmContext *ctx, const void *kernel,
                                                   int threads, size_t *out)
{
    int sms = 1, per_sm = 0;
    ghm_cuda_bind(ctx); /* the occupancy is asked of the current device */
    cudaError_t err = ghm_cuda_sm_count(ctx, &sms);
    if (err == cudaSuccess)
        err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0);
    *out = (size_t)sms * (size_t)(per_sm > 0 ? per_sm : 1);
    return err;
}

/* 1 if p points to device (or managed) memory, 0 if it is host memory. */
static inline int ghm_cuda_is_device_pointer(const void *p)
{
    cudaPointerAttributes attr;
    if (!p || cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky-free error of an unregistered host pointer */
        return 0;
    }
    return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

#endif /* GHM_BACKEND_CUDA_H */
