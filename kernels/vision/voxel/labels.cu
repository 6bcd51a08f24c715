/*
 * labels.cu - the voxel labels on the GPU: the device twin of vision/voxel/labels.c (classify,
 * fill with conflict rounds), driven by vision/voxel/voxel_device.c through GhmVoxelOps. Both
 * clouds in the same launch (blockIdx.y = cloud, or both in turn in the cooperative fill).
 *
 * Kernels (256 threads per block):
 *  classify_kernel    per voxel: barrier label, or ring flag and seed vote from its neighbours;
 *                     the fill mask (neighbours that are occupied and not barrier, radius 1).
 *  fill_kernel        every round of the fill for both clouds in one cooperative launch:
 *                     a level-synchronous breadth-first search (a thread per queued voxel at
 *                     radius 1, a warp at larger radii, a lane per neighbour there; state =
 *                     level << 32 | seed id lowered with atomicMin,
 *                     so a voxel ends with the nearest seed, ties to the smallest id, whatever
 *                     the order of the atomics: labels.c's labels), then labels, the conflict
 *                     test, dropped seeds and the next round (a volume's: its orphans filled
 *                     again by pull passes, pull_orphans), with grid-wide barriers between
 *                     phases and levels and no host round trip; finally label and seed counts.
 */
#include <cooperative_groups.h>

#include "kernels/hashing/warp_take.cuh"
#include "voxel_kernels.cuh"

namespace cg = cooperative_groups;

/* The sum over the full warp: one redux instruction from sm_80, shuffles before (the build
 * carries compute_75 PTX for older GPUs, see CMakeLists.txt). */
static __device__ __forceinline__ unsigned warp_sum(unsigned v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_add_sync(0xFFFFFFFFu, v);
#else
    for (int off = 16; off > 0; off >>= 1)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, off);
    return v;
#endif
}

#define STATE_NONE 0xFFFFFFFFFFFFFFFFull

/* Seed votes of voxel v's neighbours (labels.c's seed_vote): what neighbour x, the hood's k-th
 * (step j of the cube at radius r), adds to v's ring flag, fill mask and votes. */
struct Votes {
    double c[3]; /* v's centre, once a plane needs it */
    uint8_t ring;
    uint32_t fill_mask;
    int in, out;
};

static __device__ __forceinline__ void vote(const GhmVoxelGridArgs &g, double t_out, double t_in,
                                            const GhmVoxelSideArgs &s, uint32_t v, uint32_t x,
                                            int j, int k, int r, Votes &t)
{
    if (x == GHM_NOT_FOUND)
        return;
    if (!s.barrier[x]) {
        t.fill_mask |= 1u << (k & 31);
        return;
    }
    if (!t.ring)
        centre(g, s.keys[v], t.c);
    t.ring = 1;
    int d[3];
    cube_step(j, r, d);
    double len = __dsqrt_rn((double)(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    double dot = __ddiv_rn(plane_dot(t.c, s.plane + 6 * (size_t)x), __dmul_rn(len, g.size));
    t.out += dot > t_out;
    t.in += dot < -t_in;
}

static __global__ __launch_bounds__(VOXEL_THREADS) void classify_kernel(
    GhmVoxelGridArgs g, double t_out, double t_in, const __grid_constant__ GhmVoxelPair p)
{
    const GhmVoxelSideArgs &s = p.s[blockIdx.y];
    uint32_t v = blockIdx.x * VOXEL_THREADS + threadIdx.x, K = s.K;
    if (v >= K)
        return;
    Votes t = {{0, 0, 0}, 0, 0, 0, 0};
    uint8_t lab = LABEL_UNKNOWN, sd = GHMI_VOXEL_NO_SEED;
    const int r = s.radius;
    const bool barrier = s.barrier[v];
    if (barrier) {
        if (s.cross[v] != GHM_NOT_FOUND) {
            lab = LABEL_INTERSECTION;
        } else {
            centre(g, s.keys[v], t.c);
            double d = plane_dot(t.c, s.plane + 6 * (size_t)v);
            lab = d > 0 ? LABEL_OUTSIDE : d < 0 ? LABEL_INSIDE : LABEL_UNKNOWN;
        }
    } else if (!s.nbr) { /* a side given as rows at radius 1 */
        uint32_t u[26];
        nbr26(s, v, ~0u, u);
#pragma unroll
        for (int k = 0; k < 26; k++)
            vote(g, t_out, t_in, s, v, u[k], k < 13 ? k : k + 1, k, 1, t);
    } else {
        int w = 2 * r + 1, cube = w * w * w, mid = cube / 2, k = 0;
        for (int j = 0; j < cube; j++) {
            if (j == mid)
                continue;
            vote(g, t_out, t_in, s, v, s.nbr[(size_t)k * K + v], j, k, r, t);
            k++;
        }
    }
    if (!barrier)
        sd = t.in == t.out ? GHMI_VOXEL_NO_SEED : t.in > t.out ? LABEL_INSIDE : LABEL_OUTSIDE;
    s.label[v] = lab;
    s.ring[v] = t.ring;
    s.seed[v] = sd;
    if (r == 1)
        s.mask[v] = t.fill_mask;
}

/* Appends v to queue[base + ...] and counts it in *cnt, one atomic per group of lanes. */
static __device__ __forceinline__ void push(uint32_t *queue, uint32_t base, uint32_t *cnt,
                                            uint32_t v)
{
    queue[base + ghmi_warp_take(cnt)] = v;
}

static __device__ __forceinline__ uint32_t ld_volatile(const uint32_t *p)
{
    return *(const volatile uint32_t *)p;
}

/* One breadth-first level of a cloud: each queued voxel v (queue[start, end)) lowers the state
 * of each fill neighbour u to cand = level + 1 << 32 | v's seed by an atomicMin; a u whose state
 * was none is queued for the next level (at queue[end ...], counted in *cnt). */

/* A warp per queued voxel, a lane per neighbour (up to 124 at radius 2; the fill mask's 26 at
 * radius 1), over the first f[c] voxels of each cloud's level, numbered together (cloud 0's
 * then cloud 1's), so that two small levels run side by side. VOLUME: a side may be given as
 * rows (nbr_at). */
template <bool VOLUME>
static __device__ void level_by_warps(const GhmVoxelPair &p, const uint32_t (&start)[2],
                                      const uint32_t (&end)[2], const uint32_t (&f)[2],
                                      uint32_t level, uint32_t slot, GhmVoxelFillControl *ctl,
                                      uint32_t warp, uint32_t nwarps, uint32_t lane)
{
    for (uint32_t w = warp; w < f[0] + f[1]; w += nwarps) {
        const int c = w >= f[0];
        const GhmVoxelSideArgs &s = p.s[c];
        const uint32_t base = c ? end[1] : end[0];
        uint32_t *const cnt = c ? &ctl->count[1][slot] : &ctl->count[0][slot];
        const uint32_t v = __ldcg(&s.queue[c ? start[1] + (w - f[0]) : start[0] + w]);
        const unsigned long long cand =
            (unsigned long long)(level + 1) << 32 | (uint32_t)__ldcg(&s.state[v]);
        if (s.radius == 1) {
            const uint32_t m = __ldg(&s.mask[v]);
            if (lane < 26 && (m >> lane & 1u)) {
                uint32_t u = VOLUME ? nbr_at(s, v, (int)lane)
                                    : __ldg(&s.nbr[(size_t)lane * s.K + v]);
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
}

/* At radius 1, a level of more voxels than warps: a thread per queued voxel, its (up to 26)
 * atomics issued together and the neighbours they reached first queued after, one atomic per
 * warp. By warps, each warp waited for its lanes' atomics before their pushes, voxel after voxel:
 * a 0.9 M-voxel probe at 256^3 (27 levels of ~33 k voxels) filled in 1.8 ms on the H200, 1.26
 * so. Lane l of warp w takes entry w + nwarps (l + 32 t) in turn t, so that the level's voxels
 * are spread over all the warps; every lane of a warp takes the same turns, for the warp-wide
 * scan. A surface's levels (a few hundred voxels) stay with the warps: a thread issuing 26
 * loads and atomics one after another made them 1.6x slower (the voxel mode's fill of the bunny
 * pair at 256^3: 0.80 -> 1.29 ms). */
static __device__ void level_by_threads(const GhmVoxelSideArgs &s, uint32_t start, uint32_t end,
                                        uint32_t level, uint32_t *cnt, uint32_t warp,
                                        uint32_t nwarps, uint32_t lane)
{
    const uint64_t n = end - start;
    for (uint64_t turn = warp; turn < n; turn += 32 * (uint64_t)nwarps) {
        const uint64_t i = turn + (uint64_t)nwarps * lane;
        uint32_t fresh = 0, v = 0;
        if (i < n) {
            v = __ldcg(&s.queue[start + i]);
            const unsigned long long cand =
                (unsigned long long)(level + 1) << 32 | (uint32_t)__ldcg(&s.state[v]);
            const uint32_t m = __ldg(&s.mask[v]);
            /* loads, atomics and their tests in separate passes: a test in the branch of its
             * atomic would wait for it before the next is issued */
            uint32_t u[26];
            unsigned long long was[26];
            nbr26(s, v, m, u);
            /* Most of a voxel's neighbours were reached at this level or before (a state <=
             * cand): the states are read first and the atomic issued only above cand. States
             * only fall, so a skipped atomic would have changed nothing and its u was not
             * none. The 0.9 M-voxel probe's fill 0.84 -> 0.73 ms with its download (H200);
             * on the surfaces' levels, by warps, the read before the atomic made the voxel
             * mode's fills 6 % slower, so they go straight to the atomic. */
#pragma unroll
            for (int k = 0; k < 26; k++)
                was[k] = u[k] != GHM_NOT_FOUND ? __ldcg(&s.state[u[k]]) : 0;
#pragma unroll
            for (int k = 0; k < 26; k++)
                was[k] = was[k] > cand ? atomicMin(&s.state[u[k]], cand) : 0;
#pragma unroll
            for (int k = 0; k < 26; k++)
                fresh |= (uint32_t)(was[k] == STATE_NONE) << k;
        }
        const uint32_t got = __popc(fresh);
        uint32_t incl = got;
        for (int off = 1; off < 32; off <<= 1) {
            uint32_t t = __shfl_up_sync(0xFFFFFFFFu, incl, off);
            incl += lane >= (uint32_t)off ? t : 0;
        }
        uint32_t at = 0;
        if (lane == 31 && incl)
            at = atomicAdd(cnt, incl);
        at = __shfl_sync(0xFFFFFFFFu, at, 31) + incl - got;
        for (; fresh; fresh &= fresh - 1)
            s.queue[end + at++] = nbr_at(s, v, __ffs(fresh) - 1);
    }
}

/* labels.c's conflicts_at() of a voxel v (not ring, not barrier, its label lv inside or outside,
 * marked GHMI_VOXEL_ORPHAN or not where MARKS) at radius 1: the pairs (v, u) with u a fill
 * neighbour (v's mask: occupied, not barrier), not ring, and labelled the other of inside /
 * outside; both seeds dropped, the pairs that are v's counted (u > v, or v marked and u not). Every
 * neighbour's index loaded first, then their rings and labels, then the tests, so that a voxel's
 * reads are in flight together. One neighbour after another, the test took half a millisecond
 * of a 0.9 M-voxel probe's fill (globaltimer, H200, 2026-11-30); so, the fill with its download
 * 1.25 -> 0.84 ms. */
template <bool MARKS>
static __device__ unsigned conflicts_by_mask(const GhmVoxelSideArgs &s, uint32_t v, uint8_t lv)
{
    const uint8_t l = MARKS ? lv & ~GHMI_VOXEL_ORPHAN : lv;
    const uint32_t m = __ldg(&s.mask[v]);
    uint32_t u[26];
    uint8_t lu[26], rg[26];
    nbr26(s, v, m, u);
#pragma unroll
    for (int k = 0; k < 26; k++) {
        lu[k] = u[k] != GHM_NOT_FOUND ? __ldcg(&s.label[u[k]]) : l;
        rg[k] = u[k] != GHM_NOT_FOUND ? __ldg(&s.ring[u[k]]) : 1;
    }
    uint32_t hit = 0, marked = 0;
#pragma unroll
    for (int k = 0; k < 26; k++) {
        const uint8_t m = MARKS ? lu[k] & ~GHMI_VOXEL_ORPHAN : lu[k];
        hit |= (uint32_t)(!rg[k] && m != l && (m == LABEL_INSIDE || m == LABEL_OUTSIDE)) << k;
        marked |= (uint32_t)(lu[k] != m) << k;
    }
    unsigned pairs = 0;
    for (; hit; hit &= hit - 1) {
        const int k = __ffs(hit) - 1;
        uint32_t w = nbr_at(s, v, k);
        s.drop[(uint32_t)__ldcg(&s.state[v])] = 1;
        s.drop[(uint32_t)__ldcg(&s.state[w])] = 1;
        pairs += w > v || (lv != l && !(marked >> k & 1u));
    }
    return pairs;
}

/* labels.c's conflicts_at() of voxel v: the pairs that are v's to count. MARKS: labels may be
 * marked GHMI_VOXEL_ORPHAN (a volume's refilled round). */
template <bool VOLUME, bool MARKS>
static __device__ unsigned conflicts_at(const GhmVoxelSideArgs &s, uint32_t v)
{
    const uint8_t lv = __ldcg(&s.label[v]), l = MARKS ? lv & ~GHMI_VOXEL_ORPHAN : lv;
    if (s.ring[v] || s.barrier[v] || (l != LABEL_INSIDE && l != LABEL_OUTSIDE))
        return 0;
    if (VOLUME && s.radius == 1)
        return conflicts_by_mask<MARKS>(s, v, lv);
    const int wd = 2 * s.radius + 1, nn = wd * wd * wd - 1;
    unsigned pairs = 0;
    for (int k = 0; k < nn; k++) {
        uint32_t u = __ldg(&s.nbr[(size_t)k * s.K + v]); /* radius > 1: never by the rows */
        if (u == GHM_NOT_FOUND || s.ring[u] || s.barrier[u])
            continue;
        const uint8_t lu = __ldcg(&s.label[u]), m = MARKS ? lu & ~GHMI_VOXEL_ORPHAN : lu;
        if (m == l || (m != LABEL_INSIDE && m != LABEL_OUTSIDE))
            continue;
        s.drop[(uint32_t)__ldcg(&s.state[v])] = 1;
        s.drop[(uint32_t)__ldcg(&s.state[u])] = 1;
        pairs += u > v || (lv != l && lu == m);
    }
    return pairs;
}

/* The live seeds of a cloud at level 0, queued: the start of a round's breadth-first fill. */
static __device__ void seed_level(const GhmVoxelSideArgs &s, uint32_t *cnt, uint32_t tid,
                                  uint32_t stride)
{
    for (uint32_t v = tid; v < s.K; v += stride) {
        int live = !s.barrier[v] && __ldcg(&s.seed[v]) != GHMI_VOXEL_NO_SEED;
        s.state[v] = live ? (unsigned long long)v : STATE_NONE;
        if (live)
            push(s.queue, 0, cnt, v);
    }
}

/* An orphan u's state from its neighbours: the smallest of their states one level on (none when
 * none is reached). Neighbours in the barrier or unreached are none, so at radius 1 u's fill
 * mask only spares the loads. */
static __device__ unsigned long long pulled(const GhmVoxelSideArgs &s, uint32_t u)
{
    unsigned long long best = STATE_NONE;
    if (s.radius == 1) {
        const uint32_t m = __ldg(&s.mask[u]);
        uint32_t w[26];
        nbr26(s, u, m, w);
#pragma unroll
        for (int k = 0; k < 26; k++) {
            unsigned long long st = w[k] != GHM_NOT_FOUND ? __ldcg(&s.state[w[k]]) : STATE_NONE;
            best = st < best ? st : best;
        }
    } else {
        const int wd = 2 * s.radius + 1, nn = wd * wd * wd - 1;
        for (int k = 0; k < nn; k++) {
            uint32_t w = __ldg(&s.nbr[(size_t)k * s.K + u]);
            unsigned long long st = w != GHM_NOT_FOUND ? __ldcg(&s.state[w]) : STATE_NONE;
            best = st < best ? st : best;
        }
    }
    return best == STATE_NONE ? STATE_NONE : best + (1ull << 32);
}

enum { PULL_OFF = 0, PULL_ON, PULL_DONE, PULL_FAILED };

/* After a refill of a volume's n orphans (queue[0, n)): their labels, marked GHMI_VOXEL_ORPHAN
 * for orphan_conflicts. Only theirs changed. */
static __device__ void label_orphans(const GhmVoxelSideArgs &s, uint32_t n, uint32_t tid,
                                     uint32_t stride)
{
    for (uint32_t i = tid; i < n; i += stride) {
        const uint32_t v = __ldcg(&s.queue[i]);
        const unsigned long long st = __ldcg(&s.state[v]);
        s.label[v] = (st == STATE_NONE ? (uint8_t)LABEL_UNKNOWN : __ldcg(&s.seed[(uint32_t)st])) |
                     GHMI_VOXEL_ORPHAN;
    }
}

/* labels.c's orphan_conflicts(): after a refill, only an orphan can be in a conflict, so the
 * test goes over them (label_orphans marked them); the pairs added to *pairs. */
static __device__ void orphan_conflicts(const GhmVoxelSideArgs &s, uint32_t n,
                                        unsigned long long *pairs, uint32_t tid, uint32_t stride)
{
    const uint32_t rounds_n = (n + stride - 1) / stride;
    for (uint32_t it = 0; it < rounds_n; it++) {
        const uint32_t i = tid + it * stride;
        unsigned got = i < n ? conflicts_at<true, true>(s, __ldcg(&s.queue[i])) : 0;
        got = warp_sum(got);
        if ((threadIdx.x & 31) == 0 && got)
            atomicAdd(pairs, (unsigned long long)got);
    }
}

/* labels.c's refill() for a volume, on its orphans (queue[0, n[c]), their states none): passes
 * that lower each orphan to pulled() until one lowers none (PULL_DONE), or PULL_FAILED after
 * cap[c] passes (the caller fills from the seeds); then a PULL_DONE side's labels and conflicts
 * (into ctl->pairs[c][par]) over its orphans alone, their marks cleared after, the caller's
 * whole passes skipping it. An orphan is lowered while others read it: a state is one 64-bit
 * word, so a read is an old value or a new one, either of them a path from a live seed, and the
 * passes end on the same states as labels.c's. Pass i raises changed[c][i % 3]; thread 0
 * clears the slot of pass i + 1, which was last read after pass i - 2's barrier. Not inlined:
 * inlined, it made every volume's first round slower (a one-round fill of a 1.8 M-voxel probe
 * 0.65 -> 0.77 ms, H200, 2026-12-01), though that never calls it. */
static __device__ __noinline__ void pull_orphans(const GhmVoxelPair &p, const uint32_t (&n)[2],
                                                 const uint32_t (&cap)[2], int (&pull)[2],
                                                 GhmVoxelFillControl *ctl, uint32_t par,
                                                 cg::grid_group &grid, uint32_t tid,
                                                 uint32_t stride)
{
    for (uint32_t pass = 0; pull[0] == PULL_ON || pull[1] == PULL_ON; pass++) {
        for (int c = 0; c < 2; c++) {
            if (pull[c] != PULL_ON)
                continue;
            const GhmVoxelSideArgs &s = p.s[c];
            bool lowered = false;
            for (uint32_t i = tid; i < n[c]; i += stride) {
                const uint32_t u = __ldcg(&s.queue[i]);
                const unsigned long long b = pulled(s, u);
                if (b < __ldcg(&s.state[u])) {
                    atomicMin(&s.state[u], b);
                    lowered = true;
                }
            }
            if (__any_sync(0xFFFFFFFFu, lowered) && (threadIdx.x & 31) == 0)
                ctl->changed[c][pass % 3] = 1;
        }
        if (tid == 0)
            ctl->changed[0][(pass + 1) % 3] = ctl->changed[1][(pass + 1) % 3] = 0;
        grid.sync();
        for (int c = 0; c < 2; c++) {
            if (pull[c] != PULL_ON)
                continue;
            if (!ld_volatile(&ctl->changed[c][pass % 3]))
                pull[c] = PULL_DONE;
            else if (pass + 1 >= cap[c])
                pull[c] = PULL_FAILED;
        }
    }
    if (pull[0] != PULL_DONE && pull[1] != PULL_DONE)
        return;
    for (int c = 0; c < 2; c++)
        if (pull[c] == PULL_DONE)
            label_orphans(p.s[c], n[c], tid, stride);
    grid.sync();
    for (int c = 0; c < 2; c++)
        if (pull[c] == PULL_DONE)
            orphan_conflicts(p.s[c], n[c], &ctl->pairs[c][par], tid, stride);
    grid.sync(); /* the marks, read by the test, cleared as labels.c's orphan_conflicts does */
    for (int c = 0; c < 2; c++)
        for (uint32_t i = tid; pull[c] == PULL_DONE && i < n[c]; i += stride)
            p.s[c].label[__ldcg(&p.s[c].queue[i])] &= (uint8_t)~GHMI_VOXEL_ORPHAN;
}

/* labels.c's fill() for both clouds: per round, init (live seeds at level 0), the breadth-first
 * levels, labels, conflicts, and the decision (stop, or drop the conflicting seeds and go on).
 * Values written by other blocks are read with __ldcg (L2, never a stale L1 line) after the
 * grid barrier that orders them. The queue counts of levels L, L + 1 and L + 2 rotate through
 * ctl->count[c][0..2]: level L appends to slot (L + 1) % 3 while thread 0 clears slot
 * (L + 2) % 3, which nobody reads during level L. The pair counters alternate by round parity
 * for the same reason. Every decision is taken from values all threads read after a barrier,
 * so all threads take the same path to every grid.sync(). VOLUME: a cloud is a volume (given as
 * rows: the levels of its fill hold tens of thousands of voxels), whose large levels go by
 * threads, whose conflict test reads a voxel's neighbours together, and whose rounds after the
 * first fill only their orphans again (the decision lists them: a voxel whose seed was dropped,
 * its state none; pull_orphans); compiled in only there, since the voxel mode's fills of
 * surfaces ran 10 % slower with the threads' code in the kernel though they never took it
 * (H200, 2026-11-29). */
template <bool VOLUME>
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
        /* After the first round a volume's orphans are filled again, not the whole volume, by
         * at most as many passes as the orphans fit in it and as the fills had levels (a
         * pass's work and barrier then stay within a fill's). */
        uint32_t orphans[2] = {0, 0}, cap[2] = {0, 0};
        int pull[2] = {PULL_OFF, PULL_OFF};
        for (int c = 0; c < 2; c++) {
            if (VOLUME && active[c] && round > 0 && p.s[c].rows_lo) {
                orphans[c] = ld_volatile(&ctl->orphans[c]);
                cap[c] = orphans[c] ? p.s[c].K / orphans[c] : 0;
                cap[c] = cap[c] < levels[c] ? cap[c] : levels[c];
                pull[c] = cap[c] >= 2 ? PULL_ON : PULL_OFF;
            }
            if (active[c] && pull[c] == PULL_OFF)
                seed_level(p.s[c], &ctl->count[c][0], tid, stride);
        }
        grid.sync();
        if (VOLUME && tid == 0) /* read by all before the barrier; next pushed by the decision */
            ctl->orphans[0] = ctl->orphans[1] = 0;
        if (VOLUME && (pull[0] == PULL_ON || pull[1] == PULL_ON)) {
            pull_orphans(p, orphans, cap, pull, ctl, par, grid, tid, stride);
            for (int c = 0; c < 2; c++)
                if (pull[c] == PULL_FAILED)
                    seed_level(p.s[c], &ctl->count[c][0], tid, stride);
            if (pull[0] == PULL_FAILED || pull[1] == PULL_FAILED)
                grid.sync();
        }
        uint32_t start[2] = {0, 0}, end[2];
        for (int c = 0; c < 2; c++)
            end[c] = active[c] ? ld_volatile(&ctl->count[c][0]) : 0;
        for (uint32_t level = 0; start[0] < end[0] || start[1] < end[1]; level++) {
            const uint32_t slot = (level + 1) % 3;
            uint32_t f[2];
            for (int c = 0; c < 2; c++) {
                f[c] = end[c] - start[c];
                levels[c] += f[c] > 0;
                if (VOLUME && p.s[c].radius == 1 && f[c] > nwarps) {
                    level_by_threads(p.s[c], start[c], end[c], level, &ctl->count[c][slot], warp,
                                     nwarps, lane);
                    f[c] = 0;
                }
            }
            level_by_warps<VOLUME>(p, start, end, f, level, slot, ctl, warp, nwarps, lane);
            if (tid == 0)
                ctl->count[0][(level + 2) % 3] = ctl->count[1][(level + 2) % 3] = 0;
            grid.sync();
            for (int c = 0; c < 2; c++) {
                start[c] = end[c];
                end[c] += ld_volatile(&ctl->count[c][slot]);
            }
        }
        /* labels of the non-barrier voxels from the settled state (a refilled side's are made,
         * and its conflicts found, by pull_orphans) */
        const auto refilled = [&](int c) { return VOLUME && pull[c] == PULL_DONE; };
        for (int c = 0; c < 2; c++) {
            if (!active[c] || refilled(c))
                continue;
            const GhmVoxelSideArgs &s = p.s[c];
            for (uint32_t v = tid; v < s.K; v += stride) {
                if (s.barrier[v])
                    continue;
                unsigned long long st = __ldcg(&s.state[v]);
                s.label[v] =
                    st == STATE_NONE ? (uint8_t)LABEL_UNKNOWN : __ldcg(&s.seed[(uint32_t)st]);
            }
        }
        grid.sync();
        /* labels.c's find_conflicts(): inside next to outside away from the ring and barrier */
        for (int c = 0; c < 2; c++) {
            if (!active[c] || refilled(c))
                continue;
            const GhmVoxelSideArgs &s = p.s[c];
            const uint32_t K = s.K, rounds_k = (K + stride - 1) / stride;
            for (uint32_t it = 0; it < rounds_k; it++) {
                const uint32_t v = tid + it * stride;
                unsigned pairs = v < K ? conflicts_at<VOLUME, false>(s, v) : 0;
                pairs = warp_sum(pairs);
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
                }
                active[c] = 0;
                continue;
            }
            for (uint32_t v = tid; v < s.K; v += stride) {
                if (__ldcg(&s.drop[v]))
                    s.seed[v] = GHMI_VOXEL_NO_SEED;
                if (!VOLUME || !s.rows_lo || s.barrier[v])
                    continue;
                /* an orphan: its seed dropped (drop[] holds every dropped seed) */
                const unsigned long long st = __ldcg(&s.state[v]);
                if (st != STATE_NONE && __ldcg(&s.drop[(uint32_t)st])) {
                    s.state[v] = STATE_NONE;
                    push(s.queue, 0, &ctl->orphans[c], v);
                }
            }
        }
        if (tid == 0)
            for (int c = 0; c < 2; c++)
                ctl->count[c][0] = ctl->count[c][1] = ctl->count[c][2] = ctl->changed[c][0] =
                    ctl->changed[c][1] = ctl->changed[c][2] = 0;
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


/* --- launchers ---------------------------------------------------------------------------- */

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
    /* Enough warps for a level's queue (one warp per queued voxel), few enough blocks that the
     * grid barrier stays cheap: one block per SM up to a million voxels, two beyond (on the
     * H100: 2 x 160k points, 58k voxels: 0.39 ms with 132 blocks, 0.43 with 223; 2 x 10M
     * points, 3.7M voxels: 8.6 ms with 264 blocks, 11.0 with 132, 10.0 with 528). A volume's
     * levels of tens of thousands of voxels, a thread each, take two at any size (a 0.9 M-voxel
     * probe on the H200: 0.74 -> 0.69 ms with its download; three or four: 0.69-0.70). */
    const bool volume = p->s[0].rows_lo || p->s[1].rows_lo;
    int sms = 1;
    unsigned nblocks = 0;
    int ret = sm_count(ctx, &sms);
    uint64_t want = (uint64_t)sms * (volume || total >= 1000000 ? 2 : 1);
    uint64_t small = (total + VOXEL_THREADS - 1) / VOXEL_THREADS;
    const void *kernel =
        volume ? (const void *)fill_kernel<true> : (const void *)fill_kernel<false>;
    if (ret == GHM_OK)
        ret = cooperative_blocks(ctx, kernel, want < small ? want : small, &nblocks);
    if (ret < 0)
        return ret;
    GhmVoxelPair pair = *p;
    void *args[] = {&pair, &max_rounds, &ctl, &info};
    return GHM_CUDA(cudaLaunchCooperativeKernel(kernel, nblocks, VOXEL_THREADS, args, 0,
                                                ghm_cuda_stream(ctx)));
}
