/*
 * ranks.c - the ranks of an MPI run (ranks.h). GHM_HAVE_MPI is defined for this file when the
 * program links MPI (CMake's GEOHASH_MPI). A process joins the MPI job only when an MPI
 * launcher started it (its environment says so), so a plain `geohash-match ...` never pays for
 * MPI's start-up and needs no launcher.
 */
#include "ranks.h"

#include <limits.h>
#include <stdlib.h>

#include "cli.h"

#ifndef GHM_HAVE_MPI
#define GHM_HAVE_MPI 0
#endif

#if GHM_HAVE_MPI
#include <mpi.h>
#include <omp.h>

static int joined, size = 1, rank, local_rank;

/* OpenMPI, MPICH / Hydra, PMIx-based launchers (Slurm's srun included) set one of these. */
static int launched_by_mpi(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

/* Ranks on one machine share its cores: each takes its share as the default of its OpenMP
 * threads (reading and parsing clouds, the grid fit, the CPU backend), unless the user set
 * OMP_NUM_THREADS (--threads still sets a context's). With every rank taking every core, the
 * threads of two ranks contended for the machine: on 2 x H200 two ranks' 100-step sweep of
 * 2 x 10M points ran at 0.62-0.67x of one process's --gpus 2, with a share each 0.73-0.82x
 * (docs/BENCHMARKS.md). */
static void share_cores(int local_size)
{
    if (local_size > 1 && !getenv("OMP_NUM_THREADS")) {
        int share = omp_get_num_procs() / local_size;
        omp_set_num_threads(share > 1 ? share : 1);
    }
}

void ghm_ranks_init(int *argc, char ***argv)
{
    if (!launched_by_mpi() || MPI_Init(argc, argv) != MPI_SUCCESS)
        return;
    joined = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm here;
    int local_size = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &here) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(here, &local_rank);
        MPI_Comm_size(here, &local_size);
        MPI_Comm_free(&here);
    }
    share_cores(local_size);
}

void ghm_ranks_finalize(void)
{
    if (joined)
        MPI_Finalize();
    joined = 0;
}

/* Priorities of the statuses: an error beats a match beats no match beats no part taken. */
static int priority(int status)
{
    return status == GHM_EXIT_ERROR ? 3 : status == GHM_EXIT_FOUND ? 2
                                      : status == GHM_EXIT_NOT_FOUND ? 1 : 0;
}

int ghm_ranks_agree(int status)
{
    if (!joined || size == 1)
        return status == GHM_EXIT_SKIPPED ? GHM_EXIT_NOT_FOUND : status;
    int mine = priority(status), top = 0;
    if (MPI_Allreduce(&mine, &top, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return GHM_EXIT_ERROR;
    return top == 3 ? GHM_EXIT_ERROR : top == 2 ? GHM_EXIT_FOUND : GHM_EXIT_NOT_FOUND;
}

/* The text goes in pieces: MPI counts are ints, and rank 0 writes each piece as it comes. */
#define PIECE ((size_t)1 << 20)

int ghm_ranks_gather_text(const char *text, size_t len, FILE *out)
{
    if (!joined || size == 1)
        return 0;
    if (rank > 0) {
        unsigned long long n = len;
        MPI_Send(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, 1, MPI_COMM_WORLD);
        for (size_t at = 0; at < len; at += PIECE)
            MPI_Send(text + at, (int)(len - at < PIECE ? len - at : PIECE), MPI_CHAR, 0, 2,
                     MPI_COMM_WORLD);
        return 0;
    }
    static char piece[PIECE];
    int ret = 0;
    for (int r = 1; r < size; r++) {
        unsigned long long n = 0;
        MPI_Recv(&n, 1, MPI_UNSIGNED_LONG_LONG, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (size_t at = 0; at < n; at += PIECE) { /* every piece is received, even after an error */
            size_t k = n - at < PIECE ? (size_t)(n - at) : PIECE;
            MPI_Recv(piece, (int)k, MPI_CHAR, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (ret == 0 && out && fwrite(piece, 1, k, out) != k)
                ret = -1;
        }
    }
    return !out || fflush(out) == 0 ? ret : -1;
}

void ghm_ranks_gather_doubles(const double *mine, int n, double *all)
{
    if (!joined || size == 1) {
        for (int i = 0; all && i < n; i++)
            all[i] = mine[i];
        return;
    }
    MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

void ghm_ranks_all_gather_doubles(const double *mine, int n, double *all)
{
    if (!joined || size == 1) {
        for (int i = 0; i < n; i++)
            all[i] = mine[i];
        return;
    }
    MPI_Allgather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, MPI_COMM_WORLD);
}

int ghm_ranks_all_ok(int ok)
{
    int all = 0;
    if (!joined || size == 1)
        return ok != 0;
    return MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS && all;
}

int ghm_ranks_broadcast(void *buf, size_t bytes, int root)
{
    enum { BCAST_PIECE = 1 << 30 }; /* MPI counts are ints */
    if (!joined || size == 1)
        return 0;
    for (size_t at = 0; at < bytes; at += BCAST_PIECE) {
        size_t k = bytes - at < BCAST_PIECE ? bytes - at : BCAST_PIECE;
        if (MPI_Bcast((char *)buf + at, (int)k, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

/* MPI counts and displacements are ints: the words of one exchange must fit them, on every
 * rank (checked together, so that no rank waits for one that gave up). */
static int fits_int(const size_t *n, const size_t *at)
{
    int ok = 1, all = 0;
    for (int q = 0; q < size; q++)
        ok &= n[q] <= INT_MAX && at[q] <= INT_MAX && at[q] + n[q] <= (size_t)INT_MAX;
    return MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) == MPI_SUCCESS && all;
}

static int dist_all_to_all(void *user, const uint64_t *send, uint64_t *recv)
{
    (void)user;
    return MPI_Alltoall(send, 1, MPI_UINT64_T, recv, 1, MPI_UINT64_T, MPI_COMM_WORLD) ==
                   MPI_SUCCESS
               ? 0
               : -1;
}

static int dist_all_to_all_v(void *user, const uint32_t *send, const size_t *send_n,
                             const size_t *send_at, uint32_t *recv, const size_t *recv_n,
                             const size_t *recv_at)
{
    (void)user;
    int sn[GHM_DIST_MAP_MAX_PARTS], sa[GHM_DIST_MAP_MAX_PARTS];
    int rn[GHM_DIST_MAP_MAX_PARTS], ra[GHM_DIST_MAP_MAX_PARTS];
    int send_ok = fits_int(send_n, send_at), recv_ok = fits_int(recv_n, recv_at);
    if (!send_ok || !recv_ok)
        return -1;
    for (int q = 0; q < size; q++) {
        sn[q] = (int)send_n[q], sa[q] = (int)send_at[q];
        rn[q] = (int)recv_n[q], ra[q] = (int)recv_at[q];
    }
    return MPI_Alltoallv(send, sn, sa, MPI_UINT32_T, recv, rn, ra, MPI_UINT32_T,
                         MPI_COMM_WORLD) == MPI_SUCCESS
               ? 0
               : -1;
}

static int dist_broadcast(void *user, void *buf, size_t bytes, int root)
{
    (void)user;
    return ghm_ranks_broadcast(buf, bytes, root);
}

int ghm_ranks_dist(GhmDistRanks *out)
{
    if (!joined || size < 2 || size > GHM_DIST_MAP_MAX_PARTS)
        return -1;
    *out = (GhmDistRanks){rank, size, NULL, dist_all_to_all, dist_all_to_all_v, dist_broadcast};
    return 0;
}

void ghm_ranks_barrier(void)
{
    if (joined)
        MPI_Barrier(MPI_COMM_WORLD);
}

#else /* a build without MPI: one rank */

int ghm_ranks_dist(GhmDistRanks *out)
{
    (void)out;
    return -1;
}
void ghm_ranks_barrier(void) {}

void ghm_ranks_init(int *argc, char ***argv) { (void)argc, (void)argv; }
void ghm_ranks_finalize(void) {}
int ghm_ranks_agree(int status)
{
    return status == GHM_EXIT_SKIPPED ? GHM_EXIT_NOT_FOUND : status;
}
int ghm_ranks_gather_text(const char *text, size_t len, FILE *out)
{
    (void)text, (void)len, (void)out;
    return 0;
}
void ghm_ranks_gather_doubles(const double *mine, int n, double *all)
{
    for (int i = 0; all && i < n; i++)
        all[i] = mine[i];
}
void ghm_ranks_all_gather_doubles(const double *mine, int n, double *all)
{
    for (int i = 0; i < n; i++)
        all[i] = mine[i];
}
int ghm_ranks_all_ok(int ok) { return ok != 0; }
int ghm_ranks_broadcast(void *buf, size_t bytes, int root)
{
    (void)buf, (void)bytes, (void)root;
    return 0;
}
static const int size = 1, rank = 0, local_rank = 0;

#endif

int ghm_ranks_size(void) { return size; }
int ghm_ranks_built_in(void) { return GHM_HAVE_MPI; }
int ghm_ranks_rank(void) { return rank; }
int ghm_ranks_local_rank(void) { return local_rank; }
