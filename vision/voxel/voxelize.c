/*
 * voxelize.c - the voxel pipeline's CPU path up to the labels: per cloud, the keys of the points
 * (parallel over points), a GhmIndex of the occupied voxels, per-voxel counts and normal sums (or
 * moments, for clouds without normals), bulk GhmIndex look-ups of the neighbour keys of every
 * voxel in its own cloud (more for a sparse cloud), and of each voxel's key (and, for sparse
 * clouds, its near keys) in the other cloud: intersection and barrier. The device twin is
 * kernels/vision/voxel/voxelize.cu.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_index.h"
#include "voxel_backend_internal.h"
#include "voxel_cpu_internal.h"

void ghmi_voxel_side_free(GhmiSide *s)
{
    ghm_index_free(&s->ix);
    free(s->pkey);
    free(s->pid);
    free(s->keys);
    free(s->counts);
    free(s->normals);
    free(s->moments);
    if (!s->nbr_keep)
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

static int compute_keys(GhmiSide *s, const double *pose, const GhmVoxelGrid *g, int threads,
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
#pragma omp parallel for num_threads(threads) schedule(static) if (n > GHMI_PARALLEL_MIN) \
    reduction(+ : out)
    for (size_t i = 0; i < n; i++) {
        double p[3];
        ghmi_voxel_apply_pose(pose, xyz + 3 * i, p);
        pkey[i] = point_key(g, inv, p);
        out += pkey[i] == GHM_NOT_FOUND;
    }
    *outside = out;
    return GHM_OK;
}

/* Builds the index over the keys of the points inside the grid and gives each point its id. */
static int build_index(GhmContext *ctx, GhmiSide *s, size_t outside)
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

/* A cloud given as rows whose every point is in the rows' voxel of its rank (a voxel edit's
 * probe, one point a voxel centre, unless float centres merge far from the origin): its voxels
 * are its points, in their order (point i is voxel i: pid is not filled), so the index's sort
 * and look-ups are not needed. */
static int voxels_of_rows(GhmiSide *s)
{
    size_t n = s->n;
    s->K = n;
    s->by_rows = 1;
    s->keys = malloc((n + 1) * sizeof *s->keys);
    if (!s->keys)
        return GHM_ERR_NOMEM;
    memcpy(s->keys, s->pkey, n * sizeof *s->keys);
    return GHM_OK;
}

/* The ids in s of n keys (GHM_NOT_FOUND for none): by its rows, or by its index. */
static int ids_in(const GhmiSide *s, const uint32_t *keys, size_t n, int threads, uint32_t *ids)
{
    if (!s->by_rows)
        return ghm_index_ids(s->ix, keys, n, ids);
#pragma omp parallel for num_threads(threads) schedule(static) if (n > GHMI_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++)
        ids[i] = keys[i] == GHM_NOT_FOUND ? GHM_NOT_FOUND : ghmi_voxel_rows_at(s->rows, keys[i]);
    return GHM_OK;
}

/* Per-voxel point counts, normal sums (in fixed point, GHMI_VOXEL_FIX_SCALE: integer sums are
 * exact, so a device summing with atomics in any order gets the same normals) and, for
 * estimation, moments; serial, since it is one streaming pass and scattered double additions of
 * moments would make them depend on thread timing, except for a cloud by_rows, whose voxels
 * have a point each (a voxel edit's probe: 0.9 M points). */
static int accumulate(GhmiSide *s, const double *pose, const GhmVoxelGrid *g, int threads)
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
    const int apart = s->by_rows && s->n > GHMI_PARALLEL_MIN; /* no two points share a voxel */
#pragma omp parallel for num_threads(threads) schedule(static) if (apart)
    for (size_t i = 0; i < s->n; i++) {
        uint32_t v = s->by_rows ? (uint32_t)i : s->pid[i];
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
        ghmi_voxel_apply_pose(pose, s->pc->xyz + 3 * i, p);
        ghm_voxel_centre(g, s->pkey[i], c);
        for (int k = 0; k < 3; k++)
            d[k] = p[k] - c[k];
        double *m = s->moments + GHMI_MOMENTS * (size_t)v;
        m[0] += d[0], m[1] += d[1], m[2] += d[2];
        m[3] += d[0] * d[0], m[4] += d[0] * d[1], m[5] += d[0] * d[2];
        m[6] += d[1] * d[1], m[7] += d[1] * d[2], m[8] += d[2] * d[2];
    }
    const size_t summed = estimate ? 0 : K;
#pragma omp parallel for num_threads(threads) schedule(static) if (summed > GHMI_PARALLEL_MIN)
    for (size_t v = 0; v < summed; v++) {
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

/* Neighbour ids of a cloud by_rows, row by row: a neighbour's row is the row plus (dy, dz), its
 * id the neighbour row's first plus x + dx - its lo, or none outside its span; no index look-up
 * (a voxel edit's probe of 0.9 M voxels: 23 M hashed look-ups) and no key divided into
 * coordinates (a key by key look-up by ghmi_voxel_rows_at had twice the perf samples, 2 cores).
 * Each step's span and first id are taken once a row, into locals: read from the rows' arrays
 * for every voxel they were loaded again after each store of an id (the stores may alias
 * them). */
static void neighbours_by_rows(const GhmVoxelGrid *g, GhmiSide *s, int threads)
{
    const GhmiVoxelRows *rows = s->rows;
    const int ny = g->dims[1], nz = g->dims[2], nn = s->hood.n;
    const size_t nr = (size_t)ny * (size_t)nz;
    const int (*step)[3] = s->hood.step;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) if (s->K > GHMI_PARALLEL_MIN)
    for (size_t r = 0; r < nr; r++) {
        if (rows->lo[r] > rows->hi[r])
            continue;
        const int y = (int)(r % (size_t)ny), z = (int)(r / (size_t)ny);
        /* step k's neighbour of x is first[k] + x when lo[k] <= x <= hi[k] (x moved by its dx:
         * lo, hi and first are shifted by it), none otherwise */
        int32_t lo[GHMI_MAX_HOOD], hi[GHMI_MAX_HOOD];
        int64_t first[GHMI_MAX_HOOD];
        for (int k = 0; k < nn; k++) {
            int yy = y + step[k][1], zz = z + step[k][2], dx = step[k][0];
            size_t q = (size_t)yy + (size_t)ny * (size_t)zz;
            int in = yy >= 0 && yy < ny && zz >= 0 && zz < nz && rows->lo[q] <= rows->hi[q];
            lo[k] = in ? rows->lo[q] - dx : 1;
            hi[k] = in ? rows->hi[q] - dx : 0;
            first[k] = in ? (int64_t)rows->start[q] - rows->lo[q] + dx : 0;
        }
        for (int32_t x = rows->lo[r]; x <= rows->hi[r]; x++) {
            uint32_t *out = s->nbr + (size_t)nn * (rows->start[r] + (size_t)(x - rows->lo[r]));
            for (int k = 0; k < nn; k++)
                out[k] = x >= lo[k] && x <= hi[k] ? (uint32_t)(first[k] + x) : GHM_NOT_FOUND;
        }
    }
}

/* s->nbr with room for n ids (its contents lost): the side's own, or its keep's. */
static int nbr_room(GhmiSide *s, size_t n)
{
    const size_t bytes = (n + 1) * sizeof *s->nbr;
    if (s->nbr_keep) {
        s->nbr = ghmi_keep_room(s->nbr_keep, bytes, NULL);
    } else {
        free(s->nbr);
        s->nbr = malloc(bytes);
    }
    return s->nbr ? GHM_OK : GHM_ERR_NOMEM;
}

/* Neighbour ids in the own cloud, hood.n per voxel, through one bulk index query (or by the
 * rows). */
static int neighbours(const GhmVoxelGrid *g, GhmiSide *s, int threads)
{
    size_t K = s->K, nn = (size_t)s->hood.n;
    if (nbr_room(s, nn * K) < 0)
        return GHM_ERR_NOMEM;
    if (s->by_rows) {
        neighbours_by_rows(g, s, threads);
        return GHM_OK;
    }
    uint32_t *nkeys = malloc((nn * K + 1) * sizeof *nkeys);
    if (!nkeys)
        return GHM_ERR_NOMEM;
    const GhmiHood *h = &s->hood;
#pragma omp parallel for num_threads(threads) schedule(static) if (K > GHMI_PARALLEL_MIN)
    for (size_t v = 0; v < K; v++) {
        int64_t xyz[3];
        ghmi_voxel_coords(g, s->keys[v], xyz);
        for (size_t k = 0; k < nn; k++)
            nkeys[nn * v + k] = ghmi_voxel_step_key(g, xyz, h->step[k], 1);
    }
    int ret = K > 0 ? ghm_index_ids(s->ix, nkeys, nn * K, s->nbr) : GHM_OK;
    free(nkeys);
    return ret;
}

/* The median number of occupied neighbours, from a histogram (deterministic, O(K)). */
static int median_neighbours(const GhmiSide *s)
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
int ghmi_voxel_look_up(const GhmVoxelGrid *g, GhmiSide *s, int threads)
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
 * neighbourhood would jump over the other cloud's one-voxel sheet.
 * Voxel v's contacts come as n (hood index, voxel of o) pairs in ascending hood index (0 = v
 * itself, k > 0 = v + h->step[k - 1]); both directions of the look-up below hand them so, and
 * the sums run in that order, so that either gives the same floats. */
static void contact_of(const GhmVoxelGrid *g, GhmiSide *s, const GhmiSide *o, const GhmiHood *h,
                       size_t v, const uint32_t *ks, const uint32_t *us, size_t n)
{
    static const int here[3] = {0, 0, 0};
    double c[3], sum_c[3] = {0, 0, 0}, sum_n[3] = {0, 0, 0};
    float *pl = s->plane + 6 * v;
    int same = n > 0 && ks[0] == 0;
    s->cross[v] = same ? us[0] : GHM_NOT_FOUND;
    s->barrier[v] = n > 0;
    if (!n) /* most voxels (a probe's: 93 %): no plane, and no centre to compute */
        return;
    ghm_voxel_centre(g, s->keys[v], c);
    if (same)
        n = 1; /* an intersection: the paper's plane through this voxel */
    for (size_t i = 0; i < n; i++) {
        const int *d = ks[i] ? h->step[ks[i] - 1] : here;
        for (int a = 0; a < 3; a++) {
            sum_c[a] += c[a] + d[a] * g->voxel_size;
            sum_n[a] += o->normals[3 * (size_t)us[i] + (size_t)a];
        }
    }
    double len = sqrt(sum_n[0] * sum_n[0] + sum_n[1] * sum_n[1] + sum_n[2] * sum_n[2]);
    for (int a = 0; a < 3; a++) {
        pl[a] = (float)(sum_c[a] / (double)n);
        pl[3 + a] = len > 1e-9 ? (float)(sum_n[a] / len) : 0.0f;
    }
}

/* From s's side: each voxel of s looks up its m hood keys in o. */
static int contact_forward(const GhmVoxelGrid *g, GhmiSide *s, const GhmiSide *o,
                           const GhmiHood *h, int threads)
{
    size_t K = s->K, m = (size_t)h->n + 1;
    uint32_t *q = malloc((m * K + 1) * sizeof *q), *ids = malloc((m * K + 1) * sizeof *ids);
    int ret = q && ids ? GHM_OK : GHM_ERR_NOMEM;
    if (ret == GHM_OK) {
#pragma omp parallel for num_threads(threads) schedule(static) if (K > GHMI_PARALLEL_MIN)
        for (size_t v = 0; v < K; v++) {
            int64_t xyz[3];
            ghmi_voxel_coords(g, s->keys[v], xyz);
            q[m * v] = s->keys[v];
            for (size_t k = 1; k < m; k++)
                q[m * v + k] = ghmi_voxel_step_key(g, xyz, h->step[k - 1], 1);
        }
        if (o->K == 0)
            for (size_t i = 0; i < m * K; i++)
                ids[i] = GHM_NOT_FOUND;
        else if (K > 0)
            ret = ids_in(o, q, m * K, threads, ids);
    }
    if (ret == GHM_OK) {
#pragma omp parallel for num_threads(threads) schedule(static) if (K > GHMI_PARALLEL_MIN)
        for (size_t v = 0; v < K; v++) {
            uint32_t ks[GHMI_MAX_HOOD + 1], us[GHMI_MAX_HOOD + 1];
            size_t n = 0;
            for (size_t k = 0; k < m; k++)
                if (ids[m * v + k] != GHM_NOT_FOUND)
                    ks[n] = (uint32_t)k, us[n++] = ids[m * v + k];
            contact_of(g, s, o, h, v, ks, us, n);
        }
    }
    free(q);
    free(ids);
    return ret;
}

/* From o's side, for an o much smaller than s (a probe of a million voxels against a sparse
 * cloud's thousands, voxel edit's case): each voxel of o looks up in s the voxels whose hood
 * holds it, m times o's voxels instead of m times s's. The pairs found are grouped by s's voxel
 * with a stable counting sort of a hood-major list, so each voxel gets them in ascending hood
 * index, as contact_forward hands them. */
static int contact_reverse(const GhmVoxelGrid *g, GhmiSide *s, const GhmiSide *o,
                           const GhmiHood *h, int threads)
{
    size_t K = s->K, oK = o->K, m = (size_t)h->n + 1, n = m * oK;
    uint32_t *q = malloc((n + 1) * sizeof *q), *ids = malloc((n + 1) * sizeof *ids);
    size_t *first = calloc(K + 2, sizeof *first);
    uint32_t *ks = NULL, *us = NULL;
    int ret = q && ids && first ? GHM_OK : GHM_ERR_NOMEM;
    if (ret == GHM_OK) {
#pragma omp parallel for num_threads(threads) schedule(static) if (n > GHMI_PARALLEL_MIN)
        for (size_t i = 0; i < n; i++) {
            size_t k = i / oK, u = i % oK;
            int64_t xyz[3];
            ghmi_voxel_coords(g, o->keys[u], xyz);
            q[i] = k ? ghmi_voxel_step_key(g, xyz, h->step[k - 1], -1) : o->keys[u];
        }
        if (n > 0)
            ret = ids_in(s, q, n, threads, ids);
    }
    for (size_t i = 0; ret == GHM_OK && i < n; i++)
        if (ids[i] != GHM_NOT_FOUND)
            first[ids[i] + 2]++;
    for (size_t v = 0; ret == GHM_OK && v < K; v++)
        first[v + 2] += first[v + 1];
    if (ret == GHM_OK) {
        ks = malloc((first[K + 1] + 1) * sizeof *ks);
        us = malloc((first[K + 1] + 1) * sizeof *us);
        ret = ks && us ? GHM_OK : GHM_ERR_NOMEM;
    }
    for (size_t i = 0; ret == GHM_OK && i < n; i++) /* hood-major: stable by hood index */
        if (ids[i] != GHM_NOT_FOUND) {
            size_t at = first[ids[i] + 1]++;
            ks[at] = (uint32_t)(i / oK), us[at] = (uint32_t)(i % oK);
        }
    if (ret == GHM_OK) {
#pragma omp parallel for num_threads(threads) schedule(static) if (K > GHMI_PARALLEL_MIN)
        for (size_t v = 0; v < K; v++)
            contact_of(g, s, o, h, v, ks + first[v], us + first[v], first[v + 1] - first[v]);
    }
    free(q);
    free(ids);
    free(first);
    free(ks);
    free(us);
    return ret;
}

int ghmi_voxel_contact(const GhmVoxelGrid *g, GhmiSide *s, const GhmiSide *o, int threads)
{
    size_t K = s->K;
    const int radius[2] = {s->hood.radius, o->hood.radius};
    const size_t inside[2] = {s->inside, o->inside}, Ks[2] = {s->K, o->K};
    int rho = ghmi_voxel_barrier_reach(radius, inside, Ks);
    GhmiHood *h = malloc(sizeof *h);
    s->cross = malloc((K + 1) * sizeof *s->cross);
    s->barrier = calloc(K + 1, 1);
    s->plane = calloc(6 * K + 1, sizeof *s->plane);
    int ret = h && s->cross && s->barrier && s->plane ? GHM_OK : GHM_ERR_NOMEM;
    if (ret == GHM_OK) {
        ghmi_hood_make(rho, h);
        /* the same pairs either way; look up from the smaller side */
        ret = 2 * o->K < K ? contact_reverse(g, s, o, h, threads)
                           : contact_forward(g, s, o, h, threads);
    }
    free(h);
    return ret;
}

int ghmi_voxel_voxelize(GhmContext *ctx, GhmiSide *s, const double *pose, const GhmVoxelGrid *g,
                        int threads)
{
    size_t outside = 0;
    int ret = compute_keys(s, pose, g, threads, &outside);
    s->inside = s->n - outside;
    if (ret == GHM_OK && s->rows && ghmi_voxel_rows_match(s->rows, s->pkey, s->n, threads))
        ret = voxels_of_rows(s);
    else if (ret == GHM_OK)
        ret = build_index(ctx, s, outside);
    if (ret == GHM_OK)
        ret = accumulate(s, pose, g, threads);
    return ret;
}

