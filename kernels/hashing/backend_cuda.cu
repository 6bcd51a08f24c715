/*
 * backend_cuda.cu - the CUDA backend: one device per context (device 0 unless the options name
 * another), one non-blocking stream per context, backend memory is device memory. Copies are queued on the context's stream and waited for, so the
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

/* GHM_OK when device `dev` is new enough for this build, else one line in why. */
static int check_capability(int dev, char *why, size_t why_size)
{
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        snprintf(why, why_size, "CUDA device %d does not say its compute capability", dev);
        cudaGetLastError();
        return GHM_ERR_NO_DEVICE;
    }
    int min = min_compute_capability();
    if (major * 10 + minor < min) {
        snprintf(why, why_size, "CUDA device %d is sm_%d%d; this build runs on sm_%d and newer",
                 dev, major, minor, min);
        return GHM_ERR_NO_DEVICE;
    }
    return GHM_OK;
}

/* Device 0 decides whether CUDA is available at all; other devices are checked when a context
 * asks for one (cuda_init). */
static int cuda_probe(char *why, size_t why_size)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count < 1) {
        snprintf(why, why_size, "no CUDA device answers (%s)",
                 err != cudaSuccess ? cudaGetErrorString(err) : "none found");
        cudaGetLastError();
        return GHM_ERR_NO_DEVICE;
    }
    return check_capability(0, why, why_size);
}

static int cuda_devices(void)
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
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

/* The device's default memory pool, which the allocator (device_memory.cu) draws from, keeps
 * what is freed instead of returning it to the driver at every synchronisation (its default):
 * repeated queries reuse their memory instead of allocating it again. */
static int keep_pool_memory(int dev)
{
    cudaMemPool_t pool;
    unsigned long long keep = ~0ull;
    int ret = GHM_CUDA(cudaDeviceGetDefaultMemPool(&pool, dev));
    return ret < 0 ? ret
                   : GHM_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

static int cuda_init(GhmContext *ctx, void **state)
{
    CudaState *st = (CudaState *)calloc(1, sizeof *st);
    if (!st)
        return GHM_ERR_NOMEM;
    char why[160]; /* device 0's reason is the probe's; another's is not process-wide */
    st->device = ctx->device;
    int ret = check_capability(st->device, why, sizeof why);
    if (ret >= 0)
        ret = GHM_CUDA(cudaSetDevice(st->device));
    if (ret >= 0)
        ret = kernels_load();
    if (ret >= 0)
        ret = keep_pool_memory(st->device);
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

/* Creating the primary context (driver start-up, the device's memory mapped) is most of a CUDA
 * process's start-up, about 0.2 s on the H100 machine: cudaFree(NULL) forces it, and loading the
 * probe kernel checks the module. An error here is met again, and reported, by cuda_init. */
static void cuda_warm(int device)
{
    int count = cuda_devices();
    if (count > 0 && cudaSetDevice(device % count) == cudaSuccess && cudaFree(NULL) == cudaSuccess)
        (void)kernels_load();
    cudaGetLastError();
}

static void cuda_shutdown(void *state)
{
    CudaState *st = (CudaState *)state;
    if (!st)
        return;
    cudaSetDevice(st->device); /* the stream's device, whichever thread frees the context */
    cudaStreamDestroy(st->stream);
    free(st);
}

static void cuda_describe(const GhmContext *ctx, char *buf, size_t size)
{
    int dev = ctx ? ghm_cuda_device(ctx) : 0;
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        snprintf(buf, size, "CUDA device");
        return;
    }
    if (dev == 0)
        snprintf(buf, size, "%s, sm_%d%d, %.0f GiB", prop.name, prop.major, prop.minor,
                 (double)prop.totalGlobalMem / (1u << 30));
    else
        snprintf(buf, size, "%s, sm_%d%d, %.0f GiB (device %d)", prop.name, prop.major,
                 prop.minor, (double)prop.totalGlobalMem / (1u << 30), dev);
}

/* Host waits of this process's CUDA code (cuda_check.cuh's ghm_cuda_wait), and the buffer
 * operations that waited before they became stream-ordered (2026-11-24): the two together are
 * what the same work waited before. */
extern "C" {
unsigned long long ghmi_cuda_waits;
unsigned long long ghmi_cuda_spared_waits;
}

static void spared(void) { __atomic_fetch_add(&ghmi_cuda_spared_waits, 1ull, __ATOMIC_RELAXED); }

/* Backend memory comes from the one device allocator (device_memory.h: the device's
 * stream-ordered pool, which keeps freed memory for the next request, cuda_init): an
 * allocation, its zeroing and its release are ordered with the work around them, and nobody
 * waits. */
static int cuda_alloc(GhmContext *ctx, size_t bytes, void **out)
{
    int ret = ghmi_device_alloc(ctx, bytes ? bytes : 1, out);
    if (ret < 0)
        return ret;
    ret = GHM_CUDA(cudaMemsetAsync(*out, 0, bytes, ghm_cuda_stream(ctx)));
    if (ret < 0) {
        ghmi_device_free(ctx, *out);
        *out = NULL;
    }
    spared();
    return ret;
}

static void cuda_free(GhmContext *ctx, void *p) { ghmi_device_free(ctx, p); }

/* Host to device waits for the copy: from pageable memory the driver waits for the stream's
 * earlier work before it copies anyway (CUDA's documented behaviour), and pinned memory is read
 * by the DMA after the call returns; either way the caller may reuse its buffer on return. */
static int cuda_upload(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
    return ret < 0 ? ret : GHM_CUDA(ghm_cuda_wait(s));
}

/* Device to host: the caller reads the bytes on return, so this one waits. */
static int cuda_download(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
    return ret < 0 ? ret : GHM_CUDA(ghm_cuda_wait(s));
}

/* Device to device and zeroing touch only device memory: ordered on the stream, no wait. */
static int cuda_copy(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    int ret = GHM_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                       ghm_cuda_stream(ctx)));
    spared();
    return ret;
}

static int cuda_zero(GhmContext *ctx, void *dst, size_t bytes)
{
    int ret = GHM_CUDA(cudaMemsetAsync(dst, 0, bytes, ghm_cuda_stream(ctx)));
    spared();
    return ret;
}

static int cuda_sync(GhmContext *ctx)
{
    return GHM_CUDA(ghm_cuda_wait(ghm_cuda_stream(ctx)));
}

/* An event recorded on the caller's stream and waited for on ours: the device orders the two,
 * the host does not wait. Destroying the event at once is allowed (CUDA releases it when the
 * wait is done); one event per call keeps the state free of it. */
static int cuda_wait_stream(GhmContext *ctx, uintptr_t stream)
{
    cudaStream_t theirs = stream == 2 ? cudaStreamPerThread
                          : stream <= 1 ? cudaStreamLegacy
                                        : (cudaStream_t)stream;
    cudaStream_t ours = ghm_cuda_stream(ctx); /* binds ctx's device: the event is made there */
    cudaEvent_t ev;
    int ret = GHM_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    if (ret < 0)
        return ret;
    ret = GHM_CUDA(cudaEventRecord(ev, theirs));
    if (ret >= 0)
        ret = GHM_CUDA(cudaStreamWaitEvent(ours, ev, 0));
    cudaEventDestroy(ev);
    return ret;
}

extern "C" const GhmBackend ghm_cuda_backend = {
    /* .name = */ "cuda",
    /* .kind = */ GHM_BACKEND_CUDA,
    /* .probe = */ cuda_probe,
    /* .devices = */ cuda_devices,
    /* .init = */ cuda_init,
    /* .warm = */ cuda_warm,
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
    /* .wait_stream = */ cuda_wait_stream,
    /* The structures' op tables (kernels/hashing/<structure>.cu). */
    /* .maps = */ {&ghm_cuda_map_ops, &ghm_cuda_open_map_ops, &ghm_cuda_open_map_ops,
                   &ghm_cuda_open_map_ops, &ghm_cuda_robin_map_ops, &ghm_cuda_robin_map_ops,
                   &ghm_cuda_chain_map_ops, &ghm_cuda_two_level_map_ops},
    /* .set = */ &ghm_cuda_set_ops,
    /* .multimap = */ &ghm_cuda_multimap_ops,
    /* .index = */ &ghm_cuda_index_ops,
    /* .sorted = */ &ghm_cuda_sorted_ops,
    /* .dynmap = */ &ghm_cuda_dynmap_ops,
    /* .dist = */ &ghm_cuda_dist_ops,
};
