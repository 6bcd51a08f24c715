/*
 * bench.h - the built-in benchmarks that `geohash-match bench WHAT` dispatches to (the table is
 * in cmd_bench.c). Each takes the arguments after WHAT (argv[0] is WHAT) and returns a
 * GHM_EXIT_* status.
 */
#ifndef GHM_BENCH_H
#define GHM_BENCH_H

#include <stddef.h>

#include "ghm_pointcloud.h"

int ghm_bench_hash(int argc, char **argv);  /* bench_hash.c: hash tables vs sort + search */
int ghm_bench_match(int argc, char **argv); /* bench_match.c: per-query time by stage */
int ghm_bench_video(int argc, char **argv); /* bench_video.c: decode / match / end-to-end */
int ghm_bench_voxel(int argc, char **argv); /* bench_voxel.c: voxel intersection per step */
int ghm_bench_dynmap(int argc, char **argv); /* bench_dynmap.c: GhmDynmap, paper's 6.1 */
int ghm_bench_distmap(int argc, char **argv); /* bench_distmap.c: GhmDistMap against GhmMap */
int ghm_bench_tables(int argc, char **argv); /* bench_tables.c: map schemes on voxel key sets */

/* The benchmark clouds (bench_voxel.c): n points of a sphere of radius r about c on a Fibonacci
 * lattice, with exact normals when `normals`. A is the unit sphere at GHM_BENCH_SPHERE_A, B one of
 * radius 0.6 at GHM_BENCH_SPHERE_B, which crosses it. */
#define GHM_BENCH_SPHERE_A ((const double[3]){0.0, 0.0, 0.0})
#define GHM_BENCH_SPHERE_B ((const double[3]){0.9, 0.2, 0.0})
int ghm_bench_sphere(size_t n, double r, const double c[3], int normals, GhmPointCloud **out);

#endif /* GHM_BENCH_H */
