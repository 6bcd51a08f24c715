/*
 * features.cu - the whole feature chain of vision/features/edges.c on the GPU, from the grey image to
 * edge points and Harris corner candidates, with one wait at the end: the matcher's device path
 * (vision/match/match_device.c) and ghm_edges_detect_ctx run it through GhmVisionOps.features_*.
 *
 * Stages, all queued on the workspace's own stream by ghmi_features_enqueue, from the image in
 * ws->pixels (features_launch.cu puts it there, uploaded or halved from another workspace's,
 * and launches the stages, directly or as a CUDA graph):
 *   noise       Immerkaer's estimate: an exact integer sum (one atomicAdd per block), then
 *               levels_kernel turns it into the noise level and the magnitude floor with the
 *               host's double arithmetic (edges.c: image_noise_sigma, detect_into).
 *   gradients   blur, Sobel, magnitude, suppression (edges.cu).
 *   threshold   the CPU takes quantiles of the surviving maxima by quickselect; here a radix
 *               selection finds them among the positive suppressed magnitudes (positive floats
 *               order as their bits), digit by digit, with every count on the device: no wait.
 *   compaction  flags, CUB's exclusive scan, then emit_kernel writes each point at its rank:
 *               raster order, as the CPU's loop.
 *   corners     structure tensor, blurred, and the Harris response in two passes (rows of the
 *               three products, then columns with the response), its maximum (CUB), then
 *               one thread per pixel tests for a strict local maximum and appends a
 *               candidate (atomicAdd: any order; the host sorts them, a total order).
 *
 * Exactness: every float operation is an explicitly rounded intrinsic in the order of the C
 * expressions (see edges.cu), so points, threshold and responses are bit for bit the CPU's; the
 * angle is atan2 in double rounded to float on both sides. Tested by geohash_cuda.cuda.
 */
#include <cub/cub.cuh>

#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/backend_cuda.h"
#include "kernels/hashing/device_memory.h"
#include "edges.h"
#include "features.h"
#include "features_internal.cuh"

/* --- noise and floor ---------------------------------------------------------------------- */

static __global__ __launch_bounds__(TILE_X *TILE_Y) void noise_kernel(const uint8_t *px, int w,
                                                                      int h, Levels *lv)
{
    typedef cub::BlockReduce<unsigned long long, TILE_X, cub::BLOCK_REDUCE_WARP_REDUCTIONS, TILE_Y>
        Reduce;
    __shared__ typename Reduce::TempStorage tmp;
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    unsigned long long v = 0;
    if (x >= 1 && y >= 1 && x < w - 1 && y < h - 1) {
        const uint8_t *a = px + (size_t)(y - 1) * w, *b = a + w, *c = b + w;
        int s = a[x - 1] - 2 * a[x] + a[x + 1] - 2 * b[x - 1] + 4 * b[x] - 2 * b[x + 1] +
                c[x - 1] - 2 * c[x] + c[x + 1];
        v = (unsigned long long)(s < 0 ? -s : s);
    }
    unsigned long long sum = Reduce(tmp).Sum(v);
    if (threadIdx.x == 0 && threadIdx.y == 0 && sum)
        atomicAdd(&lv->noise_sum, sum);
}

/* edges.c: noise = image_noise_sigma * gain * sqrt(pi / 2), floor = max(0.5, factor * noise);
 * products and quotients only, so no FMA can change a rounding. */
static __global__ void levels_kernel(int w, int h, double gain, double factor, Levels *lv)
{
    const double root = sqrt(3.14159265358979323846 / 2.0);
    double sigma = 0.0;
    if (w >= 3 && h >= 3)
        sigma = __ddiv_rn(__dmul_rn(root, (double)lv->noise_sum),
                          __dmul_rn(__dmul_rn(6.0, (double)(w - 2)), (double)(h - 2)));
    lv->noise = (float)__dmul_rn(__dmul_rn(sigma, gain), root);
    float floor_mag = __fmul_rn((float)factor, lv->noise);
    lv->floor_mag = floor_mag < 0.5f ? 0.5f : floor_mag;
}

/* --- threshold and compaction ------------------------------------------------------------- */

/* edges.c's choose_threshold() takes two quantiles of the positive suppressed magnitudes (the
 * CPU by quickselect). Positive floats order as their bits, so each is found digit by digit,
 * most significant first: a histogram of the next digit among the values that share the digits
 * found so far, then the bin where the wanted rank falls. Three passes over the magnitudes
 * replace a radix sort of every pixel (four passes that also write, the largest item of a
 * 1080p query's chain). */
enum { SEL_PASSES = 3, SEL_BINS = 2048, SEL_THREADS = 1024, SEL_ITEMS = 8 };
static const int sel_shift[SEL_PASSES] = {21, 10, 0};

struct FeatureSelect {
    uint32_t prefix[2]; /* the bits found so far: [0] the quantile's, [1] the 0.9 quantile's */
    uint32_t rank[2];   /* the wanted rank among the values with that prefix */
    uint32_t count;     /* positive values */
    uint32_t hist[2][SEL_BINS];
};

/* The digit of pass p (bits shift .. shift + 10, or below the shift of pass p - 1) and the mask
 * of the bits found before it. */
static __device__ __forceinline__ uint32_t sel_digit(uint32_t b, int shift)
{
    return (b >> shift) & (SEL_BINS - 1);
}

static __device__ __forceinline__ uint32_t sel_found_mask(int shift)
{
    return shift >= 21 ? 0u : ~0u << (shift + (shift == 0 ? 10 : 11));
}

/* One block's histograms of SEL_ITEMS values a thread, loaded together (a grid-stride walk
 * waited for its loads one by one), then added to the global ones where not zero. */
static __global__ __launch_bounds__(LINEAR_THREADS) void select_hist_kernel(
    const float *nms, size_t npix, int shift, FeatureSelect *sel)
{
    __shared__ uint32_t hist[2][SEL_BINS];
    for (int i = threadIdx.x; i < 2 * SEL_BINS; i += blockDim.x)
        hist[i / SEL_BINS][i % SEL_BINS] = 0;
    __syncthreads();
    uint32_t mask = sel_found_mask(shift), p0 = sel->prefix[0], p1 = sel->prefix[1];
    size_t base = (size_t)blockIdx.x * blockDim.x * SEL_ITEMS + threadIdx.x;
    float v[SEL_ITEMS];
#pragma unroll
    for (int j = 0; j < SEL_ITEMS; j++) {
        size_t i = base + (size_t)j * blockDim.x;
        v[j] = i < npix ? nms[i] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < SEL_ITEMS; j++) {
        if (!(v[j] > 0.0f))
            continue;
        uint32_t b = __float_as_uint(v[j]), d = sel_digit(b, shift);
        if ((b & mask) == p0)
            atomicAdd(&hist[0][d], 1u);
        if (mask && (b & mask) == p1) /* the first pass's histogram serves both */
            atomicAdd(&hist[1][d], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 2 * SEL_BINS; i += blockDim.x) {
        uint32_t c = hist[i / SEL_BINS][i % SEL_BINS];
        if (c)
            atomicAdd(&sel->hist[i / SEL_BINS][i % SEL_BINS], c);
    }
}

/* The bin of each target's rank: its digit joins the prefix, the rank becomes the rank within
 * the bin, the histograms are cleared for the next pass. The first pass counts the positive
 * values and sets the ranks (edges.c's indices); the last one sets the threshold. */
static __global__ __launch_bounds__(SEL_THREADS) void select_pick_kernel(
    int shift, int last, double quantile, FeatureSelect *sel, Levels *lv)
{
    typedef cub::BlockScan<uint32_t, SEL_THREADS> Scan;
    __shared__ typename Scan::TempStorage tmp;
    enum { PER = SEL_BINS / SEL_THREADS };
    int first_pass = sel_found_mask(shift) == 0;
    for (int t = 0; t < 2; t++) {
        const uint32_t *h = sel->hist[first_pass ? 0 : t];
        uint32_t c[PER], e[PER], total;
        for (int k = 0; k < PER; k++)
            c[k] = h[threadIdx.x * PER + k];
        Scan(tmp).ExclusiveSum(c, e, total);
        __syncthreads();
        if (first_pass && threadIdx.x == 0 && t == 0) {
            sel->count = total;
            size_t n = total;
            sel->rank[0] = n ? (uint32_t)(size_t)(quantile * (double)(n - 1)) : 0;
            sel->rank[1] = n ? (uint32_t)(size_t)(0.9 * (double)(n - 1)) : 0;
        }
        __syncthreads();
        uint32_t want = sel->rank[t];
        __syncthreads(); /* every thread has read the rank before one rewrites it */
        for (int k = 0; k < PER; k++)
            if (c[k] && e[k] <= want && want < e[k] + c[k]) {
                sel->prefix[t] |= (uint32_t)(threadIdx.x * PER + k) << shift;
                sel->rank[t] = want - e[k];
            }
        __syncthreads();
    }
    for (int i = threadIdx.x; i < 2 * SEL_BINS; i += blockDim.x)
        sel->hist[i / SEL_BINS][i % SEL_BINS] = 0;
    if (!last || threadIdx.x != 0)
        return;
    float thr = lv->floor_mag;
    if (sel->count > 0 && quantile > 0.0) {
        float q = __uint_as_float(sel->prefix[0]);
        float strong = __fmul_rn(0.5f, __uint_as_float(sel->prefix[1]));
        if (q > strong)
            q = strong;
        if (q > thr)
            thr = q;
    }
    lv->threshold = thr;
}

/* Queues the threshold's selection (sel: device scratch) on s. */
static int choose_threshold(cudaStream_t s, const float *nms, size_t npix, double quantile,
                            FeatureSelect *sel, Levels *lv)
{
    int ret = GHM_CUDA(cudaMemsetAsync(sel, 0, sizeof *sel, s));
    size_t per_block = (size_t)LINEAR_THREADS * SEL_ITEMS;
    unsigned blocks = (unsigned)((npix + per_block - 1) / per_block); /* npix < 2^31 */
    for (int p = 0; p < SEL_PASSES && ret == GHM_OK; p++) {
        select_hist_kernel<<<blocks, LINEAR_THREADS, 0, s>>>(nms, npix, sel_shift[p], sel);
        if ((ret = GHM_CUDA_LAUNCH()) < 0)
            break;
        select_pick_kernel<<<1, SEL_THREADS, 0, s>>>(sel_shift[p], p == SEL_PASSES - 1, quantile,
                                                     sel, lv);
        ret = GHM_CUDA_LAUNCH();
    }
    return ret;
}

static __global__ void flag_kernel(const float *nms, size_t npix, const Levels *lv,
                                   uint32_t *flags)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < npix)
        flags[i] = nms[i] >= lv->threshold && nms[i] > 0.0f;
}

/* edges.c's compact_points(): each kept maximum at its rank, the others -1 in the map. */
static __global__ void emit_kernel(const float *nms, const float *off, const float *gx,
                                   const float *gy, const uint32_t *flags, const uint32_t *rank,
                                   int w, size_t npix, GhmEdgePoint *points, int32_t *pixel_point,
                                   Levels *lv)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= npix)
        return;
    if (i == npix - 1)
        lv->npoints = rank[i] + flags[i];
    if (!flags[i]) {
        pixel_point[i] = -1;
        return;
    }
    float m = nms[i], cx = __fdiv_rn(gx[i], m), cy = __fdiv_rn(gy[i], m);
    GhmEdgePoint p;
    p.x = __fadd_rn((float)(i % (size_t)w), __fmul_rn(off[i], cx));
    p.y = __fadd_rn((float)(i / (size_t)w), __fmul_rn(off[i], cy));
    p.angle = (float)atan2((double)gy[i], (double)gx[i]);
    p.strength = m;
    points[rank[i]] = p;
    pixel_point[i] = (int32_t)rank[i];
}

/* --- Harris corners ----------------------------------------------------------------------- */

/* The structure tensor's three products at pixel i, as edges.c forms them. */
static __device__ __forceinline__ void tensor_at(const float *gx, const float *gy, size_t i,
                                                 float (&t)[3])
{
    t[0] = __fmul_rn(gx[i], gx[i]);
    t[1] = __fmul_rn(gy[i], gy[i]);
    t[2] = __fmul_rn(gx[i], gy[i]);
}

/* resp = s0 s1 - s2^2 - k tr^2, evaluated left to right as edges.c does. */
static __device__ __forceinline__ float harris_of(const float (&t)[3], float k)
{
    float tr = __fadd_rn(t[0], t[1]);
    float det = __fsub_rn(__fmul_rn(t[0], t[1]), __fmul_rn(t[2], t[2]));
    return __fsub_rn(det, __fmul_rn(__fmul_rn(k, tr), tr));
}

/* The response of the unblurred tensor (a tensor radius of 0: edges.c leaves the products). */
static __global__ void response_kernel(const float *gx, const float *gy, size_t npix, float k,
                                       float *resp)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= npix)
        return;
    float t[3];
    tensor_at(gx, gy, i, t);
    resp[i] = harris_of(t, k);
}

/* The horizontal pass of edges.c's tensor blur (convolve_sep over each product field, with its
 * clamped borders and order of additions), the three fields at once and the products formed
 * on the fly: one kernel where there were a products pass and three blur passes. */
static __global__ __launch_bounds__(TILE_X *TILE_Y) void tensor_rows_kernel(
    const float *gx, const float *gy, int w, int h, GhmEdgeTaps g, float *r0, float *r1,
    float *r2)
{
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    size_t row = (size_t)y * w;
    float c[3], s[3];
    tensor_at(gx, gy, row + x, c);
    for (int f = 0; f < 3; f++)
        s[f] = __fmul_rn(g.g[0], c[f]);
    for (int i = 1; i <= g.radius; i++) {
        float a[3], b[3];
        tensor_at(gx, gy, row + (x - i < 0 ? 0 : x - i), a);
        tensor_at(gx, gy, row + (x + i > w - 1 ? w - 1 : x + i), b);
        for (int f = 0; f < 3; f++)
            s[f] = __fadd_rn(s[f], __fmul_rn(g.g[i], __fadd_rn(a[f], b[f])));
    }
    size_t at = row + x;
    r0[at] = s[0], r1[at] = s[1], r2[at] = s[2];
}

/* The vertical pass over the three row-blurred fields, and the response from the blurred
 * tensor at once (it was a pass of its own over three stored fields). */
static __global__ __launch_bounds__(TILE_X *TILE_Y) void tensor_cols_kernel(
    const float *r0, const float *r1, const float *r2, int w, int h, GhmEdgeTaps g, float k,
    float *resp)
{
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const float *r[3] = {r0, r1, r2};
    float s[3];
    for (int f = 0; f < 3; f++)
        s[f] = __fmul_rn(g.g[0], r[f][(size_t)y * w + x]);
    for (int i = 1; i <= g.radius; i++) {
        size_t up = (size_t)(y - i < 0 ? 0 : y - i) * w + x;
        size_t down = (size_t)(y + i > h - 1 ? h - 1 : y + i) * w + x;
        for (int f = 0; f < 3; f++)
            s[f] = __fadd_rn(s[f], __fmul_rn(g.g[i], __fadd_rn(r[f][up], r[f][down])));
    }
    resp[(size_t)y * w + x] = harris_of(s, k);
}

static __device__ __forceinline__ float parabola_offset(float a, float b, float c)
{
    float den = __fadd_rn(__fsub_rn(a, __fmul_rn(2.0f, b)), c);
    float t = den < 0.0f ? __fdiv_rn(__fmul_rn(0.5f, __fsub_rn(a, c)), den) : 0.0f;
    return t < -0.5f ? -0.5f : t > 0.5f ? 0.5f : t;
}

/* edges.c's local_maxima(): strict maxima within radius (ties go to the earlier pixel in
 * raster order), positive and >= rel x the strongest response, away from the border. */
static __global__ __launch_bounds__(TILE_X *TILE_Y) void maxima_kernel(
    const float *resp, int w, int h, int radius, float rel, Levels *lv, GhmCornerCand *cand)
{
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    int border = radius + 2;
    if (x < border || y < border || x >= w - border || y >= h - border)
        return;
    const float *r0 = resp + (size_t)y * w + x;
    float v = r0[0], maxr = lv->max_response > 0.0f ? lv->max_response : 0.0f;
    if (v <= 0.0f || v < __fmul_rn(rel, maxr))
        return;
    for (int dy = -radius; dy <= radius; dy++)
        for (int dx = -radius; dx <= radius; dx++) {
            float u = r0[(ptrdiff_t)dy * w + dx];
            int earlier = dy < 0 || (dy == 0 && dx < 0);
            if (u > v || (u == v && earlier))
                return;
        }
    uint32_t k = atomicAdd(&lv->ncand, 1u);
    GhmCornerCand c;
    c.response = v;
    c.pixel = y * w + x;
    c.x = __fadd_rn((float)x, parabola_offset(r0[-1], v, r0[1]));
    c.y = __fadd_rn((float)y, parabola_offset(r0[-w], v, r0[w]));
    cand[k] = c;
}

/* --- the workspace ------------------------------------------------------------------------ */

/* The workspace's device arrays for npix pixels, carved from one block (device_memory.h): with a
 * NULL carve base it only adds up their sizes. */
static void layout(GhmiCarve *c, GhmFeatureWorkspace *ws, size_t npix)
{
    ws->pixels = (uint8_t *)ghmi_carve(c, npix);
    for (int i = 0; i < NF; i++)
        ws->f[i] = (float *)ghmi_carve(c, npix * sizeof(float));
    ws->flags = (uint32_t *)ghmi_carve(c, npix * sizeof(uint32_t));
    ws->rank = (uint32_t *)ghmi_carve(c, npix * sizeof(uint32_t));
    ws->points = (GhmEdgePoint *)ghmi_carve(c, npix * sizeof(GhmEdgePoint));
    ws->pixel_point = (int32_t *)ghmi_carve(c, npix * sizeof(int32_t));
    /* Candidates: the bound of any w' x h' with w' h' <= npix is below npix / 4 + npix + 2. */
    ws->cand = (GhmCornerCand *)ghmi_carve(c, (npix / 4 + npix + 2) * sizeof(GhmCornerCand));
    /* a grid of cells of at least one pixel has at most npix cells */
    ws->cells = (unsigned long long *)ghmi_carve(c, npix * sizeof(unsigned long long));
    ws->cub_tmp = ghmi_carve(c, ws->cub_bytes ? ws->cub_bytes : 1); /* NULL: CUB would size */
    ws->levels = (Levels *)ghmi_carve(c, sizeof(Levels));
    ws->select = (FeatureSelect *)ghmi_carve(c, sizeof(FeatureSelect));
}

/* Frees the arrays (stream-ordered on the context's stream, after the chain's own stream has
 * finished with them: a run that failed half-way was never joined to the context's stream). */
static void release(GhmFeatureWorkspace *ws)
{
    if (ws->block) {
        cudaEventRecord(ws->done, ws->stream);
        cudaStreamWaitEvent(ghm_cuda_stream(ws->ctx), ws->done, 0);
    }
    ghmi_device_free(ws->ctx, ws->block);
    ws->block = NULL;
    if (ws->graph)
        cudaGraphExecDestroy(ws->graph); /* it names the buffers freed here */
    ws->graph = NULL;
    ws->key_runs = 0;
    GhmiCarve none = ghmi_carve_start(NULL);
    layout(&none, ws, 0); /* every array NULL */
    ws->cap_pix = 0;
}

/* The CUB scratch the two device-wide passes need for n items (the larger of them). */
static int cub_scratch_bytes(size_t n, size_t *out)
{
    size_t b = 0, c = 0;
    int ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, b, (const uint32_t *)NULL,
                                                     (uint32_t *)NULL, (int)n));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cub::DeviceReduce::Max(NULL, c, (const float *)NULL, (float *)NULL, (int)n));
    *out = b > c ? b : c;
    return ret;
}

/* Grows the buffers to npix pixels (w x h, never less than they hold): one allocation, kept
 * and reused by every run that fits. */
int ghmi_features_reserve(GhmFeatureWorkspace *ws, int w, int h)
{
    size_t npix = (size_t)w * h;
    if (npix <= ws->cap_pix)
        return GHM_OK;
    if (npix > (size_t)INT32_MAX)
        return GHM_ERR_TOO_LARGE;
    release(ws);
    int ret = cub_scratch_bytes(npix, &ws->cub_bytes);
    GhmiCarve c = ghmi_carve_start(NULL);
    layout(&c, ws, npix);
    if (ret == GHM_OK)
        ret = ghmi_device_alloc(ws->ctx, c.used, &ws->block);
    if (ret < 0) {
        release(ws);
        return ret;
    }
    c = ghmi_carve_start(ws->block);
    layout(&c, ws, npix);
    ws->cap_pix = npix;
    return GHM_OK;
}

static void destroy(GhmFeatureWorkspace *ws)
{
    release(ws);
    cudaFreeHost(ws->host_levels);
    cudaFreeHost(ws->staging);
    if (ws->stream)
        cudaStreamDestroy(ws->stream);
    if (ws->ready)
        cudaEventDestroy(ws->ready);
    if (ws->done)
        cudaEventDestroy(ws->done);
    if (ws->placed)
        cudaEventDestroy(ws->placed);
    free(ws);
}

/* The device arrays come with the first run (ghmi_features_reserve), sized by its image. */
extern "C" int ghm_cuda_features_create(GhmContext *ctx, GhmFeatureWorkspace **out)
{
    if (!ctx || !out)
        return GHM_ERR_INVALID;
    GhmFeatureWorkspace *ws = (GhmFeatureWorkspace *)calloc(1, sizeof *ws);
    if (!ws)
        return GHM_ERR_NOMEM;
    ws->ctx = ctx;
    ghm_cuda_bind(ctx); /* the workspace's stream and events belong to ctx's device */
    int ret = GHM_CUDA(cudaMallocHost((void **)&ws->host_levels, sizeof(Levels)));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaStreamCreateWithFlags(&ws->stream, cudaStreamNonBlocking));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaEventCreateWithFlags(&ws->ready, cudaEventDisableTiming));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaEventCreateWithFlags(&ws->done, cudaEventDisableTiming));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaEventCreateWithFlags(&ws->placed, cudaEventDisableTiming));
    if (ret < 0) {
        destroy(ws);
        return ret;
    }
    *out = ws;
    return GHM_OK;
}

extern "C" void ghm_cuda_features_free(GhmContext *ctx, GhmFeatureWorkspace **ws)
{
    (void)ctx;
    if (!ws || !*ws)
        return;
    /* The chain may still run when a query failed half-way. */
    ghm_cuda_wait((*ws)->stream);
    destroy(*ws);
    *ws = NULL;
}

/* --- the chain ---------------------------------------------------------------------------- */

static int run_edges(GhmFeatureWorkspace *ws, int w, int h, const GhmFeatureParams *p)
{
    cudaStream_t s = ws->stream;
    size_t npix = (size_t)w * h;
    float **f = ws->f;
    noise_kernel<<<pixel_grid(w, h), dim3(TILE_X, TILE_Y), 0, s>>>(ws->pixels, w, h, ws->levels);
    int ret = GHM_CUDA_LAUNCH();
    if (ret < 0)
        return ret;
    levels_kernel<<<1, 1, 0, s>>>(w, h, p->noise_gain, p->noise_factor, ws->levels);
    if ((ret = GHM_CUDA_LAUNCH()) < 0 ||
        (ret = ghm_cuda_edge_gradients(s, ws->pixels, w, h, (size_t)w, &p->blur, f[F_TMP],
                                       f[F_BLUR], f[F_GX], f[F_GY], f[F_MAG])) < 0 ||
        (ret = ghm_cuda_edge_suppress(s, f[F_MAG], f[F_GX], f[F_GY], w, h,
                                      &ws->levels->floor_mag, f[F_NMS], f[F_OFF])) < 0)
        return ret;
    if ((ret = choose_threshold(s, f[F_NMS], npix, p->percentile, ws->select, ws->levels)) < 0)
        return ret;
    flag_kernel<<<linear_blocks(npix), LINEAR_THREADS, 0, s>>>(f[F_NMS], npix, ws->levels,
                                                               ws->flags);
    if ((ret = GHM_CUDA_LAUNCH()) < 0)
        return ret;
    size_t bytes = ws->cub_bytes;
    if ((ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, bytes, ws->flags, ws->rank,
                                                      (int)npix, s))) < 0)
        return ret;
    emit_kernel<<<linear_blocks(npix), LINEAR_THREADS, 0, s>>>(
        f[F_NMS], f[F_OFF], f[F_GX], f[F_GY], ws->flags, ws->rank, w, npix, ws->points,
        ws->pixel_point, ws->levels);
    return GHM_CUDA_LAUNCH();
}

static int run_corners(GhmFeatureWorkspace *ws, int w, int h, const GhmFeatureParams *p)
{
    cudaStream_t s = ws->stream;
    size_t npix = (size_t)w * h;
    float **f = ws->f;
    int ret;
    if (p->tensor.radius == 0) {
        response_kernel<<<linear_blocks(npix), LINEAR_THREADS, 0, s>>>(f[F_GX], f[F_GY], npix,
                                                                       p->harris_k, f[F_RESP]);
    } else {
        dim3 grid = pixel_grid(w, h), block(TILE_X, TILE_Y);
        tensor_rows_kernel<<<grid, block, 0, s>>>(f[F_GX], f[F_GY], w, h, p->tensor, f[F_S0],
                                                  f[F_S1], f[F_S2]);
        if ((ret = GHM_CUDA_LAUNCH()) < 0)
            return ret;
        tensor_cols_kernel<<<grid, block, 0, s>>>(f[F_S0], f[F_S1], f[F_S2], w, h, p->tensor,
                                                  p->harris_k, f[F_RESP]);
    }
    if ((ret = GHM_CUDA_LAUNCH()) < 0)
        return ret;
    size_t bytes = ws->cub_bytes;
    if ((ret = GHM_CUDA(cub::DeviceReduce::Max(ws->cub_tmp, bytes, f[F_RESP],
                                               &ws->levels->max_response, (int)npix, s))) < 0)
        return ret;
    maxima_kernel<<<pixel_grid(w, h), dim3(TILE_X, TILE_Y), 0, s>>>(
        f[F_RESP], w, h, p->radius, p->rel_threshold, ws->levels, ws->cand);
    return GHM_CUDA_LAUNCH();
}

int ghmi_features_enqueue(GhmFeatureWorkspace *ws, int w, int h, const GhmFeatureParams *p)
{
    cudaStream_t s = ws->stream;
    int ret = GHM_CUDA(cudaMemsetAsync(ws->levels, 0, sizeof(Levels), s));
    if (ret < 0 || (ret = run_edges(ws, w, h, p)) < 0 ||
        (p->corners && (ret = run_corners(ws, w, h, p)) < 0))
        return ret;
    return GHM_CUDA(cudaMemcpyAsync(ws->host_levels, ws->levels, sizeof(Levels),
                                    cudaMemcpyDeviceToHost, s));
}

/* ghm_image_halve: each pixel the rounded mean of a 2 x 2 block of the source. */
static __global__ void halve_kernel(const uint8_t *src, size_t src_stride, int w, int h,
                                    uint8_t *dst)
{
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const uint8_t *a = src + (size_t)(2 * y) * src_stride, *b = a + src_stride;
    int sum = a[2 * x] + a[2 * x + 1] + b[2 * x] + b[2 * x + 1];
    dst[(size_t)y * w + x] = (uint8_t)((sum + 2) >> 2);
}

int ghmi_features_halve(cudaStream_t s, const uint8_t *src, size_t src_stride, int w, int h,
                        uint8_t *dst)
{
    halve_kernel<<<pixel_grid(w, h), dim3(TILE_X, TILE_Y), 0, s>>>(src, src_stride, w, h, dst);
    return GHM_CUDA_LAUNCH();
}
