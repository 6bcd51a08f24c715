/* check_voxel.c - voxel Boolean intersection: voxelization and labels on clouds
 * whose answer is known exactly (analytic spheres sampled with exact normals), degenerate
 * clouds, and thread-count independence. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ghm_pointcloud.h"
#include "ghm_voxel.h"
#include "ghm_voxel_edit.h"
#include "test_support.h"
#include "voxel_clouds.h"
#include "voxel_internal.h"

static GhmVoxelResult *run(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                           int grid_n, GhmVoxelGrid *grid)
{
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = grid_n;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, grid, why, sizeof why), GHM_OK);
    GhmVoxelResult *r = NULL;
    ck_assert_int_eq(ghm_voxel_intersect(ctx, a, b, NULL, grid, &opt, &r), GHM_OK);
    ck_assert_ptr_nonnull(r);
    return r;
}

static void check_counts_add_up(const GhmVoxelSide *s)
{
    size_t sum = 0;
    for (int l = 0; l < 4; l++)
        sum += s->label_count[l];
    ck_assert_uint_eq(sum, s->voxels);
    for (size_t v = 1; v < s->voxels; v++)
        ck_assert_uint_lt(s->keys[v - 1], s->keys[v]);
}

/* --- core --------------------------------------------------------------------------------- */

START_TEST(test_one_point)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = NULL, *b = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(1, 0, 0, &a), GHM_OK);
    ck_assert_int_eq(ghm_pointcloud_create(1, 1, 0, &b), GHM_OK);
    a->xyz[0] = b->xyz[0] = 3.0f;
    b->normals[2] = 1.0f;
    GhmVoxelGrid g;
    GhmVoxelResult *r = run(ctx, a, b, 128, &g);
    /* every point coincides: voxels of 1.0, one voxel, occupied by both */
    ck_assert_double_eq(g.voxel_size, 1.0);
    ck_assert_int_eq(g.dims[0] * g.dims[1] * g.dims[2], 1);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(r->side[i].voxels, 1);
        ck_assert_uint_eq(r->side[i].label_count[GHM_VOXEL_INTERSECTION], 1);
        ck_assert_uint_eq(r->side[i].counts[0], 1);
    }
    ck_assert_int_eq(r->side[0].normals_estimated, 1);
    ck_assert_int_eq(r->side[1].normals_estimated, 0);
    ck_assert_float_eq(r->side[1].normals[2], 1.0f);
    ghm_voxel_result_free(&r);
    ck_assert_ptr_null(r);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_empty_and_disjoint)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *empty = NULL, *s1 = ghm_test_sphere(4000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *s2 = ghm_test_sphere(4000, 1.0, 5, 0, 0, 1);
    ck_assert_int_eq(ghm_pointcloud_create(0, 0, 0, &empty), GHM_OK);
    GhmVoxelGrid g;
    GhmVoxelResult *r = run(ctx, empty, s1, 32, &g);
    ck_assert_uint_eq(r->side[0].voxels, 0);
    ck_assert_uint_gt(r->side[1].voxels, 0);
    /* nothing crosses, so nothing can be seeded: all unknown, as the method says */
    ck_assert_uint_eq(r->side[1].label_count[GHM_VOXEL_UNKNOWN], r->side[1].voxels);
    check_counts_add_up(&r->side[1]);
    ghm_voxel_result_free(&r);

    r = run(ctx, s1, s2, 64, &g);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_gt(r->side[i].voxels, 100);
        ck_assert_uint_eq(r->side[i].label_count[GHM_VOXEL_INTERSECTION], 0);
        ck_assert_uint_eq(r->side[i].label_count[GHM_VOXEL_UNKNOWN], r->side[i].voxels);
    }
    ghm_voxel_result_free(&r);

    r = run(ctx, empty, empty, 16, &g);
    ck_assert_uint_eq(r->side[0].voxels + r->side[1].voxels, 0);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&empty);
    ghm_pointcloud_free(&s1);
    ghm_pointcloud_free(&s2);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_counts_and_output)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = ghm_test_sphere(20000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *b = ghm_test_sphere(5000, 0.5, 0.8, 0, 0, 1);
    GhmVoxelGrid g;
    GhmVoxelResult *r = run(ctx, a, b, 48, &g);
    for (int i = 0; i < 2; i++) {
        check_counts_add_up(&r->side[i]);
        size_t pts = 0;
        for (size_t v = 0; v < r->side[i].voxels; v++)
            pts += r->side[i].counts[v];
        ck_assert_uint_eq(pts, i ? 5000 : 20000);
    }
    ck_assert_uint_eq(r->side[0].label_count[GHM_VOXEL_INTERSECTION],
                      r->side[1].label_count[GHM_VOXEL_INTERSECTION]);
    char dir[] = "/tmp/check_voxel.XXXXXX", path[64], why[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/out.ply", dir);
    for (int ascii = 0; ascii <= 1; ascii++) {
        ck_assert_int_eq(ghm_voxel_save_ply(r, path, ascii, why, sizeof why), GHM_OK);
        GhmPointCloud *back = NULL;
        ck_assert_int_eq(ghm_pointcloud_load(path, &back, why, sizeof why), GHM_OK);
        ck_assert_uint_eq(back->n, r->side[0].voxels + r->side[1].voxels);
        ck_assert_ptr_nonnull(back->rgb);
        double c[3];
        ghm_voxel_centre(&g, r->side[1].keys[0], c);
        size_t first_b = r->side[0].voxels;
        ck_assert_float_eq_tol(back->xyz[3 * first_b], (float)c[0], 1e-6f);
        uint8_t rgb[3];
        ghm_voxel_label_colour(r->side[1].labels[0], rgb);
        ck_assert_mem_eq(back->rgb + 3 * first_b, rgb, 3);
        ghm_pointcloud_free(&back);
    }
    unlink(path);
    rmdir(dir);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

/* --- spheres ------------------------------------------------------------------------------ */

/* A: radius 1 at the origin; B: radius 0.5 at (0.8, 0, 0), crossing A. A voxel of one sphere
 * whose centre lies farther than `band` voxels from the other sphere must carry exactly the
 * analytic label (no unknown, no error); nearer ones straddle the other surface and may carry
 * any label. Returns the fraction of inside voxels (intersection counted half) per side. */
static void check_crossing(const GhmVoxelResult *r, double band, double inside_frac[2])
{
    const double cen[2][3] = {{0, 0, 0}, {0.8, 0, 0}}, rad[2] = {1.0, 0.5};
    double s = r->grid.voxel_size;
    for (int i = 0; i < 2; i++) {
        const GhmVoxelSide *sd = &r->side[i];
        int o = 1 - i;
        size_t far = 0, wrong = 0, in = 0;
        for (size_t v = 0; v < sd->voxels; v++) {
            double c[3];
            ghm_voxel_centre(&r->grid, sd->keys[v], c);
            double d = sqrt((c[0] - cen[o][0]) * (c[0] - cen[o][0]) + c[1] * c[1] + c[2] * c[2]);
            int label = sd->labels[v];
            in += label == GHM_VOXEL_INSIDE ? 2 : label == GHM_VOXEL_INTERSECTION;
            if (label == GHM_VOXEL_INTERSECTION) {
                /* occupied by both: within half a voxel diagonal (+ sampling) of both surfaces */
                ck_assert_double_lt(fabs(d - rad[o]), 0.9 * s);
                continue;
            }
            if (fabs(d - rad[o]) <= band * s)
                continue;
            far++;
            int want = d < rad[o] ? GHM_VOXEL_INSIDE : GHM_VOXEL_OUTSIDE;
            wrong += label != want;
        }
        ck_assert_msg(wrong == 0, "side %d: %zu of %zu voxels away from the crossing are wrong", i,
                      wrong, far);
        ck_assert_uint_gt(far, sd->voxels / 2);
        ck_assert_uint_gt(sd->label_count[GHM_VOXEL_INTERSECTION], 10);
        inside_frac[i] = in / (2.0 * sd->voxels);
    }
}

START_TEST(test_crossing_spheres)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = ghm_test_sphere(60000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *b = ghm_test_sphere(15000, 0.5, 0.8, 0, 0, 1);
    for (int grid = 32; grid <= 64; grid += 32) {
        GhmVoxelGrid g;
        GhmVoxelResult *r = run(ctx, a, b, grid, &g);
        double frac[2];
        check_crossing(r, 1.5, frac);
        /* Area fractions: A's cap inside B is (1 - 0.86875) / 2 = 0.0656 of A; B inside A is
         * (1 + 0.1375) / 2 = 0.56875 of B. Voxel counts follow area to a few percent. */
        ck_assert_double_eq_tol(frac[0], 0.0656, 0.02);
        ck_assert_double_eq_tol(frac[1], 0.56875, 0.03);
        ck_assert_int_eq(r->side[0].radius, 1);
        ghm_voxel_result_free(&r);
    }
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_crossing_spheres_estimated_normals)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = ghm_test_sphere(60000, 1.0, 0, 0, 0, 0);
    GhmPointCloud *b = ghm_test_sphere(15000, 0.5, 0.8, 0, 0, 0);
    GhmVoxelGrid g;
    GhmVoxelResult *r = run(ctx, a, b, 48, &g);
    ck_assert_int_eq(r->side[0].normals_estimated, 1);
    /* estimated normals of a sphere point outward */
    for (int i = 0; i < 2; i++) {
        const double cx = i ? 0.8 : 0.0;
        size_t good = 0;
        for (size_t v = 0; v < r->side[i].voxels; v++) {
            double c[3];
            ghm_voxel_centre(&g, r->side[i].keys[v], c);
            double rr = sqrt((c[0] - cx) * (c[0] - cx) + c[1] * c[1] + c[2] * c[2]);
            const float *n = r->side[i].normals + 3 * v;
            good += ((c[0] - cx) * n[0] + c[1] * n[1] + c[2] * n[2]) / rr > 0.95;
        }
        ck_assert_uint_eq(good, r->side[i].voxels);
    }
    double frac[2];
    check_crossing(r, 1.5, frac);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_inside_without_crossing)
{
    /* B wholly inside A: nothing crosses, so the method has no seed and must say unknown */
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = ghm_test_sphere(20000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *b = ghm_test_sphere(5000, 0.3, 0.2, 0, 0, 1);
    GhmVoxelGrid g;
    GhmVoxelResult *r = run(ctx, a, b, 48, &g);
    for (int i = 0; i < 2; i++)
        ck_assert_uint_eq(r->side[i].label_count[GHM_VOXEL_UNKNOWN], r->side[i].voxels);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_pose_moves_b)
{
    /* B built at the origin and moved by the pose gives the labels of B built in place. */
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = ghm_test_sphere(40000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *b0 = ghm_test_sphere(10000, 0.5, 0, 0, 0, 1);
    GhmPointCloud *b1 = ghm_test_sphere(10000, 0.5, 0, 0.75, 0, 1);
    /* a quarter turn about z keeps the sphere, the shift puts it at (0, 0.75, 0) */
    double pose[16] = {0, -1, 0, 0, 1, 0, 0, 0.75, 0, 0, 1, 0, 0, 0, 0, 1};
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 40;
    GhmVoxelGrid g;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b0, pose, 1, &opt, &g, why, sizeof why), GHM_OK);
    GhmVoxelResult *moved = NULL, *placed = NULL;
    ck_assert_int_eq(ghm_voxel_intersect(ctx, a, b0, pose, &g, &opt, &moved), GHM_OK);
    ck_assert_int_eq(ghm_voxel_intersect(ctx, a, b1, NULL, &g, &opt, &placed), GHM_OK);
    for (int i = 0; i < 2; i++)
        for (int l = 0; l < 4; l++) {
            double x = (double)moved->side[i].label_count[l], y = (double)placed->side[i].label_count[l];
            ck_assert_double_le(fabs(x - y), 0.03 * (x + y) + 3); /* points near voxel faces */
        }
    ck_assert_uint_gt(moved->side[1].label_count[GHM_VOXEL_INSIDE], 0);
    ghm_voxel_result_free(&moved);
    ghm_voxel_result_free(&placed);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b0);
    ghm_pointcloud_free(&b1);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_real_cloud_through_sphere)
{
    /* parasaurolophus_6700.ply (non-unit, partly flipped normals, sparse at 128^3) with a sphere
     * centred on its surface: the dinosaur's voxels away from the sphere must be labelled by
     * which side of the sphere they are on; a few isolated voxels may stay unknown. */
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = NULL;
    char why[256];
    ck_assert_int_eq(ghm_pointcloud_load(ghm_test_data("pointclouds/parasaurolophus_6700.ply"),
                                         &a, why, sizeof why), GHM_OK);
    double lo[3] = {1e30, 1e30, 1e30}, hi[3] = {-1e30, -1e30, -1e30}, mid[3], best = 1e30;
    for (size_t i = 0; i < a->n; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], a->xyz[3 * i + k]);
            hi[k] = fmax(hi[k], a->xyz[3 * i + k]);
        }
    double cen[3] = {0, 0, 0}, rad = 0;
    for (int k = 0; k < 3; k++) {
        mid[k] = 0.5 * (lo[k] + hi[k]);
        rad = fmax(rad, 0.15 * (hi[k] - lo[k]));
    }
    for (size_t i = 0; i < a->n; i++) {
        double d = 0;
        for (int k = 0; k < 3; k++)
            d += (a->xyz[3 * i + k] - mid[k]) * (a->xyz[3 * i + k] - mid[k]);
        if (d < best) {
            best = d;
            for (int k = 0; k < 3; k++)
                cen[k] = a->xyz[3 * i + k];
        }
    }
    GhmPointCloud *b = ghm_test_sphere(20000, rad, cen[0], cen[1], cen[2], 1);
    for (int grid = 64; grid <= 128; grid += 64) {
        GhmVoxelGrid g;
        GhmVoxelResult *r = run(ctx, a, b, grid, &g);
        size_t far = 0, wrong = 0, unknown = 0, inside = 0;
        for (size_t v = 0; v < r->side[0].voxels; v++) {
            double c[3], d = 0;
            ghm_voxel_centre(&g, r->side[0].keys[v], c);
            for (int k = 0; k < 3; k++)
                d += (c[k] - cen[k]) * (c[k] - cen[k]);
            d = sqrt(d) - rad;
            if (fabs(d) <= 1.5 * g.voxel_size)
                continue;
            int label = r->side[0].labels[v];
            far++;
            unknown += label == GHM_VOXEL_UNKNOWN;
            inside += d < 0;
            wrong += label != GHM_VOXEL_UNKNOWN && label != (d < 0 ? GHM_VOXEL_INSIDE
                                                                    : GHM_VOXEL_OUTSIDE);
        }
        ck_assert_msg(wrong == 0, "grid %d: %zu of %zu far voxels wrong", grid, wrong, far);
        ck_assert_msg(unknown * 100 <= 3 * far, "grid %d: %zu of %zu unknown", grid, unknown, far);
        ck_assert_uint_gt(inside, 50);
        ghm_voxel_result_free(&r);
    }
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

/* --- edge --------------------------------------------------------------------------------- */

START_TEST(test_threads_agree)
{
    /* big enough (over 16k voxels) for every parallel loop to run on both threads */
    GhmPointCloud *a = ghm_test_sphere(80000, 1.0, 0, 0, 0, 0);
    GhmPointCloud *b = ghm_test_sphere(20000, 0.5, 0.8, 0.1, 0, 1);
    GhmVoxelResult *r[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++) {
        GhmContextOptions o = ghm_context_defaults();
        o.backend = GHM_BACKEND_CPU;
        o.threads = t + 1;
        GhmContext *ctx = ghm_test_context_opt(o);
        ck_assert_int_eq(ghm_context_threads(ctx), t + 1);
        GhmVoxelGrid g;
        r[t] = run(ctx, a, b, 96, &g);
        ck_assert_uint_gt(r[t]->side[0].voxels, 16384);
        ghm_context_free(&ctx);
    }
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(r[0]->side[i].voxels, r[1]->side[i].voxels);
        size_t K = r[0]->side[i].voxels;
        ck_assert_mem_eq(r[0]->side[i].keys, r[1]->side[i].keys, K * 4);
        ck_assert_mem_eq(r[0]->side[i].labels, r[1]->side[i].labels, K);
        ck_assert_mem_eq(r[0]->side[i].counts, r[1]->side[i].counts, K * 4);
        ck_assert_mem_eq(r[0]->side[i].normals, r[1]->side[i].normals, K * 12);
    }
    ghm_voxel_result_free(&r[0]);
    ghm_voxel_result_free(&r[1]);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
}
END_TEST

START_TEST(test_grid_faces_and_outside_points)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = NULL, *b = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(2, 0, 0, &a), GHM_OK);
    ck_assert_int_eq(ghm_pointcloud_create(2, 0, 0, &b), GHM_OK);
    float pa[6] = {0, 0, 0, 1, 1, 1}, pb[6] = {0.6f, 0.6f, 0.6f, 7, 7, 7};
    memcpy(a->xyz, pa, sizeof pa);
    memcpy(b->xyz, pb, sizeof pb);
    /* the grid of A alone: B's second point lies outside and is ignored */
    GhmVoxelGrid g;
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 4;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(a, a, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
    ck_assert_int_eq(g.dims[0], 4);
    GhmVoxelResult *r = NULL;
    ck_assert_int_eq(ghm_voxel_intersect(ctx, a, b, NULL, &g, &opt, &r), GHM_OK);
    /* the point on the far corner belongs to the last voxel */
    ck_assert_uint_eq(r->side[0].voxels, 2);
    ck_assert_uint_eq(r->side[0].keys[0], 0);
    ck_assert_uint_eq(r->side[0].keys[1], 63);
    ck_assert_uint_eq(r->side[1].voxels, 1);
    ck_assert_uint_eq(r->side[1].keys[0], 2 + 4 * (2 + 4 * 2));
    ck_assert_uint_eq(r->side[1].points, 2);
    ghm_voxel_result_free(&r);
    /* bad arguments: past 4096 along an axis, or past 2^30 voxels in all */
    g.dims[0] = 5000;
    ck_assert_int_eq(ghm_voxel_intersect(ctx, a, b, NULL, &g, &opt, &r), GHM_ERR_INVALID);
    g.dims[0] = g.dims[1] = g.dims[2] = 1025;
    ck_assert_int_eq(ghm_voxel_intersect(ctx, a, b, NULL, &g, &opt, &r), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_voxel_intersect(ctx, NULL, b, NULL, &g, &opt, &r), GHM_ERR_INVALID);
    ck_assert_ptr_null(r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_sparse_cloud_widens)
{
    /* about one point per voxel: 26-neighbours leave holes, so the neighbourhood widens and the
     * fill still reaches every voxel far from the crossing */
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = ghm_test_sphere(60000, 1.0, 0, 0, 0, 1);
    GhmPointCloud *b = ghm_test_sphere(1200, 0.5, 0.8, 0, 0, 1);
    GhmVoxelGrid g;
    GhmVoxelResult *r = run(ctx, a, b, 64, &g);
    ck_assert_int_eq(r->side[0].radius, 1);
    ck_assert_int_ge(r->side[1].radius, 2);
    double frac[2];
    check_crossing(r, 1.5, frac);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    /* and the other way round: a sparse big sphere, a dense small one */
    a = ghm_test_sphere(6000, 1.0, 0, 0, 0, 1);
    b = ghm_test_sphere(20000, 0.5, 0.8, 0, 0, 1);
    r = run(ctx, a, b, 64, &g);
    ck_assert_int_ge(r->side[0].radius, 2);
    ck_assert_int_eq(r->side[1].radius, 1);
    check_crossing(r, 1.5, frac);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_thin_clouds_barrier)
{
    /* under 2 points per voxel: dense enough for 26-neighbours, too thin for a barrier of
     * intersection voxels alone (its gaps let the fill leak across the crossing: with such a
     * barrier 143 conflicts are left and 49 of A's far voxels wrong); it reaches one voxel
     * further instead, and every voxel away from the crossing is right */
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *a = ghm_test_random_sphere(260000, 1.0, 0, 1);
    GhmPointCloud *b = ghm_test_random_sphere(65000, 0.5, 0.8, 2);
    GhmVoxelGrid g;
    GhmVoxelResult *r = run(ctx, a, b, 256, &g);
    double frac[2];
    check_crossing(r, 1.5, frac);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(r->side[i].radius, 1);
        ck_assert_uint_lt(r->side[i].points, 2 * r->side[i].voxels);
        ck_assert_uint_eq(r->side[i].conflicts, 0);
        ck_assert_uint_eq(r->side[i].label_count[GHM_VOXEL_UNKNOWN], 0);
    }
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
    ghm_context_free(&ctx);
}
END_TEST

/* A cloud given as rows (a voxel edit's probe: one point a voxel centre over row spans, zero
 * normals) gets from its rows what the plain cloud gets from its index: the same voxels, labels,
 * counts and normals on both sides. */
START_TEST(test_rows_cloud_as_plain_cloud)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *ball = ghm_test_sphere(20000, 0.5, 0, 0, 0, 1);
    const GhmPointCloud *all[1] = {ball};
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 48;
    GhmVoxelGrid g;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit_clouds(all, 1, &opt, &g, why, sizeof why), GHM_OK);
    /* spans: the voxels whose centre lies within 0.6 of the ball's centre, row by row */
    const int nx = g.dims[0], ny = g.dims[1], nz = g.dims[2];
    size_t nr = (size_t)ny * (size_t)nz, n = 0;
    int32_t *lo = malloc(nr * sizeof *lo), *hi = malloc(nr * sizeof *hi);
    size_t *start = malloc(nr * sizeof *start);
    ck_assert(lo && hi && start);
    for (size_t r = 0; r < nr; r++) {
        lo[r] = INT32_MAX, hi[r] = INT32_MIN;
        for (int x = 0; x < nx; x++) {
            double c[3];
            ghm_voxel_centre(&g, (uint32_t)(r * (size_t)nx + (size_t)x), c);
            if (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] < 0.36)
                lo[r] = x < lo[r] ? x : lo[r], hi[r] = x;
        }
        start[r] = n;
        n += lo[r] <= hi[r] ? (size_t)(hi[r] - lo[r] + 1) : 0;
    }
    GhmiVoxelRows rows = {.grid = &g, .lo = lo, .hi = hi, .start = start, .n = n};
    GhmPointCloud *probe = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(n, 1, 0, &probe), GHM_OK);
    ghmi_voxel_rows_points(&rows, 2, probe->xyz);
    GhmVoxelSweep *sw[2] = {NULL, NULL};
    const GhmVoxelResult *r[2];
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(ghm_voxel_sweep_create(ctx, probe, ball, &g, &opt, &sw[i]), GHM_OK);
        if (i)
            ck_assert_int_eq(ghmi_voxel_sweep_rebind(sw[i], probe, &rows, ball, 0), GHM_OK);
        ck_assert_int_eq(ghm_voxel_sweep_step(sw[i], NULL, &r[i]), GHM_OK);
    }
    ck_assert_uint_eq(r[1]->side[0].voxels, n);
    ck_assert_uint_gt(r[1]->side[0].label_count[GHM_VOXEL_INSIDE], 1000);
    ck_assert_uint_gt(r[1]->side[0].label_count[GHM_VOXEL_OUTSIDE], 1000);
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSide *p = &r[0]->side[c], *q = &r[1]->side[c];
        size_t K = p->voxels;
        ck_assert_uint_eq(q->voxels, K);
        ck_assert_mem_eq(p->keys, q->keys, K * 4);
        ck_assert_mem_eq(p->labels, q->labels, K);
        ck_assert_mem_eq(p->counts, q->counts, K * 4);
        ck_assert_mem_eq(p->normals, q->normals, K * 12);
        ck_assert_mem_eq(p->label_count, q->label_count, sizeof p->label_count);
        ck_assert_uint_eq(p->seeds, q->seeds);
        ck_assert_int_eq(p->radius, q->radius);
    }
    ghm_voxel_sweep_free(&sw[0]), ghm_voxel_sweep_free(&sw[1]);
    ghm_pointcloud_free(&probe);
    ghm_pointcloud_free(&ball);
    free(lo), free(hi), free(start);
    ghm_context_free(&ctx);
}
END_TEST

/* A run made without labels (GHMI_VOXEL_NO_LABELS: a voxel edit's cloud alone) gives the
 * voxels, counts, normals and radius of a full run of the same clouds, and no labels: a sparse
 * cloud (widened to radius > 1), with and without normals. */
START_TEST(test_run_without_labels)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *none = NULL, *sparse[2] = {ghm_test_sphere(3000, 0.5, 0, 0, 0, 1),
                                              ghm_test_sphere(3000, 0.5, 0, 0, 0, 0)};
    ck_assert_int_eq(ghm_pointcloud_create(0, 1, 0, &none), GHM_OK);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 64;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelGrid g = ghm_test_grid_around(sparse[c], &opt);
        GhmVoxelSweep *sw[2] = {NULL, NULL};
        const GhmVoxelResult *r[2];
        for (int i = 0; i < 2; i++)
            r[i] = ghm_test_flagged_step(ctx, none, sparse[c], &g, &opt,
                                         i ? GHMI_VOXEL_NO_LABELS : 0, &sw[i]);
        const GhmVoxelSide *full = &r[0]->side[1], *bare = &r[1]->side[1];
        ck_assert_int_gt(full->radius, 1);
        ck_assert_ptr_nonnull(full->labels);
        ghm_test_assert_unlabelled(bare, full);
        ghm_voxel_sweep_free(&sw[0]), ghm_voxel_sweep_free(&sw[1]);
    }
    ghm_pointcloud_free(&sparse[0]), ghm_pointcloud_free(&sparse[1]);
    ghm_pointcloud_free(&none);
    ghm_context_free(&ctx);
}
END_TEST

/* Where the grid's extent says the centres fall in their own voxels (so ghmi_voxel_rows_match
 * skips its comparison), they do: rows of grids reaching right to that extent, on either side
 * of the origin and at several voxel sizes, voxelized as a plain cloud, give one voxel a point,
 * the rows' own. 16 times farther out, where floats no longer hold them apart, the extent says
 * so and the comparison finds it. */
static void rows_at_extent(GhmContext *ctx, double s, double side, int axis, int far)
{
    const double reach = ldexp(s, far ? 25 : 21);
    GhmVoxelGrid g = {.voxel_size = s, .dims = {40, 3, 3}};
    for (int k = 0; k < 3; k++) /* the far corner (or the origin) at the extent */
        g.origin[k] = k != axis ? 0.0 : side > 0 ? reach - g.dims[k] * s : -reach;
    int32_t lo[9], hi[9];
    size_t start[9], n = 0;
    for (int r = 0; r < 9; r++) {
        lo[r] = r % 4, hi[r] = 39 - r, start[r] = n;
        n += (size_t)(hi[r] - lo[r] + 1);
    }
    GhmiVoxelRows rows = {.grid = &g, .lo = lo, .hi = hi, .start = start, .n = n};
    GhmPointCloud *pts = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(n, 0, 0, &pts), GHM_OK);
    ghmi_voxel_rows_points(&rows, 2, pts->xyz);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    GhmVoxelResult *r = NULL;
    ck_assert_int_eq(ghm_voxel_intersect(ctx, pts, pts, NULL, &g, &opt, &r), GHM_OK);
    const GhmVoxelSide *p = &r->side[0];
    ck_assert_int_eq(ghmi_voxel_centres_in_own_voxels(&g), !far);
    ck_assert_int_eq(ghmi_voxel_rows_match(&rows, p->keys, p->voxels, 2), !far);
    if (!far) {
        ck_assert_uint_eq(p->voxels, n);
        for (size_t q = 0, v = 0; q < 9; q++)
            for (int32_t x = lo[q]; x <= hi[q]; x++, v++)
                ck_assert_uint_eq(p->keys[v], (uint32_t)(q * 40 + (size_t)x));
    }
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&pts);
}

START_TEST(test_rows_centres_in_own_voxels_at_the_bound)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    const double sizes[] = {1e-3, 0.37, 5.0};
    for (int far = 0; far < 2; far++)
        for (size_t i = 0; i < 3; i++)
            for (int axis = 0; axis < 3; axis++) {
                rows_at_extent(ctx, sizes[i], 1.0, axis, far);
                rows_at_extent(ctx, sizes[i], -1.0, axis, far);
            }
    ghm_context_free(&ctx);
}
END_TEST

/* An edit whose solid would not fit in memory is refused at once, saying why, the set as it
 * was (past the memory the kernel killed the process minutes in, with no word). */
START_TEST(test_edit_refuses_what_memory_cannot_hold)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *ball = ghm_test_sphere(20000, 1.0, 0, 0, 0, 1);
    const GhmPointCloud *all[1] = {ball};
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 48;
    GhmVoxelGrid grid;
    char why[512] = "";
    ck_assert_int_eq(ghm_voxel_grid_fit_clouds(all, 1, &opt, &grid, why, sizeof why), GHM_OK);
    GhmVoxelEdit *e = NULL;
    ck_assert_int_eq(ghm_voxel_edit_create(ctx, &grid, &opt, &e), GHM_OK);
    ghmi_voxel_edit_memory_limit((size_t)1 << 20); /* the ball's ~60k voxels need ~15 MB */
    ck_assert_int_eq(ghm_voxel_edit_apply(e, GHM_VOXEL_EDIT_ADD, ball, NULL, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
    ck_assert_msg(strstr(why, "GB of memory where 0.0 GB are free: use a coarser grid"), "%s",
                  why);
    ck_assert_uint_eq(ghm_voxel_edit_size(e), 0);
    ghmi_voxel_edit_memory_limit(0);
    ck_assert_msg(ghm_voxel_edit_apply(e, GHM_VOXEL_EDIT_ADD, ball, NULL, why, sizeof why) ==
                      GHM_OK, "%s", why);
    ck_assert_uint_gt(ghm_voxel_edit_size(e), 40000);
    ghm_voxel_edit_free(&e);
    ghm_pointcloud_free(&ball);
    ghm_context_free(&ctx);
}
END_TEST

static Suite *voxel_suite(void)
{
    Suite *s = suite_create("voxel");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_one_point);
    tcase_add_test(core, test_empty_and_disjoint);
    tcase_add_test(core, test_counts_and_output);
    suite_add_tcase(s, core);
    TCase *spheres = tcase_create("spheres");
    tcase_set_timeout(spheres, 120);
    tcase_add_test(spheres, test_crossing_spheres);
    tcase_add_test(spheres, test_crossing_spheres_estimated_normals);
    tcase_add_test(spheres, test_inside_without_crossing);
    tcase_add_test(spheres, test_pose_moves_b);
    tcase_add_test(spheres, test_real_cloud_through_sphere);
    suite_add_tcase(s, spheres);
    TCase *edge = tcase_create("edge");
    tcase_set_timeout(edge, 120);
    tcase_add_test(edge, test_threads_agree);
    tcase_add_test(edge, test_grid_faces_and_outside_points);
    tcase_add_test(edge, test_sparse_cloud_widens);
    tcase_add_test(edge, test_thin_clouds_barrier);
    tcase_add_test(edge, test_rows_cloud_as_plain_cloud);
    tcase_add_test(edge, test_run_without_labels);
    tcase_add_test(edge, test_rows_centres_in_own_voxels_at_the_bound);
    tcase_add_test(edge, test_edit_refuses_what_memory_cannot_hold);
    suite_add_tcase(s, edge);
    return s;
}

int main(void) { return ghm_test_main(voxel_suite()); }
