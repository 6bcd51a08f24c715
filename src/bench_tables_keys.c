/*
 * bench_tables_keys.c - the key sets of `geohash-match bench tables` (bench_tables.h): one step of
 * the voxel pipeline, laid out as the backend's pipeline lays its table out (its hoods and key
 * layout from vision/voxel/voxel_internal.h, the code the pipeline runs), and the matcher's
 * signature table.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tables.h"
#include "cli.h"
#include "ghm_match.h"
#include "ghm_voxel.h"
#include "voxel_internal.h"

void ghm_tables_keys_free(GhmTablesKeySet *ks)
{
    for (int i = 0; i < GHM_TABLES_MAX; i++) {
        free(ks->t[i].keys);
        free(ks->t[i].values);
        free(ks->t[i].queries);
    }
    memset(ks->t, 0, sizeof ks->t);
    ks->ntables = 0;
}

static int alloc_table(GhmTablesTable *t, size_t n, size_t nq)
{
    t->keys = malloc((n + 1) * sizeof *t->keys);
    t->values = malloc((n + 1) * sizeof *t->values);
    t->queries = malloc((nq + 1) * sizeof *t->queries);
    t->n = n;
    t->nq = nq;
    return t->keys && t->values && t->queries ? GHM_OK : GHM_ERR_NOMEM;
}

/* CPU layout: a table per cloud, its own voxels' hoods voxel after voxel. */
static int tables_per_cloud(const GhmVoxelResult *r, GhmTablesKeySet *ks)
{
    GhmiHood h;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSide *s = &r->side[c];
        ghmi_hood_make(s->radius, &h);
        size_t nn = (size_t)h.n;
        GhmTablesTable *t = &ks->t[c];
        if (alloc_table(t, s->voxels, s->voxels * nn) < 0)
            return GHM_ERR_NOMEM;
        for (size_t v = 0; v < s->voxels; v++) {
            int64_t xyz[3];
            t->keys[v] = s->keys[v];
            t->values[v] = (uint32_t)v;
            ghmi_voxel_coords(&r->grid, s->keys[v], xyz);
            for (size_t k = 0; k < nn; k++)
                t->queries[v * nn + k] = ghmi_voxel_step_key(&r->grid, xyz, h.step[k], 1);
        }
    }
    ks->ntables = 2;
    return GHM_OK;
}

/* CUDA layout: one table of both clouds' prefixed keys (A's below B's, so ascending), the hoods
 * step after step; steps outside the grid are left out, as the kernel does not ask them. */
static int table_of_both(const GhmVoxelResult *r, GhmTablesKeySet *ks)
{
    GhmiHood h;
    int shift = ghmi_voxel_key_bits(&r->grid) + 1;
    size_t n = r->side[0].voxels + r->side[1].voxels, nq = 0;
    for (int c = 0; c < 2; c++) {
        ghmi_hood_make(r->side[c].radius, &h);
        nq += r->side[c].voxels * (size_t)h.n;
    }
    GhmTablesTable *t = &ks->t[0];
    if (alloc_table(t, n, nq) < 0)
        return GHM_ERR_NOMEM;
    size_t at = 0, q = 0;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSide *s = &r->side[c];
        uint32_t prefix = (uint32_t)c << shift;
        for (size_t v = 0; v < s->voxels; v++, at++) {
            t->keys[at] = prefix | s->keys[v];
            t->values[at] = (uint32_t)at;
        }
        ghmi_hood_make(s->radius, &h);
        for (int k = 0; k < h.n; k++)
            for (size_t v = 0; v < s->voxels; v++) {
                int64_t xyz[3];
                ghmi_voxel_coords(&r->grid, s->keys[v], xyz);
                uint32_t key = ghmi_voxel_step_key(&r->grid, xyz, h.step[k], 1);
                if (key != 0xFFFFFFFFu)
                    t->queries[q++] = prefix | key;
            }
    }
    t->nq = q;
    ks->ntables = 1;
    return GHM_OK;
}

void ghm_tables_turn_pose(const GhmPointCloud *a, double m[16])
{
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (size_t i = 0; i < a->n; i++)
        for (int k = 0; k < 2; k++) {
            double v = a->xyz[3 * i + (size_t)k];
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
    double cx = a->n ? 0.5 * (lo[0] + hi[0]) : 0.0, cy = a->n ? 0.5 * (lo[1] + hi[1]) : 0.0;
    double r[16] = {0, -1, 0, cx + cy, 1, 0, 0, cy - cx, 0, 0, 1, 0, 0, 0, 0, 1};
    memcpy(m, r, sizeof r);
}

/* Voxelizes the pair on ctx's backend and lays its tables out for that backend. */
int ghm_tables_voxel_keys(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                       const double *pose, long grid, GhmTablesKeySet *ks)
{
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = (int)grid;
    GhmVoxelGrid g;
    GhmVoxelResult *r = NULL;
    int ret = ghm_voxel_grid_fit(a, b, pose, pose ? 1 : 0, &opt, &g, NULL, 0);
    if (ret == GHM_OK)
        ret = ghm_voxel_intersect(ctx, a, b, pose, &g, &opt, &r);
    for (int c = 0; ret == GHM_OK && c < 2; c++)
        if (r->side[c].radius < 1 || r->side[c].radius > GHMI_MAX_RADIUS)
            ret = GHM_ERR_UNSUPPORTED; /* a hood this bench does not know */
    if (ret == GHM_OK) {
        ks->grid = grid;
        for (int c = 0; c < 2; c++) {
            ks->voxels[c] = r->side[c].voxels;
            ks->radius[c] = r->side[c].radius;
        }
        int device = strcmp(ghm_context_backend_name(ctx), "cpu") != 0;
        ks->load = device ? 0.9 : 0.8;
        ret = device ? table_of_both(r, ks) : tables_per_cloud(r, ks);
    }
    ghm_voxel_result_free(&r);
    if (ret < 0)
        ghm_tables_keys_free(ks);
    return ret;
}

/* The signature table entries of the image at path (the matcher's, default parameters). */
static int image_signatures(GhmContext *ctx, const char *path, uint32_t **keys, size_t *n)
{
    char why[256] = "";
    GhmImage *img = NULL;
    GhmMatcher *m = NULL;
    GhmMatchParams p = ghm_match_defaults();
    int ret = ghm_image_load(path, &img, why, sizeof why);
    if (ret < 0) {
        ghm_cli_error(path, "%s", why[0] ? why : ghm_strerror(ret));
        return ret;
    }
    if ((ret = ghm_matcher_create(ctx, img, &p, &m)) == GHM_OK)
        ret = ghm_matcher_signatures(m, keys, n);
    if (ret < 0)
        ghm_cli_error(path, "the reference's tables: %s", ghm_strerror(ret));
    ghm_matcher_free(&m);
    ghm_image_free(&img);
    return ret;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The table: the reference's distinct signatures -> rank; the queries: the query's entries. */
int ghm_tables_signature_keys(GhmContext *ctx, const char *ref, const char *query,
                              GhmTablesKeySet *ks)
{
    uint32_t *rk = NULL, *qk = NULL;
    size_t nr = 0, nq = 0, k = 0;
    int ret = image_signatures(ctx, ref, &rk, &nr);
    if (ret == GHM_OK)
        ret = image_signatures(ctx, query, &qk, &nq);
    if (ret == GHM_OK) {
        qsort(rk, nr, sizeof *rk, cmp_u32);
        for (size_t i = 0; i < nr; i++)
            if (i == 0 || rk[i] != rk[i - 1])
                rk[k++] = rk[i];
        GhmTablesTable *t = &ks->t[0];
        ks->ntables = 1;
        if ((ret = alloc_table(t, k, nq)) < 0)
            ghm_cli_error("bench tables", "%s", ghm_strerror(ret));
        for (size_t i = 0; ret == GHM_OK && i < k; i++) {
            t->keys[i] = rk[i];
            t->values[i] = (uint32_t)i;
        }
        if (ret == GHM_OK && nq)
            memcpy(t->queries, qk, nq * sizeof *qk);
    }
    ks->load = 0.8;
    ks->voxels[0] = nr; /* entries of the reference */
    free(rk);
    free(qk);
    return ret;
}
