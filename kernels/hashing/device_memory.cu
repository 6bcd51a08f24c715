/*
 * device_memory.cu - the one device allocator (device_memory.h): stream-ordered allocations from
 * the device's pool, a count of what is held, and the faults the tests inject.
 *
 * The count and the fault are process-wide, like the pool they describe: contexts of several
 * threads (video workers) draw from one device. Atomics, relaxed: each is a counter read after
 * the operations it counts have returned.
 */
#include "kernels/hashing/cuda_check.cuh"
#include "backend_cuda.h"
#include "device_memory.h"

static long live;             /* allocations held */
static int fault_kind = -1;   /* the armed GhmiFaultKind, -1 when none */
static long fault_at;         /* the event to fail, 1-based */
static long fault_count;      /* events of the armed kind since the arm */
static int fault_hit;

/* 1 when this event of `kind` is the armed one. */
static int fault_due(int kind)
{
    if (__atomic_load_n(&fault_kind, __ATOMIC_RELAXED) != kind)
        return 0;
    if (__atomic_add_fetch(&fault_count, 1, __ATOMIC_RELAXED) != fault_at)
        return 0;
    __atomic_store_n(&fault_hit, 1, __ATOMIC_RELAXED);
    return 1;
}

/* How an allocation is taken: from the pool, as spare (running out is GHM_ERR_NOMEM without a
 * log line), or by cudaMalloc for other processes to map. */
enum Take { POOLED, SPARE, EXPORTABLE };

static int take(GhmContext *ctx, size_t bytes, void **out, enum Take how)
{
    int spare = how == SPARE;
    *out = NULL;
    if (bytes == 0)
        return GHM_OK;
    if (fault_due(GHMI_FAULT_ALLOC)) {
        if (!spare)
            ghmi_log(GHM_LOG_ERROR, "device allocation of %zu bytes failed (injected fault)",
                     bytes);
        return GHM_ERR_NOMEM;
    }
    cudaStream_t stream = ghm_cuda_stream(ctx); /* makes ctx's device current */
    cudaError_t err = how == EXPORTABLE ? cudaMalloc(out, bytes)
                                        : cudaMallocAsync(out, bytes, stream);
    if (err == cudaErrorMemoryAllocation && spare) {
        cudaGetLastError(); /* a shortage is an answer here, not an error: clear it */
        *out = NULL;
        return GHM_ERR_NOMEM;
    }
    int ret = GHM_CUDA(err);
    if (ret < 0) {
        *out = NULL;
        return ret;
    }
    __atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
    return GHM_OK;
}

extern "C" int ghmi_device_alloc(GhmContext *ctx, size_t bytes, void **out)
{
    return take(ctx, bytes, out, POOLED);
}

extern "C" int ghmi_device_alloc_spare(GhmContext *ctx, size_t bytes, void **out)
{
    return take(ctx, bytes, out, SPARE);
}

extern "C" int ghmi_device_alloc_exportable(GhmContext *ctx, size_t bytes, void **out)
{
    return take(ctx, bytes, out, EXPORTABLE);
}

extern "C" void ghmi_device_free_exportable(GhmContext *ctx, void *p)
{
    if (!p)
        return;
    ghm_cuda_bind(ctx);
    cudaFree(p); /* waits for the device: a failure is a broken context, as in ghmi_device_free */
    __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
}

extern "C" void ghmi_device_free(GhmContext *ctx, void *p)
{
    if (!p)
        return;
    /* A failed free means the context is already broken (a sticky error the next checked call
     * reports); the memory is then gone with it, so it no longer counts either way. */
    cudaFreeAsync(p, ghm_cuda_stream(ctx));
    __atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
}

extern "C" long ghmi_device_live(void) { return __atomic_load_n(&live, __ATOMIC_RELAXED); }

extern "C" void ghmi_device_fault_arm(GhmiFaultKind kind, long k)
{
    __atomic_store_n(&fault_kind, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_hit, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_at, k, __ATOMIC_RELAXED);
    __atomic_store_n(&fault_kind, (int)kind, __ATOMIC_RELEASE);
}

extern "C" long ghmi_device_fault_disarm(void)
{
    __atomic_store_n(&fault_kind, -1, __ATOMIC_RELEASE);
    return __atomic_load_n(&fault_count, __ATOMIC_RELAXED);
}

extern "C" int ghmi_device_fault_hit(void) { return __atomic_load_n(&fault_hit, __ATOMIC_RELAXED); }

extern "C" int ghmi_device_fault_launch(void) { return fault_due(GHMI_FAULT_LAUNCH); }
