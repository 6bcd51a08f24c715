/*
 * ranks.c - the ranks of an MPI run (ranks.h). GHM_HAVE_MPI is defined for this file when the
 * build made the MPI module (CMake's GEOHASH_MPI): geohash-match-mpi.so, the MPI calls
 * (ranks_mpi.c), which only a process that an MPI launcher started loads (its environment says
 * so). A plain `geohash-match ...` never loads MPI's libraries nor pays for MPI's start-up, and
 * needs no launcher.
 */
#include "ranks.h"

#include <stdlib.h>

#include "cli.h"
#include "ranks_mpi.h"

#ifndef GHM_HAVE_MPI
#define GHM_HAVE_MPI 0
#endif

#if GHM_HAVE_MPI
#include <dlfcn.h>
#include <limits.h>
#include <omp.h>
#include <string.h>
#include <unistd.h>
#endif

static const GhmRanksMpi *mpi; /* the module's calls, once this process joined a job */
static int size = 1, rank, local_rank;

#if GHM_HAVE_MPI
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

/* The module beside the program (the build tree), then where the install put it
 * (GHM_MPI_MODULE_DIR, relative to the program's folder); NULL with *why set where neither
 * loads. */
static void *open_module(const char **why)
{
    char exe[PATH_MAX], path[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    *why = "the program's own path is unknown (/proc/self/exe)";
    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    static const char *const dirs[] = {".", GHM_MPI_MODULE_DIR};
    void *h = NULL;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0] && !h; i++) {
        snprintf(path, sizeof path, "%s/%s/" GHM_MPI_MODULE, exe, dirs[i]);
        h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            *why = dlerror();
    }
    return h;
}

/* The module's calls; a process that a launcher started but that cannot load them stops with
 * one line: going on as a lone rank, every rank would do the whole run. The module stays
 * loaded for the process's life (no dlclose): MPI does not promise that its libraries can be
 * unloaded after MPI_Finalize, and the process ends soon after. */
static const GhmRanksMpi *load_module(void)
{
    const char *why;
    void *h = open_module(&why);
    GhmRanksMpi const *(*entry)(void) = NULL;
    if (h) {
        *(void **)&entry = dlsym(h, GHM_RANKS_MPI_ENTRY);
        why = entry ? NULL : dlerror();
    }
    if (!entry) {
        fprintf(stderr, "%s: started by an MPI launcher, but its MPI module " GHM_MPI_MODULE
                " could not be loaded: %s\n", GHM_PROGRAM, why ? why : "no entry");
        exit(GHM_EXIT_ERROR);
    }
    return entry();
}

void ghm_ranks_init(int *argc, char ***argv)
{
    if (!launched_by_mpi())
        return;
    const GhmRanksMpi *m = load_module();
    GhmRanksWhere w;
    if (!m->join(argc, argv, &w))
        return;
    mpi = m;
    rank = w.rank, size = w.size, local_rank = w.local_rank;
    share_cores(w.local_size);
}
#else
void ghm_ranks_init(int *argc, char ***argv) { (void)argc, (void)argv; }
#endif

void ghm_ranks_finalize(void)
{
    if (mpi)
        mpi->leave();
    mpi = NULL;
}

/* Priorities of the statuses: an error beats a match beats no match beats no part taken. */
static int priority(int status)
{
    return status == GHM_EXIT_ERROR ? 3 : status == GHM_EXIT_FOUND ? 2
                                      : status == GHM_EXIT_NOT_FOUND ? 1 : 0;
}

int ghm_ranks_agree(int status)
{
    if (!mpi || size == 1)
        return status == GHM_EXIT_SKIPPED ? GHM_EXIT_NOT_FOUND : status;
    int top = mpi->max_int(priority(status));
    return top == 3 || top < 0 ? GHM_EXIT_ERROR : top == 2 ? GHM_EXIT_FOUND : GHM_EXIT_NOT_FOUND;
}

int ghm_ranks_gather_text(const char *text, size_t len, FILE *out)
{
    return mpi && size > 1 ? mpi->gather_text(text, len, out) : 0;
}

void ghm_ranks_gather_doubles(const double *mine, int n, double *all)
{
    if (mpi && size > 1)
        mpi->gather_doubles(mine, n, all);
    else
        for (int i = 0; all && i < n; i++)
            all[i] = mine[i];
}

void ghm_ranks_all_gather_doubles(const double *mine, int n, double *all)
{
    if (mpi && size > 1)
        mpi->all_gather_doubles(mine, n, all);
    else
        for (int i = 0; i < n; i++)
            all[i] = mine[i];
}

int ghm_ranks_dist(GhmDistRanks *out)
{
    if (!mpi || size < 2 || size > GHM_DIST_MAP_MAX_PARTS)
        return -1;
    mpi->dist(out);
    return 0;
}

void ghm_ranks_barrier(void)
{
    if (mpi)
        mpi->barrier();
}

int ghm_ranks_size(void) { return size; }
int ghm_ranks_built_in(void) { return GHM_HAVE_MPI; }
int ghm_ranks_rank(void) { return rank; }
int ghm_ranks_local_rank(void) { return local_rank; }
