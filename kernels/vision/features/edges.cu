/*
 * edges.cu - the per-pixel stages of vision/features/edges.c on the GPU: Gaussian blur (separable,
 * clamped borders), Sobel / 8 and the gradient magnitude, then non-maximum suppression across
 * the edge with interpolated neighbours and the parabola's sub-pixel offset. The chain around
 * them (noise floor, threshold, compaction, corners, whose tensor blur has kernels of its own
 * that blur three fields at once) is features.cu.
 *
 * Layout: row-major w x h float arrays, the input grey image as bytes with a row stride. Launch
 * shape: one thread per pixel, blocks of 32 x 8 (a warp reads a row segment: coalesced).
 *
 * Tolerance: none, the results are bit for bit edges.c's. Every float operation is written as
 * an explicitly rounded intrinsic (__fadd_rn, __fmul_rn, __fdiv_rn, __fsqrt_rn) in the order of
 * the C expressions, so nvcc cannot contract them into FMAs; edges.c is compiled as ISO C11 for
 * x86-64 without FMA, so it rounds every operation too.
 */
#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/backend_cuda.h"
#include "edges.h"
#include "features_internal.cuh"

static __device__ __forceinline__ int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Horizontal pass: tmp = g[0] p[x] + sum_i g[i] (p[x - i] + p[x + i]) over the grey image's
 * bytes (rows stride bytes apart). */
static __global__ __launch_bounds__(TILE_X *TILE_Y) void blur_rows_kernel(
    const uint8_t *px, int w, int h, size_t stride, GhmEdgeTaps t, float *tmp)
{
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const uint8_t *row = px + (size_t)y * stride;
    float s = __fmul_rn(t.g[0], (float)row[x]);
    for (int i = 1; i <= t.radius; i++)
        s = __fadd_rn(s, __fmul_rn(t.g[i], __fadd_rn((float)row[clampi(x - i, 0, w - 1)],
                                                     (float)row[clampi(x + i, 0, w - 1)])));
    tmp[(size_t)y * w + x] = s;
}

/* Vertical pass; with radius 0 (no blur) it copies the input as floats, as edges.c does. */
static __global__ __launch_bounds__(TILE_X *TILE_Y) void blur_cols_kernel(
    const uint8_t *px, const float *tmp, int w, int h, size_t stride, GhmEdgeTaps t, float *out)
{
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    if (t.radius == 0) {
        out[(size_t)y * w + x] = (float)px[(size_t)y * stride + x];
        return;
    }
    float s = __fmul_rn(t.g[0], tmp[(size_t)y * w + x]);
    for (int i = 1; i <= t.radius; i++)
        s = __fadd_rn(s, __fmul_rn(t.g[i], __fadd_rn(tmp[(size_t)clampi(y - i, 0, h - 1) * w + x],
                                                     tmp[(size_t)clampi(y + i, 0, h - 1) * w + x])));
    out[(size_t)y * w + x] = s;
}

static __global__ __launch_bounds__(TILE_X *TILE_Y) void sobel_kernel(const float *f, int w, int h,
                                                                     float *gx, float *gy,
                                                                     float *mag)
{
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    const float *up = f + (size_t)clampi(y - 1, 0, h - 1) * w, *mid = f + (size_t)y * w;
    const float *dn = f + (size_t)clampi(y + 1, 0, h - 1) * w;
    int xl = clampi(x - 1, 0, w - 1), xr = clampi(x + 1, 0, w - 1);
    /* (up[xr] - up[xl] + 2 (mid[xr] - mid[xl]) + dn[xr] - dn[xl]) / 8, left to right */
    float sx = __fadd_rn(__fsub_rn(up[xr], up[xl]), __fmul_rn(2.0f, __fsub_rn(mid[xr], mid[xl])));
    sx = __fsub_rn(__fadd_rn(sx, dn[xr]), dn[xl]);
    float sy = __fadd_rn(__fsub_rn(dn[xl], up[xl]), __fmul_rn(2.0f, __fsub_rn(dn[x], up[x])));
    sy = __fsub_rn(__fadd_rn(sy, dn[xr]), up[xr]);
    float vx = __fdiv_rn(sx, 8.0f), vy = __fdiv_rn(sy, 8.0f);
    size_t i = (size_t)y * w + x;
    gx[i] = vx;
    gy[i] = vy;
    mag[i] = __fsqrt_rn(__fadd_rn(__fmul_rn(vx, vx), __fmul_rn(vy, vy)));
}

/* edges.c's bilinear(): clamped coordinates, the same operation order. */
static __device__ __forceinline__ float bilinear(const float *m, int w, int h, float x, float y)
{
    x = x < 0.0f ? 0.0f : x;
    y = y < 0.0f ? 0.0f : y;
    x = x > (float)(w - 1) ? (float)(w - 1) : x;
    y = y > (float)(h - 1) ? (float)(h - 1) : y;
    int x0 = (int)x, y0 = (int)y;
    int x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
    float fx = __fsub_rn(x, (float)x0), fy = __fsub_rn(y, (float)y0);
    float ux = __fsub_rn(1.0f, fx), uy = __fsub_rn(1.0f, fy);
    const float *r0 = m + (size_t)y0 * w, *r1 = m + (size_t)y1 * w;
    float top = __fmul_rn(__fadd_rn(__fmul_rn(r0[x0], ux), __fmul_rn(r0[x1], fx)), uy);
    float bot = __fmul_rn(__fadd_rn(__fmul_rn(r1[x0], ux), __fmul_rn(r1[x1], fx)), fy);
    return __fadd_rn(top, bot);
}

static __global__ __launch_bounds__(TILE_X *TILE_Y) void suppress_kernel(
    const float *mag, const float *gx, const float *gy, int w, int h, const float *floor_ptr,
    float *nms, float *off)
{
    int x = blockIdx.x * TILE_X + threadIdx.x, y = blockIdx.y * TILE_Y + threadIdx.y;
    if (x >= w || y >= h)
        return;
    size_t i = (size_t)y * w + x;
    float m = mag[i], keep = 0.0f, o = 0.0f, floor_mag = *floor_ptr;
    if (!(m <= floor_mag || x == 0 || y == 0 || x == w - 1 || y == h - 1)) {
        float cx = __fdiv_rn(gx[i], m), cy = __fdiv_rn(gy[i], m);
        float m1 = bilinear(mag, w, h, __fadd_rn((float)x, cx), __fadd_rn((float)y, cy));
        float m2 = bilinear(mag, w, h, __fsub_rn((float)x, cx), __fsub_rn((float)y, cy));
        if (m > m1 && m >= m2) {
            float den = __fadd_rn(__fsub_rn(m2, __fmul_rn(2.0f, m)), m1);
            float t = den < 0.0f ? __fdiv_rn(__fmul_rn(0.5f, __fsub_rn(m2, m1)), den) : 0.0f;
            keep = m;
            o = t < -0.5f ? -0.5f : t > 0.5f ? 0.5f : t;
        }
    }
    nms[i] = keep;
    off[i] = o;
}

extern "C" int ghm_cuda_edge_gradients(cudaStream_t s, const uint8_t *pixels, int w, int h,
                                       size_t stride, const GhmEdgeTaps *taps, float *tmp,
                                       float *blur, float *gx, float *gy, float *mag)
{
    if (!pixels || !taps || !tmp || !blur || !gx || !gy || !mag || w < 1 || h < 1 ||
        stride < (size_t)w || taps->radius < 0 || taps->radius > GHM_EDGE_MAX_RADIUS)
        return GHM_ERR_INVALID;
    dim3 grid = pixel_grid(w, h), block(TILE_X, TILE_Y);
    int ret = GHM_OK;
    if (taps->radius > 0) {
        blur_rows_kernel<<<grid, block, 0, s>>>(pixels, w, h, stride, *taps, tmp);
        if ((ret = GHM_CUDA_LAUNCH()) < 0)
            return ret;
    }
    blur_cols_kernel<<<grid, block, 0, s>>>(pixels, tmp, w, h, stride, *taps, blur);
    if ((ret = GHM_CUDA_LAUNCH()) < 0)
        return ret;
    sobel_kernel<<<grid, block, 0, s>>>(blur, w, h, gx, gy, mag);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_edge_suppress(cudaStream_t s, const float *mag, const float *gx,
                                      const float *gy, int w, int h, const float *floor_mag,
                                      float *nms, float *off)
{
    if (!mag || !gx || !gy || !floor_mag || !nms || !off || w < 1 || h < 1)
        return GHM_ERR_INVALID;
    suppress_kernel<<<pixel_grid(w, h), dim3(TILE_X, TILE_Y), 0, s>>>(
        mag, gx, gy, w, h, floor_mag, nms, off);
    return GHM_CUDA_LAUNCH();
}
