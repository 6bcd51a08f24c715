/*
 * backend_cuda.cu - the CUDA backend: device 0, one non-blocking stream per context, backend
 * memory is device memory. Copies are queued on the context's stream and waited for, so the
 * buffer API is synchronous with respect to the host like the CPU backend's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/hashing/cuda_check.cuh"
#include "backend_cuda.h"
#include "hash_cuda_internal.cuh"

/* The oldest GPUs this build runs on: the compute_75 PTX of CMakeLists.txt. GHM_CUDA_MIN_CC
 * (e.g. 100) raises it, so that the fallback can be tested on any GPU. */
static int min_compute_capability(void)
{
    const char *env = getenv("GHM_CUDA_MIN_CC");
    int cc = env ? atoi(env) : 0;
    return cc > 75 ? cc : 75;
}

static int cuda_probe(char *why, size_t why_size)
{
    int count = 0, major = 0, minor = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count < 1) {
        snprintf(why, why_size, "no CUDA device answers (%s)",
                 err != cudaSuccess ? cudaGetErrorString(err) : "none found");
        cudaGetLastError();
        return GHM_ERR_NO_DEVICE;
    }
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess) {
        snprintf(why, why_size, "CUDA device 0 does not say its compute capability");
        cudaGetLastError();
        return GHM_ERR_NO_DEVICE;
    }
    int min = min_compute_capability();
    if (major * 10 + minor < min) {
        snprintf(why, why_size, "CUDA device 0 is sm_%d%d; this build runs on sm_%d and newer",
                 major, minor, min);
        return GHM_ERR_NO_DEVICE;
    }
    return GHM_OK;
}

static __global__ void probe_kernel(int *p)
{
    if (p)
        *p = 1;
}

/* Whether the device can load this build's code (machine code for it, or PTX it can
 * JIT-compile): an image that fits no architecture fails here, not in the first real kernel. */
static int kernels_load(void)
{
    cudaFuncAttributes attr;
    if (cudaFuncGetAttributes(&attr, probe_kernel) != cudaSuccess) {
        cudaGetLastError();
        return GHM_ERR_NO_DEVICE;
    }
    return GHM_OK;
}

static int cuda_init(GhmContext *ctx, void **state)
{
    CudaState *st = (CudaState *)calloc(1, sizeof *st);
    if (!st)
        return GHM_ERR_NOMEM;
    int ret = GHM_CUDA(cudaSetDevice(0));
    if (ret >= 0)
        ret = kernels_load();
    if (ret >= 0)
        ret = GHM_CUDA(cudaStreamCreateWithFlags(&st->stream, cudaStreamNonBlocking));
    if (ret < 0) {
        free(st);
        return ret;
    }
    if (ctx->threads == 0)
        ctx->threads = 1;
    *state = st;
    return GHM_OK;
}

static void cuda_shutdown(void *state)
{
    CudaState *st = (CudaState *)state;
    if (!st)
        return;
    cudaStreamDestroy(st->stream);
    free(st);
}

static void cuda_describe(const GhmContext *ctx, char *buf, size_t size)
{
    (void)ctx;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        snprintf(buf, size, "CUDA device");
        return;
    }
    snprintf(buf, size, "%s, sm_%d%d, %.0f GiB", prop.name, prop.major, prop.minor,
             (double)prop.totalGlobalMem / (1u << 30));
}

static int cuda_alloc(GhmContext *ctx, size_t bytes, void **out)
{
    *out = NULL;
    int ret = GHM_CUDA(cudaMalloc(out, bytes ? bytes : 1));
    if (ret < 0)
        return ret;
    ret = GHM_CUDA(cudaMemsetAsync(*out, 0, bytes, ghm_cuda_stream(ctx)));
    if (ret >= 0)
        ret = GHM_CUDA(cudaStreamSynchronize(ghm_cuda_stream(ctx)));
    if (ret < 0) {
        cudaFree(*out);
        *out = NULL;
    }
    return ret;
}

static void cuda_free(GhmContext *ctx, void *p)
{
    (void)ctx;
    cudaFree(p);
}

static int copy_kind(GhmContext *ctx, void *dst, const void *src, size_t bytes,
                     cudaMemcpyKind kind)
{
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, s));
    return ret < 0 ? ret : GHM_CUDA(cudaStreamSynchronize(s));
}

static int cuda_upload(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    return copy_kind(ctx, dst, src, bytes, cudaMemcpyHostToDevice);
}

static int cuda_download(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    return copy_kind(ctx, dst, src, bytes, cudaMemcpyDeviceToHost);
}

static int cuda_copy(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    return copy_kind(ctx, dst, src, bytes, cudaMemcpyDeviceToDevice);
}

static int cuda_zero(GhmContext *ctx, void *dst, size_t bytes)
{
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cudaMemsetAsync(dst, 0, bytes, s));
    return ret < 0 ? ret : GHM_CUDA(cudaStreamSynchronize(s));
}

static int cuda_sync(GhmContext *ctx)
{
    return GHM_CUDA(cudaStreamSynchronize(ghm_cuda_stream(ctx)));
}

extern "C" const GhmBackend ghm_cuda_backend = {
    /* .name = */ "cuda",
    /* .kind = */ GHM_BACKEND_CUDA,
    /* .probe = */ cuda_probe,
    /* .init = */ cuda_init,
    /* .shutdown = */ cuda_shutdown,
    /* .describe = */ cuda_describe,
    /* .alloc = */ cuda_alloc,
    /* .free = */ cuda_free,
    /* .upload = */ cuda_upload,
    /* .download = */ cuda_download,
    /* .copy = */ cuda_copy,
    /* .zero = */ cuda_zero,
    /* .sync = */ cuda_sync,
    /* .in_place = */ ghm_cuda_is_device_pointer,
    /* The structures' op tables (kernels/hashing/<structure>.cu). */
    /* .map = */ &ghm_cuda_map_ops,
    /* .set = */ &ghm_cuda_set_ops,
    /* .multimap = */ &ghm_cuda_multimap_ops,
    /* .index = */ &ghm_cuda_index_ops,
    /* .sorted = */ &ghm_cuda_sorted_ops,
};
