/*
 * edges.c - Sobel edges thinned by non-maximum suppression, grid subsampling and Harris
 * corners; see ghm_edges.h.
 */
#include "ghm_edges.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edges_internal.h"

#define MAX_KERNEL_RADIUS 16
_Static_assert(MAX_KERNEL_RADIUS == GHM_EDGE_MAX_RADIUS, "device taps hold the CPU's");
#define GHM_PI 3.14159265358979323846

GhmEdgeParams ghm_edge_defaults(void)
{
    GhmEdgeParams p = {.blur_sigma = 1.0, .percentile = 0.35, .noise_factor = 4.0};
    return p;
}

GhmCornerParams ghm_corner_defaults(void)
{
    GhmCornerParams p = {
        .sigma = 1.5, .k = 0.05, .radius = 3, .rel_threshold = 0.001, .max_corners = 200,
        .grid = 6};
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

/* Normalised 1-D Gaussian taps g[0..r]; returns the radius r (0 for sigma 0: no blur). */
static int gaussian_taps(double sigma, float *g)
{
    if (sigma <= 0.0) {
        g[0] = 1.0f;
        return 0;
    }
    int r = (int)ceil(3.0 * sigma);
    if (r > MAX_KERNEL_RADIUS)
        r = MAX_KERNEL_RADIUS;
    double sum = 0.0, t[MAX_KERNEL_RADIUS + 1];
    for (int i = 0; i <= r; i++) {
        t[i] = exp(-0.5 * i * i / (sigma * sigma));
        sum += i ? 2.0 * t[i] : t[i];
    }
    for (int i = 0; i <= r; i++)
        g[i] = (float)(t[i] / sum);
    return r;
}

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* One row of the horizontal pass: out[x] = g[0] row[x] + sum_i g[i] (row[x - i] + row[x + i]),
 * added in that order for every x (the CUDA kernels add in the same order: same bits). The
 * interior needs no clamping, so its loops over x vectorise. */
static void convolve_row(const float *row, float *out, int w, const float *g, int r)
{
    int lo = r < w ? r : w, hi = w - r > lo ? w - r : lo;
    for (int x = 0; x < w; x++)
        out[x] = g[0] * row[x];
    for (int i = 1; i <= r; i++) {
        for (int x = 0; x < lo; x++)
            out[x] += g[i] * (row[clampi(x - i, 0, w - 1)] + row[clampi(x + i, 0, w - 1)]);
        for (int x = lo; x < hi; x++)
            out[x] += g[i] * (row[x - i] + row[x + i]);
        for (int x = hi; x < w; x++)
            out[x] += g[i] * (row[clampi(x - i, 0, w - 1)] + row[clampi(x + i, 0, w - 1)]);
    }
}

/* Separable symmetric convolution with clamped borders: src -> dst (tmp: w*h scratch; dst may
 * be src). The vertical pass takes the rows y - i and y + i whole, in the order of i, so it
 * vectorises over x with the same order of additions per pixel as the horizontal one. */
static void convolve_sep(const float *src, float *tmp, float *dst, int w, int h, const float *g,
                         int r)
{
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++)
        convolve_row(src + (size_t)y * w, tmp + (size_t)y * w, w, g, r);
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++) {
        float *out = dst + (size_t)y * w;
        const float *mid = tmp + (size_t)y * w;
        for (int x = 0; x < w; x++)
            out[x] = g[0] * mid[x];
        for (int i = 1; i <= r; i++) {
            const float *up = tmp + (size_t)clampi(y - i, 0, h - 1) * w;
            const float *dn = tmp + (size_t)clampi(y + i, 0, h - 1) * w;
            for (int x = 0; x < w; x++)
                out[x] += g[i] * (up[x] + dn[x]);
        }
    }
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
#pragma omp parallel for reduction(+ : total) schedule(static)
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

/* Standard deviation of one Sobel/8 component for unit white noise after the blur: the root
 * sum of squares of the combined (Gaussian * Sobel) kernel. */
static double gradient_noise_gain(const float *g, int r)
{
    int n = 2 * r + 3;
    double k[2 * MAX_KERNEL_RADIUS + 3][2 * MAX_KERNEL_RADIUS + 3];
    memset(k, 0, sizeof k);
    static const int sob[3][3] = {{-1, 0, 1}, {-2, 0, 2}, {-1, 0, 1}};
    for (int a = -r; a <= r; a++)
        for (int b = -r; b <= r; b++)
            for (int i = -1; i <= 1; i++)
                for (int j = -1; j <= 1; j++)
                    k[a + i + r + 1][b + j + r + 1] +=
                        (double)g[abs(a)] * g[abs(b)] * sob[i + 1][j + 1] / 8.0;
    double s = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            s += k[i][j] * k[i][j];
    return sqrt(s);
}

static void sobel(const float *f, float *gx, float *gy, int w, int h)
{
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++) {
        const float *up = f + (size_t)clampi(y - 1, 0, h - 1) * w;
        const float *mid = f + (size_t)y * w;
        const float *dn = f + (size_t)clampi(y + 1, 0, h - 1) * w;
        for (int x = 0; x < w; x++) {
            int xl = clampi(x - 1, 0, w - 1), xr = clampi(x + 1, 0, w - 1);
            gx[(size_t)y * w + x] =
                (up[xr] - up[xl] + 2.0f * (mid[xr] - mid[xl]) + dn[xr] - dn[xl]) / 8.0f;
            gy[(size_t)y * w + x] =
                (dn[xl] - up[xl] + 2.0f * (dn[x] - up[x]) + dn[xr] - up[xr]) / 8.0f;
        }
    }
}

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
    const float *r0 = m + (size_t)y0 * w, *r1 = m + (size_t)y1 * w;
    return (r0[x0] * (1 - fx) + r0[x1] * fx) * (1 - fy) + (r1[x0] * (1 - fx) + r1[x1] * fx) * fy;
}

/* Non-maximum suppression across the edge with interpolated neighbours. Writes the magnitude
 * of surviving maxima above floor to nms (0 elsewhere) and their sub-pixel offset along the
 * gradient to off. The tie rule (> on one side, >= on the other) keeps exactly one pixel of a
 * two-pixel plateau, so contours come out one pixel wide. */
static void suppress(const float *mag, const float *gx, const float *gy, int w, int h,
                     float floor_mag, float *nms, float *off)
{
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * w + x;
            float m = mag[i];
            nms[i] = 0.0f;
            off[i] = 0.0f;
            if (m <= floor_mag || x == 0 || y == 0 || x == w - 1 || y == h - 1)
                continue;
            float cx = gx[i] / m, cy = gy[i] / m;
            float m1 = bilinear(mag, w, h, (float)x + cx, (float)y + cy);
            float m2 = bilinear(mag, w, h, (float)x - cx, (float)y - cy);
            if (!(m > m1 && m >= m2))
                continue;
            float den = m2 - 2.0f * m + m1;
            float t = den < 0.0f ? 0.5f * (m2 - m1) / den : 0.0f;
            nms[i] = m;
            off[i] = t < -0.5f ? -0.5f : t > 0.5f ? 0.5f : t;
        }
    }
}

/* The k-th smallest of v[0..n) (0-based), by quickselect: the value a full sort would put at
 * v[k], in linear expected time (sorting every maximum of a 1080p image cost tens of ms).
 * Reorders v. */
static float select_kth(float *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The magnitude threshold: the given quantile of the surviving maxima (at most half of their
 * 90 % quantile), at least floor_mag. */
static int choose_threshold(const float *nms, size_t npix, double quantile, float floor_mag,
                            float *out)
{
    size_t n = 0;
    for (size_t i = 0; i < npix; i++)
        n += nms[i] > 0.0f;
    *out = floor_mag;
    if (n == 0 || quantile <= 0.0)
        return GHM_OK;
    float *v = malloc(n * sizeof *v);
    if (!v)
        return GHM_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < npix; i++)
        if (nms[i] > 0.0f)
            v[k++] = nms[i];
    float q = select_kth(v, n, (size_t)(quantile * (double)(n - 1)));
    /* On a clean picture whose edges are all equally strong the quantile would cut real
     * contours; never ask for more than half the strength of the strong (90 %) edges. */
    float strong = 0.5f * select_kth(v, n, (size_t)(0.9 * (double)(n - 1)));
    if (q > strong)
        q = strong;
    free(v);
    if (q > *out)
        *out = q;
    return GHM_OK;
}

/* Compacts the maxima at or above the threshold into e->points, in raster order. */
static int compact_points(GhmEdges *e, const float *nms, const float *off)
{
    size_t npix = (size_t)e->width * e->height, n = 0;
    for (size_t i = 0; i < npix; i++)
        n += nms[i] >= e->threshold && nms[i] > 0.0f;
    e->points = malloc((n ? n : 1) * sizeof *e->points);
    if (!e->points)
        return GHM_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < npix; i++) {
        if (!(nms[i] >= e->threshold && nms[i] > 0.0f)) {
            e->pixel_point[i] = -1;
            continue;
        }
        float m = nms[i], cx = e->gx[i] / m, cy = e->gy[i] / m;
        GhmEdgePoint *p = &e->points[k];
        p->x = (float)(i % (size_t)e->width) + off[i] * cx;
        p->y = (float)(i / (size_t)e->width) + off[i] * cy;
        /* atan2 in double, then rounded: correctly rounded in practice on every libm, so the
         * CUDA chain (features.cu) gets the same float. */
        p->angle = (float)atan2((double)e->gy[i], (double)e->gx[i]);
        p->strength = m;
        e->pixel_point[i] = (int32_t)k++;
    }
    e->count = k;
    return GHM_OK;
}

static int detect_into(const GhmImage *img, const GhmEdgeParams *p, GhmEdges *e, float *a,
                       float *b, float *c)
{
    int w = img->width, h = img->height;
    size_t npix = (size_t)w * h;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            a[(size_t)y * w + x] = img->pixels[(size_t)y * img->stride + x];
    float g[MAX_KERNEL_RADIUS + 1];
    int r = gaussian_taps(p->blur_sigma, g);
    if (r > 0)
        convolve_sep(a, b, a, w, h, g, r);
    sobel(a, e->gx, e->gy, w, h);
    for (size_t i = 0; i < npix; i++)
        b[i] = sqrtf(e->gx[i] * e->gx[i] + e->gy[i] * e->gy[i]);
    /* Rayleigh mean of the gradient magnitude of pure noise is sigma * sqrt(pi / 2). */
    e->noise = (float)(image_noise_sigma(img) * gradient_noise_gain(g, r) * sqrt(GHM_PI / 2.0));
    float floor_mag = (float)p->noise_factor * e->noise;
    if (floor_mag < 0.5f)
        floor_mag = 0.5f; /* an exactly clean image: ignore rounding ripples */
    suppress(b, e->gx, e->gy, w, h, floor_mag, a, c);
    int ret = choose_threshold(a, npix, p->percentile, floor_mag, &e->threshold);
    if (ret < 0)
        return ret;
    return compact_points(e, a, c);
}

int ghm_edges_detect(const GhmImage *img, const GhmEdgeParams *p, GhmEdges **out)
{
    if (!img || !p || !out || !img->pixels || img->width < 1 || img->height < 1)
        return GHM_ERR_INVALID;
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

int ghm_edges_grid_sample(const GhmEdgePoint *pts, size_t n, int width, int height, double cell,
                          uint32_t *idx, size_t *kept)
{
    if ((!pts && n) || !idx || !kept || width < 1 || height < 1 || !(cell >= 1.0))
        return GHM_ERR_INVALID;
    int cw = (int)ceil(width / cell), ch = (int)ceil(height / cell);
    size_t ncell = (size_t)cw * ch;
    int32_t *best = malloc((ncell ? ncell : 1) * sizeof *best);
    if (!best)
        return GHM_ERR_NOMEM;
    for (size_t i = 0; i < ncell; i++)
        best[i] = -1;
    for (size_t i = 0; i < n; i++) {
        int cx = clampi((int)((pts[i].x + 0.5f) / cell), 0, cw - 1);
        int cy = clampi((int)((pts[i].y + 0.5f) / cell), 0, ch - 1);
        int32_t *b = &best[(size_t)cy * cw + cx];
        if (*b < 0 || pts[i].strength > pts[*b].strength)
            *b = (int32_t)i;
    }
    /* Cells are visited in raster order but the indices must come out ascending. */
    uint8_t *keep = calloc(n ? n : 1, 1);
    if (!keep) {
        free(best);
        return GHM_ERR_NOMEM;
    }
    for (size_t i = 0; i < ncell; i++)
        if (best[i] >= 0)
            keep[best[i]] = 1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (keep[i])
            idx[k++] = (uint32_t)i;
    *kept = k;
    free(keep);
    free(best);
    return GHM_OK;
}

int ghm_edges_sample_capped(const GhmEdgePoint *pts, size_t n, int width, int height,
                            double min_cell, size_t max_points, uint32_t *idx, size_t *kept,
                            double *cell_used)
{
    if (!(min_cell >= 1.0) || max_points < 1)
        return GHM_ERR_INVALID;
    double cell = min_cell;
    for (int iter = 0; iter < GHMI_SAMPLE_TRIES; iter++) {
        int ret = ghm_edges_grid_sample(pts, n, width, height, cell, idx, kept);
        if (ret < 0)
            return ret;
        if (*kept <= max_points)
            break;
        cell = ghmi_sample_next_cell(cell, *kept, max_points);
    }
    if (cell_used)
        *cell_used = cell;
    return GHM_OK;
}

double ghmi_sample_next_cell(double cell, size_t kept, size_t max_points)
{
    /* Points on contours scale with 1 / cell; grow a little beyond the estimate. */
    return cell * fmax(1.05, 1.02 * (double)kept / (double)max_points);
}

/* --- Harris corners ------------------------------------------------------------------------ */

static int cmp_cand(const void *a, const void *b)
{
    const GhmCornerCand *x = a, *y = b;
    if (x->response != y->response)
        return x->response < y->response ? 1 : -1;
    return (x->pixel > y->pixel) - (x->pixel < y->pixel);
}

/* Harris response into resp (w*h); uses s0..s2 (w*h each) and tmp for the structure tensor. */
static void harris_response(const GhmEdges *e, const GhmCornerParams *p, float *resp, float *s0,
                            float *s1, float *s2, float *tmp)
{
    int w = e->width, h = e->height;
    size_t npix = (size_t)w * h;
    for (size_t i = 0; i < npix; i++) {
        s0[i] = e->gx[i] * e->gx[i];
        s1[i] = e->gy[i] * e->gy[i];
        s2[i] = e->gx[i] * e->gy[i];
    }
    float g[MAX_KERNEL_RADIUS + 1];
    int r = gaussian_taps(p->sigma, g);
    if (r > 0) {
        convolve_sep(s0, tmp, s0, w, h, g, r);
        convolve_sep(s1, tmp, s1, w, h, g, r);
        convolve_sep(s2, tmp, s2, w, h, g, r);
    }
    float k = (float)p->k;
    for (size_t i = 0; i < npix; i++) {
        float tr = s0[i] + s1[i];
        resp[i] = s0[i] * s1[i] - s2[i] * s2[i] - k * tr * tr;
    }
}

/* The vertex of the parabola through three samples, as an offset in [-0.5, 0.5]. */
static float parabola_offset(float a, float b, float c)
{
    float den = a - 2.0f * b + c;
    float t = den < 0.0f ? 0.5f * (a - c) / den : 0.0f;
    return t < -0.5f ? -0.5f : t > 0.5f ? 0.5f : t;
}

/* Strict local maxima of resp within radius (ties go to the earlier pixel in raster order),
 * positive and at least thr, away from the border where the response is unreliable. */
static size_t local_maxima(const float *resp, int w, int h, int radius, float thr,
                           GhmCornerCand *cand)
{
    size_t n = 0;
    int border = radius + 2;
    for (int y = border; y < h - border; y++) {
        for (int x = border; x < w - border; x++) {
            float v = resp[(size_t)y * w + x];
            if (v <= 0.0f || v < thr)
                continue;
            int is_max = 1;
            for (int dy = -radius; dy <= radius && is_max; dy++)
                for (int dx = -radius; dx <= radius; dx++) {
                    float u = resp[(size_t)(y + dy) * w + x + dx];
                    int earlier = dy < 0 || (dy == 0 && dx < 0);
                    if (u > v || (u == v && earlier && (dx || dy))) {
                        is_max = 0;
                        break;
                    }
                }
            if (is_max) {
                const float *r0 = resp + (size_t)y * w + x;
                cand[n].response = v;
                cand[n].pixel = y * w + x;
                cand[n].x = (float)x + parabola_offset(r0[-1], r0[0], r0[1]);
                cand[n].y = (float)y + parabola_offset(r0[-w], r0[0], r0[w]);
                n++;
            }
        }
    }
    return n;
}

/* Keeps max_corners of the nc candidates (sorted strongest first), spread over the image: each
 * of about grid x grid square cells first takes up to its share, then the strongest left fill
 * up. Low-contrast regions keep their own corners, so that a query cut from anywhere in the
 * image finds basis points there. Leaves the kept ones sorted strongest first. */
static int spread(GhmCornerCand *cand, size_t *nc, int w, int h, const GhmCornerParams *p)
{
    double cell = (double)(w > h ? w : h) / p->grid;
    int cw = (int)ceil(w / cell), ch = (int)ceil(h / cell);
    size_t quota = p->max_corners / ((size_t)cw * ch);
    size_t *used = calloc((size_t)cw * ch, sizeof *used);
    uint8_t *take = calloc(*nc, 1);
    if (!used || !take) {
        free(used);
        free(take);
        return GHM_ERR_NOMEM;
    }
    size_t k = 0;
    for (size_t i = 0; i < *nc && k < p->max_corners; i++) {
        int x = cand[i].pixel % w, y = cand[i].pixel / w;
        size_t c = (size_t)((int)(y / cell) * cw + (int)(x / cell));
        if (used[c] < quota) {
            used[c]++;
            take[i] = 1;
            k++;
        }
    }
    for (size_t i = 0; i < *nc && k < p->max_corners; i++)
        if (!take[i]) {
            take[i] = 1;
            k++;
        }
    size_t n = 0;
    for (size_t i = 0; i < *nc; i++) /* stable: the order stays strongest first */
        if (take[i])
            cand[n++] = cand[i];
    *nc = n;
    free(used);
    free(take);
    return GHM_OK;
}

static int check_corner_params(const GhmCornerParams *p)
{
    return p->sigma < 0.0 || p->sigma > 5.0 || p->radius < 1 || p->radius > 32 ||
                   p->rel_threshold < 0.0
               ? GHM_ERR_INVALID
               : GHM_OK;
}

/* Whether the image is large enough for corners at all (the border takes radius + 2). */
static int corners_fit(int w, int h, const GhmCornerParams *p)
{
    return w >= 2 * p->radius + 5 && h >= 2 * p->radius + 5 && p->max_corners > 0;
}

int ghmi_corners_select(GhmCornerCand *cand, size_t nc, int w, int h, const GhmCornerParams *p,
                        GhmCorner **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    qsort(cand, nc, sizeof *cand, cmp_cand);
    int ret;
    if (nc > p->max_corners && p->grid > 0 && (ret = spread(cand, &nc, w, h, p)) < 0)
        return ret;
    if (nc > p->max_corners)
        nc = p->max_corners;
    if (nc && !(*out = malloc(nc * sizeof **out)))
        return GHM_ERR_NOMEM;
    for (size_t i = 0; i < nc; i++) {
        (*out)[i].x = cand[i].x;
        (*out)[i].y = cand[i].y;
        (*out)[i].response = cand[i].response;
    }
    *n = nc;
    return GHM_OK;
}

int ghm_corners_detect(const GhmEdges *e, const GhmCornerParams *p, GhmCorner **out, size_t *n)
{
    if (!e || !p || !out || !n || check_corner_params(p) < 0)
        return GHM_ERR_INVALID;
    *out = NULL;
    *n = 0;
    int w = e->width, h = e->height;
    if (!corners_fit(w, h, p))
        return GHM_OK;
    size_t npix = (size_t)w * h;
    int ret = GHM_ERR_NOMEM;
    float *buf = malloc(5 * npix * sizeof *buf);
    GhmCornerCand *cand = NULL;
    if (!buf)
        return GHM_ERR_NOMEM;
    float *resp = buf;
    harris_response(e, p, resp, buf + npix, buf + 2 * npix, buf + 3 * npix, buf + 4 * npix);
    float maxr = 0.0f;
    for (size_t i = 0; i < npix; i++)
        if (resp[i] > maxr)
            maxr = resp[i];
    cand = malloc(ghm_corner_capacity(w, h) * sizeof *cand);
    if (!cand)
        goto fail;
    size_t nc = local_maxima(resp, w, h, p->radius, (float)p->rel_threshold * maxr, cand);
    ret = ghmi_corners_select(cand, nc, w, h, p, out, n);
fail:
    free(cand);
    free(buf);
    return ret;
}

/* --- the feature chain on the backend's device (vision_backend_internal.h) ---------------- */

int ghmi_feature_params(const GhmEdgeParams *ep, const GhmCornerParams *cp, int w, int h,
                        GhmFeatureParams *out)
{
    if (!ep || ep->blur_sigma < 0.0 || ep->blur_sigma > 5.0 || ep->percentile < 0.0 ||
        ep->percentile >= 1.0 || ep->noise_factor < 0.0 || (cp && check_corner_params(cp) < 0))
        return GHM_ERR_INVALID;
    memset(out, 0, sizeof *out);
    out->blur.radius = gaussian_taps(ep->blur_sigma, out->blur.g);
    out->noise_gain = gradient_noise_gain(out->blur.g, out->blur.radius);
    out->noise_factor = ep->noise_factor;
    out->percentile = ep->percentile;
    out->corners = cp && corners_fit(w, h, cp);
    if (out->corners) {
        out->tensor.radius = gaussian_taps(cp->sigma, out->tensor.g);
        out->harris_k = (float)cp->k;
        out->rel_threshold = (float)cp->rel_threshold;
        out->radius = cp->radius;
    }
    return GHM_OK;
}

/* Copies the device chain's edges into a GhmEdges of the CPU's layout. */
static int download_edges(GhmContext *ctx, const GhmDeviceFeatures *f, GhmEdges *e)
{
    size_t npix = (size_t)f->width * f->height;
    e->threshold = f->threshold;
    e->noise = f->noise;
    e->count = f->npoints;
    e->points = malloc((f->npoints ? f->npoints : 1) * sizeof *e->points);
    if (!e->points)
        return GHM_ERR_NOMEM;
    int ret = ghm_buffer_download(ctx, e->gx, f->gx, npix * sizeof *e->gx);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(ctx, e->gy, f->gy, npix * sizeof *e->gy);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(ctx, e->pixel_point, f->pixel_point,
                                  npix * sizeof *e->pixel_point);
    if (ret == GHM_OK && f->npoints)
        ret = ghm_buffer_download(ctx, e->points, f->points, f->npoints * sizeof *e->points);
    return ret;
}

int ghm_edges_detect_ctx(GhmContext *ctx, const GhmImage *img, const GhmEdgeParams *p,
                         GhmEdges **out)
{
    const GhmVisionOps *ops = ctx ? ghmi_vision_ops(ctx) : NULL;
    if (!ops || !ops->features_run)
        return ghm_edges_detect(img, p, out);
    if (!img || !p || !out || !img->pixels || img->width < 1 || img->height < 1)
        return GHM_ERR_INVALID;
    GhmFeatureParams fp;
    int ret = ghmi_feature_params(p, NULL, img->width, img->height, &fp);
    if (ret < 0)
        return ret;
    *out = NULL;
    size_t npix = (size_t)img->width * img->height;
    GhmFeatureWorkspace *ws = NULL;
    GhmDeviceFeatures f;
    GhmEdges *e = calloc(1, sizeof *e);
    if (!e)
        return GHM_ERR_NOMEM;
    e->width = img->width;
    e->height = img->height;
    e->gx = malloc(npix * sizeof *e->gx);
    e->gy = malloc(npix * sizeof *e->gy);
    e->pixel_point = malloc(npix * sizeof *e->pixel_point);
    ret = GHM_ERR_NOMEM;
    if (!e->gx || !e->gy || !e->pixel_point)
        goto fail;
    if ((ret = ops->features_create(ctx, &ws)) < 0 ||
        (ret = ops->features_run(ctx, ws, img->pixels, img->width, img->height, img->stride, &fp,
                                 &f)) < 0 ||
        (ret = download_edges(ctx, &f, e)) < 0)
        goto fail;
    ops->features_free(ctx, &ws);
    *out = e;
    return GHM_OK;
fail:
    if (ws)
        ops->features_free(ctx, &ws);
    ghm_edges_free(&e);
    return ret;
}
