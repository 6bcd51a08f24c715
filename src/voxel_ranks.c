/*
 * voxel_ranks.c - reading and the grid fit of a voxel sweep spread over MPI ranks
 * (voxel_ranks.h). Two ranks of one machine each read both clouds and moved B to every pose
 * with half of its cores (src/ranks.c shares them): a 100-step sweep of 2 x 10M points ran at
 * 0.73-0.82x of one process's --gpus 2 (docs/BENCHMARKS.md). Here each cloud is read once and
 * each pose moved once.
 */
#include "voxel_ranks.h"

#include <stdint.h>
#include <stdlib.h>

#include "cli.h"
#include "ranks.h"

/* Sends cloud *pc from rank root to the others, which create theirs from its size and arrays.
 * 0 on every rank, or -1 on every rank (the receivers' clouds freed). */
static int broadcast_cloud(GhmPointCloud **pc, int root)
{
    int here = ghm_ranks_rank() == root;
    uint64_t head[3] = {0, 0, 0}; /* points, normals, colours */
    if (here)
        head[0] = (*pc)->n, head[1] = (*pc)->normals != NULL, head[2] = (*pc)->rgb != NULL;
    if (ghm_ranks_broadcast(head, sizeof head, root) < 0)
        return -1;
    int made = here || ghm_pointcloud_create((size_t)head[0], (int)head[1], (int)head[2], pc) ==
                           GHM_OK;
    if (!made)
        ghm_cli_error(NULL, "out of memory for a cloud of %llu points",
                      (unsigned long long)head[0]);
    if (!ghm_ranks_all_ok(made)) {
        if (!here)
            ghm_pointcloud_free(pc);
        return -1;
    }
    size_t n = (size_t)head[0];
    int ret = ghm_ranks_broadcast((*pc)->xyz, 3 * n * sizeof(float), root);
    if (ret == 0 && head[1])
        ret = ghm_ranks_broadcast((*pc)->normals, 3 * n * sizeof(float), root);
    if (ret == 0 && head[2])
        ret = ghm_ranks_broadcast((*pc)->rgb, 3 * n, root);
    if (!ghm_ranks_all_ok(ret == 0)) {
        if (!here)
            ghm_pointcloud_free(pc);
        return -1;
    }
    return 0;
}

int ghm_voxel_ranks_load(const char *const path[2], const GhmVoxelCliChoices *ch,
                         GhmPointCloud *pc[2])
{
    int ranks = ghm_ranks_size(), rank = ghm_ranks_rank(), ok = 1;
    for (int c = 0; c < 2; c++)
        if (c % ranks == rank)
            ok &= ghm_voxel_cli_load(path[c], ch, &pc[c]) == 0;
    for (int c = 0; c < 2 && ghm_ranks_all_ok(ok); c++)
        if (ranks > 1 && broadcast_cloud(&pc[c], c % ranks) < 0)
            ok = 0;
    if (ghm_ranks_all_ok(ok))
        return 0;
    ghm_pointcloud_free(&pc[0]);
    ghm_pointcloud_free(&pc[1]);
    return -1;
}

int ghm_voxel_ranks_fit(const GhmPointCloud *a, const GhmPointCloud *b, const double *poses,
                        int nposes, const GhmVoxelOptions *opt, GhmVoxelGrid *grid, char *why,
                        size_t why_size)
{
    int64_t ranks = ghm_ranks_size(), rank = ghm_ranks_rank(), count = nposes ? nposes : 1;
    double *all = malloc((size_t)ranks * 7 * sizeof *all);
    if (!ghm_ranks_all_ok(all != NULL)) { /* each rank fits alone: the same grid, slower */
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
