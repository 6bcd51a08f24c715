/*
 * bench_hash_args.h - the options of `geohash-match bench hash` (bench_hash_args.c), which
 * bench_hash.c measures with.
 */
#ifndef GHM_BENCH_HASH_ARGS_H
#define GHM_BENCH_HASH_ARGS_H

#include "cli.h"

typedef struct HashArgs {
    GhmCommonOptions common;
    long min_log2, max_log2; /* max_log2 0 = backend default */
    long reps;
    int quick;
    int scheme; /* a GhmMapScheme, or -1: all */
    const char *json_out;
} HashArgs;

/* Prints `bench hash --help`. */
void ghm_bench_hash_help(void);

/* Parses argv (argv[0] is "hash") into *a; -1 after printing the error line. */
int ghm_bench_hash_args(int argc, char **argv, HashArgs *a);

#endif /* GHM_BENCH_HASH_ARGS_H */
