/* check_voxel_grid.c - the voxel grid: its fit around two clouds and a sweep's poses, the
 * fit's box added in pieces, and every point inside the grid it reports. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ghm_pointcloud.h"
#include "ghm_voxel.h"
#include "test_support.h"

START_TEST(test_grid_fit)
{
    GhmPointCloud *a = NULL, *b = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(2, 0, 0, &a), GHM_OK);
    ck_assert_int_eq(ghm_pointcloud_create(1, 0, 0, &b), GHM_OK);
    float pa[6] = {0, 0, 0, 4, 1, 2}, pb[3] = {1, 2, -1};
    memcpy(a->xyz, pa, sizeof pa);
    memcpy(b->xyz, pb, sizeof pb);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    ck_assert_int_eq(opt.grid, 128);
    opt.grid = 8; /* joint box (0,0,-1)-(4,2,2): longest side 4, voxels of 0.5 */
    GhmVoxelGrid g;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
    ck_assert_double_eq_tol(g.voxel_size, 0.5, 1e-12);
    ck_assert_int_eq(g.dims[0], 8);
    ck_assert_int_eq(g.dims[1], 4);
    ck_assert_int_eq(g.dims[2], 6);
    ck_assert_double_eq(g.origin[2], -1.0);
    double c[3];
    ghm_voxel_centre(&g, 1 + 8 * (2 + 4 * 3), c);
    ck_assert_double_eq_tol(c[0], 0.75, 1e-12);
    ck_assert_double_eq_tol(c[1], 1.25, 1e-12);
    ck_assert_double_eq_tol(c[2], 0.75, 1e-12);
    /* a pose moves B for the fit */
    double pose[16] = {1, 0, 0, 10, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, pose, 1, &opt, &g, why, sizeof why), GHM_OK);
    ck_assert_double_eq_tol(g.voxel_size, 11.0 / 8, 1e-12);
    /* too fine: refused with a reason, never allocated */
    opt.voxel_size = 0.001;
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
    ck_assert_ptr_nonnull(strstr(why, "at most 4096 per axis"));
    ck_assert_ptr_nonnull(strstr(why, "; a voxel size of 0.002817 fits")); /* 24 / s^3 <= 2^30 */
    opt.voxel_size = 0;
    opt.grid = 4097;
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why),
                     GHM_ERR_INVALID);
    /* 2048 along the longest side of this box is 2048 x 1024 x 1536 voxels, past 2^30 */
    opt.grid = 2048;
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
    ck_assert_ptr_nonnull(strstr(why, "2^30 in all); a grid of 1420 fits"));
    opt.grid = 1421;
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
    opt.grid = 1024;
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
    ck_assert_int_eq(g.dims[0] * g.dims[1] * g.dims[2], 1024 * 512 * 768);
    /* a long box takes 4096 along its length */
    float plong[6] = {0, 0, 0, 64, 1, 1};
    memcpy(a->xyz, plong, sizeof plong);
    opt.grid = 4096;
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
    ck_assert_int_eq(g.dims[0], 4096);
    ck_assert_int_le(g.dims[1] * g.dims[2], 129 * 193);
    memcpy(a->xyz, pa, sizeof pa);
    opt = ghm_voxel_defaults();
    opt.t_in = 1.5;
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why),
                     GHM_ERR_INVALID);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
}
END_TEST

/* Every point of both clouds lies in the half-open box the grid reports, by a user's
 * arithmetic (origin + dims * size) and by the voxelizer's (floor((p - origin) / size)). */
static void assert_grid_holds(const GhmVoxelGrid *g, const GhmPointCloud *pc)
{
    for (size_t i = 0; i < pc->n; i++)
        for (int k = 0; k < 3; k++) {
            double p = pc->xyz[3 * i + k];
            ck_assert(p >= g->origin[k]);
            ck_assert(p < g->origin[k] + g->dims[k] * g->voxel_size);
            ck_assert(floor((p - g->origin[k]) * (1.0 / g->voxel_size)) < g->dims[k]);
        }
}

START_TEST(test_grid_holds_every_point)
{
    GhmPointCloud *a = NULL, *b = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(500, 0, 0, &a), GHM_OK);
    ck_assert_int_eq(ghm_pointcloud_create(500, 0, 0, &b), GHM_OK);
    uint32_t state = 12345;
    for (size_t i = 0; i < 3 * 500; i++) {
        state = state * 1664525u + 1013904223u;
        a->xyz[i] = -3.1f + 7.3f * (float)(state >> 8) / (float)(1u << 24);
        state = state * 1664525u + 1013904223u;
        b->xyz[i] = 0.7f + 2.9f * (float)(state >> 8) / (float)(1u << 24);
    }
    GhmVoxelOptions opt = ghm_voxel_defaults();
    GhmVoxelGrid g;
    char why[256];
    for (int grid = 1; grid <= 300; grid += 7) {
        opt.grid = grid;
        ck_assert_int_eq(ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
        ck_assert_int_le(g.dims[0] > g.dims[1] ? (g.dims[0] > g.dims[2] ? g.dims[0] : g.dims[2])
                                               : (g.dims[1] > g.dims[2] ? g.dims[1] : g.dims[2]),
                         grid);
        assert_grid_holds(&g, a);
        assert_grid_holds(&g, b);
    }
    /* A size the user gives stays; a box of whole voxels gets one more on its far side. */
    float unit[6] = {0, 0, 0, 1, 1, 1};
    memcpy(a->xyz, unit, sizeof unit);
    a->n = 2;
    opt.voxel_size = 0.25;
    ck_assert_int_eq(ghm_voxel_grid_fit(a, a, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
    ck_assert_double_eq(g.voxel_size, 0.25);
    ck_assert_int_eq(g.dims[0], 5);
    assert_grid_holds(&g, a);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
}
END_TEST

static void assert_same_grid(const GhmVoxelGrid *g, const GhmVoxelGrid *h)
{
    ck_assert_mem_eq(g->origin, h->origin, sizeof g->origin); /* to the bit, signs of zero too */
    ck_assert_mem_eq(&g->voxel_size, &h->voxel_size, sizeof g->voxel_size);
    ck_assert_mem_eq(g->dims, h->dims, sizeof g->dims);
}

/* A fit's box added in pieces (a sweep's poses dealt over MPI ranks) and joined in order is the
 * box of one pass, to the bit: equal coordinates keep the first seen, so -0.0 before 0.0 stays
 * -0.0 and the grid's origin prints alike. */
START_TEST(test_box_in_pieces)
{
    GhmPointCloud *a = NULL, *b = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(2, 0, 0, &a), GHM_OK);
    ck_assert_int_eq(ghm_pointcloud_create(200, 0, 0, &b), GHM_OK);
    float pa[6] = {0.1f, 1, 2, 3, 4, 5};
    memcpy(a->xyz, pa, sizeof pa);
    uint32_t state = 7;
    for (size_t i = 0; i < 3 * b->n; i++) {
        state = state * 1664525u + 1013904223u;
        b->xyz[i] = (float)(state >> 8) / (float)(1u << 24) - 0.5f;
    }
    enum { POSES = 9 };
    double poses[16 * POSES];
    for (int k = 0; k < POSES; k++) { /* turns about z and shifts: each pose widens the box */
        double t = 0.4 * k, *m = poses + 16 * k;
        double r[16] = {cos(t), -sin(t), 0, 0.3 * k, sin(t), cos(t), 0, -0.1 * k, 0, 0, 1, 0,
                        0, 0, 0, 1};
        memcpy(m, r, sizeof r);
    }
    GhmVoxelOptions opt = ghm_voxel_defaults();
    GhmVoxelGrid one, joined;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(a, b, poses, POSES, &opt, &one, why, sizeof why), GHM_OK);
    for (int pieces = 1; pieces <= 4; pieces++) {
        GhmVoxelBox box = ghm_voxel_box_empty();
        for (int p = 0; p < pieces; p++) {
            GhmVoxelBox part = ghm_voxel_box_empty();
            if (p == 0)
                ghm_voxel_box_add(&part, a, NULL);
            for (int k = POSES * p / pieces; k < POSES * (p + 1) / pieces; k++)
                ghm_voxel_box_add(&part, b, poses + 16 * k);
            ghm_voxel_box_join(&box, &part);
        }
        ck_assert_uint_eq(box.points, a->n + POSES * b->n);
        ck_assert_int_eq(ghm_voxel_grid_fit_box(&box, &opt, &joined, why, sizeof why), GHM_OK);
        assert_same_grid(&joined, &one);
    }
    /* -0.0 first stays -0.0, 0.0 first stays 0.0 */
    float zero[2][6] = {{-0.0f, 0, 0, 1, 1, 1}, {0.0f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f}};
    memcpy(a->xyz, zero[0], sizeof zero[0]);
    memcpy(b->xyz, zero[1], sizeof zero[1]);
    b->n = 2;
    for (int first = 0; first < 2; first++) {
        const GhmPointCloud *c[2] = {first ? b : a, first ? a : b};
        GhmVoxelBox box = ghm_voxel_box_empty(), later = ghm_voxel_box_empty();
        ghm_voxel_box_add(&box, c[0], NULL);
        ghm_voxel_box_add(&later, c[1], NULL);
        ghm_voxel_box_join(&box, &later);
        ck_assert_int_eq(ghm_voxel_grid_fit(c[0], c[1], NULL, 0, &opt, &one, why, sizeof why),
                         GHM_OK);
        ck_assert_int_eq(ghm_voxel_grid_fit_box(&box, &opt, &joined, why, sizeof why), GHM_OK);
        assert_same_grid(&joined, &one);
        ck_assert_int_eq(!!signbit(joined.origin[0]), !first);
    }
    /* an empty box: one voxel of size 1, as a fit of empty clouds */
    GhmVoxelBox none = ghm_voxel_box_empty();
    ck_assert_int_eq(ghm_voxel_grid_fit_box(&none, &opt, &joined, why, sizeof why), GHM_OK);
    ck_assert_double_eq(joined.voxel_size, 1.0);
    ck_assert_int_eq(joined.dims[0], 1);
    opt.grid = 0;
    ck_assert_int_eq(ghm_voxel_grid_fit_box(&none, &opt, &joined, why, sizeof why),
                     GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_voxel_grid_fit_box(NULL, &opt, &joined, why, sizeof why),
                     GHM_ERR_INVALID);
    ghm_voxel_box_add(NULL, a, NULL); /* NULL arguments change nothing */
    ghm_voxel_box_add(&none, NULL, NULL);
    ghm_voxel_box_join(&none, NULL);
    ghm_voxel_box_join(NULL, &none);
    ck_assert_uint_eq(none.points, 0);
    ghm_pointcloud_free(&a);
    ghm_pointcloud_free(&b);
}
END_TEST

static Suite *voxel_grid_suite(void)
{
    Suite *s = suite_create("voxel_grid");
    TCase *fit = tcase_create("fit");
    tcase_add_test(fit, test_grid_fit);
    tcase_add_test(fit, test_grid_holds_every_point);
    tcase_add_test(fit, test_box_in_pieces);
    suite_add_tcase(s, fit);
    return s;
}

int main(void) { return ghm_test_main(voxel_grid_suite()); }
