/*
 * ranks_mpi.h - the MPI side of ranks.c, built as a module of its own (geohash-match-mpi.so,
 * the only object that links MPI) which ranks.c loads only when an MPI launcher started the
 * process. Linked into the program, OpenMPI's libraries (libmpi and seven it needs) were loaded
 * and started by every process, MPI or not: 4.8-5.8 ms of each start on a 2-core machine,
 * about a tenth of a one-shot image pair (docs/BENCHMARKS.md).
 *
 * The module exports one function, GHM_RANKS_MPI_ENTRY, which returns its table. Every entry but
 * join is called only after join returned 1, from the main thread. A failed MPI call is the
 * run's to report: agree and the gathers return what ranks.h says.
 */
#ifndef GHM_RANKS_MPI_H
#define GHM_RANKS_MPI_H

#include <stddef.h>
#include <stdio.h>

#include "ghm_dist_map.h"

/* Where a process stands in the run. */
typedef struct GhmRanksWhere {
    int rank, size;             /* in the run */
    int local_rank, local_size; /* among the ranks of its machine */
} GhmRanksWhere;

typedef struct GhmRanksMpi {
    /* Joins the job: 1 with *where filled; 0 where MPI could not start (the process is then
     * one rank alone, as where no launcher started it). */
    int (*join)(int *argc, char ***argv, GhmRanksWhere *where);
    void (*leave)(void);
    /* The highest of every rank's value; -1 where MPI failed. */
    int (*max_int)(int mine);
    int (*gather_text)(const char *text, size_t len, FILE *out);
    void (*gather_doubles)(const double *mine, int n, double *all);
    void (*all_gather_doubles)(const double *mine, int n, double *all);
    void (*dist)(GhmDistRanks *out); /* the run's host messages for a split map */
    void (*barrier)(void);
} GhmRanksMpi;

/* The module's one export, looked up by this name. */
#define GHM_RANKS_MPI_ENTRY "ghm_ranks_mpi"
const GhmRanksMpi *ghm_ranks_mpi(void);

#endif /* GHM_RANKS_MPI_H */
