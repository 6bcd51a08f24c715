/*
 * voxel_ranks.h - the part of a voxel sweep over MPI ranks (cmd_voxel.c) that one process does
 * once and ranks would each repeat: fitting the grid around B at every pose. Spread over the
 * ranks, it gives every rank one process's grid to the bit. Every rank calls it; with one rank
 * it is ghm_voxel_grid_fit.
 */
#ifndef GHM_VOXEL_RANKS_H
#define GHM_VOXEL_RANKS_H

#include "ghm_voxel.h"

/* ghm_voxel_grid_fit's grid, each rank moving B to its share of the poses. */
int ghm_voxel_ranks_fit(const GhmPointCloud *a, const GhmPointCloud *b, const double *poses,
                        int nposes, const GhmVoxelOptions *opt, GhmVoxelGrid *grid, char *why,
                        size_t why_size);

#endif /* GHM_VOXEL_RANKS_H */
