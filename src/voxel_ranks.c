/*
 * voxel_ranks.c - the grid fit of a voxel sweep spread over MPI ranks (voxel_ranks.h). Ranks of
 * one machine each moved B to every pose with their share of its cores (src/ranks.c); here each
 * pose is moved by one rank.
 *
 * The clouds are still read by every rank: one rank reading each and broadcasting it was slower
 * on 2 x H200 (2 x 10M points: rank 0 read and received in 0.85 s against 0.53 for both files
 * itself: OpenMPI's broadcast between the processes of one machine, copied through shared
 * memory, is slower than reading a file in the page cache), and one rank reading each into an
 * MPI-3 shared window that the machine's other ranks read in place gained nothing (one cloud
 * read with half the cores and copied into fresh shared pages took what reading both took;
 * docs/BENCHMARKS.md).
 */
#include "voxel_ranks.h"

#include <stdint.h>
#include <stdlib.h>

#include "cli.h"
#include "ranks.h"

int ghm_voxel_ranks_fit(const GhmPointCloud *a, const GhmPointCloud *b, const double *poses,
                        int nposes, const GhmVoxelOptions *opt, GhmVoxelGrid *grid, char *why,
                        size_t why_size)
{
    int64_t ranks = ghm_ranks_size(), rank = ghm_ranks_rank(), count = nposes ? nposes : 1;
    double *all = malloc((size_t)ranks * 7 * sizeof *all);
    int all_have = ghm_ranks_agree(all ? GHM_EXIT_FOUND : GHM_EXIT_ERROR) != GHM_EXIT_ERROR;
    if (!all_have) { /* each rank fits alone: the same grid, slower */
        free(all);
        return ghm_voxel_grid_fit(a, b, poses, nposes, opt, grid, why, why_size);
    }
    GhmVoxelBox box = ghm_voxel_box_empty();
    if (rank == 0) /* the boxes in one pass's order: A, then B at each pose */
        ghm_voxel_box_add(&box, a, NULL);
    for (int64_t k = count * rank / ranks; k < count * (rank + 1) / ranks; k++)
        ghm_voxel_box_add(&box, b, nposes ? poses + 16 * k : NULL);
    double mine[7] = {box.lo[0], box.lo[1], box.lo[2], box.hi[0], box.hi[1], box.hi[2],
                      (double)box.points}; /* exact below 2^53 points */
    ghm_ranks_all_gather_doubles(mine, 7, all);
    GhmVoxelBox joint = ghm_voxel_box_empty();
    for (int64_t r = 0; r < ranks; r++) {
        const double *v = all + 7 * r;
        GhmVoxelBox part = {{v[0], v[1], v[2]}, {v[3], v[4], v[5]}, (size_t)v[6]};
        ghm_voxel_box_join(&joint, &part);
    }
    free(all);
    return ghm_voxel_grid_fit_box(&joint, opt, grid, why, why_size);
}
