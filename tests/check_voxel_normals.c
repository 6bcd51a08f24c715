/* check_voxel_normals.c - ghm_voxel_normals_check on surfaces whose orientation is known: a
 * sphere with outward, inward and randomly signed normals (dense and sparse in the grid), open
 * patches facing either way, a cloud too small to tell; and a voxel edit refusing the faulty
 * ones. */
#include <math.h>
#include <string.h>

#include "ghm_pointcloud.h"
#include "ghm_voxel.h"
#include "ghm_voxel_edit.h"
#include "test_support.h"
#include "voxel_clouds.h"
#include "voxel_internal.h"

/* The check of side s on 1 thread (the public call) and on 3 (the edit's, in chunks): the same. */
static GhmVoxelNormalsCheck check_side(const GhmVoxelGrid *g, const GhmVoxelSide *s)
{
    GhmVoxelNormalsCheck c, t;
    ck_assert_int_eq(ghm_voxel_normals_check(g, s, &c), GHM_OK);
    ck_assert_int_eq(ghmi_voxel_normals_check(g, s, 3, &t), GHM_OK);
    ck_assert_int_eq(t.verdict, c.verdict);
    ck_assert_uint_eq(t.pairs, c.pairs);
    ck_assert(t.disagree == c.disagree);
    ck_assert_int_eq(t.extremes_out, c.extremes_out);
    ck_assert_int_eq(t.extremes_in, c.extremes_in);
    return c;
}

/* The check of cloud pc's side, pc voxelized alone (the other cloud empty) at grid_n. */
static GhmVoxelNormalsCheck check_cloud(const GhmPointCloud *pc, int grid_n)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *none = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(0, 0, 0, &none), GHM_OK);
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = grid_n;
    GhmVoxelGrid g;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(none, pc, NULL, 0, &opt, &g, why, sizeof why), GHM_OK);
    GhmVoxelResult *r = NULL;
    ck_assert_int_eq(ghm_voxel_intersect(ctx, none, pc, NULL, &g, &opt, &r), GHM_OK);
    GhmVoxelNormalsCheck c = check_side(&r->grid, &r->side[1]);
    ghm_voxel_result_free(&r);
    ghm_pointcloud_free(&none);
    ghm_context_free(&ctx);
    return c;
}

/* Turns every normal around (inward), or each with probability one half (random: seeded). */
static void turn_normals(GhmPointCloud *pc, int random)
{
    uint64_t seed = 7;
    for (size_t i = 0; i < pc->n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        if (random && (seed >> 63))
            continue;
        for (int k = 0; k < 3; k++)
            pc->normals[3 * i + (size_t)k] = -pc->normals[3 * i + (size_t)k];
    }
}

/* A square patch in the plane z = 0 with normals (0, 0, sign): n x n points. */
static GhmPointCloud *patch(int n, float sign)
{
    GhmPointCloud *pc = NULL;
    ck_assert_int_eq(ghm_pointcloud_create((size_t)n * (size_t)n, 1, 0, &pc), GHM_OK);
    for (int i = 0; i < n * n; i++) {
        float *p = pc->xyz + 3 * (size_t)i, *q = pc->normals + 3 * (size_t)i;
        p[0] = (float)(i % n) / (float)n, p[1] = (float)(i / n) / (float)n, p[2] = 0.0f;
        q[0] = 0.0f, q[1] = 0.0f, q[2] = sign;
    }
    return pc;
}

/* Dense (26-connected) at 32 and 64, sparse (the widened neighbourhood: cells) at 256. */
static const int grids[3] = {32, 64, 256};

START_TEST(test_sphere_orientations)
{
    for (int gi = 0; gi < 3; gi++) {
        GhmPointCloud *pc = ghm_test_random_sphere(20000, 1.0, 0, 3);
        GhmVoxelNormalsCheck c = check_cloud(pc, grids[gi]);
        ck_assert_int_eq(c.verdict, GHM_VOXEL_NORMALS_CONSISTENT);
        ck_assert_int_eq(c.extremes_out, 26);
        ck_assert(c.disagree < 0.05);
        turn_normals(pc, 0);
        c = check_cloud(pc, grids[gi]);
        ck_assert_int_eq(c.verdict, GHM_VOXEL_NORMALS_INWARD);
        ck_assert_int_eq(c.extremes_in, 26);
        turn_normals(pc, 1);
        c = check_cloud(pc, grids[gi]);
        ck_assert_int_eq(c.verdict, GHM_VOXEL_NORMALS_MIXED);
        ck_assert(c.disagree > 0.4 && c.disagree < 0.6);
        ghm_pointcloud_free(&pc);
    }
}
END_TEST

/* Enough voxels (about 50 k) that the check runs in chunks on threads: the same verdicts. */
START_TEST(test_sphere_on_threads)
{
    GhmPointCloud *pc = ghm_test_random_sphere(200000, 1.0, 0, 5);
    const GhmVoxelNormalsVerdict want[3] = {GHM_VOXEL_NORMALS_CONSISTENT,
                                            GHM_VOXEL_NORMALS_INWARD, GHM_VOXEL_NORMALS_MIXED};
    for (int turn = 0; turn < 3; turn++) {
        if (turn)
            turn_normals(pc, turn - 1);
        GhmVoxelNormalsCheck c = check_cloud(pc, 128);
        ck_assert_int_eq(c.verdict, want[turn]);
        ck_assert_uint_gt(c.pairs, 50000);
    }
    ghm_pointcloud_free(&pc);
}
END_TEST

START_TEST(test_open_patch_is_not_inward)
{
    for (int sign = -1; sign <= 1; sign += 2) {
        GhmPointCloud *pc = patch(300, (float)sign);
        GhmVoxelNormalsCheck c = check_cloud(pc, 64);
        ck_assert_int_eq(c.verdict, GHM_VOXEL_NORMALS_CONSISTENT);
        ck_assert(c.disagree == 0.0);
        ck_assert_int_eq(c.extremes_out, c.extremes_in); /* 9 along, 9 against, 8 across */
        ghm_pointcloud_free(&pc);
    }
}
END_TEST

START_TEST(test_small_cloud_unchecked)
{
    GhmPointCloud *pc = ghm_test_random_sphere(20000, 1.0, 0, 3);
    turn_normals(pc, 1);
    GhmVoxelNormalsCheck c = check_cloud(pc, 4); /* a few dozen voxels */
    ck_assert_int_eq(c.verdict, GHM_VOXEL_NORMALS_UNCHECKED);
    ck_assert_uint_lt(c.pairs, 200);
    ghm_pointcloud_free(&pc);
    GhmVoxelGrid g = {.voxel_size = 1, .dims = {4, 4, 4}};
    GhmVoxelSide none = {0};
    ck_assert_int_eq(ghm_voxel_normals_check(&g, &none, &c), GHM_OK);
    ck_assert_int_eq(c.verdict, GHM_VOXEL_NORMALS_UNCHECKED);
    ck_assert_int_eq(ghm_voxel_normals_check(NULL, &none, &c), GHM_ERR_INVALID);
}
END_TEST

/* An edit takes its inside from the normals: inward or mixed ones are refused, with why, and the
 * set is left as it was; the same cloud without normals (estimated) is applied. */
START_TEST(test_edit_refuses_faulty_normals)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmPointCloud *base = ghm_test_random_sphere(20000, 1.0, 0, 3);
    GhmPointCloud *cut = ghm_test_random_sphere(20000, 0.6, 0.7, 4);
    const GhmPointCloud *all[2] = {base, cut};
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = 48;
    GhmVoxelGrid g;
    char why[512];
    ck_assert_int_eq(ghm_voxel_grid_fit_clouds(all, 2, &opt, &g, why, sizeof why), GHM_OK);
    GhmVoxelEdit *e = NULL;
    ck_assert_int_eq(ghm_voxel_edit_create(ctx, &g, &opt, &e), GHM_OK);
    ck_assert_int_eq(ghm_voxel_edit_apply(e, GHM_VOXEL_EDIT_ADD, base, NULL, why, sizeof why),
                     GHM_OK);
    size_t before = ghm_voxel_edit_size(e);
    const char *says[2] = {"point inward", "point either way"};
    for (int random = 0; random < 2; random++) {
        turn_normals(cut, random);
        ck_assert_int_eq(ghm_voxel_edit_apply(e, GHM_VOXEL_EDIT_SUBTRACT, cut, NULL, why,
                                              sizeof why),
                         GHM_ERR_INVALID);
        ck_assert_msg(strstr(why, says[random]), "%s", why);
        ck_assert_uint_eq(ghm_voxel_edit_size(e), before);
    }
    ghm_pointcloud_drop_normals(cut);
    ck_assert_ptr_null(cut->normals);
    GhmVoxelEditStep st;
    ck_assert_int_eq(ghm_voxel_edit_apply(e, GHM_VOXEL_EDIT_SUBTRACT, cut, &st, why, sizeof why),
                     GHM_OK);
    ck_assert_uint_lt(ghm_voxel_edit_size(e), before);
    ghm_voxel_edit_free(&e);
    ghm_pointcloud_free(&base);
    ghm_pointcloud_free(&cut);
    ghm_context_free(&ctx);
}
END_TEST

static Suite *normals_suite(void)
{
    Suite *s = suite_create("voxel_normals");
    TCase *check = tcase_create("check");
    tcase_set_timeout(check, 120);
    tcase_add_test(check, test_sphere_orientations);
    tcase_add_test(check, test_sphere_on_threads);
    tcase_add_test(check, test_open_patch_is_not_inward);
    tcase_add_test(check, test_small_cloud_unchecked);
    tcase_add_test(check, test_edit_refuses_faulty_normals);
    suite_add_tcase(s, check);
    return s;
}

int main(void) { return ghm_test_main(normals_suite()); }
