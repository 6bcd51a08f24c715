/*
 * voxel_ranks.h - the parts of a voxel sweep over MPI ranks (cmd_voxel.c) that one process
 * does once and ranks would each repeat: reading the two clouds and fitting the grid around
 * every pose. Both are spread over the ranks and give every rank what one process has, to the
 * bit. Every rank calls each function; with one rank they are the one-process calls.
 */
#ifndef GHM_VOXEL_RANKS_H
#define GHM_VOXEL_RANKS_H

#include "ghm_voxel.h"
#include "voxel_cli.h"

/* Cloud c is read by rank c % ranks (which prints its errors) and broadcast to the others.
 * 0 with both clouds on every rank, or -1 on every rank (nothing kept) when any read failed. */
int ghm_voxel_ranks_load(const char *const path[2], const GhmVoxelCliChoices *ch,
                         GhmPointCloud *pc[2]);

/* ghm_voxel_grid_fit's grid, each rank moving B to its share of the poses. */
int ghm_voxel_ranks_fit(const GhmPointCloud *a, const GhmPointCloud *b, const double *poses,
                        int nposes, const GhmVoxelOptions *opt, GhmVoxelGrid *grid, char *why,
                        size_t why_size);

#endif /* GHM_VOXEL_RANKS_H */
