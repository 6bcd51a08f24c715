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

/* The stream all of ctx's work is queued on. */
static inline cudaStream_t ghm_cuda_stream(const GhmContext *ctx)
{
    return ((const CudaState *)ctx->state)->stream;
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
