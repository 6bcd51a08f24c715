/*
 * ghm_context.h - the context every structure and pipeline runs in: which backend (CPU or
 * CUDA), how many CPU threads, the seed, and memory that lives where that backend computes.
 *
 * Usage:
 *     GhmContext *ctx = NULL;
 *     GhmContextOptions opt = ghm_context_defaults();
 *     opt.backend = GHM_BACKEND_AUTO;          // CUDA when a device is present, else CPU
 *     if ((ret = ghm_context_create(&opt, &ctx)) < 0) goto fail;
 *     printf("running on %s\n", ghm_context_backend_name(ctx));
 *     ...
 *     ghm_context_free(&ctx);
 *
 * "Backend memory" below means device memory on the CUDA backend and ordinary host memory on
 * the CPU backend. Pipelines keep their arrays in backend memory between stages, so nothing
 * makes a round trip through the host; they never need to know which backend they are on.
 */
#ifndef GHM_CONTEXT_H
#define GHM_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum GhmBackendKind {
    GHM_BACKEND_AUTO = 0, /* the first backend whose probe succeeds: CUDA, then CPU */
    GHM_BACKEND_CPU = 1,
    GHM_BACKEND_CUDA = 2
} GhmBackendKind;

typedef struct GhmContextOptions {
    GhmBackendKind backend;
    int threads;   /* CPU worker threads; 0 = all cores (OpenMP's default) */
    uint64_t seed; /* every random choice (hash constants, sampling) derives from it */
    int verbose;   /* 0 quiet, 1 normal, 2 debug: backends may log to stderr at 2 */
    int device;    /* CUDA device ordinal, 0 to ghm_cuda_device_count() - 1; the CPU ignores it */
} GhmContextOptions;

typedef struct GhmContext GhmContext;

/* Returns the defaults: AUTO backend, all cores, seed 1, verbose 0, device 0. */
GHM_API GhmContextOptions ghm_context_defaults(void);

/* Creates a context. GHM_ERR_NO_DEVICE when CUDA is asked for explicitly and this build has no
 * CUDA, no device answers, or the device cannot run this build's code (older than sm_75, or no
 * loadable kernel image: ghm_cuda_unavailable_reason says which for device 0); AUTO then takes
 * the CPU. The same when opt->device names a device that does not exist or cannot run this
 * build: that leaves the other devices usable. GHM_ERR_INVALID on a NULL argument, negative
 * threads or a negative device.
 * Several devices: each context runs on the device it was created for, from any thread; the
 * library makes that device CUDA's current device on the calling thread before it works on the
 * context (and leaves it so). Contexts of different devices share nothing: a structure is used
 * only with the context it was made in.
 * The caller owns *out and frees it with ghm_context_free(). */
GHM_API int ghm_context_create(const GhmContextOptions *opt, GhmContext **out);

/* Starts CUDA (the driver, device 0's context, this build's kernels: about 0.2 s on an
 * H100 machine) on a thread of its own and returns at once, so that the caller's host work (reading
 * and decoding inputs) overlaps it; the next ghm_context_create that may use CUDA waits for it
 * and finds it ready. Once per process; does nothing for GHM_BACKEND_CPU or in a build without
 * CUDA. A program that may exit without creating a context calls ghm_context_prestart_wait
 * first (exiting while CUDA starts is not safe). */
GHM_API void ghm_context_prestart(GhmBackendKind backend);
/* The same on the device a later context will name, `device` modulo the number of devices
 * (ghm_context_prestart starts device 0): a process that works on another device, as an MPI
 * rank does, then makes one primary context instead of device 0's and its own one after the
 * other. A negative device starts nothing. */
GHM_API void ghm_context_prestart_on(GhmBackendKind backend, int device);
/* Waits for a start-up begun by ghm_context_prestart, if one is running. */
GHM_API void ghm_context_prestart_wait(void);
/* Frees the context and sets *ctx to NULL; accepts NULL and a pointer to NULL. */
GHM_API void ghm_context_free(GhmContext **ctx);

GHM_API GhmBackendKind ghm_context_backend(const GhmContext *ctx);
GHM_API const char *ghm_context_backend_name(const GhmContext *ctx); /* "cpu" or "cuda" */
GHM_API uint64_t ghm_context_seed(const GhmContext *ctx);
GHM_API int ghm_context_threads(const GhmContext *ctx); /* the number actually used, >= 1 */
/* The CPU threads a context created with threads 0 uses (OpenMP's default: all cores unless
 * OMP_NUM_THREADS says otherwise), for a caller that decides before it has a context. */
GHM_API int ghm_context_default_threads(void);
GHM_API int ghm_context_verbose(const GhmContext *ctx);

/* Describes the device in one line ("NVIDIA H100 80GB HBM3, sm_90" or "2 CPU threads").
 * Writes at most size bytes including the terminating NUL. */
GHM_API void ghm_context_describe(const GhmContext *ctx, char *buf, size_t size);

/* True (1) when this build has CUDA and a device answers that can run it. Probes once per
 * process (without creating a CUDA context); a context creation that finds the device cannot
 * load the kernels makes it false from then on. */
GHM_API int ghm_cuda_available(void);

/* The number of CUDA devices (0 when ghm_cuda_available() is false). */
GHM_API int ghm_cuda_device_count(void);

/* The options ctx runs with: its backend (AUTO resolved), threads, seed, verbose level and
 * device; a context made from them works the same way (a worker's, another device's). */
GHM_API GhmContextOptions ghm_context_options(const GhmContext *ctx);

/* The CUDA device ordinal of a CUDA context; -1 on the CPU backend. */
GHM_API int ghm_context_device(const GhmContext *ctx);

/* How many times the host has waited for the GPU in this process (0 without CUDA): each is a
 * round trip the host spends idle. The pipelines keep the waits they need (a count they must
 * read, a result they return); a test bounds them per query. */
GHM_API uint64_t ghm_cuda_host_waits(void);

/* Why ghm_cuda_available() is false, in one line ("CUDA device 0 is sm_61; this build runs on
 * sm_75 and newer"); "" when it is true. Valid until the next context creation. */
GHM_API const char *ghm_cuda_unavailable_reason(void);

/* Backend memory. ghm_buffer_alloc returns zeroed memory of at least `bytes` bytes (bytes may be
 * 0, giving a valid pointer that must still be freed). ghm_buffer_free accepts NULL. On CUDA
 * every call is ordered on the context's stream (the memory comes from the device's
 * stream-ordered pool): alloc, free, copy and zero return without waiting for the GPU, upload
 * returns once host_src may be reused, download once host_dst holds the bytes. Use the memory
 * only with work of the same context (or after ghm_context_sync). */
GHM_API int ghm_buffer_alloc(GhmContext *ctx, size_t bytes, void **out);
GHM_API void ghm_buffer_free(GhmContext *ctx, void **p);
GHM_API int ghm_buffer_upload(GhmContext *ctx, void *dst, const void *host_src, size_t bytes);
GHM_API int ghm_buffer_download(GhmContext *ctx, void *host_dst, const void *src, size_t bytes);
/* Copies within backend memory. */
GHM_API int ghm_buffer_copy(GhmContext *ctx, void *dst, const void *src, size_t bytes);
GHM_API int ghm_buffer_zero(GhmContext *ctx, void *dst, size_t bytes);
/* Scratch that only grows: when *cap (bytes) is below bytes, frees *p and allocates bytes
 * (zeroed, contents not kept), updating *cap; else does nothing. On failure *p is NULL and *cap
 * 0. */
GHM_API int ghm_buffer_reserve(GhmContext *ctx, void **p, size_t *cap, size_t bytes);
/* 1 when ctx's kernels read p in place (CUDA: device or managed memory; the CPU backend: any
 * pointer), so that a caller need not copy it into backend memory first. */
GHM_API int ghm_buffer_in_place(const GhmContext *ctx, const void *p);

/* Waits until all work queued on the context's stream is done (no-op on the CPU). */
GHM_API int ghm_context_sync(GhmContext *ctx);

/* Orders the context's later work after all work queued so far on a CUDA stream of the
 * caller's, without the host waiting, so that device arrays another library is still writing
 * (CuPy, a framework's stream) may be passed to the structures at once. stream is a
 * cudaStream_t as an integer, or 1 / 2 for the legacy / per-thread default stream as the CUDA
 * Array Interface spells them (0 is the legacy default too). GHM_ERR_INVALID for a NULL ctx;
 * GHM_ERR_UNSUPPORTED on the CPU backend (it has no streams: its arrays are host memory);
 * GHM_ERR_CUDA when CUDA refuses the stream. */
GHM_API int ghm_context_wait_stream(GhmContext *ctx, uintptr_t stream);

/* Monotonic wall clock in seconds, for timings printed by benchmarks and --verbose. */
GHM_API double ghm_now(void);

#ifdef __cplusplus
}
#endif

#endif /* GHM_CONTEXT_H */
