/*
 * edit.cu - a voxel edit's set changes made on the GPU from the device arrays of its labels:
 * the device twins of vision/voxel/edit.c's probe_keys, cloud_item, add_cloud_item,
 * add_inside_item, cut_at_cloud and kept, and of edit_probe.c's row_spans and row_starts (the
 * probe's rows, from its cloud's keys on the device). The set is a hashing/ GhmDynmap: add
 * inserts a list of items and merges those the set held in place; subtract and intersect visit
 * the set's buckets and cut and erase in place (both through the set's device reference,
 * hash_refs.h). Reached through GhmVoxelOps (edit_select, edit_add_items, edit_add_present,
 * edit_cut, edit_spans, edit_encloses; vision/voxel/voxel_backend_internal.h).
 *
 * Kernels (256 threads per block, a thread per voxel, item or bucket): a list's entries go to
 * places taken by one atomic per group of lanes, so its order is not the CPU's; the set an edit
 * makes does not depend on that order (the inside voxels are apart from the cloud's, so no key
 * is twice in a list), so it is the CPU's.
 */
#include <cub/device/device_scan.cuh>

#include "kernels/hashing/device_memory.h"
#include "kernels/hashing/dynmap_ref.cuh"
#include "kernels/hashing/sorted_ref.cuh"
#include "kernels/hashing/warp_take.cuh"
#include "vision/voxel/ghm_voxel_edit.h"
#include "voxel_kernels.cuh"

/* Item `item` as entry `at` of a list of items. */
static __device__ __forceinline__ void put_item(uint32_t *list, uint32_t at,
                                                const uint32_t (&item)[GHMI_EDIT_WORDS])
{
    for (int w = 0; w < GHMI_EDIT_WORDS; w++)
        list[(size_t)GHMI_EDIT_WORDS * at + w] = item[w];
}

static __global__ __launch_bounds__(VOXEL_THREADS) void select_kernel(
    const uint32_t *__restrict__ keys, const uint8_t *__restrict__ labels, uint32_t n, int label,
    uint32_t *__restrict__ out, uint32_t *counts)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i < n && labels[i] == label)
        out[ghmi_warp_take(&counts[0])] = keys[i] | GHMI_EDIT_TAG;
}

enum { LABEL_NONE = 0xFF }; /* no voxel of the probe */

/* The label of the probe's voxel at x on row r, found by the row's span (the probe is every
 * voxel of each row's span, in key order), or LABEL_NONE where the span does not hold it. */
static __device__ __forceinline__ uint8_t probe_label(const int32_t *lo, const int32_t *hi,
                                                      const uint64_t *start, const uint8_t *labels,
                                                      uint32_t r, int32_t x)
{
    uint32_t v = rows_in(lo, hi, start, r, x);
    return v != GHM_NOT_FOUND ? labels[v] : LABEL_NONE;
}

/* --- the cloud's own voxels (edit.c's cloud_item, add_cloud_item, cut_at_cloud) ----------- */

/* cloud_item: voxel v as an item of `label`, its normal sums sign x count x the unit mean
 * normal, multiplied in the host's order without contraction. */
static __device__ __forceinline__ void cloud_item(const uint32_t *keys, const uint32_t *counts,
                                                  const float *normals, uint32_t v, float sign,
                                                  uint32_t label, uint32_t (&item)[GHMI_EDIT_WORDS])
{
    const float s = __fmul_rn(sign, (float)counts[v]);
    item[GHMI_EDIT_W_KEY] = keys[v] | GHMI_EDIT_TAG;
    item[GHMI_EDIT_W_COUNT] = counts[v];
    for (int k = 0; k < 3; k++)
        item[GHMI_EDIT_W_NORMAL + k] = __float_as_uint(__fmul_rn(s, normals[3 * (size_t)v + k]));
    item[GHMI_EDIT_W_LABEL] = label;
}

/* add's items as the set would take them where it has none (edit.c's add_cloud_item and
 * add_inside_item of an absent voxel): item i < K cloud voxel i as surface, item K + j inside
 * voxel j (tagged key inside[j]) as interior with no points. */
static __global__ __launch_bounds__(VOXEL_THREADS) void add_items_kernel(
    const uint32_t *__restrict__ keys, const uint32_t *__restrict__ counts,
    const float *__restrict__ normals, uint32_t K, const uint32_t *__restrict__ inside,
    uint32_t total, uint32_t *__restrict__ items)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i >= total)
        return;
    uint32_t item[GHMI_EDIT_WORDS];
    if (i < K) {
        cloud_item(keys, counts, normals, i, 1.0f, GHM_VOXEL_EDIT_SURFACE, item);
    } else {
        for (int w = 0; w < GHMI_EDIT_WORDS; w++)
            item[w] = 0; /* count 0 and the zero floats' bits */
        item[GHMI_EDIT_W_KEY] = inside[i - K];
        item[GHMI_EDIT_W_LABEL] = GHM_VOXEL_EDIT_INTERIOR;
    }
    put_item(items, i, item);
}

/* add's items the insert found stored (stored[i] 0; handle[i] the stored one), rewritten in
 * place through the set's reference, as edit.c's add_cloud_item and add_inside_item merge
 * them: a cloud voxel's point count and normal sums added to the stored ones (the new sums
 * first), its label surface unless interior; an inside voxel's label interior. Each one that
 * changes is counted in *relabelled. Until 2026-12-01 the set was searched for every item
 * first, those found erased and then inserted again: two more walks of their lists. */
static __global__ __launch_bounds__(VOXEL_THREADS) void add_present_kernel(
    GhmDynmapRef set, const uint32_t *__restrict__ items,
    const GhmDynmapHandle *__restrict__ handle, const uint8_t *__restrict__ stored, uint32_t K,
    uint32_t total, uint32_t *relabelled)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i >= total || stored[i])
        return;
    uint32_t *slab = dyn_slab(set, (uint32_t)(handle[i] >> 32));
    const int slot = (int)(uint32_t)handle[i];
    uint32_t *label = &slab[dyn_word_of(set, slot, GHMI_EDIT_W_LABEL)];
    const uint32_t *it = items + (size_t)GHMI_EDIT_WORDS * i;
    if (i < K) {
        for (int k = 0; k < 3; k++) {
            uint32_t *sum = &slab[dyn_word_of(set, slot, GHMI_EDIT_W_NORMAL + k)];
            *sum = __float_as_uint(__fadd_rn(__uint_as_float(it[GHMI_EDIT_W_NORMAL + k]),
                                             __uint_as_float(*sum)));
        }
        slab[dyn_word_of(set, slot, GHMI_EDIT_W_COUNT)] += it[GHMI_EDIT_W_COUNT];
        if (*label != GHM_VOXEL_EDIT_INTERIOR)
            *label = GHM_VOXEL_EDIT_SURFACE;
    } else if (*label != GHM_VOXEL_EDIT_INTERIOR) {
        *label = GHM_VOXEL_EDIT_INTERIOR;
    } else {
        return;
    }
    ghmi_warp_take(relabelled);
}

/* subtract's and intersect's changes to the set (edit.c's subtract, intersect), made in place: a
 * thread per bucket of the set visits its items through the set's reference (hash_refs.h). An
 * item at one of the cloud's K voxels (keys ascending; each lies in the probe) becomes that
 * voxel's cut item, its normals turned round by subtract (edit.c's cut_at_cloud), and is
 * counted in *cuts; any other item is erased where subtract's probe holds it inside, or where
 * intersect's probe does not hold it inside or as an intersection voxel (edit.c's kept). Erased
 * items are tallied per block. Until 2026-12-01 the set erased lists by key (the cloud's keys
 * and subtract's inside keys: a hash, the batch's duplicate table and a look-up each), then took
 * the cut items in an insert, and intersect listed the whole set first: up to 0.8 ms and five
 * host waits of an edit by a 160 k-point cloud at 256^3 on an H200. */
static __global__ __launch_bounds__(VOXEL_THREADS) void cut_kernel(
    GhmDynmapRef set, int subtract, uint32_t nx, const int32_t *__restrict__ lo,
    const int32_t *__restrict__ hi, const uint64_t *__restrict__ start,
    const uint8_t *__restrict__ labels, const uint32_t *__restrict__ keys,
    const uint32_t *__restrict__ counts, const float *__restrict__ normals, uint32_t K,
    uint32_t *cuts)
{
    uint32_t b = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    unsigned erased = 0;
    for (uint32_t s = b < set.n_buckets ? __ldg(&set.buckets[b]) : 0; s;) {
        uint32_t *slab = dyn_slab(set, s);
        uint4 end = dyn_end_quad(set, s);
        for (uint32_t m = end.w; m; m &= m - 1) {
            int slot = __ffs(m) - 1;
            uint32_t key = slab[dyn_word_of(set, slot, GHMI_EDIT_W_KEY)] & ~GHMI_EDIT_TAG;
            uint32_t r = key / nx;
            uint8_t l = probe_label(lo, hi, start, labels, r, (int32_t)(key - r * nx));
            size_t c = l == LABEL_NONE ? K : ghm_sorted_lower_bound(keys, K, key);
            if (c < K && keys[c] == key) {
                uint32_t item[GHMI_EDIT_WORDS];
                cloud_item(keys, counts, normals, (uint32_t)c, subtract ? -1.0f : 1.0f,
                           GHM_VOXEL_EDIT_CUT, item);
                for (int w = 0; w < GHMI_EDIT_WORDS; w++)
                    if (w != GHMI_EDIT_W_KEY)
                        slab[dyn_word_of(set, slot, w)] = item[w];
                ghmi_warp_take(cuts);
            } else if (subtract ? l == LABEL_INSIDE
                                : l != LABEL_INSIDE && l != LABEL_INTERSECTION) {
                dyn_erase_owned(set, slab, slot, b);
                erased++;
            }
        }
        s = end.z;
    }
    if (unsigned sum = dyn_block_sum(erased))
        atomicAdd(&set.counters[DYN_C_ITEMS], 0ull - sum); /* minus the block's erases */
}

/* --- the probe's rows (edit_probe.c's row_spans, row_starts) -------------------------------- */

static __global__ __launch_bounds__(VOXEL_THREADS) void spans_init_kernel(int32_t *lo,
                                                                          int32_t *hi,
                                                                          uint32_t nr)
{
    uint32_t r = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (r < nr)
        lo[r] = INT32_MAX, hi[r] = INT32_MIN;
}

/* spans_of_voxels: voxel v widens its row's span by d in x. */
static __global__ __launch_bounds__(VOXEL_THREADS) void spans_kernel(
    const uint32_t *__restrict__ keys, uint32_t K, uint32_t nx, int d, int32_t *lo, int32_t *hi)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= K)
        return;
    uint32_t r = keys[v] / nx;
    int32_t x = (int32_t)(keys[v] - r * nx);
    atomicMin(&lo[r], x - d);
    atomicMax(&hi[r], x + d);
}

/* widen_slice for one row: the spans (tl, th) of the rows within d along y (pass 0) or z. */
static __global__ __launch_bounds__(VOXEL_THREADS) void widen_kernel(
    int ny, int nz, int pass, int d, const int32_t *__restrict__ tl,
    const int32_t *__restrict__ th, int32_t *lo, int32_t *hi)
{
    uint32_t r = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (r >= (uint32_t)ny * (uint32_t)nz)
        return;
    int y = (int)(r % (uint32_t)ny), z = (int)(r / (uint32_t)ny);
    int at = pass ? z : y, n = pass ? nz : ny;
    int32_t l = lo[r], h = hi[r];
    for (int k = at - d > 0 ? at - d : 0; k <= at + d && k < n; k++) {
        size_t q = pass ? (size_t)y + (size_t)ny * (size_t)k : (size_t)k + (size_t)ny * (size_t)z;
        l = tl[q] < l ? tl[q] : l;
        h = th[q] > h ? th[q] : h;
    }
    lo[r] = l, hi[r] = h;
}

/* The spans clamped to the grid, and their lengths (row_starts' terms). */
static __global__ __launch_bounds__(VOXEL_THREADS) void clamp_kernel(int32_t nx, uint32_t nr,
                                                                     int32_t *lo, int32_t *hi,
                                                                     uint64_t *len)
{
    uint32_t r = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (r >= nr)
        return;
    int32_t l = lo[r], h = hi[r];
    if (l <= h) {
        l = l < 0 ? 0 : l;
        h = h >= nx ? nx - 1 : h;
        lo[r] = l, hi[r] = h;
    }
    len[r] = l <= h ? (uint64_t)(h - l + 1) : 0;
}

static __global__ void total_kernel(const uint64_t *start, const uint64_t *len, uint32_t nr,
                                    uint64_t *total)
{
    *total = start[nr - 1] + len[nr - 1];
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

extern "C" int ghm_cuda_voxel_edit_cut(GhmContext *ctx, GhmDynmap *set, int subtract,
                                      int32_t nx, const int32_t *lo, const int32_t *hi,
                                      const uint64_t *start, const uint8_t *labels,
                                      const uint32_t *keys, const uint32_t *counts,
                                      const float *normals, size_t K, uint32_t *cuts)
{
    GhmDynmapRef ref;
    if (!ctx || nx < 1 || !lo || !hi || !start || !labels || !cuts ||
        (K && (!keys || !counts || !normals)) || ghm_cuda_dynmap_ref(set, &ref) < 0)
        return GHM_ERR_INVALID;
    if (K > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    cut_kernel<<<blocks_for(ref.n_buckets), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        ref, subtract, (uint32_t)nx, lo, hi, start, labels, keys, counts, normals, (uint32_t)K,
        cuts);
    int ret = GHM_CUDA_LAUNCH();
    /* whatever the launch check said (the kernel may have run), the set's count follows it */
    int rc = ghm_cuda_dynmap_refresh(set);
    return ret < 0 ? ret : rc;
}

extern "C" int ghm_cuda_voxel_edit_add_items(GhmContext *ctx, const uint32_t *keys,
                                             const uint32_t *counts, const float *normals,
                                             size_t K, const uint32_t *inside, size_t n,
                                             uint32_t *items)
{
    if (!ctx || !items || (K && (!keys || !counts || !normals)) || (n && !inside))
        return GHM_ERR_INVALID;
    if (K + n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (K + n == 0)
        return GHM_OK;
    add_items_kernel<<<blocks_for(K + n), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        keys, counts, normals, (uint32_t)K, inside, (uint32_t)(K + n), items);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_edit_add_present(GhmContext *ctx, GhmDynmap *set,
                                               const uint32_t *items,
                                               const GhmDynmapHandle *handles,
                                               const uint8_t *stored, size_t K, size_t total,
                                               uint32_t *relabelled)
{
    GhmDynmapRef ref;
    if (!ctx || !relabelled || ghm_cuda_dynmap_ref(set, &ref) < 0 ||
        (total && (!items || !handles || !stored)) || K > total)
        return GHM_ERR_INVALID;
    if (total > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (total == 0)
        return GHM_OK;
    add_present_kernel<<<blocks_for(total), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        ref, items, handles, stored, (uint32_t)K, (uint32_t)total, relabelled);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_edit_spans(GhmContext *ctx, const int dims[3],
                                         const uint32_t *keys, size_t K, int d, int32_t *lo,
                                         int32_t *hi, uint64_t *start, uint64_t *total)
{
    if (!ctx || !dims || d < 0 || (K && !keys) || !lo || !hi || !start || !total)
        return GHM_ERR_INVALID;
    const uint64_t nr = (uint64_t)dims[1] * (uint64_t)dims[2];
    if (K > 0x7FFFFFFFu || nr == 0 || nr > 0x7FFFFFFFu)
        return nr == 0 ? GHM_ERR_INVALID : GHM_ERR_TOO_LARGE;
    cudaStream_t st = ghm_cuda_stream(ctx);
    size_t temp_bytes = 0, len_at = 2 * ((nr * 4 + 255) / 256 * 256);
    int ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, temp_bytes, (const uint64_t *)NULL,
                                                     (uint64_t *)NULL, (int)nr, st));
    void *block = NULL;
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, len_at + nr * 8 + temp_bytes, &block);
    if (ret < 0)
        return ret;
    int32_t *tl = (int32_t *)block, *th = (int32_t *)((char *)block + len_at / 2);
    uint64_t *len = (uint64_t *)((char *)block + len_at);
    const unsigned rows = blocks_for(nr);
    spans_init_kernel<<<rows, VOXEL_THREADS, 0, st>>>(lo, hi, (uint32_t)nr);
    if (K)
        spans_kernel<<<blocks_for(K), VOXEL_THREADS, 0, st>>>(keys, (uint32_t)K,
                                                              (uint32_t)dims[0], d, lo, hi);
    for (int pass = 0; pass < 2 && d > 0 && ret >= 0; pass++) {
        ret = GHM_CUDA(cudaMemcpyAsync(tl, lo, nr * 4, cudaMemcpyDeviceToDevice, st));
        if (ret >= 0)
            ret = GHM_CUDA(cudaMemcpyAsync(th, hi, nr * 4, cudaMemcpyDeviceToDevice, st));
        if (ret >= 0)
            widen_kernel<<<rows, VOXEL_THREADS, 0, st>>>(dims[1], dims[2], pass, d, tl, th, lo,
                                                         hi);
    }
    if (ret >= 0) {
        clamp_kernel<<<rows, VOXEL_THREADS, 0, st>>>(dims[0], (uint32_t)nr, lo, hi, len);
        ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum((char *)len + nr * 8, temp_bytes,
                                                     (const uint64_t *)len, start, (int)nr, st));
    }
    if (ret >= 0) {
        total_kernel<<<1, 1, 0, st>>>(start, len, (uint32_t)nr, total);
        ret = GHM_CUDA_LAUNCH();
    }
    ghmi_device_free(ctx, block);
    return ret;
}

/* Whether the probe's inside voxel at coordinates c has no voxel of the cloud (the probe's
 * intersection voxels, labels; rows lo, hi, start) in the cube of rho around it. Its neighbours
 * are found by the rows, so their loads do not wait on each other (a binary search of the
 * cloud's keys per neighbour, a chain of dependent loads, took 0.19 ms at 256^3 on the H200:
 * 2026-12-01). */
static __device__ bool enclosed_at(const GhmVoxelGridArgs &g, const uint8_t *labels,
                                   const int32_t *lo, const int32_t *hi, const uint64_t *start,
                                   int rho, const int c[3])
{
    int d[3], at[3];
    const int w = 2 * rho + 1;
    bool near = false;
    for (int j = 0; j < w * w * w; j++) {
        cube_step(j, rho, d);
        if ((d[0] || d[1] || d[2]) && step_coords(g, c, d, at))
            near |= probe_label(lo, hi, start, labels, (uint32_t)(at[1] + g.dims[1] * at[2]),
                                at[0]) == LABEL_INTERSECTION;
    }
    return !near;
}

/* edit_probe.c's ghmi_edit_encloses, first over one voxel a row, the middle of its span: the
 * likeliest to lie deep inside, where one such voxel is the answer (a thread a voxel over the
 * whole probe, returning once it was found, took 0.14 ms of a 256^3 subtract on the H200,
 * the found one far down the probe's order). */
static __global__ __launch_bounds__(VOXEL_THREADS) void encloses_rows_kernel(
    GhmVoxelGridArgs g, const uint8_t *__restrict__ labels, uint32_t nr,
    const int32_t *__restrict__ lo, const int32_t *__restrict__ hi,
    const uint64_t *__restrict__ start, int rho, uint32_t *found)
{
    uint32_t r = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (r >= nr || lo[r] > hi[r])
        return;
    const int32_t x = lo[r] + (hi[r] - lo[r]) / 2;
    const int c[3] = {x, (int)(r % (uint32_t)g.dims[1]), (int)(r / (uint32_t)g.dims[1])};
    if (labels[start[r] + (uint64_t)(x - lo[r])] == LABEL_INSIDE &&
        enclosed_at(g, labels, lo, hi, start, rho, c))
        *found = 1;
}

/* Then, unless that found one, every inside voxel of the probe (keys, labels): *found = 1 once
 * one qualifies; threads that start after it was found return. */
static __global__ __launch_bounds__(VOXEL_THREADS) void encloses_kernel(
    GhmVoxelGridArgs g, const uint32_t *__restrict__ keys, const uint8_t *__restrict__ labels,
    uint32_t n, const int32_t *__restrict__ lo, const int32_t *__restrict__ hi,
    const uint64_t *__restrict__ start, int rho, uint32_t *found)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i >= n || *(volatile uint32_t *)found || labels[i] != LABEL_INSIDE)
        return;
    int c[3];
    key_coords(g, keys[i], c);
    if (enclosed_at(g, labels, lo, hi, start, rho, c))
        *found = 1;
}

extern "C" int ghm_cuda_voxel_edit_encloses(GhmContext *ctx, const int dims[3],
                                            const uint32_t *keys, const uint8_t *labels,
                                            size_t n, const int32_t *lo, const int32_t *hi,
                                            const uint64_t *start, int rho, uint32_t *found)
{
    if (!ctx || !dims || !found || rho < 1 || rho > GHMI_MAX_RADIUS ||
        (n && (!keys || !labels || !lo || !hi || !start)))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (n == 0)
        return GHM_OK;
    GhmVoxelGridArgs g = {};
    for (int k = 0; k < 3; k++)
        g.dims[k] = dims[k];
    const uint64_t nr = (uint64_t)dims[1] * (uint64_t)dims[2];
    cudaStream_t st = ghm_cuda_stream(ctx);
    encloses_rows_kernel<<<blocks_for(nr), VOXEL_THREADS, 0, st>>>(g, labels, (uint32_t)nr, lo,
                                                                   hi, start, rho, found);
    int ret = GHM_CUDA_LAUNCH();
    if (ret >= 0)
        encloses_kernel<<<blocks_for(n), VOXEL_THREADS, 0, st>>>(g, keys, labels, (uint32_t)n, lo,
                                                                 hi, start, rho, found);
    return ret < 0 ? ret : GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_edit_preload(GhmContext *ctx)
{
    if (!ctx)
        return GHM_ERR_INVALID;
    const void *const k[] = {
        (const void *)select_kernel,    (const void *)add_items_kernel,
        (const void *)add_present_kernel, (const void *)cut_kernel,
        (const void *)spans_init_kernel, (const void *)spans_kernel,
        (const void *)widen_kernel,     (const void *)clamp_kernel,
        (const void *)total_kernel,     (const void *)encloses_kernel,
        (const void *)encloses_rows_kernel};
    return GHM_CUDA(ghm_cuda_load_kernels(ctx, k, sizeof k / sizeof *k));
}
