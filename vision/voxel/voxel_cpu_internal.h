/*
 * voxel_cpu_internal.h - the CPU path of the voxel pipeline, stage by stage, for voxel.c, which
 * runs them: voxelize.c (keys, the GhmIndex of each cloud, per-voxel sums, neighbour and
 * cross-cloud look-ups) and labels.c (classify, fill). Their device twins are
 * kernels/vision/voxel/voxelize.cu and labels.cu.
 */
#ifndef GHM_VOXEL_CPU_INTERNAL_H
#define GHM_VOXEL_CPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_index.h"
#include "ghm_map.h"
#include "voxel_internal.h"

/* One cloud's state through a step; every array is malloc'ed by the stage that fills it and
 * freed by ghmi_voxel_side_free (or handed over to the result), but nbr when nbr_keep lends
 * it. */
typedef struct GhmiSide {
    const GhmPointCloud *pc;
    const GhmiVoxelRows *rows; /* the cloud as rows (a voxel edit's probe), or NULL */
    int by_rows;        /* its voxels are the rows' points, one each: voxel ids come from the
                         * rows (ghmi_voxel_rows_at), and it has no index */
    GhmIndex *ix;
    size_t n, K, inside; /* points, occupied voxels, points inside the grid */
    uint32_t *pkey;     /* n: voxel key of each point, GHM_NOT_FOUND outside the grid */
    uint32_t *pid;      /* n: voxel id of each point (not filled by_rows: point i is voxel i) */
    uint32_t *keys;     /* K ascending */
    uint32_t *counts;   /* K */
    float *normals;     /* 3K */
    double *moments;    /* GHMI_MOMENTS * K, only when estimating normals */
    GhmiHood hood;      /* the neighbourhood of fill, seeds and normals */
    uint32_t *nbr;      /* hood.n * K neighbour ids */
    GhmiKeep *nbr_keep; /* where nbr is kept (a sweep's: a voxel edit's probe of 1 M voxels has
                         * 104 MB of ids, which, mapped afresh each step, had their pages
                         * faulted in and cleared again: most of a CPU edit step's 30-40 k
                         * page faults, 2 cores), or NULL: the side's own */
    uint32_t *cross;    /* K: id of the same voxel in the other cloud */
    uint8_t *barrier;   /* K: the other surface is near (see contact()); not filled through */
    float *plane;       /* 6K: point and normal of the other surface near a barrier voxel */
    uint8_t *label;     /* K */
    uint8_t *ring;      /* K: next to a barrier voxel (seeds live here) */
    uint8_t *seed;      /* K: seed label or NO_SEED */
    uint32_t *sid;      /* K: id of the seed a filled voxel was reached from */
    size_t conflicts, seeds;
} GhmiSide;

/* Frees the arrays and the index and zeroes *s. */
void ghmi_voxel_side_free(GhmiSide *s);

/* Keys of the points (B's moved by pose), the cloud's GhmIndex (none for a cloud given as rows
 * whose points are its voxels: by_rows), the voxels' keys, counts, normals (from the cloud) or
 * moments (when it has none). */
int ghmi_voxel_voxelize(GhmContext *ctx, GhmiSide *s, const double *pose, const GhmVoxelGrid *g,
                        int threads);

/* Neighbour ids: 26-neighbours, widened step by step for a cloud too sparse for the grid. */
int ghmi_voxel_look_up(const GhmVoxelGrid *g, GhmiSide *s, int threads);

/* Where the other cloud o is near each voxel of s: cross ids, barrier and plane. */
int ghmi_voxel_contact(const GhmVoxelGrid *g, GhmiSide *s, const GhmiSide *o, int threads);

/* Barrier labels, the ring next to the barrier and its seeds (labels.c). */
int ghmi_voxel_classify(const GhmVoxelGrid *g, GhmiSide *s, const GhmVoxelOptions *opt,
                        int threads);

/* The fill with its conflict rounds; *rounds = the larger of itself and the rounds run. */
int ghmi_voxel_fill(GhmiSide *s, const GhmVoxelOptions *opt, int threads, int *rounds);

/* Loops shorter than this run on one thread: a parallel region costs a few microseconds on an
 * idle machine but up to a scheduler time slice when the cores are shared. */
enum { GHMI_PARALLEL_MIN = 16384 };

#endif /* GHM_VOXEL_CPU_INTERNAL_H */
