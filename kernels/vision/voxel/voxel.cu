/*
 * voxel.cu - the voxel Boolean intersection on the GPU (Alcantara et al. 2009, section 6
 * "Spatial hashing"): the device twin of the stages of vision/voxel/voxel.c, driven by
 * vision/voxel/voxel_device.c through GhmVoxelOps. Both clouds go through every stage in the same
 * launch (points A's then B's; voxel kernels take a GhmVoxelPair, blockIdx.y = cloud).
 *
 * Kernels (256 threads per block, one thread per point or voxel unless said otherwise):
 *  keys_kernel        point -> sort key: cloud << (key_bits + 1) | voxel key (1 << key_bits
 *                     outside the grid), B moved by the pose; and its index, the sort's value.
 *  (CUB)              radix sort of (key, index) over key_bits + 2 bits; select of the run
 *                     heads (first index of each distinct key).
 *  split_kernel       one warp: how many runs belong to A (a 32-way search of the heads).
 *  build_kernel       per run (voxel): key, point count, the mean of its points' normals summed
 *                     in 64-bit fixed point (integers: the order does not matter) and its entry
 *                     in the composite-key table.
 *  neighbours_kernel  per voxel: the ids of its hood neighbours (table look-ups), step-major
 *                     (nbr[k * K + v]), and a block histogram of occupied-neighbour counts.
 *  contact_kernel     per voxel: the same voxel, then (sparse clouds) its rho-neighbourhood, in
 *                     the other cloud: cross id, barrier flag, the other surface's plane.
 *  classify_kernel    per voxel: barrier label, or ring flag and seed vote from its neighbours;
 *                     the fill mask (neighbours that are occupied and not barrier, radius 1).
 *  fill_kernel        every round of the fill for both clouds in one cooperative launch:
 *                     a level-synchronous breadth-first search (one warp per queued voxel, one
 *                     lane per neighbour; state = level << 32 | seed id lowered with atomicMin,
 *                     so a voxel ends with the nearest seed, ties to the smallest id, whatever
 *                     the order of the atomics: voxel.c's labels), then labels, the conflict
 *                     test, dropped seeds and the next round, with grid-wide barriers between
 *                     phases and levels and no host round trip; finally label and seed counts.
 * Normals of a cloud without them (vision/voxel/normals.c; build_kernel sums the point moments):
 *  pca_kernel         per voxel: moments of it and its neighbours, covariance, Jacobi.
 *  centroid_kernel    one thread per chunk of GHMI_CENTROID_CHUNK, per level (normals.c's order).
 *  far/hook/part/first_kernel  distance from the centroid; union-find of the connected parts;
 *                     each part's root (farthest, ties to the smallest id).
 *  root_kernel        roots turned away from the centroid, queued as level 0.
 *  orient_kernel      the CPU's breadth-first orientation, one cooperative launch for both
 *                     clouds, the queue kept in the CPU's order level by level (3 grid
 *                     barriers per level).
 *
 * The table: open addressing with linear probing, 64-bit slots (composite key << 32 | id, all
 * ones empty), at least 3 slots per voxel; composite key = cloud << 31 | voxel key (< 2^30).
 *
 * Exactness: the double arithmetic is voxel.c's, operation by operation, with explicitly rounded
 * intrinsics (__dadd_rn, __dmul_rn, ...), which the compiler never contracts into FMAs; the C
 * side is ISO C11 without contraction. So keys, normals, planes and votes are bit for bit the
 * CPU's, and so are the labels.
 */
#include <cooperative_groups.h>
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "hashing/ghm_error.h"
#include "vision/voxel/voxel_internal.h"
#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/backend_cuda.h"
#include "voxel.h"

namespace cg = cooperative_groups;

#define VOXEL_THREADS 256
#define LABEL_OUTSIDE 0
#define LABEL_INSIDE 1
#define LABEL_INTERSECTION 2
#define LABEL_UNKNOWN 3
#define STATE_NONE 0xFFFFFFFFFFFFFFFFull
#define SLOT_EMPTY 0xFFFFFFFFFFFFFFFFull

static unsigned blocks_for(size_t n) { return (unsigned)((n + VOXEL_THREADS - 1) / VOXEL_THREADS); }

/* voxel.c's apply_pose: ((m0 p0 + m1 p1) + m2 p2) + m3 per row. */
static __device__ __forceinline__ void apply_pose(const GhmVoxelPose &m, int moved, const float *p,
                                                  double out[3])
{
    double x = p[0], y = p[1], z = p[2];
    if (!moved || !m.present) {
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

/* --- the composite-key table -------------------------------------------------------------- */

static __device__ __forceinline__ uint32_t slot_of(uint32_t ck, uint32_t mask)
{
    uint32_t h = ck; /* murmur3's finaliser */
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h & mask;
}

static __device__ __forceinline__ uint32_t table_find(const GhmVoxelTable &t, uint32_t ck)
{
    for (uint32_t h = slot_of(ck, t.mask);; h = (h + 1) & t.mask) {
        unsigned long long e = __ldg(&t.slots[h]);
        if (e == SLOT_EMPTY)
            return GHM_NOT_FOUND;
        if ((uint32_t)(e >> 32) == ck)
            return (uint32_t)e;
    }
}

static __device__ __forceinline__ uint32_t composite(int cloud, uint32_t key)
{
    return (uint32_t)cloud << 31 | key;
}

/* --- voxelize ----------------------------------------------------------------------------- */

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
    unsigned oa = __ballot_sync(0xFFFFFFFFu, out && !cloud), ob = __ballot_sync(0xFFFFFFFFu, out && cloud);
    if ((threadIdx.x & 31) == 0) {
        if (oa)
            atomicAdd(&info->outside[0], (unsigned)__popc(oa));
        if (ob)
            atomicAdd(&info->outside[1], (unsigned)__popc(ob));
    }
}

struct HeadOf {
    const uint32_t *k;
    __device__ __forceinline__ bool operator()(uint32_t i) const { return i == 0 || k[i] != k[i - 1]; }
};

/* runs_a = the number of heads below na (heads ascend): a 32-way search by one warp. */
static __global__ void split_kernel(const uint32_t *__restrict__ head, uint32_t na,
                                    GhmVoxelInfo *info)
{
    uint32_t lane = threadIdx.x, lo = 0, hi = *(volatile uint32_t *)&info->runs;
    while (hi - lo > 32) {
        uint32_t step = (hi - lo + 31) / 32, p = lo + lane * step;
        unsigned below = __ballot_sync(0xFFFFFFFFu, p < hi && head[p] < na);
        uint32_t c = (uint32_t)__popc(below);
        if (c == 0) {
            hi = lo;
            break;
        }
        uint32_t nlo = lo + (c - 1) * step + 1, nhi = lo + c * step;
        lo = nlo;
        hi = nhi < hi ? nhi : hi;
    }
    uint32_t p = lo + lane;
    unsigned below = __ballot_sync(0xFFFFFFFFu, p < hi && head[p] < na);
    if (lane == 0)
        info->runs_a = lo + (uint32_t)__popc(below);
}

static __global__ __launch_bounds__(VOXEL_THREADS) void build_kernel(
    const uint32_t *__restrict__ skey, const uint32_t *__restrict__ sidx,
    const uint32_t *__restrict__ head, uint32_t n, uint32_t runs, uint32_t runs_a,
    const float *__restrict__ pnts, const float *__restrict__ pnormals, GhmVoxelPose pose,
    GhmVoxelGridArgs g, GhmVoxelTable t, const __grid_constant__ GhmVoxelPair p)
{
    uint32_t r = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (r >= runs)
        return;
    int cloud = r >= runs_a;
    const GhmVoxelSideArgs &s = p.s[cloud];
    uint32_t v = r - (cloud ? runs_a : 0);
    if (v >= s.K)
        return; /* the run of the points outside the grid */
    uint32_t o = head[r], e = r + 1 < runs ? head[r + 1] : n;
    uint32_t key = skey[o] & ((1u << g.key_bits) - 1u);
    s.keys[v] = key;
    s.counts[v] = e - o;
    if (s.moments) { /* no normals: voxel.c's accumulate(), the moments in point order */
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
            if (turn) { /* voxel.c: the rotation in double, rounded to float */
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
    uint32_t ck = composite(cloud, key);
    unsigned long long entry = (unsigned long long)ck << 32 | v;
    for (uint32_t h = slot_of(ck, t.mask);; h = (h + 1) & t.mask)
        if (atomicCAS(&t.slots[h], SLOT_EMPTY, entry) == SLOT_EMPTY)
            break;
}

/* --- look-ups ----------------------------------------------------------------------------- */

static __global__ __launch_bounds__(VOXEL_THREADS) void neighbours_kernel(
    GhmVoxelTable t, GhmVoxelGridArgs g, const __grid_constant__ GhmVoxelPair p, int do_a,
    int do_b, GhmVoxelInfo *info)
{
    int cloud = blockIdx.y;
    if (!(cloud ? do_b : do_a))
        return;
    const GhmVoxelSideArgs &s = p.s[cloud];
    __shared__ uint32_t local[GHMI_VOXEL_HIST];
    for (int i = threadIdx.x; i < GHMI_VOXEL_HIST; i += VOXEL_THREADS)
        local[i] = 0;
    __syncthreads();
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x, K = s.K;
    if (v < K) {
        uint32_t key = s.keys[v];
        int r = s.radius, w = 2 * r + 1, cube = w * w * w, mid = cube / 2, k = 0, occupied = 0;
        for (int j = 0; j < cube; j++) {
            if (j == mid)
                continue;
            int d[3];
            cube_step(j, r, d);
            uint32_t q = step_key(g, key, d);
            uint32_t id = q == GHM_NOT_FOUND ? GHM_NOT_FOUND : table_find(t, composite(cloud, q));
            s.nbr[(size_t)k * K + v] = id;
            occupied += id != GHM_NOT_FOUND;
            k++;
        }
        atomicAdd(&local[occupied], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < GHMI_VOXEL_HIST; i += VOXEL_THREADS)
        if (local[i])
            atomicAdd(&info->hist[cloud][i], local[i]);
}

static __global__ __launch_bounds__(VOXEL_THREADS) void contact_kernel(
    GhmVoxelTable t, GhmVoxelGridArgs g, int rho, const __grid_constant__ GhmVoxelPair p)
{
    int cloud = blockIdx.y, other = 1 - cloud;
    const GhmVoxelSideArgs &s = p.s[cloud];
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= s.K)
        return;
    const uint32_t oK = p.s[other].K;
    const float *onormals = p.s[other].normals;
    uint32_t key = s.keys[v];
    double c[3], sum_c[3] = {0, 0, 0}, sum_n[3] = {0, 0, 0};
    centre(g, key, c);
    uint32_t id0 = oK ? table_find(t, composite(other, key)) : GHM_NOT_FOUND;
    id0 = id0 < oK ? id0 : GHM_NOT_FOUND;
    s.cross[v] = id0;
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
            uint32_t u = q == GHM_NOT_FOUND ? GHM_NOT_FOUND : table_find(t, composite(other, q));
            if (u >= oK)
                continue;
            for (int a = 0; a < 3; a++) {
                sum_c[a] = __dadd_rn(sum_c[a], __dadd_rn(c[a], __dmul_rn((double)d[a], g.size)));
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

/* --- labels ------------------------------------------------------------------------------- */

static __global__ __launch_bounds__(VOXEL_THREADS) void classify_kernel(
    GhmVoxelGridArgs g, double t_out, double t_in, const __grid_constant__ GhmVoxelPair p)
{
    const GhmVoxelSideArgs &s = p.s[blockIdx.y];
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x, K = s.K;
    if (v >= K)
        return;
    double c[3];
    centre(g, s.keys[v], c);
    uint8_t lab = LABEL_UNKNOWN, sd = GHMI_VOXEL_NO_SEED, rg = 0;
    uint32_t fill_mask = 0;
    const int r = s.radius;
    if (s.barrier[v]) {
        if (s.cross[v] != GHM_NOT_FOUND) {
            lab = LABEL_INTERSECTION;
        } else {
            double d = plane_dot(c, s.plane + 6 * (size_t)v);
            lab = d > 0 ? LABEL_OUTSIDE : d < 0 ? LABEL_INSIDE : LABEL_UNKNOWN;
        }
    } else {
        int w = 2 * r + 1, cube = w * w * w, mid = cube / 2, k = 0, in = 0, out = 0;
        for (int j = 0; j < cube; j++) {
            if (j == mid)
                continue;
            uint32_t x = s.nbr[(size_t)k * K + v];
            k++;
            if (x == GHM_NOT_FOUND)
                continue;
            if (!s.barrier[x]) {
                fill_mask |= 1u << ((k - 1) & 31);
                continue;
            }
            rg = 1;
            int d[3];
            cube_step(j, r, d);
            double len = __dsqrt_rn((double)(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
            double dot = __ddiv_rn(plane_dot(c, s.plane + 6 * (size_t)x), __dmul_rn(len, g.size));
            out += dot > t_out;
            in += dot < -t_in;
        }
        sd = in == out ? GHMI_VOXEL_NO_SEED : in > out ? LABEL_INSIDE : LABEL_OUTSIDE;
    }
    s.label[v] = lab;
    s.ring[v] = rg;
    s.seed[v] = sd;
    if (r == 1)
        s.mask[v] = fill_mask;
}

/* Appends v to queue[base + ...] and counts it in *cnt, one atomic per group of lanes. */
static __device__ __forceinline__ void push(uint32_t *queue, uint32_t base, uint32_t *cnt, uint32_t v)
{
    cg::coalesced_group grp = cg::coalesced_threads();
    uint32_t at = 0;
    if (grp.thread_rank() == 0)
        at = atomicAdd(cnt, (uint32_t)grp.size());
    at = grp.shfl(at, 0);
    queue[base + at + grp.thread_rank()] = v;
}

static __device__ __forceinline__ uint32_t ld_volatile(const uint32_t *p)
{
    return *(const volatile uint32_t *)p;
}

/* voxel.c's fill() for both clouds: per round, init (live seeds at level 0), the breadth-first
 * levels, labels, conflicts, and the decision (stop, or drop the conflicting seeds and go on).
 * Values written by other blocks are read with __ldcg (L2, never a stale L1 line) after the
 * grid barrier that orders them. The queue counts of levels L, L + 1 and L + 2 rotate through
 * ctl->count[c][0..2]: level L appends to slot (L + 1) % 3 while thread 0 clears slot
 * (L + 2) % 3, which nobody reads during level L. The pair counters alternate by round parity
 * for the same reason. Every decision is taken from values all threads read after a barrier,
 * so all threads take the same path to every grid.sync(). */
static __global__ __launch_bounds__(VOXEL_THREADS) void fill_kernel(
    const __grid_constant__ GhmVoxelPair p, int max_rounds, GhmVoxelFillControl *ctl,
    GhmVoxelInfo *info)
{
    cg::grid_group grid = cg::this_grid();
    const uint32_t tid = (uint32_t)grid.thread_rank(), stride = (uint32_t)grid.size();
    const uint32_t lane = threadIdx.x & 31, warp = tid >> 5, nwarps = stride >> 5;
    int active[2] = {p.s[0].K > 0, p.s[1].K > 0}, rounds[2] = {0, 0};
    uint32_t levels[2] = {0, 0};
    for (uint32_t round = 0; active[0] || active[1]; round++) {
        const uint32_t par = round & 1;
        if (tid == 0)
            ctl->pairs[0][par] = ctl->pairs[1][par] = 0;
        for (int c = 0; c < 2; c++) {
            if (!active[c])
                continue;
            const GhmVoxelSideArgs &s = p.s[c];
            for (uint32_t v = tid; v < s.K; v += stride) {
                int live = !s.barrier[v] && __ldcg(&s.seed[v]) != GHMI_VOXEL_NO_SEED;
                s.state[v] = live ? (unsigned long long)v : STATE_NONE;
                if (live)
                    push(s.queue, 0, &ctl->count[c][0], v);
            }
        }
        grid.sync();
        uint32_t start[2] = {0, 0}, end[2];
        for (int c = 0; c < 2; c++)
            end[c] = active[c] ? ld_volatile(&ctl->count[c][0]) : 0;
        for (uint32_t level = 0; start[0] < end[0] || start[1] < end[1]; level++) {
            const uint32_t f0 = end[0] - start[0], f1 = end[1] - start[1], slot = (level + 1) % 3;
            for (int c = 0; c < 2; c++)
                levels[c] += end[c] > start[c];
            for (uint32_t w = warp; w < f0 + f1; w += nwarps) {
                const int c = w >= f0;
                const GhmVoxelSideArgs &s = p.s[c];
                const uint32_t base = c ? end[1] : end[0];
                uint32_t *const cnt = c ? &ctl->count[1][slot] : &ctl->count[0][slot];
                const uint32_t v = __ldcg(&s.queue[c ? start[1] + (w - f0) : start[0] + w]);
                const unsigned long long cand =
                    (unsigned long long)(level + 1) << 32 | (uint32_t)__ldcg(&s.state[v]);
                if (s.radius == 1) {
                    const uint32_t m = __ldg(&s.mask[v]);
                    if (lane < 26 && (m >> lane & 1u)) {
                        uint32_t u = __ldg(&s.nbr[(size_t)lane * s.K + v]);
                        if (atomicMin(&s.state[u], cand) == STATE_NONE)
                            push(s.queue, base, cnt, u);
                    }
                } else {
                    const int wd = 2 * s.radius + 1, nn = wd * wd * wd - 1;
                    for (int k = (int)lane; k < nn; k += 32) {
                        uint32_t u = __ldg(&s.nbr[(size_t)k * s.K + v]);
                        if (u == GHM_NOT_FOUND || s.barrier[u])
                            continue;
                        if (atomicMin(&s.state[u], cand) == STATE_NONE)
                            push(s.queue, base, cnt, u);
                    }
                }
            }
            if (tid == 0)
                ctl->count[0][(level + 2) % 3] = ctl->count[1][(level + 2) % 3] = 0;
            grid.sync();
            for (int c = 0; c < 2; c++) {
                start[c] = end[c];
                end[c] += ld_volatile(&ctl->count[c][slot]);
            }
        }
        /* labels of the non-barrier voxels from the settled state */
        for (int c = 0; c < 2; c++) {
            if (!active[c])
                continue;
            const GhmVoxelSideArgs &s = p.s[c];
            for (uint32_t v = tid; v < s.K; v += stride) {
                if (s.barrier[v])
                    continue;
                unsigned long long st = __ldcg(&s.state[v]);
                s.label[v] = st == STATE_NONE ? (uint8_t)LABEL_UNKNOWN : __ldcg(&s.seed[(uint32_t)st]);
            }
        }
        grid.sync();
        /* voxel.c's find_conflicts(): inside next to outside away from the ring and barrier */
        for (int c = 0; c < 2; c++) {
            if (!active[c])
                continue;
            const GhmVoxelSideArgs &s = p.s[c];
            const int wd = 2 * s.radius + 1, nn = wd * wd * wd - 1;
            const uint32_t K = s.K, rounds_k = (K + stride - 1) / stride;
            for (uint32_t it = 0; it < rounds_k; it++) {
                uint32_t v = tid + it * stride;
                unsigned pairs = 0;
                uint8_t l = v < K ? __ldcg(&s.label[v]) : (uint8_t)LABEL_UNKNOWN;
                if (v < K && !s.ring[v] && !s.barrier[v] &&
                    (l == LABEL_INSIDE || l == LABEL_OUTSIDE)) {
                    for (int k = 0; k < nn; k++) {
                        uint32_t u = __ldg(&s.nbr[(size_t)k * K + v]);
                        if (u == GHM_NOT_FOUND || s.ring[u] || s.barrier[u])
                            continue;
                        uint8_t lu = __ldcg(&s.label[u]);
                        if (lu == l || (lu != LABEL_INSIDE && lu != LABEL_OUTSIDE))
                            continue;
                        s.drop[(uint32_t)__ldcg(&s.state[v])] = 1;
                        s.drop[(uint32_t)__ldcg(&s.state[u])] = 1;
                        pairs += u > v; /* each pair once */
                    }
                }
                pairs = __reduce_add_sync(0xFFFFFFFFu, pairs);
                if (lane == 0 && pairs)
                    atomicAdd(&ctl->pairs[c][par], (unsigned long long)pairs);
            }
        }
        grid.sync();
        /* the decision, the same in every thread */
        for (int c = 0; c < 2; c++) {
            if (!active[c])
                continue;
            const GhmVoxelSideArgs &s = p.s[c];
            unsigned long long pairs = *(const volatile unsigned long long *)&ctl->pairs[c][par];
            rounds[c]++;
            if (pairs == 0 || rounds[c] == max_rounds) {
                if (tid == 0) {
                    info->conflicts[c] = pairs;
                    info->rounds[c] = (uint32_t)rounds[c];
                    info->levels[c] = levels[c];
                }
                active[c] = 0;
                continue;
            }
            for (uint32_t v = tid; v < s.K; v += stride)
                if (__ldcg(&s.drop[v]))
                    s.seed[v] = GHMI_VOXEL_NO_SEED;
        }
        if (tid == 0)
            for (int c = 0; c < 2; c++)
                ctl->count[c][0] = ctl->count[c][1] = ctl->count[c][2] = 0;
        grid.sync();
    }
    /* label counts and live seeds, one atomic per warp and value */
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSideArgs &s = p.s[c];
        const uint32_t K = s.K, rounds_k = (K + stride - 1) / stride;
        for (uint32_t it = 0; it < rounds_k; it++) {
            uint32_t v = tid + it * stride;
            int lab = v < K ? (__ldcg(&s.label[v]) & 3) : -1;
            int live = v < K && __ldcg(&s.seed[v]) != GHMI_VOXEL_NO_SEED;
            for (int l = 0; l < 4; l++) {
                unsigned m = __ballot_sync(0xFFFFFFFFu, lab == l);
                if (lane == 0 && m)
                    atomicAdd(&info->label_count[c][l], (unsigned long long)__popc(m));
            }
            unsigned m = __ballot_sync(0xFFFFFFFFu, live);
            if (lane == 0 && m)
                atomicAdd(&info->seeds[c], (unsigned long long)__popc(m));
        }
    }
}

/* --- normal estimation (vision/voxel/normals.c) ------------------------------------------------- */

/* normals.c's add_shifted: the moments of a voxel whose centre lies at d from the sum's. */
static __device__ __forceinline__ void add_shifted(double acc[GHMI_MOMENTS], const double *m,
                                                   double n, const double d[3])
{
    double m0 = m[0], m1 = m[1], m2 = m[2];
    acc[0] = __dadd_rn(acc[0], __dadd_rn(m0, __dmul_rn(n, d[0])));
    acc[1] = __dadd_rn(acc[1], __dadd_rn(m1, __dmul_rn(n, d[1])));
    acc[2] = __dadd_rn(acc[2], __dadd_rn(m2, __dmul_rn(n, d[2])));
    acc[3] = __dadd_rn(acc[3], __dadd_rn(__dadd_rn(m[3], __dmul_rn(__dmul_rn(2.0, m0), d[0])),
                                         __dmul_rn(__dmul_rn(n, d[0]), d[0])));
    acc[4] = __dadd_rn(acc[4], __dadd_rn(__dadd_rn(__dadd_rn(m[4], __dmul_rn(m0, d[1])),
                                                   __dmul_rn(m1, d[0])),
                                         __dmul_rn(__dmul_rn(n, d[0]), d[1])));
    acc[5] = __dadd_rn(acc[5], __dadd_rn(__dadd_rn(__dadd_rn(m[5], __dmul_rn(m0, d[2])),
                                                   __dmul_rn(m2, d[0])),
                                         __dmul_rn(__dmul_rn(n, d[0]), d[2])));
    acc[6] = __dadd_rn(acc[6], __dadd_rn(__dadd_rn(m[6], __dmul_rn(__dmul_rn(2.0, m1), d[1])),
                                         __dmul_rn(__dmul_rn(n, d[1]), d[1])));
    acc[7] = __dadd_rn(acc[7], __dadd_rn(__dadd_rn(__dadd_rn(m[7], __dmul_rn(m1, d[2])),
                                                   __dmul_rn(m2, d[1])),
                                         __dmul_rn(__dmul_rn(n, d[1]), d[2])));
    acc[8] = __dadd_rn(acc[8], __dadd_rn(__dadd_rn(m[8], __dmul_rn(__dmul_rn(2.0, m2), d[2])),
                                         __dmul_rn(__dmul_rn(n, d[2]), d[2])));
}

/* One cyclic Jacobi rotation of normals.c's smallest_eigenvector on the pair (P, Q). */
template <int P, int Q>
static __device__ __forceinline__ void jacobi_rotate(double a[3][3], double v[3][3])
{
    if (a[P][Q] == 0.0)
        return;
    double theta = __ddiv_rn(__dsub_rn(a[Q][Q], a[P][P]), __dmul_rn(2.0, a[P][Q]));
    double t = __ddiv_rn(theta >= 0 ? 1.0 : -1.0,
                         __dadd_rn(fabs(theta), __dsqrt_rn(__dadd_rn(__dmul_rn(theta, theta), 1.0))));
    double c = __ddiv_rn(1.0, __dsqrt_rn(__dadd_rn(__dmul_rn(t, t), 1.0))), s = __dmul_rn(t, c);
#pragma unroll
    for (int k = 0; k < 3; k++) {
        double akp = a[k][P], akq = a[k][Q];
        a[k][P] = __dsub_rn(__dmul_rn(c, akp), __dmul_rn(s, akq));
        a[k][Q] = __dadd_rn(__dmul_rn(s, akp), __dmul_rn(c, akq));
    }
#pragma unroll
    for (int k = 0; k < 3; k++) {
        double apk = a[P][k], aqk = a[Q][k];
        a[P][k] = __dsub_rn(__dmul_rn(c, apk), __dmul_rn(s, aqk));
        a[Q][k] = __dadd_rn(__dmul_rn(s, apk), __dmul_rn(c, aqk));
    }
#pragma unroll
    for (int k = 0; k < 3; k++) {
        double vkp = v[k][P], vkq = v[k][Q];
        v[k][P] = __dsub_rn(__dmul_rn(c, vkp), __dmul_rn(s, vkq));
        v[k][Q] = __dadd_rn(__dmul_rn(s, vkp), __dmul_rn(c, vkq));
    }
}

/* normals.c's pca_normal, per voxel: the moments of the voxel and its hood neighbours, the
 * covariance, its smallest eigenvector (unoriented, unit, or zero under 3 points). */
static __global__ __launch_bounds__(VOXEL_THREADS) void pca_kernel(GhmVoxelGridArgs g,
                                                                   GhmVoxelSideArgs s)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x, K = s.K;
    if (v >= K)
        return;
    double acc[GHMI_MOMENTS] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, zero[3] = {0, 0, 0};
    double n = (double)s.counts[v];
    add_shifted(acc, s.moments + GHMI_MOMENTS * (size_t)v, n, zero);
    const int r = s.radius, w = 2 * r + 1, cube = w * w * w, mid = cube / 2;
    for (int j = 0, k = 0; j < cube; j++) {
        if (j == mid)
            continue;
        uint32_t u = s.nbr[(size_t)k * K + v];
        k++;
        if (u == GHM_NOT_FOUND)
            continue;
        int st[3];
        cube_step(j, r, st);
        double d[3] = {__dmul_rn((double)st[0], g.size), __dmul_rn((double)st[1], g.size),
                       __dmul_rn((double)st[2], g.size)};
        double nu = (double)s.counts[u];
        add_shifted(acc, s.moments + GHMI_MOMENTS * (size_t)u, nu, d);
        n = __dadd_rn(n, nu);
    }
    float *out = s.normals + 3 * (size_t)v;
    out[0] = out[1] = out[2] = 0.0f;
    if (n < 3)
        return;
    double m[3] = {__ddiv_rn(acc[0], n), __ddiv_rn(acc[1], n), __ddiv_rn(acc[2], n)};
    double a[3][3];
    a[0][0] = __dsub_rn(__ddiv_rn(acc[3], n), __dmul_rn(m[0], m[0]));
    a[0][1] = __dsub_rn(__ddiv_rn(acc[4], n), __dmul_rn(m[0], m[1]));
    a[0][2] = __dsub_rn(__ddiv_rn(acc[5], n), __dmul_rn(m[0], m[2]));
    a[1][1] = __dsub_rn(__ddiv_rn(acc[6], n), __dmul_rn(m[1], m[1]));
    a[1][2] = __dsub_rn(__ddiv_rn(acc[7], n), __dmul_rn(m[1], m[2]));
    a[2][2] = __dsub_rn(__ddiv_rn(acc[8], n), __dmul_rn(m[2], m[2]));
    a[1][0] = a[0][1];
    a[2][0] = a[0][2];
    a[2][1] = a[1][2];
    double vec[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int sweep = 0; sweep < 20; sweep++) {
        double off = __dadd_rn(__dadd_rn(__dmul_rn(a[0][1], a[0][1]), __dmul_rn(a[0][2], a[0][2])),
                               __dmul_rn(a[1][2], a[1][2]));
        double diag = __dadd_rn(__dadd_rn(__dmul_rn(a[0][0], a[0][0]), __dmul_rn(a[1][1], a[1][1])),
                                __dmul_rn(a[2][2], a[2][2]));
        if (off <= __dmul_rn(1e-30, diag) || off == 0.0)
            break;
        jacobi_rotate<0, 1>(a, vec);
        jacobi_rotate<0, 2>(a, vec);
        jacobi_rotate<1, 2>(a, vec);
    }
    int mi = 0;
    if (a[1][1] < a[mi][mi])
        mi = 1;
    if (a[2][2] < a[mi][mi])
        mi = 2;
    double e[3] = {vec[0][mi], vec[1][mi], vec[2][mi]};
    double len = __dsqrt_rn(__dadd_rn(__dadd_rn(__dmul_rn(e[0], e[0]), __dmul_rn(e[1], e[1])),
                                      __dmul_rn(e[2], e[2])));
    if (len > 0)
#pragma unroll
        for (int k = 0; k < 3; k++)
            out[k] = __double2float_rn(__ddiv_rn(e[k], len));
}

/* normals.c's centroid_sum, one level: thread j sums chunk j (GHMI_CENTROID_CHUNK terms) in
 * order; level 0 takes centre * count + first moment per voxel (and the count, exact in a
 * double), later levels the previous level's sums. 4 doubles per entry: x, y, z, points. */
static __global__ __launch_bounds__(VOXEL_THREADS) void centroid_kernel(
    GhmVoxelGridArgs g, GhmVoxelSideArgs s, const double *__restrict__ in, uint32_t n,
    double *__restrict__ out)
{
    uint32_t j = blockIdx.x * VOXEL_THREADS + threadIdx.x, C = GHMI_CENTROID_CHUNK;
    if (j >= (n + C - 1) / C)
        return;
    double p[4] = {0, 0, 0, 0};
    for (uint32_t i = j * C; i < n && i < (j + 1) * C; i++) {
        if (in) {
#pragma unroll
            for (int k = 0; k < 4; k++)
                p[k] = __dadd_rn(p[k], in[4 * (size_t)i + k]);
            continue;
        }
        double c[3], cnt = (double)s.counts[i];
        centre(g, s.keys[i], c);
#pragma unroll
        for (int k = 0; k < 3; k++)
            p[k] = __dadd_rn(p[k], __dadd_rn(__dmul_rn(c[k], cnt),
                                             s.moments[GHMI_MOMENTS * (size_t)i + k]));
        p[3] = __dadd_rn(p[3], cnt);
    }
#pragma unroll
    for (int k = 0; k < 4; k++)
        out[4 * (size_t)j + k] = p[k];
}

/* The centroid from the last level's sum (normals.c: sum / points, or the sum when empty). */
static __device__ __forceinline__ void centroid_of(const double *sum, double m[3])
{
    double total = sum[3] > 0 ? sum[3] : 1.0;
#pragma unroll
    for (int k = 0; k < 3; k++)
        m[k] = __ddiv_rn(sum[k], total);
}

static __device__ __forceinline__ uint32_t uf_find(volatile uint32_t *parent, uint32_t x)
{
    uint32_t cur = parent[x];
    if (cur != x) {
        uint32_t next, prev = x;
        while (cur > (next = parent[cur])) { /* path halving: parents are smaller */
            parent[prev] = next;
            prev = cur;
            cur = next;
        }
    }
    return cur;
}

static __device__ __forceinline__ uint32_t uf_root(const volatile uint32_t *parent, uint32_t x)
{
    uint32_t y;
    while ((y = parent[x]) != x)
        x = y;
    return x;
}

/* Per voxel: its squared distance from the centroid (normals.c's d2) and a union-find leaf. */
static __global__ __launch_bounds__(VOXEL_THREADS) void far_kernel(GhmVoxelGridArgs g,
                                                                   GhmVoxelSideArgs s,
                                                                   const double *sum,
                                                                   GhmVoxelEstimateSide e)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= s.K)
        return;
    double m[3], c[3];
    centroid_of(sum, m);
    centre(g, s.keys[v], c);
    double dx = __dsub_rn(c[0], m[0]), dy = __dsub_rn(c[1], m[1]), dz = __dsub_rn(c[2], m[2]);
    double d2 = __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
    e.far[v] = (unsigned long long)__double_as_longlong(d2); /* >= +0: bits order as values */
    e.parent[v] = v;
    e.best[v] = 0;
    e.best_id[v] = GHM_NOT_FOUND;
    e.level[v] = GHM_NOT_FOUND;
    e.key[v] = ~0ull;
}

/* Connected parts of the hood graph: a lock-free union-find (ECL-CC's hooking, the larger root
 * under the smaller), each edge from its smaller end. */
static __global__ __launch_bounds__(VOXEL_THREADS) void hook_kernel(GhmVoxelSideArgs s,
                                                                    GhmVoxelEstimateSide e)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x, K = s.K;
    if (v >= K)
        return;
    volatile uint32_t *parent = e.parent;
    const int w = 2 * s.radius + 1, nn = w * w * w - 1;
    for (int k = 0; k < nn; k++) {
        uint32_t u = s.nbr[(size_t)k * K + v];
        if (u == GHM_NOT_FOUND || u < v)
            continue;
        uint32_t a = uf_find(parent, v), b = uf_find(parent, u);
        while (a != b) {
            uint32_t hi = a > b ? a : b, lo = a > b ? b : a;
            uint32_t was = atomicCAS(e.parent + hi, hi, lo);
            if (was == hi)
                break;
            /* hi got a parent meanwhile: go on from there */
            if (a > b)
                a = was;
            else
                b = was;
            a = uf_find(parent, a);
            b = uf_find(parent, b);
        }
    }
}

/* Per voxel: its part, and the part's largest squared distance. */
static __global__ __launch_bounds__(VOXEL_THREADS) void part_kernel(GhmVoxelSideArgs s,
                                                                    GhmVoxelEstimateSide e)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= s.K)
        return;
    uint32_t r = uf_root(e.parent, v);
    e.comp[v] = r;
    atomicMax(e.best + r, e.far[v]);
}

/* normals.c's root of a part: the largest distance, ties to the smallest id. */
static __global__ __launch_bounds__(VOXEL_THREADS) void first_kernel(GhmVoxelSideArgs s,
                                                                     GhmVoxelEstimateSide e)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= s.K)
        return;
    uint32_t r = e.comp[v];
    if (e.far[v] == e.best[r])
        atomicMin(e.best_id + r, v);
}

static __device__ __forceinline__ float dot3f(const float *a, const float *b)
{
    return __fadd_rn(__fadd_rn(__fmul_rn(a[0], b[0]), __fmul_rn(a[1], b[1])), __fmul_rn(a[2], b[2]));
}

/* normals.c's orient() at a root: the normal turned away from the centroid; the reference is
 * the normal, or the outward direction for a zero normal. Roots go to the head of the queue. */
static __global__ __launch_bounds__(VOXEL_THREADS) void root_kernel(
    GhmVoxelGridArgs g, GhmVoxelSideArgs s, const double *sum, GhmVoxelEstimateSide e,
    uint32_t *roots)
{
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x;
    if (v >= s.K || e.best_id[e.comp[v]] != v)
        return;
    double m[3], c[3];
    centroid_of(sum, m);
    centre(g, s.keys[v], c);
    float out[3] = {__double2float_rn(__dsub_rn(c[0], m[0])),
                    __double2float_rn(__dsub_rn(c[1], m[1])),
                    __double2float_rn(__dsub_rn(c[2], m[2]))};
    float *n = s.normals + 3 * (size_t)v, *ref = e.ref + 3 * (size_t)v;
    if (dot3f(n, out) < 0)
        n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
    int has = n[0] != 0 || n[1] != 0 || n[2] != 0;
#pragma unroll
    for (int k = 0; k < 3; k++)
        ref[k] = has ? n[k] : out[k];
    e.level[v] = 0;
    e.queue[atomicAdd(roots, 1u)] = v;
}

/* The orientation's breadth-first search, level by level for both clouds, in the CPU's queue
 * order. The CPU's FIFO reaches a voxel first from the neighbour at the previous level that
 * comes first in the queue, and appends it after the children of the voxels before that
 * neighbour, in the neighbour's hood order; so the queue order of level L + 1 is (rank of the
 * parent at level L, step from the parent), and each level's segment of the queue is kept in
 * that order (rank = position in the segment). Per level, with grid barriers between:
 *  A. one warp per voxel v of the level: each neighbour u not reached before level L + 1 gets
 *     level L + 1 and key = min(key, rank(v) << 16 | step): its parent and place;
 *  B. the level in contiguous chunks per block and, within, per warp (a voxel at a time, a
 *     lane per step): the children of v (neighbours whose key names v and the step) counted
 *     per warp and block;
 *  C. the same chunks again: children appended at (blocks before + warps before + earlier
 *     children), each turned to agree with its parent's reference (normals.c's test in float),
 *     its reference set. Parts are independent (one root each), so their voxels may
 *     interleave in the queue without changing any part's order. */
static __global__ __launch_bounds__(VOXEL_THREADS) void orient_kernel(
    const __grid_constant__ GhmVoxelPair p, const __grid_constant__ GhmVoxelEstimate e,
    int do_a, int do_b, GhmVoxelOrientControl *ctl)
{
    cg::grid_group grid = cg::this_grid();
    const uint32_t lane = threadIdx.x & 31, wib = threadIdx.x >> 5, nb = gridDim.x;
    const uint32_t nwarps = (uint32_t)grid.size() >> 5, warp = (uint32_t)grid.thread_rank() >> 5;
    __shared__ uint32_t wcount[2][VOXEL_THREADS / 32];
    int on[2] = {do_a && p.s[0].K > 0, do_b && p.s[1].K > 0};
    uint32_t start[2] = {0, 0}, end[2];
    for (int c = 0; c < 2; c++)
        end[c] = on[c] ? *(volatile uint32_t *)&ctl->roots[c] : 0;
    for (uint32_t L = 0; start[0] < end[0] || start[1] < end[1]; L++) {
        const uint32_t f0 = end[0] - start[0], f = f0 + end[1] - start[1];
        /* A */
        for (uint32_t i = warp; i < f; i += nwarps) {
            const int c = i >= f0;
            const GhmVoxelSideArgs &s = p.s[c];
            const GhmVoxelEstimateSide &es = e.s[c];
            const uint32_t r = c ? i - f0 : i, v = __ldcg(&es.queue[start[c] + r]);
            const int wd = 2 * s.radius + 1, nn = wd * wd * wd - 1;
            for (int k = (int)lane; k < nn; k += 32) {
                uint32_t u = __ldg(&s.nbr[(size_t)k * s.K + v]);
                if (u == GHM_NOT_FOUND)
                    continue;
                uint32_t lu = __ldcg(&es.level[u]);
                if (lu != GHM_NOT_FOUND && lu != L + 1)
                    continue;
                if (lu == GHM_NOT_FOUND)
                    es.level[u] = L + 1;
                atomicMin(&es.key[u], (unsigned long long)r << 16 | (unsigned)k);
            }
        }
        grid.sync();
        /* B and C: block b takes the chunk [b ch, (b + 1) ch) of the level, its warps in turn */
        const uint32_t ch = (f + nb - 1) / nb, blo = min(f, blockIdx.x * ch),
                       bhi = min(f, blo + ch), sub = (bhi - blo + VOXEL_THREADS / 32 - 1) /
                                                     (VOXEL_THREADS / 32),
                       lo = min(bhi, blo + wib * sub), hi = min(bhi, lo + sub);
        uint32_t base[2] = {0, 0}, total[2] = {0, 0};
        for (int phase = 0; phase < 2; phase++) {
            uint32_t mine[2] = {base[0], base[1]};
            if (phase == 1) { /* my block's place: the counts of the blocks before */
                if (lane == 0) {
                    uint32_t before[2] = {0, 0};
                    for (uint32_t x = 0; x < wib; x++)
                        before[0] += wcount[0][x], before[1] += wcount[1][x];
                    mine[0] += before[0], mine[1] += before[1];
                }
                mine[0] = __shfl_sync(0xFFFFFFFFu, mine[0], 0);
                mine[1] = __shfl_sync(0xFFFFFFFFu, mine[1], 0);
            }
            uint32_t got[2] = {0, 0};
            for (uint32_t i = lo; i < hi; i++) {
                const int c = i >= f0;
                const GhmVoxelSideArgs &s = p.s[c];
                const GhmVoxelEstimateSide &es = e.s[c];
                const uint32_t r = c ? i - f0 : i, v = __ldcg(&es.queue[start[c] + r]);
                const int wd = 2 * s.radius + 1, nn = wd * wd * wd - 1;
                float rv[3];
                if (phase == 1)
                    for (int q = 0; q < 3; q++)
                        rv[q] = __ldcg(&es.ref[3 * (size_t)v + q]);
                for (int kb = 0; kb < nn; kb += 32) {
                    const int k = kb + (int)lane;
                    uint32_t u = k < nn ? __ldg(&s.nbr[(size_t)k * s.K + v]) : GHM_NOT_FOUND;
                    bool child = u != GHM_NOT_FOUND && __ldcg(&es.level[u]) == L + 1 &&
                                 __ldcg(&es.key[u]) == ((unsigned long long)r << 16 | (unsigned)k);
                    unsigned bal = __ballot_sync(0xFFFFFFFFu, child);
                    if (phase == 1 && child) {
                        uint32_t at = end[c] + mine[c] + got[c] + __popc(bal & ((1u << lane) - 1u));
                        es.queue[at] = u;
                        float *nu = s.normals + 3 * (size_t)u, *ru = es.ref + 3 * (size_t)u;
                        float n3[3] = {nu[0], nu[1], nu[2]};
                        if (dot3f(n3, rv) < 0) {
                            n3[0] = -n3[0], n3[1] = -n3[1], n3[2] = -n3[2];
                            nu[0] = n3[0], nu[1] = n3[1], nu[2] = n3[2];
                        }
                        int has = n3[0] != 0 || n3[1] != 0 || n3[2] != 0;
                        for (int q = 0; q < 3; q++)
                            ru[q] = has ? n3[q] : rv[q];
                    }
                    got[c] += (uint32_t)__popc(bal);
                }
            }
            if (phase == 0) {
                if (lane == 0)
                    wcount[0][wib] = got[0], wcount[1][wib] = got[1];
                __syncthreads();
                if (threadIdx.x == 0) {
                    uint32_t s0 = 0, s1 = 0;
                    for (int x = 0; x < VOXEL_THREADS / 32; x++)
                        s0 += wcount[0][x], s1 += wcount[1][x];
                    ctl->bsum[0][blockIdx.x] = s0;
                    ctl->bsum[1][blockIdx.x] = s1;
                }
                grid.sync();
                /* every warp: the blocks before mine, and all blocks (the level's size) */
                for (uint32_t x = lane; x < nb; x += 32) {
                    uint32_t a = __ldcg(&ctl->bsum[0][x]), b = __ldcg(&ctl->bsum[1][x]);
                    total[0] += a, total[1] += b;
                    if (x < blockIdx.x)
                        base[0] += a, base[1] += b;
                }
                for (int o = 16; o > 0; o >>= 1) {
                    total[0] += __shfl_xor_sync(0xFFFFFFFFu, total[0], o);
                    total[1] += __shfl_xor_sync(0xFFFFFFFFu, total[1], o);
                    base[0] += __shfl_xor_sync(0xFFFFFFFFu, base[0], o);
                    base[1] += __shfl_xor_sync(0xFFFFFFFFu, base[1], o);
                }
            }
        }
        grid.sync();
        for (int c = 0; c < 2; c++) {
            start[c] = end[c];
            end[c] += total[c];
        }
    }
}

/* --- launchers ---------------------------------------------------------------------------- */

static int check_pair(const GhmVoxelPair *p)
{
    if (!p)
        return GHM_ERR_INVALID;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSideArgs *s = &p->s[c];
        if (s->radius < 1 || s->radius > GHMI_MAX_RADIUS)
            return GHM_ERR_INVALID;
        if (s->K && (!s->keys || !s->counts || !s->normals || !s->label || !s->nbr || !s->cross ||
                     !s->barrier || !s->plane || !s->ring || !s->seed || !s->drop || !s->state ||
                     !s->queue || (s->radius == 1 && !s->mask)))
            return GHM_ERR_INVALID;
    }
    return GHM_OK;
}

static uint32_t max_k(const GhmVoxelPair *p) { return p->s[0].K > p->s[1].K ? p->s[0].K : p->s[1].K; }

extern "C" int ghm_cuda_voxel_keys(GhmContext *ctx, const float *xyz, size_t na, size_t nb,
                                   const GhmVoxelPose *pose, const GhmVoxelGridArgs *g,
                                   uint32_t *ckey, uint32_t *idx, GhmVoxelInfo *info)
{
    size_t n = na + nb;
    if (!ctx || !pose || !g || !info || (n && (!xyz || !ckey || !idx)) || g->key_bits < 0 ||
        g->key_bits > 30)
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (n == 0)
        return GHM_OK;
    keys_kernel<<<blocks_for(n), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        xyz, (uint32_t)na, (uint32_t)n, *pose, *g, ckey, idx, info);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_sort(GhmContext *ctx, void *temp, size_t *temp_bytes,
                                   uint32_t *keys[2], uint32_t *vals[2], size_t n, int end_bit,
                                   int *which)
{
    if (!ctx || !temp_bytes || !keys || !vals || !which || end_bit < 1 || end_bit > 32)
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    *which = 0;
    if (n == 0) {
        if (!temp)
            *temp_bytes = 1;
        return GHM_OK;
    }
    cub::DoubleBuffer<uint32_t> k(keys[0], keys[1]), v(vals[0], vals[1]);
    int ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(temp, *temp_bytes, k, v, (int)n, 0, end_bit,
                                                       ghm_cuda_stream(ctx)));
    *which = k.selector;
    return ret;
}

extern "C" int ghm_cuda_voxel_heads(GhmContext *ctx, void *temp, size_t *temp_bytes,
                                    const uint32_t *skey, size_t n, size_t na, uint32_t *head,
                                    GhmVoxelInfo *info)
{
    if (!ctx || !temp_bytes || !info || (n && (!skey || !head)) || na > n)
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (n == 0) {
        if (!temp)
            *temp_bytes = 1;
        return GHM_OK;
    }
    cudaStream_t st = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cub::DeviceSelect::If(temp, *temp_bytes, thrust::counting_iterator<uint32_t>(0),
                                             head, &info->runs, (int)n, HeadOf{skey}, st));
    if (ret < 0 || !temp)
        return ret;
    split_kernel<<<1, 32, 0, st>>>(head, (uint32_t)na, info);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_build(GhmContext *ctx, const uint32_t *skey, const uint32_t *sidx,
                                    const uint32_t *head, size_t n, size_t runs, size_t runs_a,
                                    const float *xyz, const float *pnormals, const GhmVoxelPose *pose,
                                    const GhmVoxelGridArgs *g, GhmVoxelTable table,
                                    const GhmVoxelPair *p)
{
    if (!ctx || !pose || !g || check_pair(p) < 0 || runs_a > runs || runs > n ||
        (runs && (!skey || !sidx || !head || !xyz || !pnormals || !table.slots)))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (runs == 0)
        return GHM_OK;
    build_kernel<<<blocks_for(runs), VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        skey, sidx, head, (uint32_t)n, (uint32_t)runs, (uint32_t)runs_a, xyz, pnormals, *pose, *g,
        table, *p);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_neighbours(GhmContext *ctx, GhmVoxelTable table,
                                         const GhmVoxelGridArgs *g, const GhmVoxelPair *p,
                                         const int do_side[2], GhmVoxelInfo *info)
{
    if (!ctx || !g || !do_side || !info || check_pair(p) < 0 || !table.slots)
        return GHM_ERR_INVALID;
    uint32_t K = 0;
    for (int c = 0; c < 2; c++)
        if (do_side[c] && p->s[c].K > K)
            K = p->s[c].K;
    if (K == 0)
        return GHM_OK;
    dim3 grid(blocks_for(K), 2);
    neighbours_kernel<<<grid, VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(table, *g, *p, do_side[0],
                                                                      do_side[1], info);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_contact(GhmContext *ctx, GhmVoxelTable table,
                                      const GhmVoxelGridArgs *g, int rho, const GhmVoxelPair *p)
{
    if (!ctx || !g || rho < 0 || rho > GHMI_MAX_RADIUS || check_pair(p) < 0 || !table.slots)
        return GHM_ERR_INVALID;
    uint32_t K = max_k(p);
    if (K == 0)
        return GHM_OK;
    dim3 grid(blocks_for(K), 2);
    contact_kernel<<<grid, VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(table, *g, rho, *p);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_classify(GhmContext *ctx, const GhmVoxelGridArgs *g, double t_out,
                                       double t_in, const GhmVoxelPair *p)
{
    if (!ctx || !g || check_pair(p) < 0)
        return GHM_ERR_INVALID;
    uint32_t K = max_k(p);
    if (K == 0)
        return GHM_OK;
    dim3 grid(blocks_for(K), 2);
    classify_kernel<<<grid, VOXEL_THREADS, 0, ghm_cuda_stream(ctx)>>>(*g, t_out, t_in, *p);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_voxel_fill(GhmContext *ctx, int max_rounds, const GhmVoxelPair *p,
                                   GhmVoxelFillControl *ctl, GhmVoxelInfo *info)
{
    if (!ctx || max_rounds < 1 || !ctl || !info || check_pair(p) < 0)
        return GHM_ERR_INVALID;
    if (p->s[0].K > 0xFFFFFFFEu || p->s[1].K > 0xFFFFFFFEu)
        return GHM_ERR_TOO_LARGE;
    uint64_t total = (uint64_t)p->s[0].K + p->s[1].K;
    if (total == 0)
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
    /* Enough warps for a level's queue (one warp per queued voxel), few enough blocks that the
     * grid barrier stays cheap: one block per SM up to a million voxels, two beyond (on the
     * H100: 2 x 160k points, 58k voxels: 0.39 ms with 132 blocks, 0.43 with 223; 2 x 10M
     * points, 3.7M voxels: 8.6 ms with 264 blocks, 11.0 with 132, 10.0 with 528). */
    sms = sms > 0 ? sms : 1;
    uint64_t most = (uint64_t)(per_sm > 0 ? per_sm : 1) * (uint64_t)sms;
    uint64_t want = (uint64_t)sms * (total < 1000000 ? 1 : 2);
    uint64_t small = (total + VOXEL_THREADS - 1) / VOXEL_THREADS;
    want = want < small ? want : small;
    unsigned nblocks = (unsigned)(want < most ? want : most);
    GhmVoxelPair pair = *p;
    void *args[] = {&pair, &max_rounds, &ctl, &info};
    return GHM_CUDA(cudaLaunchCooperativeKernel((const void *)fill_kernel, nblocks, VOXEL_THREADS,
                                                args, 0, ghm_cuda_stream(ctx)));
}

extern "C" int ghm_cuda_voxel_normals(GhmContext *ctx, const GhmVoxelGridArgs *g,
                                      const GhmVoxelPair *p, const int do_side[2],
                                      const GhmVoxelEstimate *e, GhmVoxelOrientControl *ctl)
{
    if (!ctx || !g || !do_side || !e || !ctl || check_pair(p) < 0)
        return GHM_ERR_INVALID;
    int on[2] = {0, 0};
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSideArgs *s = &p->s[c];
        const GhmVoxelEstimateSide *es = &e->s[c];
        on[c] = do_side[c] && s->K > 0;
        if (on[c] && (!s->moments || !es->part || !es->far || !es->best || !es->key ||
                      !es->parent || !es->comp || !es->best_id || !es->level || !es->queue ||
                      !es->ref))
            return GHM_ERR_INVALID;
        if (s->K > 0xFFFFFFFEu)
            return GHM_ERR_TOO_LARGE;
    }
    if (!on[0] && !on[1])
        return GHM_OK;
    cudaStream_t st = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cudaMemsetAsync(ctl, 0, sizeof *ctl, st));
    for (int c = 0; c < 2 && ret == GHM_OK; c++) {
        if (!on[c])
            continue;
        const GhmVoxelSideArgs &s = p->s[c];
        const GhmVoxelEstimateSide &es = e->s[c];
        const uint32_t K = s.K, C = GHMI_CENTROID_CHUNK;
        pca_kernel<<<blocks_for(K), VOXEL_THREADS, 0, st>>>(*g, s);
        ret = GHM_CUDA_LAUNCH();
        /* the centroid's levels, ping-pong in part: [0, half) and [half, 2 half) */
        size_t half = 4 * ((size_t)K / C + 2);
        const double *in = NULL;
        uint32_t n = K;
        double *out = es.part;
        do {
            uint32_t m = (n + C - 1) / C;
            if (ret == GHM_OK) {
                centroid_kernel<<<blocks_for(m), VOXEL_THREADS, 0, st>>>(*g, s, in, n, out);
                ret = GHM_CUDA_LAUNCH();
            }
            in = out;
            out = out == es.part ? es.part + half : es.part;
            n = m;
        } while (n > 1);
        const double *sum = in;
        if (ret == GHM_OK) {
            far_kernel<<<blocks_for(K), VOXEL_THREADS, 0, st>>>(*g, s, sum, es);
            ret = GHM_CUDA_LAUNCH();
        }
        if (ret == GHM_OK) {
            hook_kernel<<<blocks_for(K), VOXEL_THREADS, 0, st>>>(s, es);
            ret = GHM_CUDA_LAUNCH();
        }
        if (ret == GHM_OK) {
            part_kernel<<<blocks_for(K), VOXEL_THREADS, 0, st>>>(s, es);
            ret = GHM_CUDA_LAUNCH();
        }
        if (ret == GHM_OK) {
            first_kernel<<<blocks_for(K), VOXEL_THREADS, 0, st>>>(s, es);
            ret = GHM_CUDA_LAUNCH();
        }
        if (ret == GHM_OK) {
            root_kernel<<<blocks_for(K), VOXEL_THREADS, 0, st>>>(*g, s, sum, es, &ctl->roots[c]);
            ret = GHM_CUDA_LAUNCH();
        }
    }
    if (ret < 0)
        return ret;
    int dev = 0, sms = 0, per_sm = 0;
    ret = GHM_CUDA(cudaGetDevice(&dev));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, orient_kernel,
                                                                     VOXEL_THREADS, 0));
    if (ret < 0)
        return ret;
    /* one block per SM (a barrier per phase of every level: few blocks keep it cheap) */
    uint64_t total = (uint64_t)(on[0] ? p->s[0].K : 0) + (on[1] ? p->s[1].K : 0);
    uint64_t want = (uint64_t)(sms > 0 ? sms : 1);
    uint64_t most = (uint64_t)(per_sm > 0 ? per_sm : 1) * want;
    uint64_t small = (total + VOXEL_THREADS - 1) / VOXEL_THREADS;
    want = want < small ? want : small;
    want = want < most ? want : most;
    want = want < GHMI_VOXEL_ORIENT_BLOCKS ? want : GHMI_VOXEL_ORIENT_BLOCKS;
    GhmVoxelPair pair = *p;
    GhmVoxelEstimate est = *e;
    int do_a = on[0], do_b = on[1];
    void *args[] = {&pair, &est, &do_a, &do_b, &ctl};
    return GHM_CUDA(cudaLaunchCooperativeKernel((const void *)orient_kernel, (unsigned)want,
                                                VOXEL_THREADS, args, 0, st));
}
