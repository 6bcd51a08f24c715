/*
 * voxel.c - voxel Boolean intersection of two point clouds, CPU path; see ghm_voxel.h.
 *
 * One step: keys (parallel over points) -> GhmIndex per cloud -> per-voxel counts, normal sums
 * (and moments for clouds without normals) -> bulk GhmIndex look-ups of the 26 neighbour keys of
 * every voxel in its own cloud (more for a sparse cloud) -> normals estimated where the cloud has
 * none -> bulk look-ups of each voxel's key (and, for sparse clouds, its near keys) in the other
 * cloud: intersection and barrier -> seed votes (parallel over voxels, each voxel gathering from
 * its neighbours, so no atomics and the same answer for any number of threads) -> breadth-first
 * fill with conflict rounds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_index.h"
#include "ghm_map.h"
#include "voxel_backend_internal.h"
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

enum { NO_SEED = GHMI_VOXEL_NO_SEED };

/* Loops shorter than this run on one thread: a parallel region costs a few microseconds on an
 * idle machine but up to a scheduler time slice when the cores are shared. */
enum { PARALLEL_MIN = 16384 };

GhmVoxelOptions ghm_voxel_defaults(void)
{
    GhmVoxelOptions o = {.grid = 128, .voxel_size = 0.0, .t_out = 0.2, .t_in = 0.2, .max_rounds = 4};
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

static inline void apply_pose(const double *m, const float *p, double out[3])
{
    if (!m) {
        out[0] = p[0], out[1] = p[1], out[2] = p[2];
        return;
    }
    for (int r = 0; r < 3; r++)
        out[r] = m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3];
}

/* --- grid --------------------------------------------------------------------------------- */

static int check_options(const GhmVoxelOptions *o)
{
    if (!o || !(o->voxel_size >= 0) || !isfinite(o->voxel_size) || o->max_rounds < 1 ||
        !(o->t_out >= 0 && o->t_out < 1) || !(o->t_in >= 0 && o->t_in < 1))
        return GHM_ERR_INVALID;
    if (o->voxel_size == 0 && (o->grid < 1 || o->grid > GHM_VOXEL_MAX_DIM))
        return GHM_ERR_INVALID;
    return GHM_OK;
}

static void bbox_add(double lo[3], double hi[3], const double p[3])
{
    for (int k = 0; k < 3; k++) {
        lo[k] = p[k] < lo[k] ? p[k] : lo[k];
        hi[k] = p[k] > hi[k] ? p[k] : hi[k];
    }
}

int ghm_voxel_grid_fit(const GhmPointCloud *a, const GhmPointCloud *b, const double *poses,
                       int nposes, const GhmVoxelOptions *opt, GhmVoxelGrid *out, char *why,
                       size_t why_size)
{
    if (!a || !b || !out || nposes < 0 || (nposes > 0 && !poses) || check_options(opt) < 0) {
        if (why && why_size)
            snprintf(why, why_size, "invalid voxel grid options");
        return GHM_ERR_INVALID;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double p[3];
    for (size_t i = 0; i < a->n; i++) {
        apply_pose(NULL, a->xyz + 3 * i, p);
        bbox_add(lo, hi, p);
    }
    for (int k = 0; k < (nposes ? nposes : 1); k++)
        for (size_t i = 0; i < b->n; i++) {
            apply_pose(nposes ? poses + 16 * k : NULL, b->xyz + 3 * i, p);
            bbox_add(lo, hi, p);
        }
    if (a->n + b->n == 0)
        lo[0] = lo[1] = lo[2] = hi[0] = hi[1] = hi[2] = 0.0;
    double longest = 0;
    for (int k = 0; k < 3; k++)
        longest = hi[k] - lo[k] > longest ? hi[k] - lo[k] : longest;
    double s = opt->voxel_size > 0 ? opt->voxel_size : longest > 0 ? longest / opt->grid : 1.0;
    double d[3];
    for (int k = 0; k < 3; k++) {
        d[k] = ceil((hi[k] - lo[k]) / s - 1e-9);
        d[k] = d[k] < 1 ? 1 : d[k];
    }
    if (d[0] > GHM_VOXEL_MAX_DIM || d[1] > GHM_VOXEL_MAX_DIM || d[2] > GHM_VOXEL_MAX_DIM) {
        if (why && why_size)
            snprintf(why, why_size, "the grid would be %.0f x %.0f x %.0f voxels of size %g "
                     "(at most %d per axis)", d[0], d[1], d[2], s, GHM_VOXEL_MAX_DIM);
        return GHM_ERR_TOO_LARGE;
    }
    for (int k = 0; k < 3; k++) {
        out->origin[k] = lo[k];
        out->dims[k] = (int)d[k];
    }
    out->voxel_size = s;
    return GHM_OK;
}

/* --- one cloud ---------------------------------------------------------------------------- */

typedef struct Side {
    const GhmPointCloud *pc;
    GhmIndex *ix;
    size_t n, K;
    uint32_t *pkey;     /* n: voxel key of each point, GHM_NOT_FOUND outside the grid */
    uint32_t *pid;      /* n: voxel id of each point */
    uint32_t *keys;     /* K ascending */
    uint32_t *counts;   /* K */
    float *normals;     /* 3K */
    double *moments;    /* GHMI_MOMENTS * K, only when estimating normals */
    GhmiHood hood;      /* the neighbourhood of fill, seeds and normals */
    uint32_t *nbr;      /* hood.n * K neighbour ids */
    uint32_t *cross;    /* K: id of the same voxel in the other cloud */
    uint8_t *barrier;   /* K: the other surface is near (see contact()); not filled through */
    float *plane;       /* 6K: point and normal of the other surface near a barrier voxel */
    uint8_t *label;     /* K */
    uint8_t *ring;      /* K: next to a barrier voxel (seeds live here) */
    uint8_t *seed;      /* K: seed label or NO_SEED */
    uint32_t *sid;      /* K: id of the seed a filled voxel was reached from */
    size_t conflicts, seeds;
} Side;

static void side_free(GhmContext *ctx, Side *s)
{
    (void)ctx;
    ghm_index_free(&s->ix);
    free(s->pkey);
    free(s->pid);
    free(s->keys);
    free(s->counts);
    free(s->normals);
    free(s->moments);
    free(s->nbr);
    free(s->cross);
    free(s->barrier);
    free(s->plane);
    free(s->label);
    free(s->ring);
    free(s->seed);
    free(s->sid);
    memset(s, 0, sizeof *s);
}

/* The key of the voxel holding p; inv is 1 / voxel_size (a multiply instead of a divide). */
static inline uint32_t point_key(const GhmVoxelGrid *g, double inv, const double p[3])
{
    uint32_t c[3];
    for (int k = 0; k < 3; k++) {
        double f = (p[k] - g->origin[k]) * inv;
        double fl = floor(f);
        /* points on the far face (or a rounding error past it) belong to the last voxel */
        if (fl >= g->dims[k] && f < g->dims[k] + 1e-6)
            fl = g->dims[k] - 1;
        if (fl < 0 && f > -1e-6)
            fl = 0;
        if (!(fl >= 0 && fl < g->dims[k]))
            return GHM_NOT_FOUND;
        c[k] = (uint32_t)fl;
    }
    return c[0] + (uint32_t)g->dims[0] * (c[1] + (uint32_t)g->dims[1] * c[2]);
}

static int compute_keys(Side *s, const double *pose, const GhmVoxelGrid *g, int threads,
                        size_t *outside)
{
    size_t n = s->n, out = 0;
    s->pkey = malloc((n + 1) * sizeof *s->pkey);
    s->pid = malloc((n + 1) * sizeof *s->pid);
    if (!s->pkey || !s->pid)
        return GHM_ERR_NOMEM;
    const float *xyz = s->pc->xyz;
    uint32_t *pkey = s->pkey;
    const double inv = 1.0 / g->voxel_size;
#pragma omp parallel for num_threads(threads) schedule(static) if (n > PARALLEL_MIN) reduction(+ : out)
    for (size_t i = 0; i < n; i++) {
        double p[3];
        apply_pose(pose, xyz + 3 * i, p);
        pkey[i] = point_key(g, inv, p);
        out += pkey[i] == GHM_NOT_FOUND;
    }
    *outside = out;
    return GHM_OK;
}

/* Builds the index over the keys of the points inside the grid and gives each point its id. */
static int build_index(GhmContext *ctx, Side *s, size_t outside)
{
    int ret;
    if ((ret = ghm_index_create(ctx, 0.0, &s->ix)) < 0)
        return ret;
    const uint32_t *keys = s->pkey;
    uint32_t *inside = NULL;
    size_t m = s->n;
    if (outside > 0) {
        inside = malloc((s->n - outside + 1) * sizeof *inside);
        if (!inside)
            return GHM_ERR_NOMEM;
        m = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->pkey[i] != GHM_NOT_FOUND)
                inside[m++] = s->pkey[i];
        keys = inside;
    }
    ret = ghm_index_build(s->ix, keys, m);
    free(inside);
    if (ret < 0)
        return ret;
    s->K = ghm_index_size(s->ix);
    if ((ret = ghm_index_ids(s->ix, s->pkey, s->n, s->pid)) < 0)
        return ret;
    s->keys = malloc((s->K + 1) * sizeof *s->keys);
    if (!s->keys)
        return GHM_ERR_NOMEM;
    const uint32_t *dev_keys = NULL;
    if ((ret = ghm_index_key_array(s->ix, &dev_keys)) < 0)
        return ret;
    return ghm_buffer_download(ctx, s->keys, dev_keys, s->K * sizeof *s->keys);
}

/* Per-voxel point counts, normal sums (in fixed point, GHMI_VOXEL_FIX_SCALE: integer sums are
 * exact, so a device summing with atomics in any order gets the same normals) and, for
 * estimation, moments; serial, since it is one streaming pass and scattered double additions of
 * moments would make them depend on thread timing. */
static int accumulate(Side *s, const double *pose, const GhmVoxelGrid *g)
{
    size_t K = s->K;
    int estimate = s->pc->normals == NULL;
    uint64_t *sum = NULL;
    s->counts = calloc(K + 1, sizeof *s->counts);
    s->normals = calloc(3 * K + 1, sizeof *s->normals);
    if (estimate)
        s->moments = calloc(GHMI_MOMENTS * K + 1, sizeof *s->moments);
    else
        sum = calloc(3 * K + 1, sizeof *sum);
    if (!s->counts || !s->normals || (estimate ? !s->moments : !sum)) {
        free(sum);
        return GHM_ERR_NOMEM;
    }
    for (size_t i = 0; i < s->n; i++) {
        uint32_t v = s->pid[i];
        if (v == GHM_NOT_FOUND)
            continue;
        s->counts[v]++;
        if (!estimate) {
            const float *n = s->pc->normals + 3 * i;
            float f[3] = {n[0], n[1], n[2]};
            if (pose) /* normals turn with the cloud (a rigid pose has no shear) */
                for (int r = 0; r < 3; r++)
                    f[r] = (float)(pose[4 * r] * n[0] + pose[4 * r + 1] * n[1] +
                                   pose[4 * r + 2] * n[2]);
            for (int r = 0; r < 3; r++) /* unsigned: wrapping is defined, as on the device */
                sum[3 * (size_t)v + (size_t)r] += (uint64_t)ghmi_voxel_fix(f[r]);
            continue;
        }
        double p[3], c[3], d[3];
        apply_pose(pose, s->pc->xyz + 3 * i, p);
        ghm_voxel_centre(g, s->pkey[i], c);
        for (int k = 0; k < 3; k++)
            d[k] = p[k] - c[k];
        double *m = s->moments + GHMI_MOMENTS * (size_t)v;
        m[0] += d[0], m[1] += d[1], m[2] += d[2];
        m[3] += d[0] * d[0], m[4] += d[0] * d[1], m[5] += d[0] * d[2];
        m[6] += d[1] * d[1], m[7] += d[1] * d[2], m[8] += d[2] * d[2];
    }
    for (size_t v = 0; !estimate && v < K; v++) {
        double a[3];
        for (int r = 0; r < 3; r++)
            a[r] = (double)(int64_t)sum[3 * v + (size_t)r] * (1.0 / GHMI_VOXEL_FIX_SCALE);
        double len = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        for (int r = 0; r < 3; r++)
            s->normals[3 * v + (size_t)r] = len > 1e-6 ? (float)(a[r] / len) : 0.0f;
    }
    free(sum);
    return GHM_OK;
}

/* Neighbour ids in the own cloud, hood.n per voxel, through one bulk index query. */
static int neighbours(const GhmVoxelGrid *g, Side *s, int threads)
{
    size_t K = s->K, nn = (size_t)s->hood.n;
    free(s->nbr);
    uint32_t *nkeys = malloc((nn * K + 1) * sizeof *nkeys);
    s->nbr = malloc((nn * K + 1) * sizeof *s->nbr);
    if (!nkeys || !s->nbr) {
        free(nkeys);
        return GHM_ERR_NOMEM;
    }
    const int64_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    const uint32_t *keys = s->keys;
    const GhmiHood *h = &s->hood;
#pragma omp parallel for num_threads(threads) schedule(static) if (K > PARALLEL_MIN)
    for (size_t v = 0; v < K; v++) {
        int64_t x = keys[v] % nx, y = (keys[v] / nx) % ny, z = keys[v] / nx / ny;
        for (size_t k = 0; k < nn; k++) {
            int64_t a = x + h->step[k][0], b = y + h->step[k][1], c = z + h->step[k][2];
            int inside = a >= 0 && a < nx && b >= 0 && b < ny && c >= 0 && c < nz;
            /* keys are below 2^30, so GHM_NOT_FOUND is never a stored key */
            nkeys[nn * v + k] = inside ? (uint32_t)(a + nx * (b + ny * c)) : GHM_NOT_FOUND;
        }
    }
    int ret = K > 0 ? ghm_index_ids(s->ix, nkeys, nn * K, s->nbr) : GHM_OK;
    free(nkeys);
    return ret;
}

/* The median number of occupied neighbours, from a histogram (deterministic, O(K)). */
static int median_neighbours(const Side *s)
{
    size_t hist[GHMI_MAX_HOOD + 1] = {0}, nn = (size_t)s->hood.n;
    for (size_t v = 0; v < s->K; v++) {
        int c = 0;
        for (size_t k = 0; k < nn; k++)
            c += s->nbr[nn * v + k] != GHM_NOT_FOUND;
        hist[c]++;
    }
    size_t seen = 0;
    for (int c = 0; c <= (int)nn; c++)
        if ((seen += hist[c]) * 2 >= s->K)
            return c;
    return (int)nn;
}

/* 26-neighbours, widened step by step for a cloud too sparse for the grid. */
static int look_up(const GhmVoxelGrid *g, Side *s, int threads)
{
    int ret;
    for (int r = 1; r <= GHMI_MAX_RADIUS; r++) {
        ghmi_hood_make(r, &s->hood);
        if ((ret = neighbours(g, s, threads)) < 0)
            return ret;
        if (s->K == 0 || median_neighbours(s) >= GHMI_MIN_MEDIAN_NEIGHBOURS)
            break;
    }
    return GHM_OK;
}

/* Where the other surface is near each voxel: the same voxel in the other cloud (an
 * intersection; the plane goes through this voxel's centre with the other cloud's normal
 * there, as in the paper), or, when either cloud is sparse (radius rho = max(radii) - 1 > 0),
 * any voxel of the other cloud within rho (the plane through their mean centre with their mean
 * normal). Such voxels form the barrier the fill does not cross: a sparse cloud's intersection
 * voxels are a dotted line that a fill would leak through, and a sparse cloud's wide
 * neighbourhood would jump over the other cloud's one-voxel sheet. */
static void contact_of(const GhmVoxelGrid *g, Side *s, const Side *o, const GhmiHood *h,
                       const uint32_t *ids, size_t v)
{
    size_t m = (size_t)h->n + 1;
    double c[3], sum_c[3] = {0, 0, 0}, sum_n[3] = {0, 0, 0};
    ghm_voxel_centre(g, s->keys[v], c);
    float *pl = s->plane + 6 * v;
    s->cross[v] = ids[m * v];
    int found = 0;
    for (size_t k = 0; k < m; k++) {
        uint32_t u = ids[m * v + k];
        if (u == GHM_NOT_FOUND)
            continue;
        const int *d = k ? h->step[k - 1] : (const int[3]){0, 0, 0};
        for (int a = 0; a < 3; a++) {
            sum_c[a] += c[a] + d[a] * g->voxel_size;
            sum_n[a] += o->normals[3 * (size_t)u + (size_t)a];
        }
        found++;
        if (k == 0)
            break; /* an intersection: the paper's plane through this voxel */
    }
    s->barrier[v] = found > 0;
    if (!found)
        return;
    double len = sqrt(sum_n[0] * sum_n[0] + sum_n[1] * sum_n[1] + sum_n[2] * sum_n[2]);
    for (int a = 0; a < 3; a++) {
        pl[a] = (float)(sum_c[a] / found);
        pl[3 + a] = len > 1e-9 ? (float)(sum_n[a] / len) : 0.0f;
    }
}

static int contact(const GhmVoxelGrid *g, Side *s, const Side *o, int threads)
{
    size_t K = s->K;
    int rho = (s->hood.radius > o->hood.radius ? s->hood.radius : o->hood.radius) - 1;
    GhmiHood *h = malloc(sizeof *h);
    s->cross = malloc((K + 1) * sizeof *s->cross);
    s->barrier = calloc(K + 1, 1);
    s->plane = calloc(6 * K + 1, sizeof *s->plane);
    size_t m = (size_t)(2 * rho + 1) * (size_t)(2 * rho + 1) * (size_t)(2 * rho + 1);
    uint32_t *q = malloc((m * K + 1) * sizeof *q), *ids = malloc((m * K + 1) * sizeof *ids);
    int ret = h && s->cross && s->barrier && s->plane && q && ids ? GHM_OK : GHM_ERR_NOMEM;
    if (ret == GHM_OK) {
        ghmi_hood_make(rho, h);
        const int64_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
#pragma omp parallel for num_threads(threads) schedule(static) if (K > PARALLEL_MIN)
        for (size_t v = 0; v < K; v++) {
            int64_t x = s->keys[v] % nx, y = (s->keys[v] / nx) % ny, z = s->keys[v] / nx / ny;
            q[m * v] = s->keys[v];
            for (size_t k = 1; k < m; k++) {
                int64_t a = x + h->step[k - 1][0], b = y + h->step[k - 1][1],
                        c = z + h->step[k - 1][2];
                int in = a >= 0 && a < nx && b >= 0 && b < ny && c >= 0 && c < nz;
                q[m * v + k] = in ? (uint32_t)(a + nx * (b + ny * c)) : GHM_NOT_FOUND;
            }
        }
        if (o->K == 0)
            for (size_t i = 0; i < m * K; i++)
                ids[i] = GHM_NOT_FOUND;
        else if (K > 0)
            ret = ghm_index_ids(o->ix, q, m * K, ids);
    }
    if (ret == GHM_OK) {
#pragma omp parallel for num_threads(threads) schedule(static) if (K > PARALLEL_MIN)
        for (size_t v = 0; v < K; v++)
            contact_of(g, s, o, h, ids, v);
    }
    free(h);
    free(q);
    free(ids);
    return ret;
}

static int voxelize(GhmContext *ctx, Side *s, const double *pose, const GhmVoxelGrid *g,
                    int threads)
{
    size_t outside = 0;
    int ret = compute_keys(s, pose, g, threads, &outside);
    if (ret == GHM_OK)
        ret = build_index(ctx, s, outside);
    if (ret == GHM_OK)
        ret = accumulate(s, pose, g);
    return ret;
}

/* --- labels ------------------------------------------------------------------------------- */

/* The label of a barrier voxel: intersection, or the side of the other surface's plane. */
static uint8_t barrier_label(const GhmVoxelGrid *g, const Side *s, size_t v)
{
    if (s->cross[v] != GHM_NOT_FOUND)
        return GHM_VOXEL_INTERSECTION;
    double c[3];
    ghm_voxel_centre(g, s->keys[v], c);
    const float *pl = s->plane + 6 * v;
    double d = (c[0] - pl[0]) * pl[3] + (c[1] - pl[1]) * pl[4] + (c[2] - pl[2]) * pl[5];
    return d > 0 ? GHM_VOXEL_OUTSIDE : d < 0 ? GHM_VOXEL_INSIDE : GHM_VOXEL_UNKNOWN;
}

/* Seed votes of a voxel next to the barrier: for each barrier neighbour x, the step from the
 * other surface's plane point near x to this voxel, over the length of the step from x,
 * against the plane's normal; at an intersection that is the paper's unit step . normal. */
static uint8_t seed_vote(const GhmVoxelGrid *g, const Side *s, size_t v, const double *len,
                         double t_out, double t_in, uint8_t *ring)
{
    int in = 0, out = 0;
    const int nn = s->hood.n;
    double c[3];
    ghm_voxel_centre(g, s->keys[v], c);
    for (int k = 0; k < nn; k++) {
        uint32_t x = s->nbr[(size_t)nn * v + (size_t)k];
        if (x == GHM_NOT_FOUND || !s->barrier[x])
            continue;
        *ring = 1;
        const float *pl = s->plane + 6 * (size_t)x;
        double dot = ((c[0] - pl[0]) * pl[3] + (c[1] - pl[1]) * pl[4] + (c[2] - pl[2]) * pl[5]) /
                     (len[k] * g->voxel_size);
        out += dot > t_out;
        in += dot < -t_in;
    }
    return in == out ? NO_SEED : in > out ? GHM_VOXEL_INSIDE : GHM_VOXEL_OUTSIDE;
}

/* Barrier labels, the ring of voxels next to the barrier, and the seeds among them. */
static int classify(const GhmVoxelGrid *g, Side *s, const GhmVoxelOptions *opt, int threads)
{
    size_t K = s->K;
    const int nn = s->hood.n;
    s->label = malloc(K + 1);
    s->ring = calloc(K + 1, 1);
    s->seed = malloc(K + 1);
    s->sid = malloc((K + 1) * sizeof *s->sid);
    double *len = malloc((size_t)nn * sizeof *len);
    if (!s->label || !s->ring || !s->seed || !s->sid || !len) {
        free(len);
        return GHM_ERR_NOMEM;
    }
    for (int k = 0; k < nn; k++) {
        const int *d = s->hood.step[k];
        len[k] = sqrt((double)(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
#pragma omp parallel for num_threads(threads) schedule(static) if (K > PARALLEL_MIN)
    for (size_t v = 0; v < K; v++) {
        s->seed[v] = NO_SEED;
        s->label[v] = GHM_VOXEL_UNKNOWN;
        if (s->barrier[v])
            s->label[v] = barrier_label(g, s, v);
        else
            s->seed[v] = seed_vote(g, s, v, len, opt->t_out, opt->t_in, &s->ring[v]);
    }
    free(len);
    return GHM_OK;
}

/* One breadth-first fill from the live seeds. Each voxel it reaches takes the label of the
 * nearest seed in neighbour steps, ties going to the smallest seed id: a rule that does not
 * depend on the order of the work, so a parallel (level-synchronous, atomic-min) fill gives the
 * same labels. The FIFO queue finishes level L before it starts on level L + 1, so a voxel's
 * seed is settled before the voxel is expanded. */
static void fill_once(Side *s, uint32_t *queue, uint32_t *level)
{
    size_t K = s->K, head = 0, tail = 0, nn = (size_t)s->hood.n;
    for (size_t v = 0; v < K; v++) {
        level[v] = GHM_NOT_FOUND;
        if (s->barrier[v])
            continue;
        s->label[v] = GHM_VOXEL_UNKNOWN;
        s->sid[v] = GHM_NOT_FOUND;
        if (s->seed[v] != NO_SEED) {
            s->label[v] = s->seed[v];
            s->sid[v] = (uint32_t)v;
            level[v] = 0;
            queue[tail++] = (uint32_t)v;
        }
    }
    while (head < tail) {
        uint32_t v = queue[head++];
        for (size_t k = 0; k < nn; k++) {
            uint32_t u = s->nbr[nn * v + k];
            if (u == GHM_NOT_FOUND || s->barrier[u])
                continue;
            if (level[u] == GHM_NOT_FOUND) {
                level[u] = level[v] + 1;
                queue[tail++] = u;
            } else if (level[u] != level[v] + 1 || s->sid[u] <= s->sid[v])
                continue;
            s->label[u] = s->label[v];
            s->sid[u] = s->sid[v];
        }
    }
}

/* Inside next to outside away from the crossing: drops the seeds of both; returns the pairs. */
static size_t find_conflicts(Side *s, uint8_t *drop)
{
    size_t pairs = 0;
    for (size_t v = 0; v < s->K; v++) {
        uint8_t l = s->label[v];
        if (s->ring[v] || s->barrier[v] || (l != GHM_VOXEL_INSIDE && l != GHM_VOXEL_OUTSIDE))
            continue;
        for (int k = 0; k < s->hood.n; k++) {
            uint32_t u = s->nbr[(size_t)s->hood.n * v + (size_t)k];
            if (u == GHM_NOT_FOUND || s->ring[u] || s->barrier[u] || s->label[u] == l ||
                (s->label[u] != GHM_VOXEL_INSIDE && s->label[u] != GHM_VOXEL_OUTSIDE))
                continue;
            drop[s->sid[v]] = drop[s->sid[u]] = 1;
            pairs += u > v; /* each pair once */
        }
    }
    return pairs;
}

static int fill(Side *s, const GhmVoxelOptions *opt, int *rounds)
{
    uint32_t *queue = malloc((s->K + 1) * sizeof *queue);
    uint32_t *level = malloc((s->K + 1) * sizeof *level);
    uint8_t *drop = calloc(s->K + 1, 1);
    if (!queue || !level || !drop) {
        free(queue);
        free(level);
        free(drop);
        return GHM_ERR_NOMEM;
    }
    int r = 0;
    for (;;) {
        fill_once(s, queue, level);
        r++;
        s->conflicts = find_conflicts(s, drop);
        if (s->conflicts == 0 || r == opt->max_rounds)
            break;
        for (size_t v = 0; v < s->K; v++)
            if (drop[v])
                s->seed[v] = NO_SEED;
    }
    s->seeds = 0;
    for (size_t v = 0; v < s->K; v++)
        s->seeds += s->seed[v] != NO_SEED;
    *rounds = r > *rounds ? r : *rounds;
    free(queue);
    free(level);
    free(drop);
    return GHM_OK;
}

/* --- the step ----------------------------------------------------------------------------- */

static void hand_over(Side *s, GhmVoxelSide *out)
{
    out->points = s->n;
    out->voxels = s->K;
    out->keys = s->keys, s->keys = NULL;
    out->labels = s->label, s->label = NULL;
    out->counts = s->counts, s->counts = NULL;
    out->normals = s->normals, s->normals = NULL;
    out->normals_estimated = s->pc->normals == NULL;
    out->seeds = s->seeds;
    out->conflicts = s->conflicts;
    out->radius = s->hood.radius;
    for (size_t v = 0; v < out->voxels; v++)
        out->label_count[out->labels[v]]++;
}

static int run_step(GhmContext *ctx, Side *s, const double *b_pose, const GhmVoxelGrid *g,
                    const GhmVoxelOptions *opt, int threads, GhmVoxelResult *r)
{
    int ret = GHM_OK;
    double t[7];
    t[0] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = voxelize(ctx, &s[i], i ? b_pose : NULL, g, threads);
    t[1] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = look_up(g, &s[i], threads);
    t[2] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        if (s[i].moments)
            ret = ghmi_voxel_estimate_normals(g, s[i].K, s[i].keys, s[i].counts, s[i].moments,
                                              &s[i].hood, s[i].nbr, threads, s[i].normals);
    t[3] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = contact(g, &s[i], &s[1 - i], threads);
    t[4] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = classify(g, &s[i], opt, threads);
    t[5] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = fill(&s[i], opt, &r->rounds);
    t[6] = ghm_now();
    r->time.voxelize_ms = 1e3 * ((t[1] - t[0]) + (t[3] - t[2]));
    r->time.lookup_ms = 1e3 * ((t[2] - t[1]) + (t[4] - t[3]));
    r->time.classify_ms = 1e3 * (t[5] - t[4]);
    r->time.fill_ms = 1e3 * (t[6] - t[5]);
    r->time.total_ms = 1e3 * (t[6] - t[0]);
    return ret;
}

static int check_step(const GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                      const GhmVoxelGrid *grid, const GhmVoxelOptions *opt)
{
    if (!ctx || !a || !b || !grid || check_options(opt) < 0 || !(grid->voxel_size > 0))
        return GHM_ERR_INVALID;
    for (int k = 0; k < 3; k++)
        if (grid->dims[k] < 1 || grid->dims[k] > GHM_VOXEL_MAX_DIM)
            return GHM_ERR_INVALID;
    return GHM_OK;
}

/* The device path, for clouds with or without normals (estimated on the device). */
static const GhmVoxelOps *device_ops(const GhmContext *ctx, const GhmPointCloud *a,
                                     const GhmPointCloud *b)
{
    (void)a, (void)b;
    return ghmi_voxel_ops(ctx);
}

static int cpu_step(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                    const double *b_pose, const GhmVoxelGrid *grid, const GhmVoxelOptions *opt,
                    GhmVoxelResult *r)
{
    Side s[2] = {{.pc = a, .n = a->n}, {.pc = b, .n = b->n}};
    int ret = run_step(ctx, s, b_pose, grid, opt, ghm_context_threads(ctx), r);
    if (ret == GHM_OK) {
        hand_over(&s[0], &r->side[0]);
        hand_over(&s[1], &r->side[1]);
    }
    side_free(ctx, &s[0]);
    side_free(ctx, &s[1]);
    return ret;
}

int ghm_voxel_intersect(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                        const double *b_pose, const GhmVoxelGrid *grid,
                        const GhmVoxelOptions *opt, GhmVoxelResult **out)
{
    if (!out || check_step(ctx, a, b, grid, opt) < 0)
        return GHM_ERR_INVALID;
    GhmVoxelResult *r = calloc(1, sizeof *r);
    if (!r)
        return GHM_ERR_NOMEM;
    r->grid = *grid;
    int ret;
    const GhmVoxelOps *ops = device_ops(ctx, a, b);
    if (ops) { /* one step: the upload of the points counts as voxelizing */
        GhmiVoxelDevice *dev = NULL;
        double t0 = ghm_now();
        ret = ghmi_voxel_device_create(ctx, ops, a, b, 0, &dev);
        double up = 1e3 * (ghm_now() - t0);
        if (ret == GHM_OK)
            ret = ghmi_voxel_device_step(dev, b_pose, grid, opt, r);
        ghmi_voxel_device_free(&dev);
        r->time.voxelize_ms += up;
        r->time.total_ms += up;
    } else {
        ret = cpu_step(ctx, a, b, b_pose, grid, opt, r);
    }
    if (ret == GHM_OK)
        *out = r;
    else
        ghm_voxel_result_free(&r);
    return ret;
}

/* --- sweeps ------------------------------------------------------------------------------- */

struct GhmVoxelSweep {
    GhmContext *ctx;
    const GhmPointCloud *a, *b;
    GhmVoxelGrid grid;
    GhmVoxelOptions opt;
    GhmiVoxelDevice *dev; /* the device path's state, or NULL for the CPU path */
    GhmVoxelResult view;  /* device path: the last step, arrays in the state's staging */
    GhmVoxelResult *cpu;  /* CPU path: the last step's result */
    double setup_ms;
};

int ghm_voxel_sweep_create(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                           const GhmVoxelGrid *grid, const GhmVoxelOptions *opt,
                           GhmVoxelSweep **out)
{
    if (!out || check_step(ctx, a, b, grid, opt) < 0)
        return GHM_ERR_INVALID;
    GhmVoxelSweep *sw = calloc(1, sizeof *sw);
    if (!sw)
        return GHM_ERR_NOMEM;
    *sw = (GhmVoxelSweep){.ctx = ctx, .a = a, .b = b, .grid = *grid, .opt = *opt};
    const GhmVoxelOps *ops = device_ops(ctx, a, b);
    double t0 = ghm_now();
    int ret = ops ? ghmi_voxel_device_create(ctx, ops, a, b, 1, &sw->dev) : GHM_OK;
    sw->setup_ms = 1e3 * (ghm_now() - t0);
    if (ret < 0) {
        ghm_voxel_sweep_free(&sw);
        return ret;
    }
    *out = sw;
    return GHM_OK;
}

int ghm_voxel_sweep_step(GhmVoxelSweep *sw, const double *b_pose, const GhmVoxelResult **out)
{
    if (!sw || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    int ret;
    if (sw->dev) {
        memset(&sw->view, 0, sizeof sw->view);
        sw->view.grid = sw->grid;
        ret = ghmi_voxel_device_step(sw->dev, b_pose, &sw->grid, &sw->opt, &sw->view);
        if (ret == GHM_OK)
            *out = &sw->view;
        return ret;
    }
    ghm_voxel_result_free(&sw->cpu);
    if (!(sw->cpu = calloc(1, sizeof *sw->cpu)))
        return GHM_ERR_NOMEM;
    sw->cpu->grid = sw->grid;
    ret = cpu_step(sw->ctx, sw->a, sw->b, b_pose, &sw->grid, &sw->opt, sw->cpu);
    if (ret == GHM_OK)
        *out = sw->cpu;
    else
        ghm_voxel_result_free(&sw->cpu);
    return ret;
}

double ghm_voxel_sweep_setup_ms(const GhmVoxelSweep *sw) { return sw ? sw->setup_ms : 0.0; }

void ghm_voxel_sweep_free(GhmVoxelSweep **sw)
{
    if (!sw || !*sw)
        return;
    ghmi_voxel_device_free(&(*sw)->dev);
    ghm_voxel_result_free(&(*sw)->cpu);
    free(*sw);
    *sw = NULL;
}

void ghm_voxel_result_free(GhmVoxelResult **r)
{
    if (!r || !*r)
        return;
    for (int i = 0; i < 2; i++) {
        free((*r)->side[i].keys);
        free((*r)->side[i].labels);
        free((*r)->side[i].counts);
        free((*r)->side[i].normals);
    }
    free(*r);
    *r = NULL;
}
