/*
 * normals.cu - normal estimation on the GPU for a cloud without normals: the device twin of
 * vision/voxel/normals.c, bit for bit, driven by vision/voxel/voxel_device.c through the normals
 * op (the point moments per voxel come from voxelize.cu's build_kernel).
 *
 * Kernels (256 threads per block, one thread per voxel unless said otherwise):
 *  pca_kernel         moments of the voxel and its neighbours, covariance, Jacobi.
 *  centroid_kernel    one thread per chunk of GHMI_CENTROID_CHUNK, per level (normals.c's order).
 *  far/hook/part/first_kernel  distance from the centroid; union-find of the connected parts;
 *                     each part's root (farthest, ties to the smallest id).
 *  root_kernel        roots turned away from the centroid, queued as level 0.
 *  orient_kernel      the CPU's breadth-first orientation, one cooperative launch for both
 *                     clouds, the queue kept in the CPU's order level by level (3 grid
 *                     barriers per level).
 */
#include <cooperative_groups.h>

#include "voxel_kernels.cuh"

namespace cg = cooperative_groups;

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
                         __dadd_rn(fabs(theta),
                                   __dsqrt_rn(__dadd_rn(__dmul_rn(theta, theta), 1.0))));
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
    return __fadd_rn(__fadd_rn(__fmul_rn(a[0], b[0]), __fmul_rn(a[1], b[1])),
                     __fmul_rn(a[2], b[2]));
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


/* --- the launcher ------------------------------------------------------------------------- */

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
    /* one block per SM (a barrier per phase of every level: few blocks keep it cheap) */
    uint64_t total = (uint64_t)(on[0] ? p->s[0].K : 0) + (on[1] ? p->s[1].K : 0);
    uint64_t small = (total + VOXEL_THREADS - 1) / VOXEL_THREADS;
    int sms = 1;
    unsigned want = 0;
    ret = sm_count(ctx, &sms);
    if (ret == GHM_OK)
        ret = cooperative_blocks(ctx, (const void *)orient_kernel,
                                 (uint64_t)sms < small ? (uint64_t)sms : small, &want);
    if (ret < 0)
        return ret;
    want = want < GHMI_VOXEL_ORIENT_BLOCKS ? want : GHMI_VOXEL_ORIENT_BLOCKS;
    GhmVoxelPair pair = *p;
    GhmVoxelEstimate est = *e;
    int do_a = on[0], do_b = on[1];
    void *args[] = {&pair, &est, &do_a, &do_b, &ctl};
    return GHM_CUDA(cudaLaunchCooperativeKernel((const void *)orient_kernel, want, VOXEL_THREADS,
                                                args, 0, st));
}
