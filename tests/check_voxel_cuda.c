/* check_voxel_cuda.c - the voxel Boolean intersection on the CUDA backend against the CPU
 * backend: the device path is the one taken, and keys, counts, normals, labels, seeds,
 * conflicts, neighbourhood radius and rounds are identical to the CPU's, on real clouds
 * (bunny vs kitten, dense and sparse), crossing analytic spheres (with a pose, with a sparse
 * cloud that widens its neighbourhood and grows the barrier), clouds without normals (estimated
 * and oriented on the device), degenerate clouds, sweeps (the device state reused from step
 * to step), the edges of the voxel table (30-bit keys, clouds partly or wholly outside the
 * grid) and a voxel edit's runs (without labels, results left on the device). One TCase, "cuda"; without a device it skips. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_pointcloud.h"
#include "ghm_voxel.h"
#include "test_support.h"
#include "voxel_clouds.h"
#include "voxel_backend_internal.h"
#include "voxel_internal.h"

static GhmPointCloud *load(const char *rel)
{
    GhmPointCloud *pc = NULL;
    char why[256] = "";
    int ret = ghm_pointcloud_load(ghm_test_data(rel), &pc, why, sizeof why);
    ck_assert_msg(ret == GHM_OK, "%s: %s", rel, why);
    return pc;
}

/* A copy of pc without its normals (they are then estimated per voxel). */
static GhmPointCloud *strip(const GhmPointCloud *pc)
{
    GhmPointCloud *out = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(pc->n, 0, 0, &out), GHM_OK);
    memcpy(out->xyz, pc->xyz, 3 * pc->n * sizeof *pc->xyz);
    return out;
}

static void same_side(const GhmVoxelSide *c, const GhmVoxelSide *g, int i)
{
    ck_assert_uint_eq(c->points, g->points);
    ck_assert_uint_eq(c->voxels, g->voxels);
    ck_assert_int_eq(c->radius, g->radius);
    ck_assert_int_eq(c->normals_estimated, g->normals_estimated);
    size_t K = c->voxels, bad_keys = 0, bad_counts = 0, bad_normals = 0, bad_labels = 0;
    size_t first = K;
    for (size_t v = 0; v < K; v++) {
        bad_keys += c->keys[v] != g->keys[v];
        bad_counts += c->counts[v] != g->counts[v];
        bad_normals += memcmp(c->normals + 3 * v, g->normals + 3 * v, 12) != 0;
        if (c->labels[v] != g->labels[v] && bad_labels++ == 0)
            first = v;
    }
    ck_assert_msg(bad_keys + bad_counts + bad_normals == 0,
                  "side %d: %zu keys, %zu counts, %zu normals of %zu differ", i, bad_keys,
                  bad_counts, bad_normals, K);
    ck_assert_msg(bad_labels == 0, "side %d: %zu of %zu labels differ (first: voxel %zu, cpu %d "
                  "cuda %d)", i, bad_labels, K, first, first < K ? c->labels[first] : -1,
                  first < K ? g->labels[first] : -1);
    for (int l = 0; l < 4; l++)
        ck_assert_uint_eq(c->label_count[l], g->label_count[l]);
    ck_assert_uint_eq(c->seeds, g->seeds);
    ck_assert_uint_eq(c->conflicts, g->conflicts);
}

/* Runs one step on both backends and asserts identical results; returns the CPU's. */
static GhmVoxelResult *compare(const GhmPointCloud *a, const GhmPointCloud *b, const double *pose,
                               int grid_n)
{
    GhmContext *cpu = ghm_test_context(GHM_BACKEND_CPU), *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    ck_assert_ptr_nonnull(ghmi_voxel_ops(gpu));
    ck_assert_ptr_null(ghmi_voxel_ops(cpu));
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = grid_n;
    GhmVoxelGrid g;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, pose, pose ? 1 : 0, &opt, &g, why, sizeof why),
                     GHM_OK);
    GhmVoxelResult *rc = NULL, *rg = NULL;
    ck_assert_int_eq(ghm_voxel_intersect(cpu, a, b, pose, &g, &opt, &rc), GHM_OK);
    ck_assert_int_eq(ghm_voxel_intersect(gpu, a, b, pose, &g, &opt, &rg), GHM_OK);
    ck_assert_int_eq(rc->rounds, rg->rounds);
    for (int i = 0; i < 2; i++)
        same_side(&rc->side[i], &rg->side[i], i);
    if (rc->rounds > 1) /* so that the log shows the conflict rounds were exercised */
        fprintf(stderr, "voxel_cuda: grid %d: %d rounds (conflicts %zu / %zu)\n", grid_n,
                rc->rounds, rc->side[0].conflicts, rc->side[1].conflicts);
    ghm_voxel_result_free(&rg);
    ghm_context_free(&cpu);
    ghm_context_free(&gpu);
    return rc;
}

START_TEST(test_bunny_kitten)
{
    GHM_REQUIRE_CUDA();
    GhmPointCloud *a = load("pointclouds/bunny.ply"), *b = load("pointclouds/kitten.ply");
    /* the kitten sits inside the bunny's box; scale it so that the two surfaces cross */
    double lo[2][3], hi[2][3];
    const GhmPointCloud *pcs[2] = {a, b};
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 3; k++) {
            lo[i][k] = INFINITY, hi[i][k] = -INFINITY;
            for (size_t p = 0; p < pcs[i]->n; p++) {
                lo[i][k] = fmin(lo[i][k], pcs[i]->xyz[3 * p + k]);
                hi[i][k] = fmax(hi[i][k], pcs[i]->xyz[3 * p + k]);
            }
        }
    double s = 0.8 * (hi[0][0] - lo[0][0]) / (hi[1][0] - lo[1][0]);
    double pose[16] = {0};
    for (int k = 0; k < 3; k++) {
        pose[5 * k] = s;
        pose[4 * k + 3] = 0.5 * (lo[0][k] + hi[0][k]) - s * 0.5 * (lo[1][k] + hi[1][k]) +
                          (k == 0 ? 0.3 * (hi[0][0] - lo[0][0]) : 0.0);
    }
    pose[15] = 1;
    for (int grid = 64; grid <= 128; grid += 64) {
        GhmVoxelResult *r = compare(a, b, pose, grid);
        ck_assert_uint_gt(r->side[0].label_count[GHM_VOXEL_INTERSECTION], 0);
        ck_assert_uint_gt(r->side[1].label_count[GHM_VOXEL_INSIDE] +
                              r->side[1].label_count[GHM_VOXEL_OUTSIDE], 0);
        ghm_voxel_result_free(&r);
    }
    /* as they are (no pose): the kitten at its own place in the common grid */
    GhmVoxelResult *r = compare(a, b, NULL, 128);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
}
END_TEST

START_TEST(test_spheres)
{
    GHM_REQUIRE_CUDA();
    GhmPointCloud *a = ghm_test_sphere(60000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *b = ghm_test_sphere(15000, 0.5, 0.8, 0, 0, 1);
    for (int grid = 32; grid <= 128; grid *= 2) {
        GhmVoxelResult *r = compare(a, b, NULL, grid);
        ck_assert_uint_gt(r->side[1].label_count[GHM_VOXEL_INSIDE], 0);
        ck_assert_uint_gt(r->side[0].label_count[GHM_VOXEL_OUTSIDE], 0);
        ghm_voxel_result_free(&r);
    }
    /* B built at the origin and moved (a quarter turn and a shift): normals turn too */
    GhmPointCloud *b0 = ghm_test_sphere(15000, 0.5, 0, 0, 0, 1);
    double pose[16] = {0, -1, 0, 0.1, 1, 0, 0, 0.75, 0, 0, 1, 0.05, 0, 0, 0, 1};
    GhmVoxelResult *r = compare(a, b0, pose, 64);
    ck_assert_uint_gt(r->side[1].label_count[GHM_VOXEL_INSIDE], 0);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&b0);
    ghm_pointcloud_free(&b);
    /* a sparse B: its neighbourhood widens and the barrier grows (rho > 0) */
    b = ghm_test_sphere(1200, 0.5, 0.8, 0, 0, 1);
    r = compare(a, b, NULL, 64);
    ck_assert_int_ge(r->side[1].radius, 2);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
}
END_TEST

/* Clouds without normals: PCA normals and their breadth-first orientation on the device, the
 * same bits as the CPU's, so the same labels. */
START_TEST(test_no_normals)
{
    GHM_REQUIRE_CUDA();
    GhmPointCloud *a0 = load("pointclouds/bunny.ply"), *b0 = load("pointclouds/kitten.ply");
    GhmPointCloud *a = strip(a0), *b = strip(b0);
    double lo[3], hi[3], blo[3], bhi[3];
    for (int k = 0; k < 3; k++) {
        lo[k] = blo[k] = INFINITY, hi[k] = bhi[k] = -INFINITY;
        for (size_t p = 0; p < a->n; p++)
            lo[k] = fmin(lo[k], a->xyz[3 * p + k]), hi[k] = fmax(hi[k], a->xyz[3 * p + k]);
        for (size_t p = 0; p < b->n; p++)
            blo[k] = fmin(blo[k], b->xyz[3 * p + k]), bhi[k] = fmax(bhi[k], b->xyz[3 * p + k]);
    }
    double s = 0.8 * (hi[0] - lo[0]) / (bhi[0] - blo[0]), pose[16] = {0};
    for (int k = 0; k < 3; k++) {
        pose[5 * k] = s;
        pose[4 * k + 3] = 0.5 * (lo[k] + hi[k]) - s * 0.5 * (blo[k] + bhi[k]) +
                          (k == 0 ? 0.3 * (hi[0] - lo[0]) : 0.0);
    }
    pose[15] = 1;
    for (int grid = 64; grid <= 128; grid += 64) {
        GhmVoxelResult *r = compare(a, b, pose, grid);
        ck_assert_int_eq(r->side[0].normals_estimated, 1);
        ck_assert_int_eq(r->side[1].normals_estimated, 1);
        ck_assert_uint_gt(r->side[0].label_count[GHM_VOXEL_INTERSECTION], 0);
        ghm_voxel_result_free(&r);
    }
    GhmVoxelResult *r = compare(a0, b, pose, 128); /* one with normals, one without */
    ck_assert_int_eq(r->side[0].normals_estimated, 0);
    ghm_voxel_result_free(&r);
    r = compare(a, b, NULL, 256);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_pointcloud_free(&a0);
    ghm_pointcloud_free(&b0);
    /* spheres: dense, and a sparse B whose neighbourhood widens (normals from the wider hood) */
    a = ghm_test_sphere(60000, 1.0, 0, 0, 0, 0);
    b = ghm_test_sphere(15000, 0.5, 0.8, 0, 0, 0);
    for (int grid = 32; grid <= 128; grid *= 2) {
        r = compare(a, b, NULL, grid);
        ck_assert_uint_gt(r->side[1].label_count[GHM_VOXEL_INSIDE], 0);
        ghm_voxel_result_free(&r);
    }
    ghm_pointcloud_free(&b);
    b = ghm_test_sphere(1200, 0.5, 0.8, 0, 0, 0);
    r = compare(a, b, NULL, 64);
    ck_assert_int_ge(r->side[1].radius, 2);
    ghm_voxel_result_free(&r);
    /* many small parts: scattered points, each voxel its own root */
    GhmPointCloud *dust = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(3000, 0, 0, &dust), GHM_OK);
    uint32_t x = 12345;
    for (size_t i = 0; i < 3 * dust->n; i++) {
        x = x * 1664525u + 1013904223u;
        dust->xyz[i] = (float)((x >> 8) / 16777216.0 * 2.0 - 1.0);
    }
    r = compare(a, dust, NULL, 128);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&dust);
    ghm_pointcloud_free(&b);
    ghm_pointcloud_free(&a);
}
END_TEST

START_TEST(test_degenerate)
{
    GHM_REQUIRE_CUDA();
    GhmPointCloud *empty = NULL, *one = NULL, *s1 = ghm_test_sphere(4000, 1.0, 0, 0, 0, 1);
    ck_assert_int_eq(ghm_pointcloud_create(0, 0, 0, &empty), GHM_OK);
    ck_assert_int_eq(ghm_pointcloud_create(1, 1, 0, &one), GHM_OK);
    one->normals[2] = 1.0f;
    GhmVoxelResult *r = compare(empty, s1, NULL, 32);
    ck_assert_uint_eq(r->side[0].voxels, 0);
    ghm_voxel_result_free(&r);
    r = compare(s1, empty, NULL, 32);
    ghm_voxel_result_free(&r);
    r = compare(empty, empty, NULL, 16);
    ghm_voxel_result_free(&r);
    r = compare(one, one, NULL, 128); /* one voxel, occupied by both */
    ck_assert_uint_eq(r->side[0].label_count[GHM_VOXEL_INTERSECTION], 1);
    ghm_voxel_result_free(&r);
    r = compare(one, s1, NULL, 64);
    ghm_voxel_result_free(&r);
    /* B partly outside A's grid: points outside are ignored on both backends */
    GhmPointCloud *far = ghm_test_sphere(4000, 1.0, 1.5, 0, 0, 1);
    GhmContext *cpu = ghm_test_context(GHM_BACKEND_CPU), *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 40;
    GhmVoxelGrid g;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(s1, s1, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
    GhmVoxelResult *rc = NULL, *rg = NULL;
    ck_assert_int_eq(ghm_voxel_intersect(cpu, s1, far, NULL, &g, &opt, &rc), GHM_OK);
    ck_assert_int_eq(ghm_voxel_intersect(gpu, s1, far, NULL, &g, &opt, &rg), GHM_OK);
    ck_assert_uint_gt(rc->side[1].voxels, 0);
    for (int i = 0; i < 2; i++)
        same_side(&rc->side[i], &rg->side[i], i);
    ghm_voxel_result_free(&rc);
    ghm_voxel_result_free(&rg);
    ghm_context_free(&cpu);
    ghm_context_free(&gpu);
    ghm_pointcloud_free(&far);
    ghm_pointcloud_free(&empty);
    ghm_pointcloud_free(&one);
    ghm_pointcloud_free(&s1);
}
END_TEST

/* Edges of the voxel table (a GhmMultimap of the points' sort keys, cloud << (key_bits + 1) |
 * voxel key): at grid 1024 the keys fill 30 bits, so B's sort keys use bit 31; a cloud partly
 * outside the grid puts a run of "outside" points between A's voxels and B's (A) or after B's
 * (B); a cloud wholly outside has no voxel, only that run. Ids and labels must still be the
 * CPU's. */
START_TEST(test_table_edges)
{
    GHM_REQUIRE_CUDA();
    GhmPointCloud *a = ghm_test_sphere(30000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *b = ghm_test_sphere(15000, 0.5, 0.8, 0, 0, 1);
    GhmVoxelResult *r = compare(a, b, NULL, 1024);
    ck_assert_int_ge(r->side[0].radius, 2); /* sparse at this grid: widened */
    ghm_voxel_result_free(&r);
    GhmPointCloud *off = ghm_test_sphere(8000, 1.0, 1.5, 0, 0, 1);
    GhmPointCloud *away = ghm_test_sphere(500, 0.2, 9, 9, 9, 1);
    GhmContext *cpu = ghm_test_context(GHM_BACKEND_CPU), *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 48;
    GhmVoxelGrid g;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(a, a, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
    const GhmPointCloud *pairs[3][2] = {{off, a}, {off, off}, {a, away}};
    for (int k = 0; k < 3; k++) {
        GhmVoxelResult *rc = NULL, *rg = NULL;
        ck_assert_int_eq(ghm_voxel_intersect(cpu, pairs[k][0], pairs[k][1], NULL, &g, &opt, &rc),
                         GHM_OK);
        ck_assert_int_eq(ghm_voxel_intersect(gpu, pairs[k][0], pairs[k][1], NULL, &g, &opt, &rg),
                         GHM_OK);
        ck_assert_int_eq(rc->rounds, rg->rounds);
        for (int i = 0; i < 2; i++)
            same_side(&rc->side[i], &rg->side[i], i);
        if (k == 2)
            ck_assert_uint_eq(rg->side[1].voxels, 0);
        ghm_voxel_result_free(&rc);
        ghm_voxel_result_free(&rg);
    }
    ghm_context_free(&cpu);
    ghm_context_free(&gpu);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_pointcloud_free(&off);
    ghm_pointcloud_free(&away);
}
END_TEST

/* The bench's sweep on the device (clouds uploaded once, buffers and page-locked results reused,
 * grown when a step has more voxels) against one CPU step per pose. */
static void sweep_vs_cpu(const GhmPointCloud *a, const GhmPointCloud *b, int grid_n, int steps,
                         double step_deg)
{
    GhmContext *cpu = ghm_test_context(GHM_BACKEND_CPU), *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = grid_n;
    double *poses = malloc((size_t)steps * 16 * sizeof *poses);
    ck_assert_ptr_nonnull(poses);
    for (int k = 0; k < steps; k++) {
        double t = k * step_deg * M_PI / 180.0, c = cos(t), s = sin(t);
        double m[16] = {c, -s, 0, 0.05 * k, s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
        memcpy(poses + 16 * k, m, sizeof m);
    }
    GhmVoxelGrid g;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, poses, steps, &opt, &g, why, sizeof why), GHM_OK);
    GhmVoxelSweep *sw = NULL;
    ck_assert_int_eq(ghm_voxel_sweep_create(gpu, a, b, &g, &opt, &sw), GHM_OK);
    for (int k = 0; k < steps; k++) {
        const GhmVoxelResult *rg = NULL;
        GhmVoxelResult *rc = NULL;
        ck_assert_int_eq(ghm_voxel_sweep_step(sw, poses + 16 * k, &rg), GHM_OK);
        ck_assert_int_eq(ghm_voxel_intersect(cpu, a, b, poses + 16 * k, &g, &opt, &rc), GHM_OK);
        ck_assert_int_eq(rc->rounds, rg->rounds);
        for (int i = 0; i < 2; i++)
            same_side(&rc->side[i], &rg->side[i], i);
        ghm_voxel_result_free(&rc);
    }
    ghm_voxel_sweep_free(&sw);
    ck_assert_ptr_null(sw);
    free(poses);
    ghm_context_free(&cpu);
    ghm_context_free(&gpu);
}

START_TEST(test_sweep)
{
    GHM_REQUIRE_CUDA();
    /* B moves out of the sphere step by step: the voxel counts change between steps */
    GhmPointCloud *a = ghm_test_sphere(80000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *b = ghm_test_sphere(40000, 0.6, 0.9, 0.2, 0, 1);
    sweep_vs_cpu(a, b, 128, 5, 7.0);
    sweep_vs_cpu(a, b, 200, 3, 20.0);
    ghm_pointcloud_free(&b);
    /* a sparse B: the sweep's steps widen its neighbourhood */
    b = ghm_test_sphere(1500, 0.5, 0.8, 0, 0, 1);
    sweep_vs_cpu(a, b, 64, 3, 10.0);
    /* without normals: estimated on the device every step */
    GhmPointCloud *a1 = strip(a), *b1 = strip(b);
    sweep_vs_cpu(a1, b1, 64, 3, 10.0);
    ghm_pointcloud_free(&b1);
    ghm_pointcloud_free(&b);
    b = ghm_test_sphere(40000, 0.6, 0.9, 0.2, 0, 0);
    sweep_vs_cpu(a1, b, 128, 4, 7.0);
    ghm_pointcloud_free(&a1);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
}
END_TEST

/* The runs a voxel edit makes: without labels (its cloud alone) the CPU's voxels, counts,
 * normals and radius and no labels; with the arrays left on the device
 * (GHMI_VOXEL_ON_DEVICE) the CPU's counts and radius, no host arrays, and the device view in
 * their place. A sparse cloud (radius > 1), with and without normals. */
START_TEST(test_edit_runs)
{
    GHM_REQUIRE_CUDA();
    GhmContext *cpu = ghm_test_context(GHM_BACKEND_CPU), *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmPointCloud *none = NULL, *sparse[2] = {ghm_test_sphere(3000, 0.5, 0, 0, 0, 1),
                                              ghm_test_sphere(3000, 0.5, 0, 0, 0, 0)};
    ck_assert_int_eq(ghm_pointcloud_create(0, 1, 0, &none), GHM_OK);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 64;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelGrid g = ghm_test_grid_around(sparse[c], &opt);
        GhmVoxelSweep *sw[3] = {NULL, NULL, NULL};
        const GhmVoxelResult *full =
            ghm_test_flagged_step(cpu, none, sparse[c], &g, &opt, 0, &sw[0]);
        const GhmVoxelResult *bare =
            ghm_test_flagged_step(gpu, none, sparse[c], &g, &opt, GHMI_VOXEL_NO_LABELS, &sw[1]);
        const GhmVoxelResult *kept =
            ghm_test_flagged_step(gpu, none, sparse[c], &g, &opt, GHMI_VOXEL_ON_DEVICE, &sw[2]);
        const GhmVoxelSide *f = &full->side[1], *b = &bare->side[1], *k = &kept->side[1];
        size_t K = f->voxels;
        ck_assert_int_gt(f->radius, 1);
        ghm_test_assert_unlabelled(b, f);
        for (int l = 0; l < 4; l++)
            ck_assert_uint_eq(k->label_count[l], f->label_count[l]);
        ck_assert_uint_eq(k->voxels, K);
        ck_assert_int_eq(k->radius, f->radius);
        ck_assert(!k->keys && !k->counts && !k->normals && !k->labels);
        GhmiVoxelDeviceView v;
        ck_assert_int_eq(ghmi_voxel_sweep_device_view(sw[2], &v), GHM_OK);
        ck_assert(v.keys[1] && v.labels[1] && v.counts[1] && v.voxel_normals[1]);
        for (int i = 0; i < 3; i++)
            ghm_voxel_sweep_free(&sw[i]);
    }
    ghm_pointcloud_free(&sparse[0]), ghm_pointcloud_free(&sparse[1]);
    ghm_pointcloud_free(&none);
    ghm_context_free(&gpu);
    ghm_context_free(&cpu);
}
END_TEST

/* GHMI_VOXEL_B_SPARSE (a device labels once, after widening) gives the run's labels without
 * it: against a dense cloud that crosses it (labels spread from where the clouds meet), for a
 * sparse cloud B and, the flag wrong, for a dense one. */
START_TEST(test_sparse_flag)
{
    GHM_REQUIRE_CUDA();
    GhmContext *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmPointCloud *a = ghm_test_sphere(200000, 0.3, 0.2, 0.2, 0, 1);
    GhmPointCloud *b[2] = {ghm_test_sphere(3000, 0.5, 0, 0, 0, 1),
                           ghm_test_sphere(200000, 0.5, 0.1, 0, 0, 1)};
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 64;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelGrid g = ghm_test_grid_around(b[c], &opt);
        GhmVoxelSweep *sw[2] = {NULL, NULL};
        const GhmVoxelResult *plain = ghm_test_flagged_step(gpu, a, b[c], &g, &opt, 0, &sw[0]);
        const GhmVoxelResult *once =
            ghm_test_flagged_step(gpu, a, b[c], &g, &opt, GHMI_VOXEL_B_SPARSE, &sw[1]);
        ck_assert_int_eq(plain->side[1].radius > 1, c == 0);
        ck_assert_int_eq(once->rounds, plain->rounds);
        for (int s = 0; s < 2; s++) {
            const GhmVoxelSide *p = &plain->side[s], *o = &once->side[s];
            ck_assert_uint_eq(o->voxels, p->voxels);
            ck_assert_int_eq(o->radius, p->radius);
            ck_assert_mem_eq(o->labels, p->labels, p->voxels);
            for (int l = 0; l < 4; l++)
                ck_assert_uint_eq(o->label_count[l], p->label_count[l]);
        }
        ck_assert_uint_gt(plain->side[0].label_count[GHM_VOXEL_INSIDE], 0);
        ck_assert_uint_gt(plain->side[0].label_count[GHM_VOXEL_OUTSIDE], 0);
        ghm_voxel_sweep_free(&sw[0]);
        ghm_voxel_sweep_free(&sw[1]);
    }
    ghm_pointcloud_free(&b[0]), ghm_pointcloud_free(&b[1]);
    ghm_pointcloud_free(&a);
    ghm_context_free(&gpu);
}
END_TEST

static Suite *voxel_cuda_suite(void)
{
    Suite *s = suite_create("voxel_cuda");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_bunny_kitten);
    tcase_add_test(tc, test_spheres);
    tcase_add_test(tc, test_no_normals);
    tcase_add_test(tc, test_degenerate);
    tcase_add_test(tc, test_sweep);
    tcase_add_test(tc, test_table_edges);
    tcase_add_test(tc, test_edit_runs);
    tcase_add_test(tc, test_sparse_flag);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ghm_test_main(voxel_cuda_suite()); }
