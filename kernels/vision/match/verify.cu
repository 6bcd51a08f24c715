/*
 * verify.cu - verification of candidate transforms on the GPU: the device twin of the scoring,
 * refinement and inlier listing in vision/match/match.c, through GhmVisionOps.verify_*. Landing a
 * point and the least-squares fit are the same inline functions on both sides
 * (vision/match/verify_math.h).
 *
 * score_kernel: grid (blocks per transform, transforms); the threads stride the query points
 * (forward) and then the reference check points of the transform's range (backward: the
 * check grid chosen on the host for its footprint), counting with one atomicAdd per block and
 * count: integer sums, so the result does not depend on the order.
 *
 * refine_kernel: one cooperative launch, grid (blocks per transform, transforms). Each step is
 * two passes over the points (centroids of the correspondences, then the normal equations).
 * A transform with one block (most: up to 6000 points) just synchronises the block; with
 * several, after each pass every block writes its partial sums, the grid synchronises, and
 * every block adds the partials of its transform in the same fixed order, so all of them hold
 * the same sums and solve the same 4x4 system without another barrier. Warp shuffles and a
 * fixed order make the sums deterministic run to run; they differ from the CPU's sequential
 * sums in the last bits.
 *
 * Departure from the CPU: the backward check looks for the query edge point nearest to a mapped
 * reference point in a window of the query's pixel map, not through a distance transform of
 * the query (which is one sequential scan per row and column, slow on a GPU). Any edge point that
 * can pass the radius test lies within radius + 1.5 pixels, so the window finds what the
 * transform finds, except where two pixels are equally near (ties are broken in scan order).
 */
#include <cooperative_groups.h>

#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/backend_cuda.h"
#include "vision/match/verify_math.h"
#include "verify.h"

namespace cg = cooperative_groups;

#define VERIFY_THREADS 256
#define VERIFY_WARPS (VERIFY_THREADS / 32)
/* Points a thread takes per pass before another block is worth launching: scoring; refining,
 * where a second block costs two grid barriers per step. */
#define POINTS_PER_THREAD 4
#define REFINE_POINTS_PER_THREAD 4
/* Points a thread lands at once: a landing is a chain of dependent reads (the point, the
 * reference's nearest-edge map, the edge), so a thread that walks its points one by one waits
 * for each chain in turn; four in flight overlap them. A thread still adds its points in the
 * order it did, so the sums are unchanged to the bit. */
#define IN_FLIGHT 4
/* The widest backward window searched, in query pixels (radius / scale beyond that is
 * pointless: a transform shrinking the query that much is not a match). */
#define MAX_WINDOW 32
/* Sums of one refinement pass: count, query and reference coordinate sums (5), or the normal
 * equations A (16) and y (4). */
#define FIT_SUMS GHM_REFINE_SUMS
/* The most blocks along a grid's y dimension (one row of blocks per transform). */
#define MAX_GRID_Y 65535
/* Devices whose refine occupancy is remembered; a device beyond asks CUDA at every call. */
#define MAX_CACHED_DEVICES 64

static __device__ __forceinline__ GhmLandRef land_ref(const GhmVerifyRef &r)
{
    GhmLandRef l;
    l.nearest = r.nearest;
    l.edges = r.edges;
    l.edge_dir = r.edge_dir;
    l.width = r.width;
    l.height = r.height;
    return l;
}

/* Prepared query point i: position and unit gradient direction. */
static __device__ __forceinline__ void query_point(const GhmVerifyPoint *pts, size_t i, double *x,
                                                   double *y, double *dx, double *dy)
{
    GhmVerifyPoint p = pts[i];
    *x = p.x;
    *y = p.y;
    *dx = p.dx;
    *dy = p.dy;
}

/* The directions as match.c's query_pts_from computes them: cos and sin of the float angle, in
 * double, once per point rather than once per landing. */
static __global__ void prepare_kernel(const GhmEdgePoint *points, const uint32_t *idx, size_t n,
                                      GhmVerifyPoint *out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    GhmEdgePoint e = points[idx[i]];
    GhmVerifyPoint p;
    p.x = e.x;
    p.y = e.y;
    sincos((double)e.angle, &p.dy, &p.dx);
    out[i] = p;
}

/* The query edge point nearest (by pixel) to pixel (fx, fy) within reach pixels, or -1. */
static __device__ int32_t window_nearest(const GhmVerifyQuery &q, int fx, int fy, double reach)
{
    int r = (int)ceil(reach);
    r = r > MAX_WINDOW ? MAX_WINDOW : r;
    int best_d2 = (int)floor(reach * reach) + 1, x0 = max(fx - r, 0), x1 = min(fx + r, q.width - 1);
    int32_t best = -1;
    for (int y = max(fy - r, 0); y <= min(fy + r, q.height - 1); y++) {
        int dy2 = (y - fy) * (y - fy);
        if (dy2 >= best_d2)
            continue;
        const int32_t *row = q.pixel_point + (size_t)y * q.width;
        for (int x = x0; x <= x1; x++) {
            int d2 = dy2 + (x - fx) * (x - fx);
            if (d2 < best_d2 && row[x] >= 0) {
                best_d2 = d2;
                best = row[x];
            }
        }
    }
    return best;
}

/* match.c's score_backward() for one check point k: 0 outside the footprint, 1 inside, 2 inside
 * and explained by a query edge point. */
static __device__ int backward_one(const GhmVerifyRef &ref, const GhmVerifyQuery &q,
                                   const GhmSimilarity &inv, double cs, double sn, double rq,
                                   double cos_tol, size_t k)
{
    uint32_t ei = ref.check[k];
    GhmEdgePoint e = ref.edges[ei];
    double x = inv.a * e.x - inv.b * e.y + inv.tx, y = inv.b * e.x + inv.a * e.y + inv.ty;
    double fx = floor(x + 0.5), fy = floor(y + 0.5);
    if (!(fx >= 2.0 && fy >= 2.0 && fx < q.width - 2 && fy < q.height - 2))
        return 0;
    int32_t qi = window_nearest(q, (int)fx, (int)fy, rq + 1.5);
    if (qi < 0)
        return 1;
    GhmEdgePoint p = q.points[qi];
    double dx = x - p.x, dy = y - p.y;
    if (dx * dx + dy * dy > rq * rq)
        return 1;
    double ex = ref.edge_dir[ei][0], ey = ref.edge_dir[ei][1];
    double ux = cs * ex - sn * ey, uy = sn * ex + cs * ey;
    float qs, qc;
    sincosf(p.angle, &qs, &qc);
    return ux * qc + uy * qs >= cos_tol ? 2 : 1;
}

static __global__ __launch_bounds__(VERIFY_THREADS) void score_kernel(
    GhmVerifyRef ref, GhmVerifyQuery q, const GhmVerifyPoint *pts, size_t n_pts,
    const GhmSimilarity *hyps, double radius, double cos_tol, int backward,
    const uint32_t *check_range, GhmVerifyCounts *counts)
{
    __shared__ uint32_t c[4];
    if (threadIdx.x < 4)
        c[threadIdx.x] = 0;
    __syncthreads();
    GhmSimilarity s = hyps[blockIdx.y];
    GhmLandRef lr = land_ref(ref);
    double cs, sn;
    ghm_sim_unit_rotation(&s, &cs, &sn);
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t inl = 0, ins = 0, binl = 0, bins = 0;
    for (size_t i0 = first; i0 < n_pts; i0 += IN_FLIGHT * stride) {
#pragma unroll
        for (int j = 0; j < IN_FLIGHT; j++) {
            size_t i = i0 + j * stride;
            if (i >= n_pts)
                break;
            double x, y, dx, dy;
            int inside;
            query_point(pts, i, &x, &y, &dx, &dy);
            inl += ghm_land(&lr, &s, cs, sn, x, y, dx, dy, radius, cos_tol, &inside) >= 0;
            ins += inside != 0;
        }
    }
    GhmSimilarity inv;
    if (backward && ghm_sim_invert(&s, &inv) == 0) {
        double ics, isn;
        ghm_sim_unit_rotation(&inv, &ics, &isn);
        double rq = radius / hypot(s.a, s.b);
        size_t k0 = check_range[2 * blockIdx.y], nk = check_range[2 * blockIdx.y + 1];
        for (size_t j = first; j < nk && k0 + j < ref.ncheck; j += stride) {
            int r = backward_one(ref, q, inv, ics, isn, rq, cos_tol, k0 + j);
            bins += r > 0;
            binl += r > 1;
        }
    }
    atomicAdd(&c[0], inl);
    atomicAdd(&c[1], ins);
    atomicAdd(&c[2], binl);
    atomicAdd(&c[3], bins);
    __syncthreads();
    if (threadIdx.x == 0) {
        GhmVerifyCounts *out = &counts[blockIdx.y];
        atomicAdd(&out->inliers, c[0]);
        atomicAdd(&out->inside, c[1]);
        atomicAdd(&out->back_inliers, c[2]);
        atomicAdd(&out->back_inside, c[3]);
    }
}

/* out[0..N) (shared) gets the block's sums of v[0..N), added in a fixed order (warp shuffles,
 * then the warps in turn): deterministic. Thread k adds component k, so the N sums take the
 * time of one. Ends with the block synchronised. */
template <int N>
static __device__ void block_sums(const double (&v)[N], double (*warp_part)[FIT_SUMS],
                                  double *out)
{
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int k = 0; k < N; k++) {
        double t = v[k];
        for (int o = 16; o > 0; o >>= 1)
            t += __shfl_down_sync(0xffffffffu, t, o);
        if (lane == 0)
            warp_part[warp][k] = t;
    }
    __syncthreads();
    if (threadIdx.x < N) {
        double t = 0.0;
        for (int w = 0; w < VERIFY_WARPS; w++)
            t += warp_part[w][threadIdx.x];
        out[threadIdx.x] = t;
    }
    __syncthreads();
}

/* The sums of a transform over its blocks, in sums[0..N) (shared, the block's own on entry):
 * left as they are when the block is alone, else, after a grid barrier, the partials of all
 * its blocks added in block order, the same in every block so that all of them solve the same
 * system. Thread k adds component k: one thread reading every block's partials one after the
 * other (20 x 40 dependent reads a step for a 40-block transform) was most of a refinement's
 * time. Ends with the block synchronised. */
template <int N>
static __device__ void transform_sums(double *sums, double *partials, cg::grid_group &grid)
{
    if (gridDim.x == 1)
        return;
    if (threadIdx.x < N)
        partials[(size_t)blockIdx.x * FIT_SUMS + threadIdx.x] = sums[threadIdx.x];
    grid.sync();
    if (threadIdx.x < N) {
        double t = 0.0;
        for (unsigned b = 0; b < gridDim.x; b++)
            t += partials[(size_t)b * FIT_SUMS + threadIdx.x];
        sums[threadIdx.x] = t;
    }
    __syncthreads();
}

/* One pass over this thread's points. FIT false (pass 1): the count and coordinate sums of the
 * correspondences, in sum[0..5). FIT true (pass 2): the normal equations about the centroids c,
 * A row by row then y, in sum[0..20). */
template <bool FIT>
static __device__ void refine_pass(const GhmVerifyRef &ref, const GhmVerifyPoint *pts,
                                   size_t n_pts, const GhmSimilarity &s, double radius,
                                   double cos_tol, const double *c, double (&sum)[FIT_SUMS])
{
    GhmLandRef lr = land_ref(ref);
    double cs, sn, A[4][4] = {{0}}, y[4] = {0};
    ghm_sim_unit_rotation(&s, &cs, &sn);
    for (int k = 0; k < FIT_SUMS; k++)
        sum[k] = 0.0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (size_t i0 = first; i0 < n_pts; i0 += IN_FLIGHT * stride) {
        /* the landings first, independent of each other, then the sums in point order */
        double x[IN_FLIGHT], yq[IN_FLIGHT];
        int32_t e[IN_FLIGHT];
#pragma unroll
        for (int j = 0; j < IN_FLIGHT; j++) {
            size_t i = i0 + j * stride;
            e[j] = -1;
            if (i >= n_pts)
                continue;
            double dx, dy;
            int inside;
            query_point(pts, i, &x[j], &yq[j], &dx, &dy);
            e[j] = ghm_land(&lr, &s, cs, sn, x[j], yq[j], dx, dy, radius, cos_tol, &inside);
        }
#pragma unroll
        for (int j = 0; j < IN_FLIGHT; j++) {
            if (e[j] < 0)
                continue;
            GhmEdgePoint r = ref.edges[e[j]];
            if (!FIT) {
                sum[0] += 1.0;
                sum[1] += x[j], sum[2] += yq[j], sum[3] += r.x, sum[4] += r.y;
            } else {
                ghm_fit_accumulate_line(A, y, x[j] - c[0], yq[j] - c[1], r.x - c[2], r.y - c[3],
                                        ref.edge_dir[e[j]][0], ref.edge_dir[e[j]][1], 0.01,
                                        1.0);
            }
        }
    }
    if (FIT)
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 4; j++)
                sum[i * 4 + j] = A[i][j];
            sum[16 + i] = y[i];
        }
}

/* match.c's refine(): the transform of block row blockIdx.y, refined over steps. partials:
 * 2 x gridDim.y x gridDim.x x FIT_SUMS doubles (one set per pass: a block may still be reading
 * pass 1's partials while another writes pass 2's). A transform alone in its block needs no
 * grid barrier at all; with several blocks each step takes two. Every block of the grid takes
 * every barrier, finished or not. */
static __global__ __launch_bounds__(VERIFY_THREADS) void refine_kernel(
    GhmVerifyRef ref, GhmVerifyQuery q, const GhmVerifyPoint *pts, size_t n_pts,
    GhmSimilarity *hyps, GhmRefineSteps steps, double cos_tol, double *partials)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ double warp_part[VERIFY_WARPS][FIT_SUMS];
    __shared__ double tot[FIT_SUMS];
    __shared__ double c[4];
    __shared__ GhmSimilarity s;
    __shared__ int done;
    size_t set = (size_t)gridDim.y * gridDim.x * FIT_SUMS;
    double *part1 = partials + ((size_t)blockIdx.y * gridDim.x) * FIT_SUMS, *part2 = part1 + set;
    if (threadIdx.x == 0) {
        s = hyps[blockIdx.y];
        done = 0;
    }
    __syncthreads();
    for (int it = 0; it < steps.steps; it++) {
        if (done && gridDim.x == 1)
            break;
        double v[FIT_SUMS] = {0}, v5[5];
        if (!done)
            refine_pass<false>(ref, pts, n_pts, s, steps.radius[it], cos_tol, c, v);
        for (int k = 0; k < 5; k++)
            v5[k] = v[k];
        block_sums<5>(v5, warp_part, tot);
        transform_sums<5>(tot, part1, grid);
        if (threadIdx.x == 0 && !done) {
            if (tot[0] < 8.0)
                done = 1;
            else
                for (int k = 0; k < 4; k++)
                    c[k] = tot[k + 1] / tot[0];
        }
        __syncthreads();
        if (!done)
            refine_pass<true>(ref, pts, n_pts, s, steps.radius[it], cos_tol, c, v);
        block_sums<FIT_SUMS>(v, warp_part, tot);
        transform_sums<FIT_SUMS>(tot, part2, grid);
        if (threadIdx.x == 0 && !done) {
            double A[4][4], y[4], x[4];
            for (int i = 0; i < 4; i++) {
                for (int j = 0; j < 4; j++)
                    A[i][j] = tot[i * 4 + j];
                y[i] = tot[16 + i];
            }
            if (ghm_fit_solve4(A, y, x) < 0)
                done = 1;
            else
                s = ghm_fit_uncentre(x, c[0], c[1], c[2], c[3]);
        }
        __syncthreads();
    }
    if (blockIdx.x == 0 && threadIdx.x == 0)
        hyps[blockIdx.y] = s;
}

static __global__ void inliers_kernel(GhmVerifyRef ref, GhmVerifyQuery q,
                                      const GhmVerifyPoint *pts, size_t n_pts,
                                      const GhmSimilarity *hyp, double radius, double cos_tol,
                                      float (*xy)[2])
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n_pts)
        return;
    GhmSimilarity s = *hyp;
    GhmLandRef lr = land_ref(ref);
    double cs, sn, x, y, dx, dy;
    int inside;
    ghm_sim_unit_rotation(&s, &cs, &sn);
    query_point(pts, i, &x, &y, &dx, &dy);
    if (ghm_land(&lr, &s, cs, sn, x, y, dx, dy, radius, cos_tol, &inside) < 0) {
        xy[i][0] = xy[i][1] = __int_as_float(0x7fc00000); /* NaN */
        return;
    }
    xy[i][0] = (float)(s.a * x - s.b * y + s.tx);
    xy[i][1] = (float)(s.b * x + s.a * y + s.ty);
}

/* Blocks per transform for n items: enough for `per_thread` each, at least one. */
static unsigned blocks_for(size_t n, size_t per_thread)
{
    size_t per = (size_t)VERIFY_THREADS * per_thread;
    size_t b = (n + per - 1) / per;
    return (unsigned)(b < 1 ? 1 : b > 1024 ? 1024 : b);
}

static int check_args(const GhmVerifyRef *ref, const GhmVerifyQuery *q,
                      const GhmVerifyPoint *pts, size_t n_pts, const void *hyps)
{
    if (!ref || !q || (!pts && n_pts) || !hyps || !ref->nearest || !ref->edge_dir ||
        (!ref->check && ref->ncheck) || !q->pixel_point || ref->width < 1 || ref->height < 1 ||
        q->width < 1 || q->height < 1)
        return GHM_ERR_INVALID;
    return GHM_OK;
}

extern "C" int ghm_cuda_verify_score(GhmContext *ctx, const GhmVerifyRef *ref,
                                     const GhmVerifyQuery *q, const GhmVerifyPoint *pts,
                                     size_t n_pts, const GhmSimilarity *hyps, size_t nh,
                                     double radius, double cos_tol, int backward,
                                     const uint32_t *check_range, GhmVerifyCounts *counts)
{
    if (!ctx || !counts || check_args(ref, q, pts, n_pts, hyps) < 0 || (backward && !check_range))
        return GHM_ERR_INVALID;
    if (nh == 0)
        return GHM_OK;
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cudaMemsetAsync(counts, 0, nh * sizeof *counts, s));
    size_t work = n_pts > ref->ncheck || !backward ? n_pts : ref->ncheck;
    for (size_t h0 = 0; h0 < nh && ret == GHM_OK; h0 += MAX_GRID_Y) {
        size_t n = nh - h0 < MAX_GRID_Y ? nh - h0 : MAX_GRID_Y;
        dim3 grid(blocks_for(work, POINTS_PER_THREAD), (unsigned)n);
        score_kernel<<<grid, VERIFY_THREADS, 0, s>>>(*ref, *q, pts, n_pts, hyps + h0, radius,
                                                     cos_tol, backward,
                                                     backward ? check_range + 2 * h0 : NULL,
                                                     counts + h0);
        ret = GHM_CUDA_LAUNCH();
    }
    return ret;
}

/* Blocks of refine_kernel that fit on ctx's device at once, 0 if CUDA does not say. A
 * device and the kernel do not change: asked once per device (a process may use several). */
static int refine_resident_blocks(const GhmContext *ctx)
{
    static int known[MAX_CACHED_DEVICES];
    int dev = ghm_cuda_device(ctx);
    int n = dev < MAX_CACHED_DEVICES ? __atomic_load_n(&known[dev], __ATOMIC_RELAXED) : 0;
    if (n > 0)
        return n;
    int sms = 0, blocks = 0;
    ghm_cuda_bind(ctx); /* the occupancy is asked of the current device */
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, refine_kernel, VERIFY_THREADS, 0) !=
            cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    n = blocks * sms;
    if (dev < MAX_CACHED_DEVICES)
        __atomic_store_n(&known[dev], n, __ATOMIC_RELAXED);
    return n;
}

extern "C" int ghm_cuda_verify_refine(GhmContext *ctx, const GhmVerifyRef *ref,
                                      const GhmVerifyQuery *q, const GhmVerifyPoint *pts,
                                      size_t n_pts, GhmSimilarity *hyps, size_t nh,
                                      const GhmRefineSteps *steps, double cos_tol,
                                      double *partials, size_t npartials)
{
    if (!ctx || !steps || !partials || check_args(ref, q, pts, n_pts, hyps) < 0 ||
        steps->steps < 0 || steps->steps > GHM_REFINE_MAX_STEPS || npartials < 2 * FIT_SUMS)
        return GHM_ERR_INVALID;
    if (nh == 0 || steps->steps == 0)
        return GHM_OK;
    /* A cooperative launch must fit on the device at once: at most `resident` blocks, shared
     * out between the transforms of a launch, and at most one block per 2 x FIT_SUMS partials. */
    int resident_blocks = refine_resident_blocks(ctx);
    if (resident_blocks < 1)
        return GHM_ERR_CUDA;
    int ret = GHM_OK;
    size_t resident = (size_t)resident_blocks, slots = npartials / (2 * FIT_SUMS);
    size_t budget = resident < slots ? resident : slots;
    if (budget > MAX_GRID_Y)
        budget = MAX_GRID_Y;
    if (budget < 1)
        return GHM_ERR_INVALID;
    GhmVerifyRef r = *ref;
    GhmVerifyQuery qq = *q;
    GhmRefineSteps st = *steps;
    for (size_t h0 = 0; h0 < nh && ret == GHM_OK; h0 += budget) {
        size_t n = nh - h0 < budget ? nh - h0 : budget;
        size_t per_hyp = blocks_for(n_pts, REFINE_POINTS_PER_THREAD);
        if (per_hyp * n > budget)
            per_hyp = budget / n;
        GhmSimilarity *h = hyps + h0;
        void *args[] = {&r, &qq, (void *)&pts, &n_pts, &h, &st, &cos_tol, &partials};
        ret = GHM_CUDA(cudaLaunchCooperativeKernel((const void *)refine_kernel,
                                                   dim3((unsigned)per_hyp, (unsigned)n),
                                                   dim3(VERIFY_THREADS), args, 0,
                                                   ghm_cuda_stream(ctx)));
    }
    return ret;
}

static __global__ void ranges_kernel(const GhmSimilarity *hyps, size_t nh, GhmCheckGrids grids,
                                     int qw, int qh, uint32_t *ranges)
{
    size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < nh)
        ghm_check_range(&grids, &hyps[k], qw, qh, &ranges[2 * k], &ranges[2 * k + 1]);
}

extern "C" int ghm_cuda_verify_ranges(GhmContext *ctx, const GhmSimilarity *hyps, size_t nh,
                                      const GhmCheckGrids *grids, int qw, int qh,
                                      uint32_t *ranges)
{
    if (!ctx || !grids || (nh && (!hyps || !ranges)) || grids->levels < 1 ||
        grids->levels > GHM_CHECK_MAX_LEVELS || qw < 1 || qh < 1)
        return GHM_ERR_INVALID;
    if (nh == 0)
        return GHM_OK;
    unsigned blocks = (unsigned)((nh + VERIFY_THREADS - 1) / VERIFY_THREADS);
    ranges_kernel<<<blocks, VERIFY_THREADS, 0, ghm_cuda_stream(ctx)>>>(hyps, nh, *grids, qw, qh,
                                                                       ranges);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_verify_inliers(GhmContext *ctx, const GhmVerifyRef *ref,
                                       const GhmVerifyQuery *q, const GhmVerifyPoint *pts,
                                       size_t n_pts, const GhmSimilarity *hyp, double radius,
                                       double cos_tol, float (*xy)[2])
{
    if (!ctx || !xy || check_args(ref, q, pts, n_pts, hyp) < 0)
        return GHM_ERR_INVALID;
    if (n_pts == 0)
        return GHM_OK;
    unsigned blocks = (unsigned)((n_pts + VERIFY_THREADS - 1) / VERIFY_THREADS);
    inliers_kernel<<<blocks, VERIFY_THREADS, 0, ghm_cuda_stream(ctx)>>>(*ref, *q, pts, n_pts, hyp,
                                                                        radius, cos_tol, xy);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_verify_prepare(GhmContext *ctx, const GhmVerifyQuery *q,
                                       const uint32_t *idx, size_t n, GhmVerifyPoint *out)
{
    if (!ctx || !q || !q->points || (n && (!idx || !out)))
        return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    unsigned blocks = (unsigned)((n + VERIFY_THREADS - 1) / VERIFY_THREADS);
    prepare_kernel<<<blocks, VERIFY_THREADS, 0, ghm_cuda_stream(ctx)>>>(q->points, idx, n, out);
    return GHM_CUDA_LAUNCH();
}
