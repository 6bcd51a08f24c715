/*
 * voxel_ranks.c - what one process of a voxel sweep does once and ranks would each repeat
 * (voxel_ranks.h): reading the clouds and fitting the grid around B at every pose.
 *
 * Reading: each cloud is read by one rank of each machine, with that rank's share of the cores
 * (src/ranks.c), and copied into memory the machine's ranks share (an MPI-3 shared window), where
 * the others read it in place. Every rank reading both clouds with half the cores cost two ranks
 * 465-490 ms against one process's 365 for 2 x 10M points on 2 x H200; one rank reading each
 * and broadcasting it was slower still (0.85 s: OpenMPI's broadcast between the processes of one
 * machine copies through its own shared memory; docs/BENCHMARKS.md).
 *
 * The grid: ranks of one machine each moved B to every pose with their share of its cores; here
 * each pose is moved by one rank.
 */
#include "voxel_ranks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ranks.h"

/* --- the clouds, read once a machine ------------------------------------------------------ */

/* A cloud in a rank's part of the shared memory: this header, then its arrays at 64-byte
 * offsets (xyz, then the normals and colours it has). A part holds its rank's clouds one after
 * the other. */
typedef struct SharedCloud {
    uint64_t index; /* 0 = A, 1 = B */
    uint64_t n;
    uint64_t has_normals, has_rgb;
    uint64_t bytes; /* the header and the arrays: where the next cloud starts */
} SharedCloud;

struct GhmVoxelRanksClouds {
    GhmRanksShared *mem;   /* NULL when nothing is shared: own holds what this rank read */
    GhmPointCloud *own[2]; /* clouds this rank read (copied into mem when shared) */
    GhmPointCloud view[2]; /* the shared clouds, in mem */
};

static size_t round64(size_t n) { return (n + 63) / 64 * 64; }

static size_t float_bytes(size_t n) { return round64(3 * n * sizeof(float)); }

static size_t shared_bytes(const GhmPointCloud *c)
{
    return round64(sizeof(SharedCloud)) + float_bytes(c->n) +
           (c->normals ? float_bytes(c->n) : 0) + (c->rgb ? round64(3 * c->n) : 0);
}

/* A large array copied on the OpenMP threads, so that the fresh shared pages fault in on all of
 * them at once. */
static void copy_parallel(void *to, const void *from, size_t bytes)
{
    enum { PIECE = 1 << 20 };
    size_t pieces = (bytes + PIECE - 1) / PIECE;
#pragma omp parallel for schedule(static) if (pieces > 1)
    for (size_t k = 0; k < pieces; k++) {
        size_t at = k * PIECE, len = bytes - at < PIECE ? bytes - at : PIECE;
        memcpy((char *)to + at, (const char *)from + at, len);
    }
}

static void write_cloud(char *at, uint64_t index, const GhmPointCloud *c)
{
    SharedCloud h = {index, c->n, c->normals != NULL, c->rgb != NULL, shared_bytes(c)};
    memcpy(at, &h, sizeof h);
    at += round64(sizeof h);
    copy_parallel(at, c->xyz, 3 * c->n * sizeof(float));
    at += float_bytes(c->n);
    if (c->normals) {
        copy_parallel(at, c->normals, 3 * c->n * sizeof(float));
        at += float_bytes(c->n);
    }
    if (c->rgb)
        copy_parallel(at, c->rgb, 3 * c->n);
}

/* The view of the cloud whose block starts at `at` (written by write_cloud). */
static GhmPointCloud read_cloud(const char *at, const SharedCloud *h)
{
    char *p = (char *)at + round64(sizeof *h); /* the view's arrays are read, never written */
    GhmPointCloud c = {(size_t)h->n, (float *)(void *)p, NULL, NULL};
    p += float_bytes(c.n);
    if (h->has_normals) {
        c.normals = (float *)(void *)p;
        p += float_bytes(c.n);
    }
    if (h->has_rgb)
        c.rgb = (uint8_t *)p;
    return c;
}

/* Copies this rank's clouds into shared memory and finds both clouds in the machine's parts.
 * 1 when both are found there; 0 when nothing could be shared or a cloud is in no part (ranks
 * whose launcher numbered them otherwise than MPI does): the caller then reads what it lacks. */
static int share(GhmVoxelRanksClouds *c)
{
    size_t bytes = 0;
    for (int i = 0; i < 2; i++)
        bytes += c->own[i] ? shared_bytes(c->own[i]) : 0;
    char *mine = NULL;
    c->mem = ghm_ranks_shared_create(bytes, (void **)&mine);
    if (!c->mem)
        return 0;
    for (int i = 0; i < 2; i++)
        if (c->own[i]) {
            write_cloud(mine, (uint64_t)i, c->own[i]);
            mine += shared_bytes(c->own[i]);
        }
    int parts = ghm_ranks_shared_ready(c->mem), found = 0;
    for (int p = 0; p < parts; p++) {
        size_t size = 0;
        const char *part = ghm_ranks_shared_part(c->mem, p, &size);
        for (size_t at = 0; part && at + sizeof(SharedCloud) <= size;) {
            SharedCloud h;
            memcpy(&h, part + at, sizeof h);
            if (h.index < 2 && !(found >> h.index & 1)) {
                c->view[h.index] = read_cloud(part + at, &h);
                found |= 1 << h.index;
            }
            at += h.bytes;
        }
    }
    return found == 3;
}

int ghm_voxel_ranks_load(const char *const paths[2], const GhmVoxelCliChoices *ch,
                         GhmPointCloud *pc[2], GhmVoxelRanksClouds **out)
{
    pc[0] = pc[1] = NULL;
    GhmVoxelRanksClouds *c = calloc(1, sizeof *c);
    int here = ghm_ranks_local_size(), me = ghm_ranks_local_rank(), ok = c != NULL;
    for (int i = 0; i < 2 && ok && here > 1; i++) /* cloud i by the machine's rank i */
        if (i % here == me)
            ok = ghm_voxel_cli_load(paths[i], ch, &c->own[i]) == 0;
    if (ghm_ranks_agree(ok ? GHM_EXIT_FOUND : GHM_EXIT_ERROR) == GHM_EXIT_ERROR)
        goto fail;
    /* Every rank takes part (the memory is made by all together), and the run shares only
     * where every machine found both clouds, so that every rank goes the same way below. */
    int shared = share(c);
    if (ghm_ranks_agree(shared ? GHM_EXIT_FOUND : GHM_EXIT_ERROR) != GHM_EXIT_ERROR) {
        pc[0] = &c->view[0], pc[1] = &c->view[1];
        *out = c;
        return 0;
    }
    /* One rank on some machine, or nothing shared: every rank reads what it lacks, rank 0 says
     * what is wrong. */
    ghm_cli_options_quiet(ghm_ranks_rank() > 0);
    for (int i = 0; i < 2 && ok; i++)
        if (!c->own[i])
            ok = ghm_voxel_cli_load(paths[i], ch, &c->own[i]) == 0;
    ghm_cli_options_quiet(0);
    if (ghm_ranks_agree(ok ? GHM_EXIT_FOUND : GHM_EXIT_ERROR) == GHM_EXIT_ERROR)
        goto fail;
    pc[0] = c->own[0], pc[1] = c->own[1];
    *out = c;
    return 0;
fail:
    ghm_voxel_ranks_clouds_free(&c);
    *out = NULL;
    return -1;
}

void ghm_voxel_ranks_clouds_free(GhmVoxelRanksClouds **c)
{
    if (!c || !*c)
        return;
    ghm_ranks_shared_free(&(*c)->mem);
    ghm_pointcloud_free(&(*c)->own[0]);
    ghm_pointcloud_free(&(*c)->own[1]);
    free(*c);
    *c = NULL;
}

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
