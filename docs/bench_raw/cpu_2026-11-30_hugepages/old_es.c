/*
 * edge_sampling.c - grid sampling of edge points (the strongest per cell) and the capped search
 * for a cell size; see ghm_edges.h. The device path runs the same search
 * (kernels/vision/features/features.cu samples).
 */
#include <math.h>
#include <stdlib.h>

#include "edges_internal.h"
static int old_step(GhmiCellSearch *s, size_t kept);

int old_grid_sample(const GhmEdgePoint *pts, size_t n, int width, int height, double cell,
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
        int cx = ghmi_clampi((int)((pts[i].x + 0.5f) / cell), 0, cw - 1);
        int cy = ghmi_clampi((int)((pts[i].y + 0.5f) / cell), 0, ch - 1);
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

int old_sample_capped(const GhmEdgePoint *pts, size_t n, int width, int height,
                            double min_cell, size_t max_points, uint32_t *idx, size_t *kept,
                            double *cell_used)
{
    if (!(min_cell >= 1.0) || max_points < 1)
        return GHM_ERR_INVALID;
    GhmiCellSearch s = ghmi_cell_search_start(min_cell, max_points);
    for (int iter = 0; iter < GHMI_SAMPLE_TRIES; iter++) {
        int ret = old_grid_sample(pts, n, width, height, s.cell, idx, kept);
        if (ret < 0)
            return ret;
        if (old_step(&s, *kept))
            break;
    }
    if (cell_used)
        *cell_used = s.cell;
    return GHM_OK;
}

/* Points kept fall as cell^-a: a = 1 on isolated contours, a = 2 where edges fill the area
 * (texture). Growing the cell by (kept / max)^(1/a) with a guessed too large overshoots by up
 * to that ratio: a busy 1024x768 picture went from 20 000 points at 4 px straight to 165 at
 * 54 px, where 1500 were asked for. So the first step assumes a = 2 (it can only fall short),
 * and later steps measure a from the last two tries. */
static int old_step(GhmiCellSearch *s, size_t kept)
{
    if (kept <= s->max_points)
        return 1;
    double a = 2.0;
    if (s->prev_kept > kept && s->cell > s->prev_cell)
        a = log((double)s->prev_kept / (double)kept) / log(s->cell / s->prev_cell);
    a = a < 1.0 ? 1.0 : a > 2.0 ? 2.0 : a;
    double grow = pow((double)kept / (0.98 * (double)s->max_points), 1.0 / a);
    s->prev_cell = s->cell;
    s->prev_kept = kept;
    s->cell *= grow > 1.01 ? grow : 1.01;
    return 0;
}
