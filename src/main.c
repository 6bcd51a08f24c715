/*
 * main.c - entry point: installs the process-wide handlers that belong to the program, not the
 * library (SIGINT and SIGTERM, FFmpeg's log callback), joins the MPI job when mpirun started
 * it (ranks.h), picks the sub-command from the first argument and turns its GHM_EXIT_* status
 * into the process exit status, the same on every rank. The only file that calls exit(), but
 * for the stop of a process whose MPI cannot serve the run (ranks.c, ranks_mpi.c).
 */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "ghm_context.h"
#include "ghm_file_io.h"
#include "ghm_log.h"
#include "ranks.h"

/* Ctrl-C or kill in the middle of writing an output: the unfinished temporary file goes, then
 * the signal ends the process as it would have (same exit status for the shell). Only
 * async-signal-safe calls: the unit's unlink walk and raise(). */
static void on_terminate(int sig)
{
    ghm_file_remove_temporaries();
    raise(sig); /* SA_RESETHAND restored the default action */
}

static void install_signal_handlers(void)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_terminate;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* A signal ignored by whoever started us (nohup, a background job) stays ignored. */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* The library's diagnostics (which CUDA call failed, where) go to stderr as they always did. */
static void log_to_stderr(void *user, GhmLogLevel level, const char *message)
{
    (void)user, (void)level;
    fprintf(stderr, "%s\n", message);
}

static int run_command(int argc, char **argv)
{
    /* bench runs are rank 0's alone, but for the benchmark of the split map; voxel runs too,
     * but for sweeps (cmd_voxel.c decides) */
    int other_rank = ghm_ranks_rank() > 0;
    if (argc >= 2 && strcmp(argv[1], "voxel") == 0) {
        ghm_cli_name_command(argv + 1, "voxel");
        return ghm_cmd_voxel(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "bench") == 0) {
        int every_rank = argc >= 3 && strcmp(argv[2], "distmap") == 0;
        return other_rank && !every_rank ? GHM_EXIT_SKIPPED : ghm_cmd_bench(argc - 1, argv + 1);
    }
    if (argc >= 2 && strcmp(argv[1], "match") == 0) {
        ghm_cli_name_command(argv + 1, "match");
        return ghm_cmd_match(argc - 1, argv + 1);
    }
    ghm_cli_name_command(argv, "");
    return ghm_cmd_match(argc, argv);
}

/* Results that never reached standard output (a full disk, a file system gone) make the run
 * fail, as GNU tools' close_stdout does: a script must not take a lost answer for "not found"
 * or for success. A run that failed already has said why in its one line (the commands that
 * check their own writes say so as this does: ghm_cli_stdout_error). */
static int check_stdout(int status)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return status;
    if (status == GHM_EXIT_ERROR)
        return status;
    ghm_cli_stdout_error(errno);
    return GHM_EXIT_ERROR;
}

/* OpenMP's idle threads sleep at once instead of spinning, unless the user chose a policy.
 * libgomp spins by default, and two processes on the same cores (two shells, xargs -P) then
 * spend their time spinning for threads that the other process has descheduled: on a 2-core
 * machine a CPU image pair took 1.1-1.3 s beside another instead of 0.05 s alone, 0.07 s with
 * passive waits, which cost nothing measurable alone (docs/BENCHMARKS.md). Returns 1 when it
 * set the policy. */
static int choose_passive_waits(void)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return 0;
    return setenv("OMP_WAIT_POLICY", "passive", 1) == 0;
}

#ifdef GHM_STATIC_OPENMP
/* The runtime is linked into the program (CMakeLists.txt, GEOHASH_STATIC_OPENMP) and reads the
 * policy in a constructor of default priority; this one runs before it, and after libc has set
 * up the environment (a .preinit_array function's setenv is undone by libc's start-up). */
__attribute__((constructor(101))) static void wait_passively_early(void)
{
    choose_passive_waits();
}

static void wait_passively(char **argv)
{
    (void)argv;
}
#else
/* The shared runtime reads the policy when it loads, before any of the program's code, so the
 * program runs itself again with it set; where that cannot be done it goes on as it is. */
static void wait_passively(char **argv)
{
    if (choose_passive_waits())
        execv("/proc/self/exe", argv);
}
#endif

/* Freed memory stays with the process for its next allocations. glibc maps each block from
 * 128 KiB (a threshold it raises as such blocks are freed) and unmaps it on free, so the next
 * one faults its pages in again: a one-shot image pair on the CPU took ~5900 page faults for a
 * 21 MB peak. With blocks under 64 MiB taken from the heap and the heap given back past 256 MiB
 * free, ~4000, and 8 % less time on 2 cores (docs/BENCHMARKS.md). Larger blocks (a large
 * cloud's arrays) are still mapped and unmapped. */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

/* The heap's first 60 MiB in huge pages. Even with freed memory kept, a fresh process faults
 * in every 4 KiB page it first touches: ~6900 faults for a one-shot image pair on the CPU (a
 * 34 MB peak), ~10 % of its time on 2 cores. The heap is grown by one block, freed at once
 * (it stays as the heap's top, under the trim threshold), and advised to be backed by 2 MiB
 * pages where the kernel has transparent huge pages: ~800 faults, the pair 12 % faster
 * (docs/BENCHMARKS.md). glibc's own `glibc.malloc.hugetlb=1` does the same but is read from
 * the environment before the program starts. Nothing is touched, so memory that is never used
 * is never resident; where the heap cannot grow or the kernel declines, nothing changes. Not
 * under the sanitizers, whose allocators are not the heap's (and would mark the block). */
static void heap_in_huge_pages(void)
{
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    const uintptr_t huge = 2u << 20; /* x86-64's and AArch64's (4 KiB pages) huge page */
    uintptr_t start = (uintptr_t)sbrk(0);
    void *volatile block = malloc(60u << 20); /* volatile: the pair is not optimised away */
    free(block);
    uintptr_t lo = (start + huge - 1) & ~(huge - 1), hi = (uintptr_t)sbrk(0) & ~(huge - 1);
    if (start != (uintptr_t)-1 && hi > lo)
        (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* advice: failure changes nothing */
#endif
}

int main(int argc, char **argv)
{
    wait_passively(argv);
    keep_freed_memory();
    heap_in_huge_pages();
    ghm_ranks_init(&argc, &argv);
    install_signal_handlers();
    ghm_log_set_callback(log_to_stderr, NULL);
    ghm_cli_install_ffmpeg_log();
    int status = check_stdout(run_command(argc, argv));
    ghm_context_prestart_wait(); /* a command that failed early may have left CUDA starting */
    status = ghm_ranks_agree(status);
    ghm_ranks_finalize();
    return status;
}
