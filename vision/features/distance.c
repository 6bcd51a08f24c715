/*
 * distance.c - exact squared Euclidean distance transform with argmin (Felzenszwalb and
 * Huttenlocher): a 1-D pass down every column, then the lower envelope of parabolas along every
 * row. See ghm_distance.h.
 */
#include "ghm_distance.h"
#include "edges_internal.h"

#include <math.h>
#include <stdlib.h>

/* Large enough to lose to any real distance, small enough that sums do not overflow. */
#define FAR 1.0e20f

/* Columns a block of the column pass walks together: its rows' stretches are 256 bytes, so
 * the walk down the image reads whole cache lines where one column at a time read one float
 * per line (a 1320-pixel-wide reference: a line per pixel, every sweep). */
#define COLUMN_BLOCK 64

/* Column pass: for every pixel the squared vertical distance to the nearest seed in its column
 * (FAR if none) and that seed's row. Two sweeps, blocks of columns side by side, row by row
 * within a block; ties keep the upper seed. */
static void column_pass(int w, int h, const int32_t *seeds, float *d, int32_t *row)
{
    int blocks = (w + COLUMN_BLOCK - 1) / COLUMN_BLOCK;
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (int b = 0; b < blocks; b++) {
        int x0 = b * COLUMN_BLOCK, n = w - x0 < COLUMN_BLOCK ? w - x0 : COLUMN_BLOCK;
        int below[COLUMN_BLOCK]; /* the nearest seed at or below the current row, per column */
        for (int y = 0; y < h; y++) { /* row[i]: the nearest seed at or above */
            const int32_t *s = seeds + (size_t)y * w + x0;
            int32_t *r = row + (size_t)y * w + x0;
            for (int j = 0; j < n; j++)
                r[j] = s[j] >= 0 ? y : y > 0 ? r[j - w] : -1;
        }
        for (int j = 0; j < n; j++)
            below[j] = -1;
        for (int y = h - 1; y >= 0; y--) {
            size_t at = (size_t)y * w + x0;
            for (int j = 0; j < n; j++) {
                if (seeds[at + j] >= 0)
                    below[j] = y;
                int up = row[at + j], best = up;
                if (below[j] >= 0 && (up < 0 || below[j] - y < y - up))
                    best = below[j];
                row[at + j] = best;
                d[at + j] = best < 0 ? FAR : (float)(best - y) * (float)(best - y);
            }
        }
    }
}

/* Row pass on one row: f[x] = column distances; writes the argmin column of the lower
 * envelope to arg. v (w ints), z (w + 1 floats) and a (w floats) are scratch. a[q] holds
 * f[q] + q^2, formed once per column, where the envelope loop formed it again for every
 * parabola it compared against (the same float either way). */
static void envelope_row(int w, const float *f, int *v, float *z, float *a, int *arg)
{
    for (int q = 0; q < w; q++)
        a[q] = f[q] + (float)q * q;
    int k = 0;
    v[0] = 0;
    z[0] = -INFINITY;
    z[1] = INFINITY;
    for (int q = 1; q < w; q++) {
        float s;
        for (;;) { /* z[0] = -infinity ends the loop at k = 0 */
            int p = v[k];
            s = (a[q] - a[p]) / (2.0f * (float)(q - p));
            if (s > z[k])
                break;
            k--;
        }
        k++;
        v[k] = q;
        z[k] = s;
        z[k + 1] = INFINITY;
    }
    k = 0;
    for (int q = 0; q < w; q++) {
        while (z[k + 1] < (float)q)
            k++;
        arg[q] = v[k];
    }
}

int ghm_distance_transform(int w, int h, const int32_t *seeds, int32_t *nearest, float *dist2)
{
    if (w < 1 || h < 1 || !seeds || !nearest)
        return GHM_ERR_INVALID;
    size_t npix = (size_t)w * h;
    float *d = malloc(npix * sizeof *d);
    int32_t *row = malloc(npix * sizeof *row);
    if (!d || !row) {
        free(d);
        free(row);
        return GHM_ERR_NOMEM;
    }
    column_pass(w, h, seeds, d, row);
    int failed = 0;
#pragma omp parallel reduction(| : failed) if (ghmi_parallel_image(w, h))
    {
        int *v = malloc((size_t)w * sizeof *v), *arg = malloc((size_t)w * sizeof *arg);
        float *z = malloc(((size_t)w + 1) * sizeof *z), *a = malloc((size_t)w * sizeof *a);
        if (!v || !arg || !z || !a)
            failed = 1;
#pragma omp for schedule(static)
        for (int y = 0; y < h; y++) {
            if (failed)
                continue;
            const float *f = d + (size_t)y * w;
            envelope_row(w, f, v, z, a, arg);
            for (int x = 0; x < w; x++) {
                size_t i = (size_t)y * w + x;
                int sx = arg[x];
                int sy = row[(size_t)y * w + sx];
                float dx = (float)(x - sx);
                if (sy < 0 || f[sx] >= FAR) {
                    nearest[i] = -1;
                    if (dist2)
                        dist2[i] = INFINITY;
                    continue;
                }
                nearest[i] = sy * w + sx;
                if (dist2)
                    dist2[i] = dx * dx + f[sx];
            }
        }
        free(v);
        free(arg);
        free(z);
        free(a);
    }
    free(d);
    free(row);
    return failed ? GHM_ERR_NOMEM : GHM_OK;
}
