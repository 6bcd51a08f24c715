/*
 * voxel_ranks.h - the parts of a voxel sweep over MPI ranks (cmd_voxel.c) that one process does
 * once and ranks would each repeat: reading the clouds, and fitting the grid around B at every
 * pose. Every rank calls each function, together.
 */
#ifndef GHM_VOXEL_RANKS_H
#define GHM_VOXEL_RANKS_H

#include "ghm_voxel.h"
#include "voxel_cli.h"

/* The clouds at paths[0] (A) and paths[1] (B), each read by one rank of each machine (which says
 * what is wrong with it, as ghm_voxel_cli_load does) and shared with the machine's other ranks
 * in place; where that cannot be, every rank reads both. 0 with pc[0], pc[1] set, to be read
 * only and owned by *out (ghm_voxel_ranks_clouds_free, by every rank together, not
 * ghm_pointcloud_free); -1 on every rank when some rank could not read its cloud. */
typedef struct GhmVoxelRanksClouds GhmVoxelRanksClouds;
int ghm_voxel_ranks_load(const char *const paths[2], const GhmVoxelCliChoices *ch,
                         GhmPointCloud *pc[2], GhmVoxelRanksClouds **out);
void ghm_voxel_ranks_clouds_free(GhmVoxelRanksClouds **c); /* accepts NULL, pointer to NULL */

/* ghm_voxel_grid_fit's grid, each rank moving B to its share of the poses: one process's grid to
 * the bit (with one rank it is ghm_voxel_grid_fit). */
int ghm_voxel_ranks_fit(const GhmPointCloud *a, const GhmPointCloud *b, const double *poses,
                        int nposes, const GhmVoxelOptions *opt, GhmVoxelGrid *grid, char *why,
                        size_t why_size);

#endif /* GHM_VOXEL_RANKS_H */
