/*
 * backend_cuda.h - what other CUDA sources need from the CUDA backend's per-context state.
 */
#ifndef GHM_BACKEND_CUDA_H
#define GHM_BACKEND_CUDA_H

#include <cuda_runtime.h>

#include "hashing/ghm_backend_internal.h"

/* The stream all of ctx's work is queued on. */
cudaStream_t ghm_cuda_stream(const GhmContext *ctx);

/* 1 if p points to device (or managed) memory, 0 if it is host memory. */
int ghm_cuda_is_device_pointer(const void *p);

#endif /* GHM_BACKEND_CUDA_H */
