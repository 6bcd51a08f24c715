/* voxel_clouds.c - spheres and one-step runs for the voxel suites; see voxel_clouds.h. */
#include "voxel_clouds.h"

#include <math.h>

#include "test_support.h"
#include "voxel_internal.h"

GhmVoxelGrid ghm_test_grid_around(const GhmPointCloud *pc, const GhmVoxelOptions *opt)
{
    const GhmPointCloud *all[1] = {pc};
    GhmVoxelGrid g;
    char why[256] = "";
    int ret = ghm_voxel_grid_fit_clouds(all, 1, opt, &g, why, sizeof why);
    ck_assert_msg(ret == GHM_OK, "%s", why);
    return g;
}

const GhmVoxelResult *ghm_test_flagged_step(GhmContext *ctx, const GhmPointCloud *a,
                                            const GhmPointCloud *pc, const GhmVoxelGrid *g,
                                            const GhmVoxelOptions *opt, unsigned flags,
                                            GhmVoxelSweep **sw)
{
    const GhmVoxelResult *r = NULL;
    ck_assert_int_eq(ghm_voxel_sweep_create(ctx, a, pc, g, opt, sw), GHM_OK);
    ck_assert_int_eq(ghmi_voxel_sweep_rebind(*sw, a, NULL, pc, flags), GHM_OK);
    ck_assert_int_eq(ghm_voxel_sweep_step(*sw, NULL, &r), GHM_OK);
    return r;
}

void ghm_test_assert_unlabelled(const GhmVoxelSide *bare, const GhmVoxelSide *full)
{
    size_t K = full->voxels;
    ck_assert_uint_eq(bare->voxels, K);
    ck_assert_int_eq(bare->radius, full->radius);
    ck_assert_mem_eq(bare->keys, full->keys, K * 4);
    ck_assert_mem_eq(bare->counts, full->counts, K * 4);
    ck_assert_mem_eq(bare->normals, full->normals, K * 12);
    ck_assert_ptr_null(bare->labels);
    for (int l = 0; l < 4; l++)
        ck_assert_uint_eq(bare->label_count[l], 0);
}

GhmPointCloud *ghm_test_sphere(size_t n, double r, double cx, double cy, double cz, int normals)
{
    GhmPointCloud *pc = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(n, normals, 0, &pc), GHM_OK);
    const double golden = M_PI * (3.0 - sqrt(5.0));
    for (size_t i = 0; i < n; i++) {
        double z = 1.0 - 2.0 * (i + 0.5) / n, rad = sqrt(1.0 - z * z), phi = golden * i;
        double u[3] = {rad * cos(phi), rad * sin(phi), z};
        pc->xyz[3 * i] = (float)(cx + r * u[0]);
        pc->xyz[3 * i + 1] = (float)(cy + r * u[1]);
        pc->xyz[3 * i + 2] = (float)(cz + r * u[2]);
        for (int k = 0; normals && k < 3; k++)
            pc->normals[3 * i + (size_t)k] = (float)u[k];
    }
    return pc;
}

GhmPointCloud *ghm_test_random_sphere(size_t n, double r, double cx, uint64_t seed)
{
    GhmPointCloud *pc = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(n, 1, 0, &pc), GHM_OK);
    for (size_t i = 0; i < n; i++) {
        double q[2];
        for (int k = 0; k < 2; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            q[k] = (double)(seed >> 11) * (1.0 / 9007199254740992.0);
        }
        double z = 2 * q[0] - 1, rad = sqrt(1 - z * z), phi = 2 * M_PI * q[1];
        double u[3] = {rad * cos(phi), rad * sin(phi), z};
        for (int k = 0; k < 3; k++) {
            pc->xyz[3 * i + (size_t)k] = (float)((k ? 0 : cx) + r * u[k]);
            pc->normals[3 * i + (size_t)k] = (float)u[k];
        }
    }
    return pc;
}
