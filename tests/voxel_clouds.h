/*
 * voxel_clouds.h - spheres for the voxel suites (check_voxel.c, check_voxel_normals.c,
 * check_voxel_cuda.c): surfaces whose inside is known exactly, sampled with exact outward
 * normals; and the one-step runs a voxel edit makes of them.
 */
#ifndef GHM_TEST_VOXEL_CLOUDS_H
#define GHM_TEST_VOXEL_CLOUDS_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_pointcloud.h"
#include "ghm_voxel.h"

/* A Fibonacci sphere: n nearly uniform points of radius r around c, with outward normals when
 * normals is 1 (none when 0). */
GhmPointCloud *ghm_test_sphere(size_t n, double r, double cx, double cy, double cz, int normals);

/* Area-uniform random points on a sphere of radius r around (cx, 0, 0) (Archimedes: z and the
 * angle uniform), seeded, with outward normals: a scan rather than a lattice, with the clumps
 * and holes of random sampling. */
GhmPointCloud *ghm_test_random_sphere(size_t n, double r, double cx, uint64_t seed);

/* The grid ghm_voxel_grid_fit_clouds fits around pc alone at opt's grid (asserted to fit). */
GhmVoxelGrid ghm_test_grid_around(const GhmPointCloud *pc, const GhmVoxelOptions *opt);

/* One step of a sweep of (a, pc) on ctx, rebound with flags (GHMI_VOXEL_*), as a voxel edit
 * runs its cloud (a: the empty cloud, or the cloud it is run against); *sw (freed by the
 * caller) holds the result. */
const GhmVoxelResult *ghm_test_flagged_step(GhmContext *ctx, const GhmPointCloud *a,
                                            const GhmPointCloud *pc, const GhmVoxelGrid *g,
                                            const GhmVoxelOptions *opt, unsigned flags,
                                            GhmVoxelSweep **sw);

/* A side of a run made without labels (GHMI_VOXEL_NO_LABELS) against the same side of a full
 * run: the same voxels, keys, counts, normals and radius, no labels and no label counts. */
void ghm_test_assert_unlabelled(const GhmVoxelSide *bare, const GhmVoxelSide *full);

#endif /* GHM_TEST_VOXEL_CLOUDS_H */
