/*
 * edge_sampling.c - grid sampling of edge points (the strongest per cell) and the capped search
 * for a cell size; see ghm_edges.h. The device path runs the same search
 * (kernels/vision/features/features.cu samples).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "edges_internal.h"

/* Whether the arguments both samplings take are usable. */
static int args_ok(const GhmEdgePoint *pts, size_t n, int width, int height, const uint32_t *idx,
                   const size_t *kept)
{
    return (pts || !n) && n <= UINT32_MAX && idx && kept && width >= 1 && height >= 1;
}

/* The grid of cell x cell pixels over a width x height picture: cw x ch cells. */
static void grid_dims(int width, int height, double cell, int *cw, int *ch)
{
    *cw = (int)ceil(width / cell);
    *ch = (int)ceil(height / cell);
}

/* That grid, with room for the best key of each of its cells (*best, the caller's). */
static int grid_alloc(int width, int height, double cell, int *cw, int *ch, uint64_t **best)
{
    grid_dims(width, height, cell, cw, ch);
    size_t ncell = (size_t)*cw * (size_t)*ch;
    if (ncell > UINT32_MAX) /* cells are numbered in 32 bits */
        return GHM_ERR_TOO_LARGE;
    *best = malloc((ncell ? ncell : 1) * sizeof **best);
    return *best ? GHM_OK : GHM_ERR_NOMEM;
}

/* A point's rank within its cell as one integer, so that the strongest point, the first of
 * equals, has the largest: the strength's rising bits (a NaN below every number) above the
 * index's complement. kernels/vision/features/sample.cu keys the device's points so (their
 * strengths are never negative or NaN there). A cell's best key 0 means no point: every
 * point's key is larger (the index is below 2^32 - 1). */
static inline uint64_t sample_key(float strength, size_t i)
{
    uint32_t b = strength != strength ? 0 : ghmi_rising_bits(strength);
    return (uint64_t)b << 32 | (uint32_t)~(uint32_t)i;
}

static inline uint32_t sample_cell(const GhmEdgePoint *p, int cw, int ch, double cell)
{
    int cx = ghmi_clampi((int)((p->x + 0.5f) / cell), 0, cw - 1);
    int cy = ghmi_clampi((int)((p->y + 0.5f) / cell), 0, ch - 1);
    return (uint32_t)cy * (uint32_t)cw + (uint32_t)cx;
}

/* ghm_edges_grid_sample with the grid's array given (best: room for its cells). Each point's
 * cell is kept in idx[i] while the best key of every cell is found, then idx is compacted in
 * place to the points that hold their cell's best key: one pass over the points instead of a
 * pass over every cell (a 1080p query's verification grid at 1 px has 2 M cells for ~100 k
 * points) and a mark array. idx[k] is written after idx[i >= k] was read. The keys make the
 * choice a maximum without a branch or a second read of the best point's strength: until
 * 2026-12-02 a compare of strengths, a branch the CPU mispredicted, made a 1024 x 768
 * reference's samplings 3-4x slower (docs/BENCHMARKS.md). */
static size_t sample_with(const GhmEdgePoint *pts, size_t n, int cw, int ch, double cell,
                          uint64_t *best, uint32_t *idx)
{
    memset(best, 0, (size_t)cw * (size_t)ch * sizeof *best);
    for (size_t i = 0; i < n; i++) {
        uint32_t c = sample_cell(&pts[i], cw, ch, cell);
        uint64_t key = sample_key(pts[i].strength, i), b = best[c];
        best[c] = key > b ? key : b;
        idx[i] = c;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = idx[i];
        idx[k] = (uint32_t)i;
        k += best[c] == sample_key(pts[i].strength, i);
    }
    return k;
}

int ghm_edges_grid_sample(const GhmEdgePoint *pts, size_t n, int width, int height, double cell,
                          uint32_t *idx, size_t *kept)
{
    if (!args_ok(pts, n, width, height, idx, kept) || !(cell >= 1.0))
        return GHM_ERR_INVALID;
    int cw, ch;
    uint64_t *best = NULL;
    int ret = grid_alloc(width, height, cell, &cw, &ch, &best);
    if (ret < 0)
        return ret;
    *kept = sample_with(pts, n, cw, ch, cell, best, idx);
    free(best);
    return GHM_OK;
}

int ghm_edges_sample_capped(const GhmEdgePoint *pts, size_t n, int width, int height,
                            double min_cell, size_t max_points, uint32_t *idx, size_t *kept,
                            double *cell_used)
{
    if (!args_ok(pts, n, width, height, idx, kept) || !(min_cell >= 1.0) || max_points < 1)
        return GHM_ERR_INVALID;
    int cw, ch;
    uint64_t *best = NULL; /* for the first grid: the cells only grow */
    int ret = grid_alloc(width, height, min_cell, &cw, &ch, &best);
    if (ret < 0)
        return ret;
    GhmiCellSearch s = ghmi_cell_search_start(min_cell, max_points);
    for (int iter = 0; iter < GHMI_SAMPLE_TRIES; iter++) {
        grid_dims(width, height, s.cell, &cw, &ch);
        *kept = sample_with(pts, n, cw, ch, s.cell, best, idx);
        if (ghmi_cell_search_step(&s, *kept))
            break;
    }
    free(best);
    if (cell_used)
        *cell_used = s.cell;
    return GHM_OK;
}

/* Points kept fall as cell^-a: a = 1 on isolated contours, a = 2 where edges fill the area
 * (texture). Growing the cell by (kept / max)^(1/a) with a guessed too large overshoots by up
 * to that ratio: a busy 1024x768 picture went from 20 000 points at 4 px straight to 165 at
 * 54 px, where 1500 were asked for. So the first step assumes a = 2 (it can only fall short),
 * and later steps measure a from the last two tries. */
int ghmi_cell_search_step(GhmiCellSearch *s, size_t kept)
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
