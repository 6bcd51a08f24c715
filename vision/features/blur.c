/*
 * blur.c - the separable Gaussian filter of the feature chain (edges.c blurs the image,
 * corners.c the structure tensor) and the noise gain of blur + Sobel. The CUDA kernels
 * (kernels/vision/features/edges.cu) add in the same order: the same bits.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edges_internal.h"

/* Normalised 1-D Gaussian taps g[0..r]; returns the radius r (0 for sigma 0: no blur). */
int ghmi_gaussian_taps(double sigma, float *g)
{
    if (sigma <= 0.0) {
        g[0] = 1.0f;
        return 0;
    }
    int r = (int)ceil(3.0 * sigma);
    if (r > GHMI_MAX_KERNEL_RADIUS)
        r = GHMI_MAX_KERNEL_RADIUS;
    double sum = 0.0, t[GHMI_MAX_KERNEL_RADIUS + 1];
    for (int i = 0; i <= r; i++) {
        t[i] = exp(-0.5 * i * i / (sigma * sigma));
        sum += i ? 2.0 * t[i] : t[i];
    }
    for (int i = 0; i <= r; i++)
        g[i] = (float)(t[i] / sum);
    return r;
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
            out[x] += g[i] * (row[ghmi_clampi(x - i, 0, w - 1)] + row[ghmi_clampi(x + i, 0, w - 1)]);
        for (int x = lo; x < hi; x++)
            out[x] += g[i] * (row[x - i] + row[x + i]);
        for (int x = hi; x < w; x++)
            out[x] += g[i] * (row[ghmi_clampi(x - i, 0, w - 1)] + row[ghmi_clampi(x + i, 0, w - 1)]);
    }
}

/* Separable symmetric convolution with clamped borders: src -> dst (tmp: w*h scratch; dst may
 * be src). The vertical pass takes the rows y - i and y + i whole, in the order of i, so it
 * vectorises over x with the same order of additions per pixel as the horizontal one. */
void ghmi_convolve_sep(const float *src, float *tmp, float *dst, int w, int h, const float *g,
                       int r)
{
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (int y = 0; y < h; y++)
        convolve_row(src + (size_t)y * w, tmp + (size_t)y * w, w, g, r);
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (int y = 0; y < h; y++) {
        float *out = dst + (size_t)y * w;
        const float *mid = tmp + (size_t)y * w;
        for (int x = 0; x < w; x++)
            out[x] = g[0] * mid[x];
        for (int i = 1; i <= r; i++) {
            const float *up = tmp + (size_t)ghmi_clampi(y - i, 0, h - 1) * w;
            const float *dn = tmp + (size_t)ghmi_clampi(y + i, 0, h - 1) * w;
            for (int x = 0; x < w; x++)
                out[x] += g[i] * (up[x] + dn[x]);
        }
    }
}

/* Standard deviation of one Sobel/8 component for unit white noise after the blur: the root
 * sum of squares of the combined (Gaussian * Sobel) kernel. */
double ghmi_gradient_noise_gain(const float *g, int r)
{
    int n = 2 * r + 3;
    double k[2 * GHMI_MAX_KERNEL_RADIUS + 3][2 * GHMI_MAX_KERNEL_RADIUS + 3];
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
