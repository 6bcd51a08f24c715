/*
 * voxel.cu - the voxel Boolean intersection on the GPU (Alcantara et al. 2009, section 6
 * "Spatial hashing"): the device twin of the stages of vision/voxel.c, driven by
 * vision/voxel_device.c through GhmVoxelOps.
 *
 * Every kernel is one thread per item (point or voxel), 256 per block, 1-D grid:
 *  keys_kernel        point -> voxel key (B moved by the pose); GHM_NOT_FOUND outside the grid.
 *  accumulate_kernel  per point: atomicAdd of 1 into counts and of the fixed-point normal into
 *                     nsum (64-bit integers, so the sums do not depend on the atomics' order).
 *  normalise_kernel   per voxel: unit mean normal from nsum.
 *  neighbours_kernel  per voxel: the ids of its hood neighbours through the index's device
 *                     reference, stored step-major (nbr[k * K + v], coalesced for the fill), and
 *                     a block histogram of occupied-neighbour counts (for the median).
 *  contact_kernel     per voxel: the same voxel, then (sparse clouds) its rho-neighbourhood, in
 *                     the other cloud's index: cross id, barrier flag, the other surface's plane.
 *  classify_kernel    per voxel: barrier label, or ring flag and seed vote from its neighbours.
 *  fill_kernel        the breadth-first fill, level-synchronous in one cooperative launch
 *                     (grid-stride, one grid barrier per level): state = level << 32 | seed id,
 *                     lowered with atomicMin, so a voxel ends with the nearest seed, ties to the
 *                     smallest id, whatever the order of the atomics: voxel.c's labels.
 *  fill_labels_kernel labels from the settled state, and the conflict test of voxel.c.
 *
 * Exactness: the double arithmetic is voxel.c's, operation by operation, with explicitly rounded
 * intrinsics (__dadd_rn, __dmul_rn, ...), which the compiler never contracts into FMAs; the C
 * side is ISO C11 without contraction. So keys, normals, planes and votes are bit for bit the
 * CPU's, and so are the labels.
 */
#include "../../hashing/ghm_error.h"
#include "../cuda_check.cuh"
#include "../hashing/backend_cuda.h"
#include "../hashing/index_ref.cuh"
#include "../../vision/voxel_internal.h"
#include "voxel.h"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

#define VOXEL_THREADS 256
#define LABEL_OUTSIDE 0
#define LABEL_INSIDE 1
#define LABEL_INTERSECTION 2
#define LABEL_UNKNOWN 3
#define STATE_NONE 0xFFFFFFFFFFFFFFFFull

static unsigned blocks_for(size_t n) { return (unsigned)((n + VOXEL_THREADS - 1) / VOXEL_THREADS); }

/* voxel.c's apply_pose: ((m0 p0 + m1 p1) + m2 p2) + m3 per row. */
static __device__ __forceinline__ void apply_pose(const GhmVoxelPose &m, const float *p,
                                                  double out[3])
{
    double x = p[0], y = p[1], z = p[2];
    if (!m.present) {
        out[0] = x, out[1] = y, out[2] = z;
        return;
    }
#pragma unroll
    for (int r = 0; r < 3; r++)
        out[r] = __dadd_rn(__dadd_rn(__dadd_rn(__dmul_rn(m.m[4 * r], x), __dmul_rn(m.m[4 * r + 1], y)),
                                     __dmul_rn(m.m[4 * r + 2], z)),
                           m.m[4 * r + 3]);
}

/* voxel.c's point_key. */
static __device__ __forceinline__ uint32_t point_key(const GhmVoxelGridArgs &g, const double p[3])
{
    uint32_t c[3];
#pragma unroll
    for (int k = 0; k < 3; k++) {
        double f = __dmul_rn(__dsub_rn(p[k], g.origin[k]), g.inv);
        double fl = floor(f), d = (double)g.dims[k];
        if (fl >= d && f < __dadd_rn(d, 1e-6))
            fl = (double)(g.dims[k] - 1);
        if (fl < 0 && f > -1e-6)
            fl = 0;
        if (!(fl >= 0 && fl < d))
            return GHM_NOT_FOUND;
        c[k] = (uint32_t)fl;
    }
    return c[0] + (uint32_t)g.dims[0] * (c[1] + (uint32_t)g.dims[1] * c[2]);
}

/* ghm_voxel_centre: origin + (x + 0.5) * size per axis. */
static __device__ __forceinline__ void centre(const GhmVoxelGridArgs &g, uint32_t key, double c[3])
{
    uint32_t nx = (uint32_t)g.dims[0], ny = (uint32_t)g.dims[1];
    uint32_t x = key % nx, y = (key / nx) % ny, z = key / nx / ny;
    c[0] = __dadd_rn(g.origin[0], __dmul_rn((double)x + 0.5, g.size));
    c[1] = __dadd_rn(g.origin[1], __dmul_rn((double)y + 0.5, g.size));
    c[2] = __dadd_rn(g.origin[2], __dmul_rn((double)z + 0.5, g.size));
}

/* Step j of the full (2r+1)^3 cube, in hood order (dz, dy, dx lexicographic). */
static __device__ __forceinline__ void cube_step(int j, int r, int d[3])
{
    int w = 2 * r + 1;
    d[0] = j % w - r;
    d[1] = (j / w) % w - r;
    d[2] = j / (w * w) - r;
}

/* The key of the voxel at key + step, or GHM_NOT_FOUND outside the grid. */
static __device__ __forceinline__ uint32_t step_key(const GhmVoxelGridArgs &g, uint32_t key,
                                                    const int d[3])
{
    int nx = g.dims[0], ny = g.dims[1], nz = g.dims[2];
    int x = (int)(key % (uint32_t)nx) + d[0], y = (int)((key / (uint32_t)nx) % (uint32_t)ny) + d[1],
        z = (int)(key / (uint32_t)nx / (uint32_t)ny) + d[2];
    if (x < 0 || x >= nx || y < 0 || y >= ny || z < 0 || z >= nz)
        return GHM_NOT_FOUND;
    return (uint32_t)x + (uint32_t)nx * ((uint32_t)y + (uint32_t)ny * (uint32_t)z);
}

/* (a0 - b0) n0 + (a1 - b1) n1 + (a2 - b2) n2, in voxel.c's order, with float plane values. */
static __device__ __forceinline__ double plane_dot(const double c[3], const float *pl)
{
    return __dadd_rn(__dadd_rn(__dmul_rn(__dsub_rn(c[0], (double)pl[0]), (double)pl[3]),
                               __dmul_rn(__dsub_rn(c[1], (double)pl[1]), (double)pl[4])),
                     __dmul_rn(__dsub_rn(c[2], (double)pl[2]), (double)pl[5]));
}

static __device__ __forceinline__ double fix_of(float f)
{
    double q = __dmul_rn((double)f, GHMI_VOXEL_FIX_SCALE);
    if (!(fabs(q) <= GHMI_VOXEL_FIX_LIMIT))
        q = q > 0 ? GHMI_VOXEL_FIX_LIMIT : q < 0 ? -GHMI_VOXEL_FIX_LIMIT : 0.0;
    return q;
}

/* --- voxelize ----------------------------------------------------------------------------- */

static __global__ __launch_bounds__(VOXEL_THREADS) void keys_kernel(
    const float *__restrict__ xyz, uint32_t n, GhmVoxelPose pose, GhmVoxelGridArgs g,
    uint32_t *__restrict__ pkey)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i >= n)
        return;
    double p[3];
    apply_pose(pose, xyz + 3 * (size_t)i, p);
    pkey[i] = point_key(g, p);
}

static __global__ __launch_bounds__(VOXEL_THREADS) void accumulate_kernel(
    const uint32_t *__restrict__ pid, uint32_t n, uint32_t K, const float *__restrict__ normals,
    GhmVoxelPose pose, uint32_t *counts, unsigned long long *nsum)
{
    uint32_t i = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (i >= n)
        return;
    uint32_t v = pid[i];
    if (v >= K)
        return; /* outside the grid (GHM_NOT_FOUND, or the id of the key GHM_NOT_FOUND) */
    atomicAdd(&counts[v], 1u);
    const float *nv = normals + 3 * (size_t)i;
    float f[3] = {nv[0], nv[1], nv[2]};
    if (pose.present) { /* voxel.c: the rotation in double, rounded to float */
        double x = nv[0], y = nv[1], z = nv[2];
#pragma unroll
        for (int r = 0; r < 3; r++)
            f[r] = __double2float_rn(__dadd_rn(__dadd_rn(__dmul_rn(pose.m[4 * r], x),
                                                         __dmul_rn(pose.m[4 * r + 1], y)),
                                               __dmul_rn(pose.m[4 * r + 2], z)));
    }
#pragma unroll
    for (int r = 0; r < 3; r++)
        atomicAdd(&nsum[3 * (size_t)v + r], (unsigned long long)__double2ll_rn(fix_of(f[r])));
}

static __global__ __launch_bounds__(VOXEL_THREADS) void normalise_kernel(
    uint32_t K, const unsigned long long *__restrict__ nsum, float *__restrict__ normals)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= K)
        return;
    double a[3];
#pragma unroll
    for (int r = 0; r < 3; r++)
        a[r] = __dmul_rn(__ll2double_rn((long long)nsum[3 * (size_t)v + r]),
                         1.0 / GHMI_VOXEL_FIX_SCALE);
    double len = __dsqrt_rn(__dadd_rn(__dadd_rn(__dmul_rn(a[0], a[0]), __dmul_rn(a[1], a[1])),
                                      __dmul_rn(a[2], a[2])));
    float *out = normals + 3 * (size_t)v;
#pragma unroll
    for (int r = 0; r < 3; r++)
        out[r] = len > 1e-6 ? __double2float_rn(__ddiv_rn(a[r], len)) : 0.0f;
}

/* --- look-ups ----------------------------------------------------------------------------- */

static __global__ __launch_bounds__(VOXEL_THREADS) void neighbours_kernel(
    GhmIndexRef ref, const uint32_t *__restrict__ keys, uint32_t K, GhmVoxelGridArgs g, int r,
    uint32_t *__restrict__ nbr, uint32_t *hist)
{
    __shared__ uint32_t local[GHMI_MAX_HOOD + 1];
    for (int i = threadIdx.x; i <= GHMI_MAX_HOOD; i += VOXEL_THREADS)
        local[i] = 0;
    __syncthreads();
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v < K) {
        uint32_t key = keys[v];
        int w = 2 * r + 1, cube = w * w * w, mid = cube / 2, k = 0, occupied = 0;
        for (int j = 0; j < cube; j++) {
            if (j == mid)
                continue;
            int d[3];
            cube_step(j, r, d);
            uint32_t q = step_key(g, key, d);
            uint32_t id = q == GHM_NOT_FOUND ? GHM_NOT_FOUND : ghm_index_ref_id(&ref, q);
            nbr[(size_t)k * K + v] = id;
            occupied += id != GHM_NOT_FOUND;
            k++;
        }
        atomicAdd(&local[occupied], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i <= GHMI_MAX_HOOD; i += VOXEL_THREADS)
        if (local[i])
            atomicAdd(&hist[i], local[i]);
}

static __global__ __launch_bounds__(VOXEL_THREADS) void contact_kernel(
    const uint32_t *__restrict__ keys, uint32_t K, GhmIndexRef other, uint32_t oK,
    const float *__restrict__ onormals, GhmVoxelGridArgs g, int rho, uint32_t *__restrict__ cross,
    uint8_t *__restrict__ barrier, float *__restrict__ plane)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= K)
        return;
    uint32_t key = keys[v];
    double c[3], sum_c[3] = {0, 0, 0}, sum_n[3] = {0, 0, 0};
    centre(g, key, c);
    uint32_t id0 = oK ? ghm_index_ref_id(&other, key) : GHM_NOT_FOUND;
    id0 = id0 < oK ? id0 : GHM_NOT_FOUND;
    cross[v] = id0;
    int found = 0;
    if (id0 != GHM_NOT_FOUND) { /* an intersection: the paper's plane through this voxel */
        for (int a = 0; a < 3; a++) {
            sum_c[a] = __dadd_rn(0.0, __dadd_rn(c[a], 0.0));
            sum_n[a] = __dadd_rn(0.0, (double)onormals[3 * (size_t)id0 + a]);
        }
        found = 1;
    } else if (oK && rho > 0) {
        int w = 2 * rho + 1, cube = w * w * w, mid = cube / 2;
        for (int j = 0; j < cube; j++) {
            if (j == mid)
                continue;
            int d[3];
            cube_step(j, rho, d);
            uint32_t q = step_key(g, key, d);
            uint32_t u = q == GHM_NOT_FOUND ? GHM_NOT_FOUND : ghm_index_ref_id(&other, q);
            if (u >= oK)
                continue;
            for (int a = 0; a < 3; a++) {
                sum_c[a] = __dadd_rn(sum_c[a], __dadd_rn(c[a], __dmul_rn((double)d[a], g.size)));
                sum_n[a] = __dadd_rn(sum_n[a], (double)onormals[3 * (size_t)u + a]);
            }
            found++;
        }
    }
    barrier[v] = found > 0;
    float *pl = plane + 6 * (size_t)v;
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

/* --- labels ------------------------------------------------------------------------------- */

static __global__ __launch_bounds__(VOXEL_THREADS) void classify_kernel(
    const uint32_t *__restrict__ keys, uint32_t K, GhmVoxelGridArgs g, int r,
    const uint32_t *__restrict__ nbr, const uint32_t *__restrict__ cross,
    const uint8_t *__restrict__ barrier, const float *__restrict__ plane, double t_out,
    double t_in, uint8_t *__restrict__ label, uint8_t *__restrict__ ring,
    uint8_t *__restrict__ seed)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= K)
        return;
    double c[3];
    centre(g, keys[v], c);
    uint8_t lab = LABEL_UNKNOWN, sd = GHMI_VOXEL_NO_SEED, rg = 0;
    if (barrier[v]) {
        if (cross[v] != GHM_NOT_FOUND) {
            lab = LABEL_INTERSECTION;
        } else {
            double d = plane_dot(c, plane + 6 * (size_t)v);
            lab = d > 0 ? LABEL_OUTSIDE : d < 0 ? LABEL_INSIDE : LABEL_UNKNOWN;
        }
    } else {
        int w = 2 * r + 1, cube = w * w * w, mid = cube / 2, k = 0, in = 0, out = 0;
        for (int j = 0; j < cube; j++) {
            if (j == mid)
                continue;
            uint32_t x = nbr[(size_t)k * K + v];
            k++;
            if (x == GHM_NOT_FOUND || !barrier[x])
                continue;
            rg = 1;
            int d[3];
            cube_step(j, r, d);
            double len = __dsqrt_rn((double)(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
            double dot = __ddiv_rn(plane_dot(c, plane + 6 * (size_t)x), __dmul_rn(len, g.size));
            out += dot > t_out;
            in += dot < -t_in;
        }
        sd = in == out ? GHMI_VOXEL_NO_SEED : in > out ? LABEL_INSIDE : LABEL_OUTSIDE;
    }
    label[v] = lab;
    ring[v] = rg;
    seed[v] = sd;
}

/* The breadth-first fill of voxel.c as one cooperative launch: the grid expands level L's
 * queue segment (each voxel's state final: level L's atomicMin only writes level L + 1), with
 * atomicMin of (L + 1) << 32 | seed id into each non-barrier neighbour, so that a voxel reached
 * from several seeds at the same level keeps the smallest id whatever the order; the thread that
 * replaces "none" appends the voxel to level L + 1. cnt[L] counts level L's voxels (zeroed by
 * the caller, K + 2 entries), so the appends of level L + 1 never race the reading of level L's
 * end; one grid-wide barrier per level. */
static __global__ __launch_bounds__(VOXEL_THREADS) void fill_kernel(
    uint32_t K, int nn, const uint32_t *__restrict__ nbr, const uint8_t *__restrict__ barrier,
    const uint8_t *__restrict__ seed, unsigned long long *state, uint32_t *queue, uint32_t *cnt)
{
    cg::grid_group grid = cg::this_grid();
    const uint32_t stride = (uint32_t)grid.size(), tid = (uint32_t)grid.thread_rank();
    for (uint32_t v = tid; v < K; v += stride) {
        int live = !barrier[v] && seed[v] != GHMI_VOXEL_NO_SEED;
        state[v] = live ? (unsigned long long)v : STATE_NONE;
        if (live)
            queue[atomicAdd(&cnt[0], 1u)] = v;
    }
    grid.sync();
    uint32_t start = 0, end = *(volatile uint32_t *)&cnt[0];
    for (uint32_t level = 0; start < end; level++) {
        for (uint32_t i = start + tid; i < end; i += stride) {
            uint32_t v = queue[i];
            unsigned long long cand = (unsigned long long)(level + 1) << 32 | (uint32_t)state[v];
            for (int k = 0; k < nn; k++) {
                uint32_t u = nbr[(size_t)k * K + v];
                if (u == GHM_NOT_FOUND || barrier[u])
                    continue;
                if (state[u] <= cand) /* settled nearer, or already as good */
                    continue;
                if (atomicMin(&state[u], cand) == STATE_NONE)
                    queue[end + atomicAdd(&cnt[level + 1], 1u)] = u;
            }
        }
        grid.sync();
        start = end;
        end += *(volatile uint32_t *)&cnt[level + 1];
    }
}

static __device__ __forceinline__ uint8_t filled_label(const unsigned long long *state,
                                                       const uint8_t *seed, uint32_t v)
{
    unsigned long long s = state[v];
    return s == STATE_NONE ? (uint8_t)LABEL_UNKNOWN : seed[(uint32_t)s];
}

static __global__ __launch_bounds__(VOXEL_THREADS) void fill_labels_kernel(
    uint32_t K, int nn, const uint32_t *__restrict__ nbr, const uint8_t *__restrict__ barrier,
    const uint8_t *__restrict__ ring, const uint8_t *__restrict__ seed,
    const unsigned long long *__restrict__ state, uint8_t *__restrict__ label, uint8_t *drop,
    unsigned long long *counters)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= K || barrier[v])
        return;
    uint8_t l = filled_label(state, seed, v);
    label[v] = l;
    if (ring[v] || (l != LABEL_INSIDE && l != LABEL_OUTSIDE))
        return;
    unsigned long long pairs = 0;
    for (int k = 0; k < nn; k++) {
        uint32_t u = nbr[(size_t)k * K + v];
        if (u == GHM_NOT_FOUND || ring[u] || barrier[u])
            continue;
        uint8_t lu = filled_label(state, seed, u);
        if (lu == l || (lu != LABEL_INSIDE && lu != LABEL_OUTSIDE))
            continue;
        drop[(uint32_t)state[v]] = 1;
        drop[(uint32_t)state[u]] = 1;
        pairs += u > v; /* each pair once */
    }
    if (pairs)
        atomicAdd(&counters[GHMI_VOXEL_PAIRS], pairs);
}

static __global__ __launch_bounds__(VOXEL_THREADS) void seeds_kernel(
    uint32_t K, const uint8_t *__restrict__ drop, uint8_t *__restrict__ seed,
    unsigned long long *counters)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    int live = 0;
    if (v < K) {
        if (drop && drop[v])
            seed[v] = GHMI_VOXEL_NO_SEED;
        live = seed[v] != GHMI_VOXEL_NO_SEED;
    }
    unsigned n = __popc(__ballot_sync(0xFFFFFFFFu, live));
    if ((threadIdx.x & 31) == 0 && n)
        atomicAdd(&counters[GHMI_VOXEL_SEEDS], (unsigned long long)n);
}

/* --- launchers ---------------------------------------------------------------------------- */

static int check_radius(int r) { return r >= 0 && r <= GHMI_MAX_RADIUS ? GHM_OK : GHM_ERR_INVALID; }

extern "C" int ghm_cuda_voxel_keys(GhmContext *ctx, const float *xyz, size_t n,
                                   const GhmVoxelPose *pose, const GhmVoxelGridArgs *g,
                                   uint32_t *pkey)
{
    if (!ctx || !pose || !g || (n && (!xyz || !pkey)))
        return GHM_ERR_INVALID;
    if (n > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (n == 0)
        return GHM_OK;
    keys_kernel<<<blocks_for(n), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(xyz, (uint32_t)n, *pose,
                                                                           *g, pkey);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_accumulate(GhmContext *ctx, const uint32_t *pid, size_t n, size_t K,
                                         const float *normals, const GhmVoxelPose *pose,
                                         uint32_t *counts, unsigned long long *nsum)
{
    if (!ctx || !pose || (n && (!pid || !normals)) || (K && (!counts || !nsum)))
        return GHM_ERR_INVALID;
    if (n > 0xFFFFFFFFu || K > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (n == 0 || K == 0)
        return GHM_OK;
    accumulate_kernel<<<blocks_for(n), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        pid, (uint32_t)n, (uint32_t)K, normals, *pose, counts, nsum);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_normalise(GhmContext *ctx, size_t K, const unsigned long long *nsum,
                                        float *normals)
{
    if (!ctx || (K && (!nsum || !normals)))
        return GHM_ERR_INVALID;
    if (K > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (K == 0)
        return GHM_OK;
    normalise_kernel<<<blocks_for(K), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>((uint32_t)K, nsum,
                                                                                normals);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_neighbours(GhmContext *ctx, const GhmIndex *ix,
                                         const uint32_t *keys, size_t K,
                                         const GhmVoxelGridArgs *g, int radius, uint32_t *nbr,
                                         uint32_t *hist)
{
    if (!ctx || !g || radius < 1 || check_radius(radius) < 0 || !hist || (K && (!keys || !nbr)))
        return GHM_ERR_INVALID;
    if (K > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (K == 0)
        return GHM_OK;
    GhmIndexRef ref;
    int ret = ghm_cuda_index_ref(ix, &ref);
    if (ret < 0)
        return ret;
    neighbours_kernel<<<blocks_for(K), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        ref, keys, (uint32_t)K, *g, radius, nbr, hist);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_contact(GhmContext *ctx, const uint32_t *keys, size_t K,
                                      const GhmIndex *other, size_t other_K,
                                      const float *onormals, const GhmVoxelGridArgs *g, int rho,
                                      uint32_t *cross, uint8_t *barrier, float *plane)
{
    if (!ctx || !g || check_radius(rho) < 0 || (K && (!keys || !cross || !barrier || !plane)) ||
        (other_K && !onormals))
        return GHM_ERR_INVALID;
    if (K > 0xFFFFFFFFu || other_K > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (K == 0)
        return GHM_OK;
    GhmIndexRef ref = {};
    if (other_K) {
        int ret = ghm_cuda_index_ref(other, &ref);
        if (ret < 0)
            return ret;
    }
    contact_kernel<<<blocks_for(K), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        keys, (uint32_t)K, ref, (uint32_t)other_K, onormals, *g, rho, cross, barrier, plane);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_classify(GhmContext *ctx, const uint32_t *keys, size_t K,
                                       const GhmVoxelGridArgs *g, int radius,
                                       const uint32_t *nbr, const uint32_t *cross,
                                       const uint8_t *barrier, const float *plane, double t_out,
                                       double t_in, uint8_t *label, uint8_t *ring, uint8_t *seed)
{
    if (!ctx || !g || radius < 1 || check_radius(radius) < 0 ||
        (K && (!keys || !nbr || !cross || !barrier || !plane || !label || !ring || !seed)))
        return GHM_ERR_INVALID;
    if (K > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (K == 0)
        return GHM_OK;
    classify_kernel<<<blocks_for(K), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        keys, (uint32_t)K, *g, radius, nbr, cross, barrier, plane, t_out, t_in, label, ring, seed);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_fill(GhmContext *ctx, size_t K, int nn, const uint32_t *nbr,
                                   const uint8_t *barrier, const uint8_t *seed,
                                   unsigned long long *state, uint32_t *queue, uint32_t *cnt)
{
    if (!ctx || nn < 0 || nn > GHMI_MAX_HOOD ||
        (K && (!nbr || !barrier || !seed || !state || !queue || !cnt)))
        return GHM_ERR_INVALID;
    if (K > 0xFFFFFFFEu)
        return GHM_ERR_TOO_LARGE;
    if (K == 0)
        return GHM_OK;
    int dev = 0, sms = 0, per_sm = 0;
    int ret = GHM_CUDA(cudaGetDevice(&dev));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_kernel,
                                                                     VOXEL_THREADS, 0));
    if (ret < 0)
        return ret;
    /* a few voxels per thread: fewer blocks make the per-level barrier cheaper */
    size_t want = (K + 4 * VOXEL_THREADS - 1) / (4 * VOXEL_THREADS);
    size_t most = (size_t)(per_sm > 0 ? per_sm : 1) * (size_t)(sms > 0 ? sms : 1);
    unsigned blocks = (unsigned)(want < most ? want : most);
    uint32_t k32 = (uint32_t)K;
    void *args[] = {&k32, &nn, &nbr, &barrier, &seed, &state, &queue, &cnt};
    return GHM_CUDA(cudaLaunchCooperativeKernel((const void *)fill_kernel, blocks, VOXEL_THREADS,
                                                args, 0, ghm_cuda_stream(ctx)));
}

extern "C" int ghm_cuda_voxel_fill_labels(GhmContext *ctx, size_t K, int nn, const uint32_t *nbr,
                                          const uint8_t *barrier, const uint8_t *ring,
                                          const uint8_t *seed, const unsigned long long *state,
                                          uint8_t *label, uint8_t *drop,
                                          unsigned long long *counters)
{
    if (!ctx || !counters || nn < 0 || nn > GHMI_MAX_HOOD ||
        (K && (!nbr || !barrier || !ring || !seed || !state || !label || !drop)))
        return GHM_ERR_INVALID;
    if (K > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (K == 0)
        return GHM_OK;
    fill_labels_kernel<<<blocks_for(K), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        (uint32_t)K, nn, nbr, barrier, ring, seed, state, label, drop, counters);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_seeds(GhmContext *ctx, size_t K, const uint8_t *drop, uint8_t *seed,
                                    unsigned long long *counters)
{
    if (!ctx || !counters || (K && !seed))
        return GHM_ERR_INVALID;
    if (K > 0xFFFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (K == 0)
        return GHM_OK;
    seeds_kernel<<<blocks_for(K), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>((uint32_t)K, drop,
                                                                            seed, counters);
    return GHM_CUDA_LAUNCH();
}
