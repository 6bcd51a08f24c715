/*
 * device_memory.h - the one device allocator of the CUDA code (device_memory.cu): every byte of
 * device memory the library takes comes from ghmi_device_alloc and goes back through
 * ghmi_device_free, so that there is one place to count allocations and to fail them.
 *
 * Memory is stream-ordered: cudaMallocAsync / cudaFreeAsync on the context's stream, from the
 * device's default pool (which keeps what is freed, backend_cuda.cu), so an allocation costs no
 * device-wide synchronisation and a free may follow the kernels queued on the memory.
 *
 * Scratch of several arrays is one block, in two phases as CUB's temp storage: one layout
 * function carves every part; run on a NULL block it only adds up the aligned sizes.
 *
 *     static void layout(GhmiCarve *c, Parts *p, size_t n)
 *     {
 *         p->first = (uint32_t *)ghmi_carve(c, n * 4);
 *         p->sums = (unsigned long long *)ghmi_carve(c, (n + 1) * 8);
 *     }
 *     GhmiCarve c = {NULL, 0};
 *     layout(&c, &p, n);                              // phase 1: c.used bytes
 *     if ((ret = ghmi_device_alloc(ctx, c.used, &block)) < 0) return ret;
 *     c = ghmi_carve_start(block);
 *     layout(&c, &p, n);                              // phase 2: the pointers
 *     ...
 *     ghmi_device_free(ctx, block);                   // one free for every part
 *
 * Fault injection (tests/check_faults_cuda.c): ghmi_device_fault_arm makes the k-th device
 * allocation from now on fail with GHM_ERR_NOMEM, or the k-th kernel launch check
 * (GHM_CUDA_LAUNCH, cuda_check.cuh) report GHM_ERR_CUDA; ghmi_device_live counts what is held.
 *
 * Plain C, so that host tests can arm faults and read the count; defined only in builds with
 * CUDA (a test that calls it is a check_*_cuda.c suite).
 */
#ifndef GHM_DEVICE_MEMORY_H
#define GHM_DEVICE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "hashing/ghm_context.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parts of a block start at multiples of this (cudaMalloc's alignment, as CUB aligns its
 * temporaries), so a part may hold any type and its loads are coalesced. */
#define GHMI_DEVICE_ALIGN 256

/* *out = `bytes` of device memory, ordered on ctx's stream (valid for work queued behind the
 * call); bytes == 0 gives *out = NULL and GHM_OK. GHM_ERR_NOMEM (out of device memory, or an
 * injected fault) or GHM_ERR_CUDA with *out = NULL. ctx is a CUDA context. */
int ghmi_device_alloc(GhmContext *ctx, size_t bytes, void **out);

/* As ghmi_device_alloc, for memory that only speeds work up (the caller goes on without it):
 * running out is GHM_ERR_NOMEM with nothing logged. Counted and failed by the tests' faults as
 * any allocation. */
int ghmi_device_alloc_spare(GhmContext *ctx, size_t bytes, void **out);

/* As ghmi_device_alloc, for memory that other processes map (cudaIpcGetMemHandle works on
 * cudaMalloc's memory, not on the pool's): cudaMalloc, which waits for the device, so only for
 * long-lived arrays. Freed with ghmi_device_free_exportable, which waits for the device too. */
int ghmi_device_alloc_exportable(GhmContext *ctx, size_t bytes, void **out);
void ghmi_device_free_exportable(GhmContext *ctx, void *p);

/* Returns p to the pool behind the work queued on ctx's stream so far (the stream that last
 * used p, or one ordered after it); NULL is fine. */
void ghmi_device_free(GhmContext *ctx, void *p);

/* Allocations taken and not yet freed, by every context of the process. */
long ghmi_device_live(void);

typedef enum GhmiFaultKind {
    GHMI_FAULT_ALLOC = 0,  /* the k-th ghmi_device_alloc returns GHM_ERR_NOMEM */
    GHMI_FAULT_LAUNCH = 1, /* the k-th GHM_CUDA_LAUNCH check returns GHM_ERR_CUDA */
} GhmiFaultKind;

/* From now on the k-th (1-based) event of that kind fails, once; k <= 0 counts without failing. */
void ghmi_device_fault_arm(GhmiFaultKind kind, long k);

/* Stops failing; returns how many events of the armed kind happened since the arm. */
long ghmi_device_fault_disarm(void);

/* Whether the armed event has been failed. */
int ghmi_device_fault_hit(void);

/* 1 when this launch check is the one to fail (cuda_check.cuh's GHM_CUDA_LAUNCH asks). */
int ghmi_device_fault_launch(void);

/* A carving of one block: base NULL (phase 1) only adds up, else parts are handed out. */
typedef struct GhmiCarve {
    char *base;
    size_t used; /* bytes carved so far, a multiple of GHMI_DEVICE_ALIGN; SIZE_MAX on overflow */
} GhmiCarve;

static inline GhmiCarve ghmi_carve_start(void *block)
{
    GhmiCarve c = {(char *)block, 0};
    return c;
}

/* The next part of `bytes` (NULL in phase 1, or when bytes == 0: no part). An overflowing
 * total saturates at SIZE_MAX, which no allocation satisfies. */
static inline void *ghmi_carve(GhmiCarve *c, size_t bytes)
{
    if (bytes == 0)
        return NULL;
    size_t a = bytes > SIZE_MAX - (GHMI_DEVICE_ALIGN - 1)
                   ? SIZE_MAX
                   : (bytes + GHMI_DEVICE_ALIGN - 1) & ~(size_t)(GHMI_DEVICE_ALIGN - 1);
    void *p = c->base && c->used != SIZE_MAX ? c->base + c->used : NULL;
    c->used = a == SIZE_MAX || c->used > SIZE_MAX - a ? SIZE_MAX : c->used + a;
    return p;
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_DEVICE_MEMORY_H */
