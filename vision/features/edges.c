/*
 * edges.c - Sobel edges thinned by non-maximum suppression, with a noise floor and a quantile
 * threshold; see ghm_edges.h. The filter is blur.c, grid sampling edge_sampling.c, Harris
 * corners corners.c, the chain on a device features_device.c.
 */
#include "ghm_edges.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_sort_internal.h"
#include "edges_internal.h"

#define GHM_PI 3.14159265358979323846

GhmEdgeParams ghm_edge_defaults(void)
{
    GhmEdgeParams p = {.blur_sigma = 1.0, .percentile = 0.35, .noise_factor = 4.0};
    return p;
}

GhmCornerParams ghm_corner_defaults(void)
{
    GhmCornerParams p = {
        .sigma = 1.5, .k = 0.05, .radius = 3, .rel_threshold = 0.001, .max_corners = 20000,
        .grid = 0, .spacing = 10.0};
    return p;
}

void ghm_edges_free(GhmEdges **e)
{
    if (!e || !*e)
        return;
    free((*e)->points);
    free((*e)->pixel_point);
    free((*e)->gx);
    free((*e)->gy);
    free(*e);
    *e = NULL;
}
/* Immerkaer's fast noise estimate (1996): the grey-level noise sigma of the image. Texture
 * inflates it a little, which only raises the floor on busy images. */
static double image_noise_sigma(const GhmImage *img)
{
    int w = img->width, h = img->height;
    if (w < 3 || h < 3)
        return 0.0;
    /* Exact integer sums per row, added in a fixed order: the same value for any thread count. */
    int64_t total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static) if (ghmi_parallel_image(w, h))
    for (int y = 1; y < h - 1; y++) {
        const uint8_t *a = img->pixels + (size_t)(y - 1) * img->stride;
        const uint8_t *b = a + img->stride, *c = b + img->stride;
        int64_t s = 0;
        for (int x = 1; x < w - 1; x++) {
            int v = a[x - 1] - 2 * a[x] + a[x + 1] - 2 * b[x - 1] + 4 * b[x] - 2 * b[x + 1] +
                    c[x - 1] - 2 * c[x] + c[x + 1];
            s += abs(v);
        }
        total += s;
    }
    return sqrt(GHM_PI / 2.0) * (double)total / (6.0 * (w - 2) * (double)(h - 2));
}

/* The Sobel gradient / 8 at column x of a row, its neighbours taken at columns xl and xr. */
static inline void sobel_at(const float *up, const float *mid, const float *dn, int x, int xl,
                            int xr, float *gx, float *gy)
{
    gx[x] = (up[xr] - up[xl] + 2.0f * (mid[xr] - mid[xl]) + dn[xr] - dn[xl]) / 8.0f;
    gy[x] = (dn[xl] - up[xl] + 2.0f * (dn[x] - up[x]) + dn[xr] - up[xr]) / 8.0f;
}

/* One row of sobel from the rows above (up), at (mid) and below (dn), the borders clamped. The
 * interior's loop takes no clamps and its rows are restrict, so that it vectorises. */
static void sobel_row(const float *restrict up, const float *restrict mid,
                      const float *restrict dn, float *restrict gx, float *restrict gy, int w)
{
    for (int x = 1; x < w - 1; x++)
        sobel_at(up, mid, dn, x, x - 1, x + 1, gx, gy);
    sobel_at(up, mid, dn, 0, 0, w > 1 ? 1 : 0, gx, gy);
    if (w > 1)
        sobel_at(up, mid, dn, w - 1, w - 2, w - 1, gx, gy);
}

static void sobel(const float *f, float *gx, float *gy, int w, int h)
{
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (int y = 0; y < h; y++)
        sobel_row(f + (size_t)ghmi_clampi(y - 1, 0, h - 1) * w, f + (size_t)y * w,
                  f + (size_t)ghmi_clampi(y + 1, 0, h - 1) * w, gx + (size_t)y * w,
                  gy + (size_t)y * w, w);
}

/* The pixel index is an int (ghm_edges_detect takes at most GHM_IMAGE_MAX_PIXELS): in
 * suppress_row's vectorised loop GCC gathers with 32-bit lane indices but not with 64-bit. */
static inline float bilinear(const float *m, int w, int h, float x, float y)
{
    if (x < 0.0f)
        x = 0.0f;
    if (y < 0.0f)
        y = 0.0f;
    if (x > (float)(w - 1))
        x = (float)(w - 1);
    if (y > (float)(h - 1))
        y = (float)(h - 1);
    int x0 = (int)x, y0 = (int)y;
    int x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
    float fx = x - (float)x0, fy = y - (float)y0;
    int r0 = y0 * w, r1 = y1 * w;
    return (m[r0 + x0] * (1 - fx) + m[r0 + x1] * fx) * (1 - fy) +
           (m[r1 + x0] * (1 - fx) + m[r1 + x1] * fx) * fy;
}
_Static_assert(GHM_IMAGE_MAX_PIXELS <= 2147483647u, "bilinear's pixel index is an int");

/* One row of suppress, 0 < y < h - 1, x from 1 to w - 2. Written without branches (every
 * pixel takes both neighbours, then keeps or drops the result) so that the loop vectorises;
 * a kept pixel's arithmetic is the same as with branches, and a dropped one divides by 1,
 * not by a magnitude that may be 0, so that its positions stay finite. `omp simd` because GCC
 * cannot tell that the gathers from mag miss nms and off (they never overlap); it vectorises
 * across pixels only, each pixel's operations and their order unchanged. */
static void suppress_row(const float *mag, const float *gx, const float *gy, int w, int h, int y,
                         float floor_mag, float *nms, float *off)
{
#pragma omp simd
    for (int x = 1; x < w - 1; x++) {
        size_t i = (size_t)y * w + x;
        float m = mag[i];
        int live = m > floor_mag;
        float d = live ? m : 1.0f, cx = gx[i] / d, cy = gy[i] / d;
        float m1 = bilinear(mag, w, h, (float)x + cx, (float)y + cy);
        float m2 = bilinear(mag, w, h, (float)x - cx, (float)y - cy);
        float den = m2 - 2.0f * m + m1;
        float t = 0.5f * (m2 - m1) / den;
        t = den < 0.0f ? t : 0.0f;
        t = t < -0.5f ? -0.5f : t > 0.5f ? 0.5f : t;
        int keep = live & (m > m1) & (m >= m2);
        nms[i] = keep ? m : 0.0f;
        off[i] = keep ? t : 0.0f;
    }
}

/* Non-maximum suppression across the edge with interpolated neighbours. Writes the magnitude
 * of surviving maxima above floor to nms (0 elsewhere) and their sub-pixel offset along the
 * gradient to off. The tie rule (> on one side, >= on the other) keeps exactly one pixel of a
 * two-pixel plateau, so contours come out one pixel wide. */
static void suppress(const float *mag, const float *gx, const float *gy, int w, int h,
                     float floor_mag, float *nms, float *off)
{
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (int y = 0; y < h; y++) {
        size_t i = (size_t)y * w;
        if (y == 0 || y == h - 1 || w < 3) {
            memset(nms + i, 0, (size_t)w * sizeof *nms);
            memset(off + i, 0, (size_t)w * sizeof *off);
            continue;
        }
        nms[i] = off[i] = nms[i + w - 1] = off[i + w - 1] = 0.0f;
        suppress_row(mag, gx, gy, w, h, y, floor_mag, nms, off);
    }
}

/* start[y + 1] = how many pixels of row y of nms (w x h) are at least thr and positive, then
 * the prefix sums: where row y's share of a compacted array starts (start[0] = 0, start[h] the
 * total), so that the rows can be compacted in parallel, in raster order. start has h + 1. */
static void row_starts(const float *nms, int w, int h, float thr, size_t *start)
{
    start[0] = 0;
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (int y = 0; y < h; y++) {
        const float *row = nms + (size_t)y * w;
        size_t n = 0;
        for (int x = 0; x < w; x++)
            n += (row[x] >= thr) & (row[x] > 0.0f); /* &, not &&: no branch, it vectorises */
        start[y + 1] = n;
    }
    for (int y = 0; y < h; y++)
        start[y + 1] += start[y];
}

/* The magnitude threshold: the given quantile of the surviving maxima (at most half of their
 * 90 % quantile), at least floor_mag. start: room for h + 1 (row_starts). */
static int choose_threshold(const float *nms, int w, int h, double quantile, float floor_mag,
                            size_t *start, float *out)
{
    row_starts(nms, w, h, 0.0f, start);
    size_t n = start[h];
    *out = floor_mag;
    if (n == 0 || quantile <= 0.0)
        return GHM_OK;
    /* The maxima's bits, in order by the backend's radix sort (positive floats order as their
     * bits), on the threads. Until 2026-12-02 two quickselects, serial, a mispredicted branch
     * a step: ~1.3 ms of a one-shot pair's serial time on 2 cores (docs/BENCHMARKS.md). */
    uint32_t *v = malloc(n * sizeof *v);
    if (!v)
        return GHM_ERR_NOMEM;
    int team = ghmi_parallel_image(w, h);
#pragma omp parallel for schedule(static) if (team)
    for (int y = 0; y < h; y++) {
        const float *row = nms + (size_t)y * w;
        size_t k = start[y];
        for (int x = 0; x < w; x++)
            if (row[x] > 0.0f)
                memcpy(&v[k++], &row[x], sizeof *v);
    }
    int ret = ghmi_cpu_sort_pairs(team ? omp_get_max_threads() : 1, v, NULL, n);
    if (ret < 0) {
        free(v);
        return ret;
    }
    float q, strong;
    memcpy(&q, &v[(size_t)(quantile * (double)(n - 1))], sizeof q);
    memcpy(&strong, &v[(size_t)(0.9 * (double)(n - 1))], sizeof strong);
    free(v);
    /* On a clean picture whose edges are all equally strong the quantile would cut real
     * contours; never ask for more than half the strength of the strong (90 %) edges. */
    strong *= 0.5f;
    if (q > strong)
        q = strong;
    if (q > *out)
        *out = q;
    return GHM_OK;
}

/* Compacts the maxima at or above the threshold into e->points, in raster order, the rows in
 * parallel (start: room for h + 1, row_starts). */
static int compact_points(GhmEdges *e, const float *nms, const float *off, size_t *start)
{
    int w = e->width, h = e->height;
    row_starts(nms, w, h, e->threshold, start);
    size_t n = start[h];
    e->points = malloc((n ? n : 1) * sizeof *e->points);
    if (!e->points)
        return GHM_ERR_NOMEM;
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (int y = 0; y < h; y++) {
        size_t k = start[y];
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            if (!(nms[i] >= e->threshold && nms[i] > 0.0f)) {
                e->pixel_point[i] = -1;
                continue;
            }
            float m = nms[i], cx = e->gx[i] / m, cy = e->gy[i] / m;
            GhmEdgePoint *p = &e->points[k];
            p->x = (float)x + off[i] * cx;
            p->y = (float)y + off[i] * cy;
            /* atan2 in double, then rounded: correctly rounded in practice on every libm, so
             * the CUDA chain (features.cu) gets the same float. */
            p->angle = (float)atan2((double)e->gy[i], (double)e->gx[i]);
            p->strength = m;
            e->pixel_point[i] = (int32_t)k++;
        }
    }
    e->count = n;
    return GHM_OK;
}

static int detect_into(const GhmImage *img, const GhmEdgeParams *p, GhmEdges *e, float *a,
                       float *b, float *c)
{
    int w = img->width, h = img->height;
    size_t npix = (size_t)w * h;
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            a[(size_t)y * w + x] = img->pixels[(size_t)y * img->stride + x];
    float g[GHMI_MAX_KERNEL_RADIUS + 1];
    int r = ghmi_gaussian_taps(p->blur_sigma, g);
    if (r > 0)
        ghmi_convolve_sep(a, b, a, w, h, g, r);
    sobel(a, e->gx, e->gy, w, h);
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (size_t i = 0; i < npix; i++)
        b[i] = sqrtf(e->gx[i] * e->gx[i] + e->gy[i] * e->gy[i]);
    /* Rayleigh mean of the gradient magnitude of pure noise is sigma * sqrt(pi / 2). */
    e->noise =
        (float)(image_noise_sigma(img) * ghmi_gradient_noise_gain(g, r) * sqrt(GHM_PI / 2.0));
    float floor_mag = (float)p->noise_factor * e->noise;
    if (floor_mag < 0.5f)
        floor_mag = 0.5f; /* an exactly clean image: ignore rounding ripples */
    suppress(b, e->gx, e->gy, w, h, floor_mag, a, c);
    size_t *start = malloc(((size_t)h + 1) * sizeof *start);
    if (!start)
        return GHM_ERR_NOMEM;
    int ret = choose_threshold(a, w, h, p->percentile, floor_mag, start, &e->threshold);
    if (ret == GHM_OK)
        ret = compact_points(e, a, c, start);
    free(start);
    return ret;
}

int ghm_edges_detect(const GhmImage *img, const GhmEdgeParams *p, GhmEdges **out)
{
    if (!img || !p || !out || !img->pixels || img->width < 1 || img->height < 1)
        return GHM_ERR_INVALID;
    if ((size_t)img->width * (size_t)img->height > GHM_IMAGE_MAX_PIXELS)
        return GHM_ERR_TOO_LARGE; /* the images the library makes never are (bilinear's index) */
    if (p->blur_sigma < 0.0 || p->blur_sigma > 5.0 || p->percentile < 0.0 ||
        p->percentile >= 1.0 || p->noise_factor < 0.0)
        return GHM_ERR_INVALID;
    *out = NULL;
    int w = img->width, h = img->height, ret = GHM_ERR_NOMEM;
    size_t npix = (size_t)w * h;
    float *a = NULL, *b = NULL, *c = NULL;
    GhmEdges *e = calloc(1, sizeof *e);
    if (!e)
        return GHM_ERR_NOMEM;
    e->width = w;
    e->height = h;
    e->gx = malloc(npix * sizeof *e->gx);
    e->gy = malloc(npix * sizeof *e->gy);
    e->pixel_point = malloc(npix * sizeof *e->pixel_point);
    a = malloc(npix * sizeof *a);
    b = malloc(npix * sizeof *b);
    c = malloc(npix * sizeof *c);
    if (!e->gx || !e->gy || !e->pixel_point || !a || !b || !c)
        goto fail;
    if ((ret = detect_into(img, p, e, a, b, c)) < 0)
        goto fail;
    free(a);
    free(b);
    free(c);
    *out = e;
    return GHM_OK;
fail:
    free(a);
    free(b);
    free(c);
    ghm_edges_free(&e);
    return ret;
}
