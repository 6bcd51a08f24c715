/*
 * cuda_check.cuh - the one CUDA error-checking macro (after CUB's CubDebug): a failing call logs
 * file:line and CUDA's error string through the application's log callback (ghm_log.h) and
 * yields GHM_ERR_CUDA (GHM_ERR_NOMEM when device memory ran out). GHM_CUDA_LAUNCH checks a
 * kernel launch; built with -DGHM_CUDA_DEBUG_SYNC it also synchronises, so that an error is
 * reported by the launch that caused it.
 */
#ifndef GHM_CUDA_CHECK_CUH
#define GHM_CUDA_CHECK_CUH

#include <cuda_runtime.h>

#include "hashing/ghm_error.h"
#include "hashing/log_internal.h"
#include "kernels/hashing/device_memory.h"

static inline int ghm_cuda_status(cudaError_t err, const char *file, int line)
{
    if (err == cudaSuccess)
        return GHM_OK;
    ghmi_log(GHM_LOG_ERROR, "%s:%d: CUDA error: %s", file, line, cudaGetErrorString(err));
    cudaGetLastError(); /* returned now: the next launch check must not report it again */
    return err == cudaErrorMemoryAllocation ? GHM_ERR_NOMEM : GHM_ERR_CUDA;
}

/* Every host wait of the CUDA code goes through these two, so that the waits are counted
 * (ghm_cuda_host_waits): each is a round trip the host spends idle, which pipelines keep to
 * what they need (a count they read, a result they return). backend_cuda.cu owns the counter. */
extern "C" unsigned long long ghmi_cuda_waits;

static inline cudaError_t ghm_cuda_wait(cudaStream_t s)
{
    __atomic_fetch_add(&ghmi_cuda_waits, 1ull, __ATOMIC_RELAXED);
    return cudaStreamSynchronize(s);
}

static inline cudaError_t ghm_cuda_wait_event(cudaEvent_t e)
{
    __atomic_fetch_add(&ghmi_cuda_waits, 1ull, __ATOMIC_RELAXED);
    return cudaEventSynchronize(e);
}

/* Waits for e only while it is pending: an event already reached (its stream was waited for
 * through another event or the context) costs no wait. A query that finds it pending does not
 * set the runtime's last error. */
static inline cudaError_t ghm_cuda_wait_event_pending(cudaEvent_t e)
{
    cudaError_t q = cudaEventQuery(e);
    return q == cudaErrorNotReady ? ghm_cuda_wait_event(e) : q;
}

/* Evaluates to GHM_OK or a negative GHM_ERR_* value. */
#define GHM_CUDA(call) ghm_cuda_status((call), __FILE__, __LINE__)

/* A launch check; the tests may make it fail (device_memory.h's GHMI_FAULT_LAUNCH), as a launch
 * that could not start would: the kernel may have run, but the caller takes the error path. */
static inline int ghm_cuda_launch_status(const char *file, int line)
{
    int ret = ghm_cuda_status(cudaGetLastError(), file, line);
    if (ret == GHM_OK && ghmi_device_fault_launch()) {
        ghmi_log(GHM_LOG_ERROR, "%s:%d: kernel launch failed (injected fault)", file, line);
        return GHM_ERR_CUDA;
    }
#ifdef GHM_CUDA_DEBUG_SYNC
    if (ret == GHM_OK)
        ret = ghm_cuda_status(cudaDeviceSynchronize(), file, line);
#endif
    return ret;
}

#define GHM_CUDA_LAUNCH() ghm_cuda_launch_status(__FILE__, __LINE__)

#endif /* GHM_CUDA_CHECK_CUH */
