/*
 * corners.c - Harris corners on the edge detector's gradients: structure tensor, response,
 * local maxima with a sub-pixel offset, the strongest spread over a grid; see ghm_edges.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_sort_internal.h"
#include "edges_internal.h"

/* The major key of the candidates' order: rising as the response falls (equal responses tie). */
static uint32_t falling_response(float response)
{
    return ~ghmi_rising_bits(response);
}

/* Sorts the nc candidates strongest first, ties by pixel: the CPU backend's stable radix sort,
 * by pixel and then by falling response. qsort's indirect comparisons took 0.35-0.5 ms for the
 * 1 800 candidates of a 1080p query, on the critical path of a GPU query that takes 3 ms. */
static int sort_candidates(GhmCornerCand *cand, size_t nc)
{
    if (nc < 2)
        return GHM_OK;
    uint32_t *key = malloc(nc * sizeof *key), *at = malloc(nc * sizeof *at);
    GhmCornerCand *tmp = malloc(nc * sizeof *tmp);
    int ret = key && at && tmp ? GHM_OK : GHM_ERR_NOMEM;
    for (size_t i = 0; i < nc && ret == GHM_OK; i++) {
        key[i] = (uint32_t)cand[i].pixel;
        at[i] = (uint32_t)i;
    }
    if (ret == GHM_OK)
        ret = ghmi_cpu_sort_pairs(1, key, at, nc);
    for (size_t i = 0; i < nc && ret == GHM_OK; i++)
        key[i] = falling_response(cand[at[i]].response);
    if (ret == GHM_OK)
        ret = ghmi_cpu_sort_pairs(1, key, at, nc);
    if (ret == GHM_OK) {
        for (size_t i = 0; i < nc; i++)
            tmp[i] = cand[at[i]];
        memcpy(cand, tmp, nc * sizeof *cand);
    }
    free(key);
    free(at);
    free(tmp);
    return ret;
}

/* Harris response into resp (w*h); uses s0..s2 (w*h each) and tmp for the structure tensor. */
static void harris_response(const GhmEdges *e, const GhmCornerParams *p, float *resp, float *s0,
                            float *s1, float *s2, float *tmp)
{
    int w = e->width, h = e->height;
    size_t npix = (size_t)w * h;
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (size_t i = 0; i < npix; i++) {
        s0[i] = e->gx[i] * e->gx[i];
        s1[i] = e->gy[i] * e->gy[i];
        s2[i] = e->gx[i] * e->gy[i];
    }
    float g[GHMI_MAX_KERNEL_RADIUS + 1];
    int r = ghmi_gaussian_taps(p->sigma, g);
    if (r > 0) {
        ghmi_convolve_sep(s0, tmp, s0, w, h, g, r);
        ghmi_convolve_sep(s1, tmp, s1, w, h, g, r);
        ghmi_convolve_sep(s2, tmp, s2, w, h, g, r);
    }
    float k = (float)p->k;
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
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

/* Whether pixel (x, y) is a strict local maximum of resp within radius (ties go to the earlier
 * pixel in raster order), positive and at least thr. */
static int is_local_max(const float *resp, int w, int x, int y, int radius, float thr)
{
    float v = resp[(size_t)y * w + x];
    if (v <= 0.0f || v < thr)
        return 0;
    for (int dy = -radius; dy <= radius; dy++)
        for (int dx = -radius; dx <= radius; dx++) {
            float u = resp[(size_t)(y + dy) * w + x + dx];
            int earlier = dy < 0 || (dy == 0 && dx < 0);
            if (u > v || (u == v && earlier && (dx || dy)))
                return 0;
        }
    return 1;
}

/* Strict local maxima of resp within radius, positive and at least thr, away from the border
 * where the response is unreliable, in raster order. The rows are shared among the threads,
 * each row's maxima written to its own stretch of cand (a row has at most w / 2 + 1: maxima
 * are more than one pixel apart), then moved together. */
static size_t local_maxima(const float *resp, int w, int h, int radius, float thr,
                           GhmCornerCand *cand)
{
    int border = radius + 2;
    size_t per_row = (size_t)w / 2 + 1, n = 0;
    if (h <= 2 * border)
        return 0;
    size_t *count = calloc((size_t)h, sizeof *count);
    if (!count)
        return SIZE_MAX;
#pragma omp parallel for schedule(dynamic, 8) if (ghmi_parallel_image(w, h))
    for (int y = border; y < h - border; y++) {
        GhmCornerCand *row = cand + (size_t)(y - border) * per_row;
        size_t k = 0;
        for (int x = border; x < w - border; x++) {
            if (!is_local_max(resp, w, x, y, radius, thr))
                continue;
            const float *r0 = resp + (size_t)y * w + x;
            row[k].response = r0[0];
            row[k].pixel = y * w + x;
            row[k].x = (float)x + parabola_offset(r0[-1], r0[0], r0[1]);
            row[k].y = (float)y + parabola_offset(r0[-w], r0[0], r0[w]);
            k++;
        }
        count[y] = k;
    }
    for (int y = border; y < h - border; y++) {
        memmove(cand + n, cand + (size_t)(y - border) * per_row, count[y] * sizeof *cand);
        n += count[y];
    }
    free(count);
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

/* Keeps, of the nc candidates sorted strongest first, those with no stronger kept one closer
 * than p->spacing (a greedy suppression: the strongest of a neighbourhood wins, whatever the
 * contrast elsewhere, so corners spread over the whole image at a density set by the spacing
 * alone, the same in every image: what lets two images pair the same neighbours). Kept ones
 * are looked up in a grid of spacing-sized cells, of which a kept corner can only be in its own
 * and the eight around it; a cell holds at most four (they are spacing apart), listed from
 * head[cell] through next[]: one word a cell to clear, not four. */
static int space_out(GhmCornerCand *cand, size_t *nc, int w, int h, double spacing)
{
    int cw = (int)(w / spacing) + 1, ch = (int)(h / spacing) + 1;
    int32_t *head = malloc((size_t)cw * ch * sizeof *head);
    int32_t *next = malloc((*nc + 1) * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        return GHM_ERR_NOMEM;
    }
    memset(head, 0xFF, (size_t)cw * ch * sizeof *head); /* -1: empty */
    double s2 = spacing * spacing;
    size_t n = 0;
    for (size_t i = 0; i < *nc; i++) {
        int cx = (int)(cand[i].x / spacing), cy = (int)(cand[i].y / spacing), near = 0;
        cx = cx < 0 ? 0 : cx >= cw ? cw - 1 : cx;
        cy = cy < 0 ? 0 : cy >= ch ? ch - 1 : cy;
        for (int y = cy - 1; y <= cy + 1 && !near; y++)
            for (int x = cx - 1; x <= cx + 1 && !near; x++) {
                if (x < 0 || y < 0 || x >= cw || y >= ch)
                    continue;
                for (int32_t j = head[(size_t)y * cw + x]; j >= 0 && !near; j = next[j]) {
                    double dx = cand[j].x - cand[i].x, dy = cand[j].y - cand[i].y;
                    near = dx * dx + dy * dy < s2;
                }
            }
        int32_t *cell = &head[(size_t)cy * cw + cx];
        int k = 0;
        for (int32_t j = *cell; j >= 0; j = next[j])
            k++;
        if (near || k == 4)
            continue;
        cand[n] = cand[i]; /* n <= i: kept ones stay in place, strongest first */
        next[n] = *cell;
        *cell = (int32_t)n++;
    }
    *nc = n;
    free(head);
    free(next);
    return GHM_OK;
}

int ghmi_corner_params_check(const GhmCornerParams *p)
{
    return p->sigma < 0.0 || p->sigma > 5.0 || p->radius < 1 || p->radius > 32 ||
                   p->rel_threshold < 0.0 || !(p->spacing >= 0.0 && p->spacing <= 1000.0)
               ? GHM_ERR_INVALID
               : GHM_OK;
}

/* Whether the image is large enough for corners at all (the border takes radius + 2). */
int ghmi_corners_fit(int w, int h, const GhmCornerParams *p)
{
    return w >= 2 * p->radius + 5 && h >= 2 * p->radius + 5 && p->max_corners > 0;
}

int ghmi_corners_select(GhmCornerCand *cand, size_t nc, int w, int h, const GhmCornerParams *p,
                        GhmCorner **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    int ret = sort_candidates(cand, nc);
    if (ret < 0)
        return ret;
    if (p->spacing > 0.0 && (ret = space_out(cand, &nc, w, h, p->spacing)) < 0)
        return ret;
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
    if (!e || !p || !out || !n || ghmi_corner_params_check(p) < 0)
        return GHM_ERR_INVALID;
    *out = NULL;
    *n = 0;
    int w = e->width, h = e->height;
    if (!ghmi_corners_fit(w, h, p))
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
#pragma omp parallel for reduction(max : maxr) schedule(static) if (ghmi_parallel_image(w, h))
    for (size_t i = 0; i < npix; i++)
        if (resp[i] > maxr)
            maxr = resp[i];
    /* room for every row's stretch (local_maxima) */
    cand = malloc(((size_t)h * ((size_t)w / 2 + 1) + 1) * sizeof *cand);
    if (!cand)
        goto fail;
    size_t nc = local_maxima(resp, w, h, p->radius, (float)p->rel_threshold * maxr, cand);
    if (nc == SIZE_MAX)
        goto fail;
    ret = ghmi_corners_select(cand, nc, w, h, p, out, n);
fail:
    free(cand);
    free(buf);
    return ret;
}
