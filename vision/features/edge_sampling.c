/*
 * edge_sampling.c - grid sampling of edge points (the strongest per cell) and the capped search
 * for a cell size; see ghm_edges.h. The device path runs the same search
 * (kernels/vision/features/features.cu samples).
 */
#include <math.h>
#include <stdlib.h>

#include "edges_internal.h"

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
