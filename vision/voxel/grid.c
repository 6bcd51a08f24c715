/*
 * grid.c - the voxel grid: options and their defaults, the grid fitted around two clouds, voxel
 * centres and the cubic neighbourhoods. A leaf of the voxel module: everything else in it calls
 * here, and it calls nothing else of it.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "voxel_internal.h"

void ghmi_hood_make(int radius, GhmiHood *h)
{
    h->radius = radius;
    h->n = 0;
    for (int dz = -radius; dz <= radius; dz++)
        for (int dy = -radius; dy <= radius; dy++)
            for (int dx = -radius; dx <= radius; dx++)
                if (dx || dy || dz) {
                    h->step[h->n][0] = dx;
                    h->step[h->n][1] = dy;
                    h->step[h->n][2] = dz;
                    h->n++;
                }
}

GhmVoxelOptions ghm_voxel_defaults(void)
{
    GhmVoxelOptions o = {
        .grid = 128, .voxel_size = 0.0, .t_out = 0.2, .t_in = 0.2, .max_rounds = 4};
    return o;
}

void ghm_voxel_centre(const GhmVoxelGrid *g, uint32_t key, double c[3])
{
    uint32_t nx = (uint32_t)g->dims[0], ny = (uint32_t)g->dims[1];
    uint32_t x = key % nx, y = (key / nx) % ny, z = key / nx / ny;
    c[0] = g->origin[0] + (x + 0.5) * g->voxel_size;
    c[1] = g->origin[1] + (y + 0.5) * g->voxel_size;
    c[2] = g->origin[2] + (z + 0.5) * g->voxel_size;
}

void ghmi_voxel_rows_points(const GhmiVoxelRows *rows, int threads, float *xyz)
{
    const GhmVoxelGrid *g = rows->grid;
    const size_t ny = (size_t)g->dims[1], nr = ny * (size_t)g->dims[2];
    const double s = g->voxel_size;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
    for (size_t r = 0; r < nr; r++) {
        if (rows->lo[r] > rows->hi[r])
            continue;
        /* ghm_voxel_centre's doubles, so the same floats; y and z once a row */
        const float cy = (float)(g->origin[1] + ((double)(r % ny) + 0.5) * s);
        const float cz = (float)(g->origin[2] + ((double)(r / ny) + 0.5) * s);
        float *p = xyz + 3 * rows->start[r];
        for (int32_t x = rows->lo[r]; x <= rows->hi[r]; x++, p += 3) {
            p[0] = (float)(g->origin[0] + ((double)x + 0.5) * s);
            p[1] = cy;
            p[2] = cz;
        }
    }
}

/* The proof behind ghmi_voxel_centres_in_own_voxels: the rounding moves a centre c by at most
 * 2^-24 |c| (half a float's ulp) and the voxelization's doubles (point_key) by some 2^-29 times
 * less, so a centre half a voxel from the voxel's faces stays inside when 2^-24 M < s / 2, M the
 * largest |coordinate| in the grid and s the voxel size; asked as M <= 2^21 s, four times
 * within. */
int ghmi_voxel_centres_in_own_voxels(const GhmVoxelGrid *g)
{
    double most = 0.0;
    for (int k = 0; k < 3; k++) {
        double far = g->origin[k] + (double)g->dims[k] * g->voxel_size;
        most = fmax(most, fmax(fabs(g->origin[k]), fabs(far)));
    }
    return most <= ldexp(g->voxel_size, 21);
}

int ghmi_voxel_rows_match(const GhmiVoxelRows *rows, const uint32_t *keys, size_t K,
                          int threads)
{
    const GhmVoxelGrid *g = rows->grid;
    const uint32_t nx = (uint32_t)g->dims[0];
    const size_t nr = (size_t)g->dims[1] * (size_t)g->dims[2];
    if (K != rows->n)
        return 0;
    if (ghmi_voxel_centres_in_own_voxels(g))
        return 1;
    if (rows->on_device) /* made there only where the extent proves it (edit_probe.c) */
        return 0;
    int same = 1;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(&& : same)
    for (size_t r = 0; r < nr; r++)
        for (int32_t x = rows->lo[r]; x <= rows->hi[r]; x++)
            same = same && keys[rows->start[r] + (size_t)(x - rows->lo[r])] ==
                               (uint32_t)r * nx + (uint32_t)x;
    return same;
}

/* --- grid --------------------------------------------------------------------------------- */

int ghmi_voxel_check_options(const GhmVoxelOptions *o, char *why, size_t why_size)
{
    char msg[128] = "";
    if (!o)
        snprintf(msg, sizeof msg, "no voxel options");
    else if (!(o->voxel_size >= 0) || !isfinite(o->voxel_size))
        snprintf(msg, sizeof msg, "voxel size %g is not a finite size >= 0", o->voxel_size);
    else if (o->max_rounds < 1)
        snprintf(msg, sizeof msg, "rounds %d: at least one fill is needed", o->max_rounds);
    else if (!(o->t_out >= 0 && o->t_out < 1) || !(o->t_in >= 0 && o->t_in < 1))
        snprintf(msg, sizeof msg, "seed thresholds %g and %g must lie in [0, 1)", o->t_out,
                 o->t_in);
    else if (o->voxel_size == 0 && (o->grid < 1 || o->grid > GHM_VOXEL_MAX_DIM))
        snprintf(msg, sizeof msg, "grid %d is out of range (1 to %d voxels along the longest side)",
                 o->grid, GHM_VOXEL_MAX_DIM);
    if (!msg[0])
        return GHM_OK;
    if (why && why_size)
        snprintf(why, why_size, "%s", msg);
    return GHM_ERR_INVALID;
}

/* Adds the box [llo, lhi] of points that came after those of [lo, hi] (a point p: the box [p, p])
 * by strict comparisons, so that the earlier of equal coordinates stays (0.0 or -0.0 alike). */
static void bbox_join(double lo[3], double hi[3], const double llo[3], const double lhi[3])
{
    for (int k = 0; k < 3; k++) {
        lo[k] = llo[k] < lo[k] ? llo[k] : lo[k];
        hi[k] = lhi[k] > hi[k] ? lhi[k] : hi[k];
    }
}

/* The box of cloud c's points moved by pose m (NULL: as they are), added to [lo, hi]. Large
 * clouds on the OpenMP threads (a sweep's fit moves B to every step's pose: 40 steps of 2M
 * points took 0.23 s on one thread, 0.16 on two), over contiguous chunks whose boxes are joined
 * in the chunks' order: the one-thread loop's box to the bit, down to which of 0.0 and -0.0 it
 * keeps. */
static void add_moved(const GhmPointCloud *c, const double *m, double lo[3], double hi[3])
{
    enum { MAX_CHUNKS = 64, CHUNK_LEAST = 1 << 16 };
    double clo[MAX_CHUNKS][3], chi[MAX_CHUNKS][3];
    int chunks = omp_get_max_threads();
    chunks = chunks < MAX_CHUNKS ? chunks : MAX_CHUNKS;
    chunks = c->n / CHUNK_LEAST < (size_t)chunks ? (int)(c->n / CHUNK_LEAST) : chunks;
    chunks = chunks < 1 ? 1 : chunks;
#pragma omp parallel for num_threads(chunks) if (chunks > 1)
    for (int t = 0; t < chunks; t++) {
        double p[3], l[3] = {INFINITY, INFINITY, INFINITY};
        double h[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (size_t i = c->n * t / chunks; i < c->n * (t + 1) / chunks; i++) {
            ghmi_voxel_apply_pose(m, c->xyz + 3 * i, p);
            bbox_join(l, h, p, p);
        }
        memcpy(clo[t], l, sizeof l); /* once: the chunks' boxes share cache lines */
        memcpy(chi[t], h, sizeof h);
    }
    for (int t = 0; t < chunks; t++)
        bbox_join(lo, hi, clo[t], chi[t]);
}

/* Whether the half-open axis [lo, lo + d s) holds hi, both by the arithmetic that voxelizes
 * points (voxelize.c point_key, voxel_kernels.cuh: the voxel of coordinate p is
 * floor((p - origin) * (1 / s))) and by a reader's (p < origin + d s). */
static int axis_holds(double lo, double hi, double s, double d)
{
    return floor((hi - lo) * (1.0 / s)) < d && hi < lo + d * s;
}

static double axis_voxels(double lo, double hi, double s)
{
    double d = ceil((hi - lo) / s - 1e-9);
    return d < 1 ? 1 : d;
}

/* Voxel counts d for size *s such that the half-open box [lo, lo + d s) holds every point of
 * [lo, hi] as the voxelizer places them: a grid reported to a user must contain what was
 * voxelized. A size derived from the grid (longest / grid puts the farthest point exactly on
 * the far face) grows by a few ulps, keeping the counts; a size the user gave stays, and an
 * axis whose farthest point falls on its face gets one voxel more. */
static void fit_dims(const double lo[3], const double hi[3], int size_given, double *s,
                     double d[3])
{
    for (int tries = 0;; tries++) {
        int holds = 1;
        for (int k = 0; k < 3; k++) {
            d[k] = axis_voxels(lo[k], hi[k], *s);
            holds &= axis_holds(lo[k], hi[k], *s, d[k]);
        }
        if (holds || size_given || tries == 64)
            break;
        *s = nextafter(*s, INFINITY);
    }
    for (int k = 0; k < 3; k++)
        while (!axis_holds(lo[k], hi[k], *s, d[k]) && d[k] <= GHM_VOXEL_MAX_DIM)
            d[k] += 1;
}

/* The voxel size *s and counts d of the grid around [lo, hi] for opt. */
static void box_counts(const double lo[3], const double hi[3], const GhmVoxelOptions *opt,
                       double *s, double d[3])
{
    double longest = 0;
    for (int k = 0; k < 3; k++)
        longest = hi[k] - lo[k] > longest ? hi[k] - lo[k] : longest;
    *s = opt->voxel_size > 0 ? opt->voxel_size : longest > 0 ? longest / opt->grid : 1.0;
    fit_dims(lo, hi, opt->voxel_size > 0, s, d);
}

/* A refusal's way out, for counts d past the bounds: the finest grid, or the smallest voxel
 * size of four digits (as printed), whose counts are within them, searched from the one that
 * scales d into them (the counts' rounding up makes that one a little off either way). */
static void finest_within(const double lo[3], const double hi[3], const GhmVoxelOptions *opt,
                          const double d[3], char *out, size_t size)
{
    double most = fmax(fmax(d[0], d[1]), d[2]) / GHM_VOXEL_MAX_DIM, s, c[3];
    most = fmax(most, cbrt(d[0] * d[1] * d[2] / (double)GHM_VOXEL_MAX_VOXELS));
    GhmVoxelOptions o = *opt;
    if (opt->voxel_size > 0) {
        double size4 = opt->voxel_size * most * 0.999, unit = pow(10, floor(log10(size4)) - 3);
        char text[32];
        do { /* the size a user types from the message is the one checked */
            snprintf(text, sizeof text, "%.4g", ceil(size4 / unit) * unit);
            o.voxel_size = strtod(text, NULL);
            box_counts(lo, hi, &o, &s, c);
            size4 = o.voxel_size + unit;
        } while (!ghmi_voxel_counts_ok(c));
        snprintf(out, size, "; a voxel size of %s fits", text);
        return;
    }
    for (o.grid = (int)(opt->grid / most) + 2; o.grid > 1; o.grid--) {
        box_counts(lo, hi, &o, &s, c);
        if (ghmi_voxel_counts_ok(c))
            break;
    }
    snprintf(out, size, "; a grid of %d fits", o.grid);
}

/* The grid around a box (see ghm_voxel_grid_fit). */
static int fit_box(const GhmVoxelBox *box, const GhmVoxelOptions *opt, GhmVoxelGrid *out,
                   char *why, size_t why_size)
{
    double lo[3], hi[3], s, d[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = box->points ? box->lo[k] : 0.0;
        hi[k] = box->points ? box->hi[k] : 0.0;
    }
    box_counts(lo, hi, opt, &s, d);
    if (!ghmi_voxel_counts_ok(d)) {
        if (why && why_size) {
            char way_out[64];
            finest_within(lo, hi, opt, d, way_out, sizeof way_out);
            snprintf(why, why_size, "the grid would be %.0f x %.0f x %.0f voxels of size %g "
                     "(at most %d per axis and 2^30 in all)%s", d[0], d[1], d[2], s,
                     GHM_VOXEL_MAX_DIM, way_out);
        }
        return GHM_ERR_TOO_LARGE;
    }
    for (int k = 0; k < 3; k++) {
        out->origin[k] = lo[k];
        out->dims[k] = (int)d[k];
    }
    out->voxel_size = s;
    return GHM_OK;
}

/* GHM_ERR_INVALID with why: the first option out of range, or else the arguments. */
static int bad_fit(const GhmVoxelOptions *o, char *why, size_t why_size)
{
    if (ghmi_voxel_check_options(o, why, why_size) == GHM_OK && why && why_size)
        snprintf(why, why_size, "invalid arguments");
    return GHM_ERR_INVALID;
}

GhmVoxelBox ghm_voxel_box_empty(void)
{
    GhmVoxelBox b = {{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}, 0};
    return b;
}

void ghm_voxel_box_add(GhmVoxelBox *box, const GhmPointCloud *c, const double *pose)
{
    if (!box || !c)
        return;
    add_moved(c, pose, box->lo, box->hi);
    box->points += c->n;
}

void ghm_voxel_box_join(GhmVoxelBox *box, const GhmVoxelBox *later)
{
    if (!box || !later)
        return;
    bbox_join(box->lo, box->hi, later->lo, later->hi);
    box->points += later->points;
}

int ghm_voxel_grid_fit_box(const GhmVoxelBox *box, const GhmVoxelOptions *opt, GhmVoxelGrid *out,
                           char *why, size_t why_size)
{
    if (!box || !out || ghmi_voxel_check_options(opt, NULL, 0) < 0)
        return bad_fit(opt, why, why_size);
    return fit_box(box, opt, out, why, why_size);
}

int ghm_voxel_grid_fit(const GhmPointCloud *a, const GhmPointCloud *b, const double *poses,
                       int nposes, const GhmVoxelOptions *opt, GhmVoxelGrid *out, char *why,
                       size_t why_size)
{
    if (!a || !b || !out || nposes < 0 || (nposes > 0 && !poses) ||
        ghmi_voxel_check_options(opt, NULL, 0) < 0)
        return bad_fit(opt, why, why_size);
    GhmVoxelBox box = ghm_voxel_box_empty();
    ghm_voxel_box_add(&box, a, NULL);
    for (int k = 0; k < (nposes ? nposes : 1); k++)
        ghm_voxel_box_add(&box, b, nposes ? poses + 16 * k : NULL);
    return fit_box(&box, opt, out, why, why_size);
}

int ghm_voxel_grid_fit_clouds(const GhmPointCloud *const *clouds, int n,
                              const GhmVoxelOptions *opt, GhmVoxelGrid *out, char *why,
                              size_t why_size)
{
    if (!clouds || n < 0 || !out || ghmi_voxel_check_options(opt, NULL, 0) < 0)
        return bad_fit(opt, why, why_size);
    GhmVoxelBox box = ghm_voxel_box_empty();
    for (int c = 0; c < n; c++) {
        if (!clouds[c])
            return bad_fit(opt, why, why_size);
        ghm_voxel_box_add(&box, clouds[c], NULL);
    }
    return fit_box(&box, opt, out, why, why_size);
}
