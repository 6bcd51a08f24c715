/*
 * geohash_signatures.c - a basis's signatures, shared by building the reference's tables
 * (geohash.c) and voting on the host (geohash_vote.c): the coded points bucketed by position
 * (GhmiCodedGrid) and the distinct signatures of the points a basis's window reaches. Built with
 * -fno-trapping-math (CMakeLists.txt) so that GCC vectorises its floor() calls.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "floor_clones_internal.h"
#include "geohash_internal.h"

void ghmi_coded_grid_free(GhmiCodedGrid *g)
{
    free(g->pts);
    free(g->start);
    g->pts = NULL;
    g->start = NULL;
}

int ghmi_coded_grid_build(const GhmGeoPoint *pts, size_t n, GhmiCodedGrid *g)
{
    memset(g, 0, sizeof *g);
    double x0 = 0.0, y0 = 0.0, x1 = 1.0, y1 = 1.0;
    for (size_t i = 0; i < n; i++) {
        double x = pts[i].x, y = pts[i].y;
        x0 = i == 0 || x < x0 ? x : x0;
        y0 = i == 0 || y < y0 ? y : y0;
        x1 = i == 0 || x > x1 ? x : x1;
        y1 = i == 0 || y > y1 ? y : y1;
    }
    /* About 4 points a bucket: small against a window, few buckets to visit. */
    double area = (x1 - x0 + 1.0) * (y1 - y0 + 1.0);
    g->cell = fmax(4.0, sqrt(area * 4.0 / (double)(n ? n : 1)));
    g->x0 = x0;
    g->y0 = y0;
    g->gw = (int)((x1 - x0) / g->cell) + 1;
    g->gh = (int)((y1 - y0) / g->cell) + 1;
    g->n = n;
    size_t nbk = (size_t)g->gw * g->gh;
    g->pts = malloc((n ? n : 1) * sizeof *g->pts);
    g->start = calloc(nbk + 1, sizeof *g->start);
    uint32_t *at = malloc((n ? n : 1) * sizeof *at);
    if (!g->pts || !g->start || !at) {
        free(at);
        ghmi_coded_grid_free(g);
        return GHM_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int bx = (int)((pts[i].x - x0) / g->cell), by = (int)((pts[i].y - y0) / g->cell);
        at[i] = (uint32_t)((size_t)by * g->gw + bx);
        g->start[at[i] + 1]++;
    }
    for (size_t b = 0; b < nbk; b++)
        g->start[b + 1] += g->start[b];
    for (size_t i = 0; i < n; i++) /* a counting sort: stable, deterministic */
        g->pts[g->start[at[i]]++] = pts[i];
    for (size_t b = nbk; b > 0; b--)
        g->start[b] = g->start[b - 1];
    g->start[0] = 0;
    free(at);
    return GHM_OK;
}

enum { SPAN = 128, NO_KEY = 0xFFFFFFFFu };

/* A basis (a, b) as its signatures need it: d = b - a, 1 / |d|^2, the direction of d; the
 * parameters, and their constants for the arithmetic (sp). */
typedef struct Frame {
    const GhmGeoPoint *a;
    double dx, dy, inv, phi;
    const GhmGeoParams *p;
    int nbins;
    GhmGeoSigParams sp;
} Frame;

/* The signatures of coded points pts[0..n) (n <= SPAN) in frame f: key[i] packed as
 * u | v << 8 | angle << 16, or NO_KEY where the point lies outside the window. kernels/vision/match/geohash.cu
 * repeats these operations in this order. Every point takes every operation, without a branch,
 * so that the compiler computes two points at once in the SSE4.1 clone (floor() among them
 * only where floating-point operations may be taken not to trap: CMakeLists.txt builds this
 * file so); the reference's tables 44.0 -> 40.6 ms for the pair of docs/BENCHMARKS.md on 2
 * cores. A point outside the window is clamped into the bins before its conversions, which
 * are then all in range. */
GHMI_FLOOR_CLONES
static void span_signatures(const Frame *f, const GhmGeoPoint *pts, uint32_t n, uint32_t *key)
{
    const GhmGeoSigParams *sp = &f->sp;
    const double nb = sp->nbins, top = nb - 1.0, dx = f->dx, dy = f->dy, inv = f->inv;
    const double na = sp->angle_bins > 0 ? sp->angle_bins : 1;
    const uint32_t angles = sp->angle_bins > 0 ? 0xFFFFFFFFu : 0; /* qa = 0 without angles */
    const float ax = f->a->x, ay = f->a->y;
    for (uint32_t i = 0; i < n; i++) {
        double qx = pts[i].x - ax, qy = pts[i].y - ay;
        double u = (qx * dx + qy * dy) * inv - 0.5;
        double iu = floor((u + sp->window) * sp->inv_quant);
        double v = (qx * dy - qy * dx) * inv;
        double iv = floor((v + sp->window) * sp->inv_quant);
        double rel = pts[i].angle - f->phi;
        rel -= TWO_PI * floor(rel * sp->inv_two_pi);
        double ra = rel * sp->angle_scale;
        int in = (iu >= 0.0) & (iu < nb) & (iv >= 0.0) & (iv < nb);
        ra = ((ra >= 0.0) & (ra < na)) ? ra : 0.0;
        iu = iu < 0.0 ? 0.0 : iu;
        iu = iu > top ? top : iu;
        iv = iv < 0.0 ? 0.0 : iv;
        iv = iv > top ? top : iv;
        uint32_t ku = (uint32_t)(int32_t)iu, kv = (uint32_t)(int32_t)iv;
        uint32_t qa = (uint32_t)(int32_t)ra & angles;
        key[i] = in ? ku | kv << 8 | qa << 16 : NO_KEY;
    }
}

/* Appends the signatures of pts[0..n) not yet in seen to out[k..]; returns the new k. */
static size_t add_signatures(const Frame *f, const GhmGeoPoint *pts, size_t n, uint64_t *seen,
                             uint32_t *out, size_t k)
{
    uint32_t key[SPAN];
    for (size_t c = 0; c < n; c += SPAN) {
        uint32_t m = n - c < SPAN ? (uint32_t)(n - c) : SPAN;
        span_signatures(f, pts + c, m, key);
        for (uint32_t i = 0; i < m; i++) {
            if (key[i] == NO_KEY)
                continue;
            uint32_t slot = key_slot(key[i], f->p, f->nbins);
            uint64_t bit = 1ull << (slot & 63);
            if (seen[slot >> 6] & bit)
                continue;
            seen[slot >> 6] |= bit;
            out[k++] = key[i];
        }
    }
    return k;
}

size_t ghmi_basis_signatures(const GhmGeoPoint *a, const GhmGeoPoint *b, const GhmiCodedGrid *g,
                             const GhmGeoParams *p, int nbins, uint64_t *seen, uint32_t *out)
{
    double dx = b->x - a->x, dy = b->y - a->y;
    double len2 = dx * dx + dy * dy;
    if (!(len2 > 0.0) || g->n == 0)
        return 0;
    Frame f = {a, dx, dy, 1.0 / len2, atan2(dy, dx), p, nbins, ghmi_sig_params(p, nbins)};
    double inv = f.inv, ext = (p->window + p->quant) * (fabs(dx) + fabs(dy)) + 1.0;
    double mx = a->x + 0.5 * dx, my = a->y + 0.5 * dy;
    int bx0 = (int)floor((mx - ext - g->x0) / g->cell);
    int bx1 = (int)floor((mx + ext - g->x0) / g->cell);
    int by0 = (int)floor((my - ext - g->y0) / g->cell);
    int by1 = (int)floor((my + ext - g->y0) / g->cell);
    bx0 = bx0 < 0 ? 0 : bx0;
    by0 = by0 < 0 ? 0 : by0;
    bx1 = bx1 >= g->gw ? g->gw - 1 : bx1;
    by1 = by1 >= g->gh ? g->gh - 1 : by1;
    /* A bucket whose centre lies farther outside the window than half its diagonal holds no
     * point of it: skipped without looking at its points. The points of a row's consecutive
     * buckets that are kept lie side by side (buckets in raster order): taken as one run. */
    double lo = -p->window - 0.75 * g->cell * sqrt(inv), hi = p->window + p->quant - lo - p->window;
    size_t k = 0;
    for (int by = by0; by <= by1; by++) {
        double cy = g->y0 + (by + 0.5) * g->cell - a->y;
        const uint32_t *row = g->start + (size_t)by * g->gw;
        int run = -1; /* the first bucket of the run of kept buckets, if any */
        for (int bx = bx0; bx <= bx1 + 1; bx++) {
            double cx = g->x0 + (bx + 0.5) * g->cell - a->x;
            double u = (cx * dx + cy * dy) * inv - 0.5, v = (cx * dy - cy * dx) * inv;
            int kept = bx <= bx1 && u >= lo && u <= hi && v >= lo && v <= hi;
            if (kept && run < 0)
                run = bx;
            if (!kept && run >= 0) {
                k = add_signatures(&f, &g->pts[row[run]], row[bx] - row[run], seen, out, k);
                run = -1;
            }
        }
    }
    for (size_t i = 0; i < k; i++) {
        uint32_t s = key_slot(out[i], p, nbins);
        seen[s >> 6] &= ~(1ull << (s & 63));
    }
    return k;
}
