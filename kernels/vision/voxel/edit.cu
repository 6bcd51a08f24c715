/*
 * edit.cu - a voxel edit's set changes made on the GPU from the device arrays of its labels:
 * the device twins of vision/voxel/edit.c's probe_keys, add_inside_item and kept (the set
 * itself is a hashing/ GhmDynmap, edited in place by these lists). Reached through GhmVoxelOps
 * (edit_select, edit_add_inside, edit_outside; vision/voxel/voxel_backend_internal.h).
 *
 * Kernels (256 threads per block, a thread per voxel or item): each appends what it finds to
 * its lists at places taken by one atomic per group of lanes, so a list's order is not the
 * CPU's; the set an edit makes does not depend on the order of its erases or of its inserts
 * (the inside voxels are apart from the cloud's, so no key is in two of an edit's lists).
 */
#include <cooperative_groups.h>

#include "vision/voxel/ghm_voxel_edit.h"
#include "voxel_kernels.cuh"

namespace cg = cooperative_groups;

/* This lane's index in a list counted by *count (one atomic for the lanes here). */
static __device__ __forceinline__ uint32_t take(uint32_t *count)
{
    cg::coalesced_group grp = cg::coalesced_threads();
    uint32_t at = 0;
    if (grp.thread_rank() == 0)
        at = atomicAdd(count, (uint32_t)grp.size());
    return grp.shfl(at, 0) + grp.thread_rank();
}

static __global__ __launch_bounds__(VOXEL_THREADS) void select_kernel(
    const uint32_t *__restrict__ keys, const uint8_t *__restrict__ labels, uint32_t n, int label,
    uint32_t *__restrict__ out, uint32_t *counts)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i < n && labels[i] == label)
        out[take(&counts[0])] = keys[i] | GHMI_EDIT_TAG;
}

/* edit.c's add_inside_item: absent -> a new interior item (no points, zero sums); interior ->
 * nothing; else the item again with the interior label, its key erased first. */
static __global__ __launch_bounds__(VOXEL_THREADS) void add_inside_kernel(
    const uint32_t *__restrict__ keys, const uint32_t *__restrict__ found, uint32_t n,
    uint32_t *__restrict__ erase, uint32_t *__restrict__ insert, uint32_t *counts)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t *old = found + (size_t)GHMI_EDIT_WORDS * i;
    uint32_t item[GHMI_EDIT_WORDS];
    if (old[GHMI_EDIT_W_KEY] == 0) {
        for (int w = 0; w < GHMI_EDIT_WORDS; w++)
            item[w] = 0; /* count 0 and the zero floats' bits */
        item[GHMI_EDIT_W_KEY] = keys[i];
    } else if (old[GHMI_EDIT_W_LABEL] == GHM_VOXEL_EDIT_INTERIOR) {
        return;
    } else {
        for (int w = 0; w < GHMI_EDIT_WORDS; w++)
            item[w] = old[w];
        erase[take(&counts[0])] = keys[i];
    }
    item[GHMI_EDIT_W_LABEL] = GHM_VOXEL_EDIT_INTERIOR;
    uint32_t *to = insert + (size_t)GHMI_EDIT_WORDS * take(&counts[1]);
    for (int w = 0; w < GHMI_EDIT_WORDS; w++)
        to[w] = item[w];
}

/* edit.c's kept() turned round: the item's voxel is found in the probe by its row's span (the
 * probe is every voxel of each row's span, in key order). */
static __global__ __launch_bounds__(VOXEL_THREADS) void outside_kernel(
    const uint32_t *__restrict__ items, uint32_t n, uint32_t nx, const int32_t *__restrict__ lo,
    const int32_t *__restrict__ hi, const uint64_t *__restrict__ start,
    const uint8_t *__restrict__ labels, uint32_t *__restrict__ out, uint32_t *counts)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i >= n)
        return;
    uint32_t tagged = items[(size_t)GHMI_EDIT_WORDS * i + GHMI_EDIT_W_KEY];
    uint32_t key = tagged & ~GHMI_EDIT_TAG, r = key / nx;
    int32_t x = (int32_t)(key - r * nx);
    int kept = 0;
    if (x >= lo[r] && x <= hi[r]) {
        uint8_t l = labels[start[r] + (uint64_t)(x - lo[r])];
        kept = l == LABEL_INSIDE || l == LABEL_INTERSECTION;
    }
    if (!kept)
        out[take(&counts[0])] = tagged;
}

/* --- launchers ---------------------------------------------------------------------------- */

extern "C" int ghm_cuda_voxel_edit_select(GhmContext *ctx, const uint32_t *keys,
                                          const uint8_t *labels, size_t n, int label,
                                          uint32_t *out, uint32_t *counts)
{
    if (!ctx || !counts || (n && (!keys || !labels || !out)))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (n == 0)
        return GHM_OK;
    select_kernel<<<blocks_for(n), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        keys, labels, (uint32_t)n, label, out, counts);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_edit_add_inside(GhmContext *ctx, const uint32_t *keys,
                                              const uint32_t *found, size_t n, uint32_t *erase,
                                              uint32_t *insert, uint32_t *counts)
{
    if (!ctx || !counts || (n && (!keys || !found || !erase || !insert)))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (n == 0)
        return GHM_OK;
    add_inside_kernel<<<blocks_for(n), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        keys, found, (uint32_t)n, erase, insert, counts);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_edit_outside(GhmContext *ctx, const uint32_t *items, size_t n,
                                           int32_t nx, const int32_t *lo, const int32_t *hi,
                                           const uint64_t *start, const uint8_t *labels,
                                           uint32_t *out, uint32_t *counts)
{
    if (!ctx || !counts || nx < 1 || (n && (!items || !lo || !hi || !start || !labels || !out)))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (n == 0)
        return GHM_OK;
    outside_kernel<<<blocks_for(n), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        items, (uint32_t)n, (uint32_t)nx, lo, hi, start, labels, out, counts);
    return GHM_CUDA_LAUNCH();
}
