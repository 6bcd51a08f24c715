/*
 * ranks_mpi.c - the MPI calls of an MPI run (ranks_mpi.h), built as the module
 * geohash-match-mpi.so, which ranks.c loads where an MPI launcher started the process. Not part
 * of the program itself (CMakeLists.txt keeps it out of src/'s sources).
 */
#include "ranks_mpi.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static int size = 1, rank;

/* --- MPI started beside the command --------------------------------------------------------
 * MPI_Init took 0.24 s on 2 x H200 (OpenMPI 4.1, its default transports), before the command
 * could start CUDA (0.45 s) and read its inputs; a launcher that says where a process stands
 * (OpenMPI's and MPICH's do) lets MPI start on a thread of its own while the command goes on.
 * That thread initializes MPI and, as the standard asks, finalizes it; the command's calls come
 * from the main thread, one at a time (MPI_THREAD_SERIALIZED), after ranks_up(). */

static pthread_t mpi_thread;
static pthread_mutex_t mpi_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mpi_cond = PTHREAD_COND_INITIALIZER;
static enum { MPI_NONE, MPI_STARTING, MPI_UP, MPI_ENDING } mpi_state;
static int mpi_threaded; /* MPI was started on mpi_thread */
static char mpi_problem[160]; /* why the started MPI cannot serve (set on mpi_thread) */

/* The first of the variables that holds a number >= 0, or -1. */
static int env_number(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        char *end;
        long x = v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && x >= 0 && x <= INT_MAX)
            return (int)x;
    }
    return -1;
}

static void *mpi_main(void *arg)
{
    (void)arg;
    int provided = 0, r = -1, n = -1;
    if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
        snprintf(mpi_problem, sizeof mpi_problem, "MPI could not start");
    else if (MPI_Comm_rank(MPI_COMM_WORLD, &r), MPI_Comm_size(MPI_COMM_WORLD, &n),
             provided < MPI_THREAD_SERIALIZED)
        snprintf(mpi_problem, sizeof mpi_problem, "this MPI library does not take calls from "
                 "a second thread (MPI_THREAD_SERIALIZED)");
    else if (r != rank || n != size)
        snprintf(mpi_problem, sizeof mpi_problem, "MPI says rank %d of %d where the launcher "
                 "said %d of %d", r, n, rank, size);
    pthread_mutex_lock(&mpi_lock);
    mpi_state = MPI_UP;
    pthread_cond_broadcast(&mpi_cond);
    while (mpi_state != MPI_ENDING)
        pthread_cond_wait(&mpi_cond, &mpi_lock);
    pthread_mutex_unlock(&mpi_lock);
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized)
        MPI_Finalize();
    return NULL;
}

/* Waits for MPI started on its thread; a process whose MPI cannot serve the run stops with one
 * line (every rank alike: the same library and launcher). */
static void ranks_up(void)
{
    if (!mpi_threaded)
        return;
    pthread_mutex_lock(&mpi_lock);
    while (mpi_state == MPI_STARTING)
        pthread_cond_wait(&mpi_cond, &mpi_lock);
    pthread_mutex_unlock(&mpi_lock);
    if (mpi_problem[0]) {
        fprintf(stderr, "%s: %s\n", GHM_PROGRAM, mpi_problem);
        exit(GHM_EXIT_ERROR);
    }
}

/* Where the launcher's variables say it all, MPI starts on its thread: 1; else 0. */
static int start_beside(GhmRanksWhere *w)
{
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
    static const char *const size_vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
    static const char *const local_rank_vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                                  NULL};
    static const char *const local_size_vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                                  NULL};
    int r = env_number(rank_vars), n = env_number(size_vars);
    int lr = env_number(local_rank_vars), ln = env_number(local_size_vars);
    if (r < 0 || n < 1 || r >= n || lr < 0 || ln < 1 || lr >= ln)
        return 0;
    rank = r, size = n;
    mpi_state = MPI_STARTING;
    if (pthread_create(&mpi_thread, NULL, mpi_main, NULL) != 0) {
        mpi_state = MPI_NONE, rank = 0, size = 1;
        return 0;
    }
    mpi_threaded = 1;
    *w = (GhmRanksWhere){r, n, lr, ln};
    return 1;
}

static int join(int *argc, char ***argv, GhmRanksWhere *w)
{
    if (start_beside(w))
        return 1;
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    *w = (GhmRanksWhere){rank, size, 0, 1};
    MPI_Comm here;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &here) ==
        MPI_SUCCESS) {
        MPI_Comm_rank(here, &w->local_rank);
        MPI_Comm_size(here, &w->local_size);
        MPI_Comm_free(&here);
    }
    return 1;
}

static void leave(void)
{
    if (!mpi_threaded) {
        MPI_Finalize();
        return;
    }
    ranks_up();
    pthread_mutex_lock(&mpi_lock);
    mpi_state = MPI_ENDING;
    pthread_cond_broadcast(&mpi_cond);
    pthread_mutex_unlock(&mpi_lock);
    pthread_join(mpi_thread, NULL);
    mpi_threaded = 0;
}

static int max_int(int mine)
{
    ranks_up();
    int top = 0;
    return MPI_Allreduce(&mine, &top, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS ? top
                                                                                          : -1;
}

/* The text goes in pieces: MPI counts are ints, and rank 0 writes each piece as it comes. */
#define PIECE ((size_t)1 << 20)

static int gather_text(const char *text, size_t len, FILE *out)
{
    ranks_up();
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

static void gather_doubles(const double *mine, int n, double *all)
{
    ranks_up();
    MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static void all_gather_doubles(const double *mine, int n, double *all)
{
    ranks_up();
    MPI_Allgather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, MPI_COMM_WORLD);
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

/* In pieces: MPI counts are ints. */
static int dist_broadcast(void *user, void *buf, size_t bytes, int root)
{
    enum { BCAST_PIECE = 1 << 30 };
    (void)user;
    for (size_t at = 0; at < bytes; at += BCAST_PIECE) {
        size_t k = bytes - at < BCAST_PIECE ? bytes - at : BCAST_PIECE;
        if (MPI_Bcast((char *)buf + at, (int)k, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
            return -1;
    }
    return 0;
}

static void dist(GhmDistRanks *out)
{
    ranks_up();
    *out = (GhmDistRanks){rank, size, NULL, dist_all_to_all, dist_all_to_all_v, dist_broadcast};
}

static void barrier(void)
{
    ranks_up();
    MPI_Barrier(MPI_COMM_WORLD);
}

__attribute__((visibility("default"))) const GhmRanksMpi *ghm_ranks_mpi(void)
{
    static const GhmRanksMpi table = {join, leave, max_int, gather_text, gather_doubles,
                                      all_gather_doubles, dist, barrier};
    return &table;
}
