/*
 * ranks.h - one run spread over several processes started by an MPI launcher (`mpirun -n R
 * geohash-match ...`, on one machine or several): which rank this process is, and the few host
 * messages the video mode exchanges (the ranks' output lines, their counts, the exit status).
 * In a build without MPI (GEOHASH_MPI=OFF), or in a process no MPI launcher started, there is
 * one rank and every call is trivial. ranks.c is the only file that knows whether MPI was
 * compiled in.
 *
 * What is split: the frames of one video file (ranges of the selected frames, one per rank;
 * cmd_video.c), the steps of a voxel sweep (ranges of steps, both clouds read by every rank,
 * the grid's fit over the poses dealt; cmd_voxel.c, voxel_ranks.c), and the keys of
 * `bench distmap` (a map with one part per rank). Any other run (images, several queries, a
 * video on standard input, one voxel step, a voxel edit, other benchmarks) is rank 0's alone;
 * the other ranks take no part and exit with rank 0's status.
 */
#ifndef GHM_RANKS_H
#define GHM_RANKS_H

#include <stddef.h>
#include <stdio.h>

#include "ghm_dist_map.h"

/* A command's status on a rank that took no part in the run (not a process exit status). */
#define GHM_EXIT_SKIPPED (-1)

/* Joins the MPI job when an MPI launcher started this process; call first in main(). */
void ghm_ranks_init(int *argc, char ***argv);

/* Leaves the MPI job (if joined); call last in main(). */
void ghm_ranks_finalize(void);

int ghm_ranks_size(void); /* ranks in the run, >= 1 */
int ghm_ranks_built_in(void); /* 1 when this program was built with MPI */
int ghm_ranks_rank(void); /* this process's rank, 0 .. size - 1 */

/* This rank among the ranks of its machine (which GPU it takes). */
int ghm_ranks_local_rank(void);

/* The run's exit status, the same on every rank: 2 if any rank failed, else 0 if any found a
 * match, else 1; ranks that took part decide (GHM_EXIT_SKIPPED counts for nothing). */
int ghm_ranks_agree(int status);

/* Rank 0 writes to out (NULL: drops), after its own output, the bytes of ranks 1, 2, ... in rank
 * order; every other rank sends its `len` bytes at `text`. Every rank calls it. 0, or -1 on rank 0 when out
 * could not be written (every rank's bytes are still received, so no rank waits). */
int ghm_ranks_gather_text(const char *text, size_t len, FILE *out);

/* Rank 0 receives every rank's n values into all[rank * n + i] (all: size * n values; other
 * ranks may pass NULL). Every rank calls it. */
void ghm_ranks_gather_doubles(const double *mine, int n, double *all);

/* The ranks' host messages for a map split over them (ghm_dist_map_create_ranked): every rank
 * of the run takes part. 0, or -1 where this process is not one of several MPI ranks. */
int ghm_ranks_dist(GhmDistRanks *out);

/* Every rank receives every rank's n values into all[rank * n + i] (size * n values). */
void ghm_ranks_all_gather_doubles(const double *mine, int n, double *all);

/* Waits until every rank has come here (a run's timed steps start together). */
void ghm_ranks_barrier(void);

#endif /* GHM_RANKS_H */
