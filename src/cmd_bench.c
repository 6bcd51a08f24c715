/*
 * cmd_bench.c - `geohash-match bench WHAT [OPTIONS]`: picks one of the built-in benchmarks.
 * Each benchmark lives in src/bench_<what>.c and prints a table and, with --json-out FILE,
 * writes its measurements as JSON for scripts/plot_*.py.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli.h"

typedef struct BenchEntry {
    const char *name;
    const char *what;
    int (*run)(int argc, char **argv);
} BenchEntry;

static const BenchEntry benches[] = {
    {"hash", "hash tables vs sort + binary search", ghm_bench_hash},
    {"match", "image matching per query, by stage (reference tables built)", ghm_bench_match},
    {"video", "video decoding, matching and both together (frames/s)", ghm_bench_video},
    {"voxel", "voxel Boolean intersection, time per step", ghm_bench_voxel},
    {"dynmap", "dynamic slab-list table: fill, search, insert (paper 6.1)", ghm_bench_dynmap},
    {"distmap", "a map split over several GPUs (or contexts) against one", ghm_bench_distmap},
    {"tables", "every map scheme on the voxel pipeline's key sets", ghm_bench_tables},
    {NULL, NULL, NULL},
};

static void print_help(void)
{
    printf("Usage: geohash-match bench WHAT [OPTIONS]\n\nWHAT is one of:\n");
    for (const BenchEntry *b = benches; b->name; b++)
        printf("  %-8s %s\n", b->name, b->what);
    printf("\nEach takes --backend, --threads, --seed and --json-out FILE; "
           "'geohash-match bench WHAT --help' lists the rest.\n");
}

int ghm_cmd_bench(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        print_help();
        return argc < 2 ? GHM_EXIT_ERROR : GHM_EXIT_FOUND;
    }
    for (const BenchEntry *b = benches; b->name; b++)
        if (strcmp(argv[1], b->name) == 0) {
            char words[32];
            snprintf(words, sizeof words, "bench %s", b->name);
            ghm_cli_name_command(argv + 1, words);
            return b->run(argc - 1, argv + 1);
        }
    ghm_cli_error("bench", "unknown benchmark '%s'", argv[1]);
    ghm_cli_usage_hint("bench");
    return GHM_EXIT_ERROR;
}
