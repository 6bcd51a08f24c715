/*
 * bench_hash_args.c - the options of `geohash-match bench hash` (bench_hash_args.h): --help and
 * their parsing, apart from the measurements (bench_hash.c).
 */
#include <stdio.h>
#include <string.h>

#include "bench_hash_args.h"
#include "ghm_map.h"

enum {
    OPT_MIN_LOG2 = GHM_OPT_FIRST_COMMAND,
    OPT_MAX_LOG2,
    OPT_JSON_OUT,
    OPT_QUICK,
    OPT_REPS,
    OPT_SCHEME
};

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    {"min-log2", required_argument, NULL, OPT_MIN_LOG2},
    {"max-log2", required_argument, NULL, OPT_MAX_LOG2},
    {"json-out", required_argument, NULL, OPT_JSON_OUT},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"reps", required_argument, NULL, OPT_REPS},
    {"scheme", required_argument, NULL, OPT_SCHEME},
    {NULL, 0, NULL, 0}};

void ghm_bench_hash_help(void)
{
    printf("Usage: geohash-match bench hash [OPTIONS]\n\n"
           "Insert and find rates of the hash tables (GhmMap in every scheme, GhmMultimap,\n"
           "GhmIndex) against sort + binary search (GhmSorted), measured in one run.\n"
           "  --scheme NAME      the GhmMap scheme: cuckoo (both layouts), linear, quadratic,\n"
           "                     double, robin-hood, robin-hood-random, chaining,\n"
           "                     two-level, or all (default)\n"
           "  --min-log2 K       smallest table, 2^K keys (default 16)\n"
           "  --max-log2 K       largest table, 2^K keys (default 26 on CUDA, 22 on the CPU)\n"
           "  --reps N           runs per measurement, the best is kept (default 3)\n"
           "  --quick            2^16 .. 2^18 keys, one run each (a smoke test)\n"
           "  --json-out FILE    also write the measurements as JSON (scripts/plot_hash.py)\n"
           "  --backend, --threads, --seed as everywhere\n");
}

int ghm_bench_hash_args(int argc, char **argv, HashArgs *a)
{
    *a = (HashArgs){.common = ghm_cli_common_defaults(), .min_log2 = 16, .reps = 3, .scheme = -1};
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used < 0)
            return -1;
        if (used > 0)
            continue;
        if (id == OPT_MIN_LOG2) {
            if (ghm_cli_parse_long("--min-log2", optarg, 1, 30, &a->min_log2) < 0)
                return -1;
        } else if (id == OPT_MAX_LOG2) {
            if (ghm_cli_parse_long("--max-log2", optarg, 1, 30, &a->max_log2) < 0)
                return -1;
        } else if (id == OPT_REPS) {
            if (ghm_cli_parse_long("--reps", optarg, 1, 100, &a->reps) < 0)
                return -1;
        } else if (id == OPT_SCHEME) {
            a->scheme = strcmp(optarg, "all") == 0 ? -1 : ghm_map_scheme_from_name(optarg);
            if (a->scheme < 0 && strcmp(optarg, "all") != 0) {
                ghm_cli_error("bench hash", "--scheme '%s' is not one of cuckoo, linear, "
                              "quadratic, double, robin-hood, robin-hood-random, chaining, two-level, all",
                              optarg);
                return -1;
            }
        } else if (id == OPT_QUICK)
            a->quick = 1;
        else if (id == OPT_JSON_OUT)
            a->json_out = optarg;
        else {
            ghm_cli_usage_hint("bench hash");
            return -1;
        }
    }
    if (optind != argc) {
        ghm_cli_error("bench hash", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}
