/*
 * backend.c - the backend registry and the context: the only file that knows whether CUDA was
 * compiled in (GHM_HAVE_CUDA is defined for this file alone). AUTO takes the first backend whose
 * probe succeeds, as ggml_backend_init_best does; the CUDA probe runs once per process.
 */
#include "ghm_backend_internal.h"
#include "log_internal.h"

#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_once_t cuda_probe_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t cuda_reason_lock = PTHREAD_MUTEX_INITIALIZER;
static int cuda_probe_result = GHM_ERR_NO_DEVICE;
static char cuda_reason[256] = "this build has no CUDA backend";

static void probe_cuda(void)
{
#if GHM_HAVE_CUDA
    cuda_reason[0] = '\0';
    cuda_probe_result = ghm_cuda_backend.probe(cuda_reason, sizeof cuda_reason);
#endif
}

int ghm_cuda_available(void)
{
    pthread_once(&cuda_probe_once, probe_cuda);
    pthread_mutex_lock(&cuda_reason_lock);
    int ok = cuda_probe_result == GHM_OK;
    pthread_mutex_unlock(&cuda_reason_lock);
    return ok;
}

int ghm_cuda_device_count(void)
{
#if GHM_HAVE_CUDA
    if (ghm_cuda_available())
        return ghm_cuda_backend.devices ? ghm_cuda_backend.devices() : 1;
#endif
    return 0;
}

uint64_t ghm_cuda_host_waits(void)
{
#if GHM_HAVE_CUDA
    return __atomic_load_n(&ghmi_cuda_waits, __ATOMIC_RELAXED);
#else
    return 0;
#endif
}

const char *ghm_cuda_unavailable_reason(void)
{
    return ghm_cuda_available() ? "" : cuda_reason;
}

#if GHM_HAVE_CUDA
/* The device answered the probe but cannot run this build's kernels: from now on CUDA counts
 * as unavailable, with the reason. */
static void cuda_unusable(void)
{
    char dev[160];
    ghm_cuda_backend.describe(NULL, dev, sizeof dev);
    pthread_mutex_lock(&cuda_reason_lock);
    snprintf(cuda_reason, sizeof cuda_reason,
             "CUDA device 0 (%s) cannot run this build's kernels (built for %s)", dev,
             GHM_CUDA_ARCHS);
    cuda_probe_result = GHM_ERR_NO_DEVICE;
    pthread_mutex_unlock(&cuda_reason_lock);
}
#endif

const void *ghmi_backend_module(const GhmContext *ctx, const char *name)
{
    if (!ctx || !ctx->backend || !name)
        return NULL;
    for (const GhmDeviceModule *const *m = ghm_device_modules; *m; m++)
        if ((*m)->backend == ctx->backend->kind && strcmp((*m)->name, name) == 0)
            return (*m)->ops;
    return NULL;
}

static const GhmBackend *pick_backend(GhmBackendKind kind)
{
#if GHM_HAVE_CUDA
    if ((kind == GHM_BACKEND_CUDA || kind == GHM_BACKEND_AUTO) && ghm_cuda_available())
        return &ghm_cuda_backend;
#endif
    if (kind == GHM_BACKEND_CUDA)
        return NULL;
    return &ghm_cpu_backend;
}

/* ghm_context_prestart's thread: started at most once; joined by the first context creation
 * that may use CUDA, or by ghm_context_prestart_wait. */
static pthread_mutex_t prestart_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t prestart_thread;
static int prestart_running;

#if GHM_HAVE_CUDA
static int prestart_started;
static int prestart_device; /* set before the thread starts */

static void *prestart_main(void *unused)
{
    (void)unused;
    if (ghm_cuda_available() && ghm_cuda_backend.warm)
        ghm_cuda_backend.warm(prestart_device);
    return NULL;
}
#endif

void ghm_context_prestart_on(GhmBackendKind backend, int device)
{
#if GHM_HAVE_CUDA
    if (backend == GHM_BACKEND_CPU || device < 0)
        return;
    pthread_mutex_lock(&prestart_lock);
    if (!prestart_started) {
        prestart_started = 1;
        prestart_device = device;
        /* no thread (out of resources): the context starts CUDA itself, as without prestart */
        prestart_running = pthread_create(&prestart_thread, NULL, prestart_main, NULL) == 0;
    }
    pthread_mutex_unlock(&prestart_lock);
#else
    (void)backend, (void)device;
#endif
}

void ghm_context_prestart(GhmBackendKind backend) { ghm_context_prestart_on(backend, 0); }

/* 1 when a start-up thread was running (and is finished now). */
static int prestart_join(void)
{
    pthread_mutex_lock(&prestart_lock);
    int joined = prestart_running;
    if (prestart_running) {
        pthread_join(prestart_thread, NULL);
        prestart_running = 0;
    }
    pthread_mutex_unlock(&prestart_lock);
    return joined;
}

void ghm_context_prestart_wait(void) { (void)prestart_join(); }

GhmContextOptions ghm_context_defaults(void)
{
    GhmContextOptions opt = {
        .backend = GHM_BACKEND_AUTO, .threads = 0, .seed = 1, .verbose = 0, .device = 0};
    return opt;
}

int ghm_context_create(const GhmContextOptions *opt, GhmContext **out)
{
    if (!opt || !out || opt->threads < 0 || opt->device < 0 || opt->backend < GHM_BACKEND_AUTO ||
        opt->backend > GHM_BACKEND_CUDA)
        return GHM_ERR_INVALID;
    *out = NULL;
    if (opt->backend != GHM_BACKEND_CPU) { /* CUDA may be asked for: let its start-up finish */
        double t0 = ghm_now();
        if (prestart_join() && opt->verbose >= 2)
            ghmi_log(GHM_LOG_INFO, "cuda: waited %.1f ms for the start-up begun ahead",
                     1e3 * (ghm_now() - t0));
    }
    const GhmBackend *backend = pick_backend(opt->backend);
    if (backend && backend->kind == GHM_BACKEND_CUDA && opt->device >= ghm_cuda_device_count())
        backend = opt->backend == GHM_BACKEND_AUTO ? &ghm_cpu_backend : NULL;
    if (!backend)
        return GHM_ERR_NO_DEVICE;
    GhmContext *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return GHM_ERR_NOMEM;
    ctx->backend = backend;
    ctx->device = backend->kind == GHM_BACKEND_CUDA ? opt->device : 0;
    /* CPU stages run on every backend (the CUDA pipelines keep some on the host), so the
     * default thread count is all cores whichever backend was picked. */
    ctx->threads = opt->threads ? opt->threads : ghm_context_default_threads();
    ctx->seed = opt->seed;
    ctx->verbose = opt->verbose;
    double t0 = ghm_now();
    int ret = backend->init ? backend->init(ctx, &ctx->state) : GHM_OK;
    if (opt->verbose >= 2 && ret == GHM_OK && backend->kind == GHM_BACKEND_CUDA)
        ghmi_log(GHM_LOG_INFO, "cuda: context started in %.1f ms", 1e3 * (ghm_now() - t0));
#if GHM_HAVE_CUDA
    if (ret == GHM_ERR_NO_DEVICE && backend == &ghm_cuda_backend) {
        if (ctx->device == 0) /* the device that decides whether CUDA is available */
            cuda_unusable();
        if (opt->backend == GHM_BACKEND_AUTO) { /* the CPU does the same work */
            ctx->backend = backend = &ghm_cpu_backend;
            ctx->device = 0;
            ret = backend->init ? backend->init(ctx, &ctx->state) : GHM_OK;
        }
    }
#endif
    if (ret < 0) {
        free(ctx);
        return ret;
    }
    *out = ctx;
    return GHM_OK;
}

void ghm_context_free(GhmContext **ctx)
{
    if (!ctx || !*ctx)
        return;
    if ((*ctx)->backend->shutdown)
        (*ctx)->backend->shutdown((*ctx)->state);
    free(*ctx);
    *ctx = NULL;
}

GhmBackendKind ghm_context_backend(const GhmContext *ctx) { return ctx->backend->kind; }
const char *ghm_context_backend_name(const GhmContext *ctx) { return ctx->backend->name; }
uint64_t ghm_context_seed(const GhmContext *ctx) { return ctx->seed; }
int ghm_context_threads(const GhmContext *ctx) { return ctx->threads; }
GhmContextOptions ghm_context_options(const GhmContext *ctx)
{
    GhmContextOptions opt = {.backend = ctx->backend->kind, .threads = ctx->threads,
                             .seed = ctx->seed, .verbose = ctx->verbose, .device = ctx->device};
    return opt;
}

int ghm_context_device(const GhmContext *ctx)
{
    return ctx->backend->kind == GHM_BACKEND_CUDA ? ctx->device : -1;
}
int ghm_context_verbose(const GhmContext *ctx) { return ctx->verbose; }

void ghm_context_describe(const GhmContext *ctx, char *buf, size_t size)
{
    ctx->backend->describe(ctx, buf, size);
}

int ghm_buffer_alloc(GhmContext *ctx, size_t bytes, void **out)
{
    if (!ctx || !out)
        return GHM_ERR_INVALID;
    return ctx->backend->alloc(ctx, bytes, out);
}

void ghm_buffer_free(GhmContext *ctx, void **p)
{
    if (!p || !*p)
        return;
    ctx->backend->free(ctx, *p);
    *p = NULL;
}

int ghm_buffer_reserve(GhmContext *ctx, void **p, size_t *cap, size_t bytes)
{
    if (bytes <= *cap && *p)
        return GHM_OK;
    ghm_buffer_free(ctx, p);
    *cap = 0;
    int ret = ghm_buffer_alloc(ctx, bytes, p);
    if (ret == GHM_OK)
        *cap = bytes;
    return ret;
}

int ghm_buffer_upload(GhmContext *ctx, void *dst, const void *host_src, size_t bytes)
{
    return bytes ? ctx->backend->upload(ctx, dst, host_src, bytes) : GHM_OK;
}

int ghm_buffer_download(GhmContext *ctx, void *host_dst, const void *src, size_t bytes)
{
    return bytes ? ctx->backend->download(ctx, host_dst, src, bytes) : GHM_OK;
}

int ghm_buffer_copy(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    return bytes ? ctx->backend->copy(ctx, dst, src, bytes) : GHM_OK;
}

int ghm_buffer_zero(GhmContext *ctx, void *dst, size_t bytes)
{
    return bytes ? ctx->backend->zero(ctx, dst, bytes) : GHM_OK;
}

int ghm_context_default_threads(void) { return omp_get_max_threads(); }

int ghm_buffer_in_place(const GhmContext *ctx, const void *p)
{
    return ctx->backend->in_place(p);
}

int ghm_context_sync(GhmContext *ctx) { return ctx->backend->sync(ctx); }

int ghm_context_wait_stream(GhmContext *ctx, uintptr_t stream)
{
    if (!ctx)
        return GHM_ERR_INVALID;
    if (!ctx->backend->wait_stream)
        return GHM_ERR_UNSUPPORTED;
    return ctx->backend->wait_stream(ctx, stream);
}

double ghm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
