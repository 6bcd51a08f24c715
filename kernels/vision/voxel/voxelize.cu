/*
 * voxelize.cu - the voxel table and look-ups on the GPU (Alcantara et al. 2009, section 6
 * "Spatial hashing"): the device twin of vision/voxel/voxelize.c, driven by
 * vision/voxel/voxel_device.c through GhmVoxelOps. Both clouds go through every stage in the
 * same launch (points A's then B's; voxel kernels take a GhmVoxelPair, blockIdx.y = cloud).
 *
 * Kernels (256 threads per block, one thread per point or voxel unless said otherwise):
 *  rows_kernel        a warp per grid row: the points of a cloud given by rows (a voxel edit's
 *                     probe), the centres of the row's voxels lo..hi rounded to float.
 *  row_voxels_kernel  the same rows' voxels (keys, a point each, no normal), where each point
 *                     is its own voxel: such a cloud does not go through the voxel table.
 *  keys_kernel        point -> sort key: cloud << (key_bits + 1) | voxel key (1 << key_bits
 *                     outside the grid), B moved by the pose; and its index: the pairs of the
 *                     voxel table, written into the multimap's own buffers (staging).
 *  (hashing/)         the voxel table: a GhmMultimap of (sort key, index), built queued on the
 *                     device (ghm_cuda_multimap_build_queued: a radix sort on key_bits + 2 bits
 *                     in place, the run heads, a cuckoo map from each distinct key to its run).
 *  split_kernel       one warp: the runs, and how many of them belong to A.
 *  build_kernel       per run (voxel): key, point count, the mean of its points' normals summed
 *                     in 64-bit fixed point (integers: the order does not matter), or the
 *                     moments of its points for normals to estimate.
 *  neighbours_kernel  per voxel: the ids of its hood neighbours (probes of the table's map
 *                     through its device reference, or a cloud's rows where it is given as
 *                     rows), step-major (nbr[k * K + v]), and a block histogram of
 *                     occupied-neighbour counts.
 *  contact_kernel     per voxel: the same voxel, then (sparse clouds) its rho-neighbourhood, in
 *                     the other cloud: cross id, barrier flag, the other surface's plane.
 */
#include "kernels/hashing/hash_refs.h"
#include "voxel_kernels.cuh"

/* --- voxelize ----------------------------------------------------------------------------- */

/* vision/voxel/grid.c's ghmi_voxel_rows_points: the same doubles (centre()'s), so the same
 * floats; a warp writes its row's points, a lane every 32nd. */
static __global__ __launch_bounds__(VOXEL_THREADS) void rows_kernel(
    GhmVoxelGridArgs g, const int32_t *__restrict__ lo, const int32_t *__restrict__ hi,
    const uint64_t *__restrict__ start, uint32_t nr, float *__restrict__ xyz)
{
    uint32_t r = (blockIdx.x * VOXEL_THREADS + threadIdx.x) / 32, lane = threadIdx.x & 31;
    if (r >= nr || lo[r] > hi[r])
        return;
    uint32_t ny = (uint32_t)g.dims[1];
    float cy = __double2float_rn(__dadd_rn(g.origin[1], __dmul_rn((r % ny) + 0.5, g.size)));
    float cz = __double2float_rn(__dadd_rn(g.origin[2], __dmul_rn((r / ny) + 0.5, g.size)));
    float *row = xyz + 3 * start[r];
    for (int32_t x = lo[r] + (int32_t)lane; x <= hi[r]; x += 32) {
        float *p = row + 3 * (size_t)(x - lo[r]);
        p[0] = __double2float_rn(__dadd_rn(g.origin[0], __dmul_rn((double)x + 0.5, g.size)));
        p[1] = cy;
        p[2] = cz;
    }
}

/* The voxels build_kernel makes of the points rows_kernel makes, where each point lies in its
 * own voxel (the grid's extent proves it, voxel_device.c): the row's keys in order, a count of
 * one, a zero normal (the points' normals are zero). */
static __global__ __launch_bounds__(VOXEL_THREADS) void row_voxels_kernel(
    GhmVoxelGridArgs g, const int32_t *__restrict__ lo, const int32_t *__restrict__ hi,
    const uint64_t *__restrict__ start, uint32_t nr, uint32_t *__restrict__ keys,
    uint32_t *__restrict__ counts, float *__restrict__ normals)
{
    uint32_t r = (blockIdx.x * VOXEL_THREADS + threadIdx.x) / 32, lane = threadIdx.x & 31;
    if (r >= nr || lo[r] > hi[r])
        return;
    const uint32_t row_key = r * (uint32_t)g.dims[0];
    for (int32_t x = lo[r] + (int32_t)lane; x <= hi[r]; x += 32) {
        size_t v = start[r] + (size_t)(x - lo[r]);
        keys[v] = row_key + (uint32_t)x;
        counts[v] = 1;
        normals[3 * v] = normals[3 * v + 1] = normals[3 * v + 2] = 0.0f;
    }
}

static __global__ __launch_bounds__(VOXEL_THREADS) void keys_kernel(
    const float *__restrict__ xyz, uint32_t na, uint32_t n, GhmVoxelPose pose, GhmVoxelGridArgs g,
    uint32_t *__restrict__ ckey, uint32_t *__restrict__ idx, GhmVoxelInfo *info)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    int out = 0, cloud = i >= na;
    if (i < n) {
        double p[3];
        apply_pose(pose, cloud, xyz + 3 * (size_t)i, p);
        uint32_t key = point_key(g, p);
        out = key == GHM_NOT_FOUND;
        ckey[i] = (uint32_t)cloud << (g.key_bits + 1) | (out ? 1u << g.key_bits : key);
        idx[i] = i;
    }
    unsigned oa = __ballot_sync(0xFFFFFFFFu, out && !cloud);
    unsigned ob = __ballot_sync(0xFFFFFFFFu, out && cloud);
    if ((threadIdx.x & 31) == 0) {
        if (oa)
            atomicAdd(&info->outside[0], (unsigned)__popc(oa));
        if (ob)
            atomicAdd(&info->outside[1], (unsigned)__popc(ob));
    }
}

/* runs = the table's distinct keys; runs_a = those of A: keys below 1 << (key_bits + 1) (they
 * ascend), found by one warp in a 32-way search. */
static __global__ void split_kernel(const uint32_t *__restrict__ rkeys, const uint32_t *key_count,
                                    uint32_t b_first, GhmVoxelInfo *info)
{
    uint32_t lane = threadIdx.x, lo = 0, hi = *key_count;
    if (lane == 0)
        info->runs = hi;
    while (hi - lo > 32) {
        uint32_t step = (hi - lo + 31) / 32, q = lo + lane * step;
        unsigned below = __ballot_sync(0xFFFFFFFFu, q < hi && rkeys[q] < b_first);
        uint32_t c = (uint32_t)__popc(below);
        if (c == 0) {
            hi = lo;
            break;
        }
        uint32_t nlo = lo + (c - 1) * step + 1, nhi = lo + c * step;
        lo = nlo;
        hi = nhi < hi ? nhi : hi;
    }
    uint32_t q = lo + lane;
    unsigned below = __ballot_sync(0xFFFFFFFFu, q < hi && rkeys[q] < b_first);
    if (lane == 0)
        info->runs_a = lo + (uint32_t)__popc(below);
}

/* Run r of the table is a voxel (or a cloud's points outside the grid, skipped): its points are
 * the table's values sidx[offsets[r] .. offsets[r + 1]), in point order. */
static __global__ __launch_bounds__(VOXEL_THREADS) void build_kernel(
    const uint32_t *__restrict__ sidx, const uint32_t *__restrict__ offsets,
    const uint32_t *__restrict__ rkeys, uint32_t runs, uint32_t runs_a,
    const float *__restrict__ pnts, const float *__restrict__ pnormals, GhmVoxelPose pose,
    GhmVoxelGridArgs g, const __grid_constant__ GhmVoxelPair p)
{
    uint32_t r = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (r >= runs)
        return;
    int cloud = r >= runs_a;
    const GhmVoxelSideArgs &s = p.s[cloud];
    uint32_t v = r - s.first_run;
    if (v >= s.K)
        return; /* the run of the points outside the grid */
    uint32_t o = offsets[r], e = offsets[r + 1];
    uint32_t key = rkeys[r] & ((1u << g.key_bits) - 1u);
    s.keys[v] = key;
    s.counts[v] = e - o;
    if (s.moments) { /* no normals: voxelize.c's accumulate(), the moments in point order */
        double c[3], m[GHMI_MOMENTS] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
        centre(g, key, c);
        for (uint32_t i = o; i < e; i++) {
            double q[3], d[3];
            apply_pose(pose, cloud, pnts + 3 * (size_t)sidx[i], q);
#pragma unroll
            for (int k = 0; k < 3; k++) {
                d[k] = __dsub_rn(q[k], c[k]);
                m[k] = __dadd_rn(m[k], d[k]);
            }
            m[3] = __dadd_rn(m[3], __dmul_rn(d[0], d[0]));
            m[4] = __dadd_rn(m[4], __dmul_rn(d[0], d[1]));
            m[5] = __dadd_rn(m[5], __dmul_rn(d[0], d[2]));
            m[6] = __dadd_rn(m[6], __dmul_rn(d[1], d[1]));
            m[7] = __dadd_rn(m[7], __dmul_rn(d[1], d[2]));
            m[8] = __dadd_rn(m[8], __dmul_rn(d[2], d[2]));
        }
#pragma unroll
        for (int k = 0; k < GHMI_MOMENTS; k++)
            s.moments[GHMI_MOMENTS * (size_t)v + k] = m[k];
    } else {
        unsigned long long sum[3] = {0, 0, 0};
        int turn = cloud && pose.present;
        for (uint32_t i = o; i < e; i++) {
            const float *nv = pnormals + 3 * (size_t)sidx[i];
            float f[3] = {nv[0], nv[1], nv[2]};
            if (turn) { /* voxelize.c: the rotation in double, rounded to float */
                double x = f[0], y = f[1], z = f[2];
#pragma unroll
                for (int q = 0; q < 3; q++)
                    f[q] = __double2float_rn(__dadd_rn(__dadd_rn(__dmul_rn(pose.m[4 * q], x),
                                                                 __dmul_rn(pose.m[4 * q + 1], y)),
                                                       __dmul_rn(pose.m[4 * q + 2], z)));
            }
#pragma unroll
            for (int q = 0; q < 3; q++)
                sum[q] += (unsigned long long)__double2ll_rn(fix_of(f[q]));
        }
        double a[3];
#pragma unroll
        for (int q = 0; q < 3; q++)
            a[q] = __dmul_rn(__ll2double_rn((long long)sum[q]), 1.0 / GHMI_VOXEL_FIX_SCALE);
        double len = __dsqrt_rn(__dadd_rn(__dadd_rn(__dmul_rn(a[0], a[0]), __dmul_rn(a[1], a[1])),
                                          __dmul_rn(a[2], a[2])));
        float *out = s.normals + 3 * (size_t)v;
#pragma unroll
        for (int q = 0; q < 3; q++)
            out[q] = len > 1e-6 ? __double2float_rn(__ddiv_rn(a[q], len)) : 0.0f;
    }
}


/* --- look-ups ----------------------------------------------------------------------------- */

/* The voxel at grid coordinates c of a cloud given as rows (GhmVoxelSideArgs), or
 * GHM_NOT_FOUND: two reads of small arrays where the table costs a hashed probe (a probe of
 * 0.9 M voxels: 23 M neighbour look-ups a step). */
static __device__ __forceinline__ uint32_t row_voxel(const GhmVoxelSideArgs &s,
                                                     const GhmVoxelGridArgs &g, const int c[3])
{
    uint32_t r = (uint32_t)c[1] + (uint32_t)g.dims[1] * (uint32_t)c[2];
    return rows_in(s.rows_lo, s.rows_hi, s.rows_start, r, c[0]);
}

/* The voxel of side s (cloud `cloud`) at grid coordinates at, or GHM_NOT_FOUND: by its rows
 * where it is given so (by_rows), else by the table. */
static __device__ __forceinline__ uint32_t voxel_at(const GhmMapRef &t, const GhmVoxelGridArgs &g,
                                                    const GhmVoxelSideArgs &s, int cloud,
                                                    bool by_rows, const int at[3])
{
    return by_rows ? row_voxel(s, g, at)
                   : voxel_id(t, g, cloud, s.first_run, coords_key(g, at));
}

/* Voxel v's hood neighbours into s.nbr; returns how many are occupied. By the rows or by the
 * table, chosen once a voxel, not once a neighbour (a choice in the loop cost the voxel mode's
 * look-ups 10 %, H200). The steps in hood order (dz, dy, dx lexicographic, cube_step's) by
 * loops, and v's coordinates once: a neighbour's divisions were most of the time of a probe's
 * neighbours (0.9 M voxels: 206 -> 119 us under ncu, H200). */
template <bool BY_ROWS>
static __device__ __forceinline__ int neighbours_of(const GhmMapRef &t, const GhmVoxelGridArgs &g,
                                                    const GhmVoxelSideArgs &s, int cloud,
                                                    uint32_t v)
{
    const uint32_t K = s.K;
    const int r = s.radius;
    int c[3], d[3], at[3], k = 0, occupied = 0;
    key_coords(g, s.keys[v], c);
    for (d[2] = -r; d[2] <= r; d[2]++)
        for (d[1] = -r; d[1] <= r; d[1]++)
            for (d[0] = -r; d[0] <= r; d[0]++) {
                if (d[0] == 0 && d[1] == 0 && d[2] == 0)
                    continue;
                uint32_t id = step_coords(g, c, d, at) ? voxel_at(t, g, s, cloud, BY_ROWS, at)
                                                       : GHM_NOT_FOUND;
                s.nbr[(size_t)k * K + v] = id;
                occupied += id != GHM_NOT_FOUND;
                k++;
            }
    return occupied;
}

/* The occupied radius-1 neighbours of voxel v of a side given as rows without s.nbr: counted
 * for the histogram, none written. */
static __device__ __forceinline__ int rows_occupied(const GhmVoxelSideArgs &s, uint32_t v)
{
    uint32_t u[26];
    nbr26(s, v, ~0u, u);
    int occupied = 0;
#pragma unroll
    for (int k = 0; k < 26; k++)
        occupied += u[k] != GHM_NOT_FOUND;
    return occupied;
}

static __global__ __launch_bounds__(VOXEL_THREADS) void neighbours_kernel(
    GhmMapRef t, GhmVoxelGridArgs g, const __grid_constant__ GhmVoxelPair p, int do_a, int do_b,
    GhmVoxelInfo *info)
{
    int cloud = blockIdx.y;
    if (!(cloud ? do_b : do_a))
        return;
    const GhmVoxelSideArgs &s = p.s[cloud];
    __shared__ uint32_t local[GHMI_VOXEL_HIST];
    for (int i = threadIdx.x; i < GHMI_VOXEL_HIST; i += VOXEL_THREADS)
        local[i] = 0;
    __syncthreads();
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v < s.K)
        atomicAdd(&local[!s.nbr      ? rows_occupied(s, v)
                         : s.rows_lo ? neighbours_of<true>(t, g, s, cloud, v)
                                     : neighbours_of<false>(t, g, s, cloud, v)],
                  1u);
    __syncthreads();
    for (int i = threadIdx.x; i < GHMI_VOXEL_HIST; i += VOXEL_THREADS)
        if (local[i])
            atomicAdd(&info->hist[cloud][i], local[i]);
}

/* A probe given as rows (A, a voxel edit's) holds every voxel of its cloud (B): it spans each
 * row from the cloud's first voxel to its last (edit_probe.c). So A's cross is made from B's
 * side, a thread per voxel of B placing its id at A's voxel there (the rest of A's cross
 * GHM_NOT_FOUND), and A's contact search at rho = 1 reads the cross of its radius-1 neighbours
 * instead of a hashed look-up each (a probe of 0.9 M voxels: 461 -> 149 us under ncu, H200).
 * info->placed counts B's voxels placed: unless that is all of them the contact takes the
 * hashed way. */
static __global__ __launch_bounds__(VOXEL_THREADS) void rows_cross_kernel(
    GhmVoxelGridArgs g, const __grid_constant__ GhmVoxelPair p, GhmVoxelInfo *info)
{
    const GhmVoxelSideArgs &rows = p.s[0], &cloud = p.s[1];
    uint32_t u = blockIdx.x * VOXEL_THREADS + threadIdx.x, at = GHM_NOT_FOUND;
    if (u < cloud.K) {
        int c[3];
        key_coords(g, cloud.keys[u], c);
        if ((at = row_voxel(rows, g, c)) != GHM_NOT_FOUND)
            rows.cross[at] = u;
    }
    unsigned m = __ballot_sync(0xFFFFFFFFu, at != GHM_NOT_FOUND);
    if ((threadIdx.x & 31) == 0 && m)
        atomicAdd(&info->placed, (unsigned)__popc(m));
}

/* The other cloud's voxel at the voxel of side s (given as rows) at step d from coordinates c,
 * by the rows (rows_cross_kernel). */
static __device__ __forceinline__ uint32_t cross_by_rows(const GhmVoxelSideArgs &s, const int c[3],
                                                         const int d[3])
{
    uint32_t u = rows_step(s, c, d);
    return u == GHM_NOT_FOUND ? GHM_NOT_FOUND : s.cross[u];
}

static __global__ __launch_bounds__(VOXEL_THREADS) void contact_kernel(
    GhmMapRef t, GhmVoxelGridArgs g, int rho, const __grid_constant__ GhmVoxelPair p,
    const GhmVoxelInfo *info, int rows_cross)
{
    int cloud = blockIdx.y, other = 1 - cloud;
    const GhmVoxelSideArgs &s = p.s[cloud];
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= s.K)
        return;
    const uint32_t oK = p.s[other].K;
    const float *onormals = p.s[other].normals;
    const bool by_rows = cloud == 0 && rows_cross && info->placed == oK;
    /* B finds A's voxels by A's rows where it is given so (then A may not be in the table) */
    const bool in_rows = cloud == 1 && p.s[0].rows_lo;
    uint32_t key = s.keys[v];
    int kc[3];
    key_coords(g, key, kc);
    double c[3] = {0, 0, 0}, sum_c[3] = {0, 0, 0}, sum_n[3] = {0, 0, 0};
    uint32_t id0 = by_rows ? s.cross[v]
                   : oK    ? voxel_at(t, g, p.s[other], other, in_rows, kc)
                           : GHM_NOT_FOUND;
    id0 = id0 < oK ? id0 : GHM_NOT_FOUND;
    if (!by_rows)
        s.cross[v] = id0;
    int found = 0;
    if (id0 != GHM_NOT_FOUND) { /* an intersection: the paper's plane through this voxel */
        centre(g, key, c);
        for (int a = 0; a < 3; a++) {
            sum_c[a] = __dadd_rn(0.0, __dadd_rn(c[a], 0.0));
            sum_n[a] = __dadd_rn(0.0, (double)onormals[3 * (size_t)id0 + a]);
        }
        found = 1;
    } else if (oK && rho > 0) { /* the hood in cube_step's order (dz, dy, dx) */
        int d[3];
        for (d[2] = -rho; d[2] <= rho; d[2]++)
            for (d[1] = -rho; d[1] <= rho; d[1]++)
                for (d[0] = -rho; d[0] <= rho; d[0]++) {
                    if (d[0] == 0 && d[1] == 0 && d[2] == 0)
                        continue;
                    int at[3];
                    uint32_t u = by_rows ? cross_by_rows(s, kc, d)
                                 : step_coords(g, kc, d, at)
                                     ? voxel_at(t, g, p.s[other], other, in_rows, at)
                                     : GHM_NOT_FOUND;
                    if (u >= oK)
                        continue;
                    if (!found) /* the centre once a plane needs it (voxelize.c's contact_of) */
                        centre(g, key, c);
                    for (int a = 0; a < 3; a++) {
                        sum_c[a] = __dadd_rn(sum_c[a],
                                             __dadd_rn(c[a], __dmul_rn((double)d[a], g.size)));
                        sum_n[a] = __dadd_rn(sum_n[a], (double)onormals[3 * (size_t)u + a]);
                    }
                    found++;
                }
    }
    s.barrier[v] = found > 0;
    float *pl = s.plane + 6 * (size_t)v;
    if (!found) {
        for (int a = 0; a < 6; a++)
            pl[a] = 0.0f;
        return;
    }
    double len = __dsqrt_rn(__dadd_rn(__dadd_rn(__dmul_rn(sum_n[0], sum_n[0]),
                                                __dmul_rn(sum_n[1], sum_n[1])),
                                      __dmul_rn(sum_n[2], sum_n[2])));
    for (int a = 0; a < 3; a++) {
        pl[a] = __double2float_rn(__ddiv_rn(sum_c[a], (double)found));
        pl[3 + a] = len > 1e-9 ? __double2float_rn(__ddiv_rn(sum_n[a], len)) : 0.0f;
    }
}


/* --- launchers ---------------------------------------------------------------------------- */

/* The arguments of a launch over nr rows of n points (a warp a row; out: its output arrays
 * are given): 1 when there is work, 0 when none, or the error. */
static int rows_launch(const GhmContext *ctx, const GhmVoxelGridArgs *g, const int32_t *lo,
                       const int32_t *hi, const uint64_t *start, size_t nr, size_t n, bool out)
{
    if (!ctx || !g || (nr && (!lo || !hi || !start)) || (n && !out))
        return GHM_ERR_INVALID;
    if (nr > 0x7FFFFFFFu / 32 || n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    return nr > 0 && n > 0;
}

extern "C" int ghm_cuda_voxel_rows(GhmContext *ctx, const GhmVoxelGridArgs *g, const int32_t *lo,
                                   const int32_t *hi, const uint64_t *start, size_t nr, size_t n,
                                   float *xyz)
{
    int work = rows_launch(ctx, g, lo, hi, start, nr, n, xyz != NULL);
    if (work <= 0)
        return work;
    rows_kernel<<<blocks_for(32 * nr), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        *g, lo, hi, start, (uint32_t)nr, xyz);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_row_voxels(GhmContext *ctx, const GhmVoxelGridArgs *g,
                                         const int32_t *lo, const int32_t *hi,
                                         const uint64_t *start, size_t nr, size_t n,
                                         uint32_t *keys, uint32_t *counts, float *normals)
{
    int work = rows_launch(ctx, g, lo, hi, start, nr, n, keys && counts && normals);
    if (work <= 0)
        return work;
    row_voxels_kernel<<<blocks_for(32 * nr), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        *g, lo, hi, start, (uint32_t)nr, keys, counts, normals);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_keys(GhmContext *ctx, GhmMultimap *table, const float *xyz,
                                   size_t na, size_t nb, const GhmVoxelPose *pose,
                                   const GhmVoxelGridArgs *g, GhmVoxelInfo *info)
{
    size_t n = na + nb;
    if (!ctx || !table || !pose || !g || !info || (n && !xyz) || g->key_bits < 0 ||
        g->key_bits > 30)
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    uint32_t *ckey = NULL, *idx = NULL;
    int ret = ghm_cuda_multimap_input(table, n, &ckey, &idx);
    if (ret < 0 || n == 0)
        return ret;
    keys_kernel<<<blocks_for(n), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        xyz, (uint32_t)na, (uint32_t)n, *pose, *g, ckey, idx, info);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_table(GhmContext *ctx, GhmMultimap *table, size_t n, int key_bits,
                                    int attempt, GhmVoxelInfo *info)
{
    if (!ctx || !table || !info || key_bits < 0 || key_bits > 30 || attempt < 0)
        return GHM_ERR_INVALID;
    GhmQueuedBuild q = {key_bits + 2, attempt, &info->table_failed};
    GhmMultimapRef ref;
    int ret = ghm_cuda_multimap_build_queued(table, NULL, NULL, n, &q, &ref);
    if (ret < 0)
        return ret;
    split_kernel<<<1, 32, 0, ghm_cuda_stream(ctx)>>>(ref.keys, ref.key_count,
                                                     1u << (key_bits + 1), info);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_build(GhmContext *ctx, const GhmMultimap *table, size_t runs,
                                    size_t runs_a, const float *xyz, const float *pnormals,
                                    const GhmVoxelPose *pose, const GhmVoxelGridArgs *g,
                                    const GhmVoxelPair *p)
{
    GhmMultimapRef ref;
    if (!ctx || !pose || !g || check_pair(p) < 0 || runs_a > runs ||
        ghm_cuda_multimap_ref(table, &ref) < 0 || (runs && (!xyz || !pnormals)))
        return GHM_ERR_INVALID;
    if (runs > ref.num_values)
        return GHM_ERR_INVALID; /* more runs than points */
    if (runs == 0)
        return GHM_OK;
    build_kernel<<<blocks_for(runs), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        ref.values, ref.offsets, ref.keys, (uint32_t)runs, (uint32_t)runs_a, xyz, pnormals, *pose,
        *g, *p);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_neighbours(GhmContext *ctx, const GhmMultimap *table,
                                         const GhmVoxelGridArgs *g, const GhmVoxelPair *p,
                                         const int do_side[2], GhmVoxelInfo *info)
{
    GhmMultimapRef ref;
    if (!ctx || !g || !do_side || !info || check_pair(p) < 0 ||
        ghm_cuda_multimap_ref(table, &ref) < 0)
        return GHM_ERR_INVALID;
    uint32_t K = 0;
    for (int c = 0; c < 2; c++)
        if (do_side[c] && p->s[c].K > K)
            K = p->s[c].K;
    if (K == 0)
        return GHM_OK;
    dim3 grid(blocks_for(K), 2);
    neighbours_kernel<<<grid, VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(ref.map, *g, *p,
                                                                      do_side[0], do_side[1], info);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_contact(GhmContext *ctx, const GhmMultimap *table,
                                      const GhmVoxelGridArgs *g, int rho, const GhmVoxelPair *p,
                                      GhmVoxelInfo *info)
{
    GhmMultimapRef ref;
    if (!ctx || !g || !info || rho < 0 || rho > GHMI_MAX_RADIUS || check_pair(p) < 0 ||
        ghm_cuda_multimap_ref(table, &ref) < 0)
        return GHM_ERR_INVALID;
    uint32_t K = max_k(p);
    if (K == 0)
        return GHM_OK;
    cudaStream_t st = ghm_cuda_stream(ctx);
    const GhmVoxelSideArgs &a = p->s[0], &b = p->s[1];
    const int rows_cross = a.rows_lo && a.radius == 1 && rho == 1 && b.K > 0;
    if (rows_cross) {
        int ret = GHM_CUDA(cudaMemsetAsync(a.cross, 0xFF, (size_t)a.K * sizeof *a.cross, st));
        if (ret == GHM_OK)
            ret = GHM_CUDA(cudaMemsetAsync(&info->placed, 0, sizeof info->placed, st));
        if (ret < 0)
            return ret;
        rows_cross_kernel<<<blocks_for(b.K), VOXEL_THREADS, 0, st>>>(*g, *p, info);
        if ((ret = GHM_CUDA_LAUNCH()) < 0)
            return ret;
    }
    dim3 grid(blocks_for(K), 2);
    contact_kernel<<<grid, VOXEL_THREADS, 0, st>>>(ref.map, *g, rho, *p, info, rows_cross);
    return GHM_CUDA_LAUNCH();
}
