/*
 * bench_distmap.c - `geohash-match bench distmap`: a GhmDistMap split over several contexts
 * (CUDA: one per GPU, --gpus) against one GhmMap in the first context, on the same 2^K unique
 * random keys in the same run: build, find of every key (present) and of as many keys never
 * stored (absent), in G keys/s, best of --reps. The shards start in their contexts' memory
 * (uploaded outside the clock), as WarpDrive measures; the one map gets all keys in its own.
 * Every answer of the first rep is checked (a benchmark that answers wrong measures nothing).
 * The finds are timed as a map queried many times runs them: after one untimed find following
 * each build (the split map's first find after a build grows its device memory pool by the
 * answers' temporaries, 2-3 ms at 2^28 keys, once; the one map gets the same untimed find).
 *
 * Under mpirun every rank is one part on its own GPU (its local rank's) or CPU context, the map
 * is ghm_dist_map_create_ranked's (NCCL between the GPUs where built), rank 0 alone measures the
 * one map, and each call's time is the slowest rank's, the ranks starting it together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "ghm_dist_map.h"
#include "hash_family.h"
#include "json_out.h"
#include "ranks.h"

enum { OPT_LOG2 = GHM_OPT_FIRST_COMMAND, OPT_GPUS, OPT_PARTS, OPT_LOAD, OPT_REPS, OPT_QUICK,
       OPT_JSON_OUT };

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    {"log2", required_argument, NULL, OPT_LOG2},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {"parts", required_argument, NULL, OPT_PARTS},
    {"load", required_argument, NULL, OPT_LOAD},
    {"reps", required_argument, NULL, OPT_REPS},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"json-out", required_argument, NULL, OPT_JSON_OUT},
    {NULL, 0, NULL, 0}};

#define MAX_P GHM_DIST_MAP_MAX_PARTS

typedef struct DistArgs {
    GhmCommonOptions common;
    long log2, gpus, parts, reps; /* 0: the default; gpus -1: all */
    int gpus_given;
    double load;
    int quick;
    const char *json_out;
} DistArgs;

/* What one side measures, G keys/s. */
typedef struct Rates {
    double build, find, absent;
} Rates;

typedef struct Bench {
    int parts, gpus, reps; /* parts: in this process */
    int ranks, rank;       /* MPI ranks: every rank one part; else 1 and 0 */
    int own_ctx0;          /* ctx[0] is this rank's own, not the command's first context */
    GhmDistRanks dr;
    size_t n;
    size_t first[MAX_P];   /* where each shard starts among the n keys */
    GhmMapOptions mo;
    GhmContext *ctx[MAX_P];
    uint32_t *keys[MAX_P], *values[MAX_P], *absent[MAX_P], *out[MAX_P]; /* shards */
    size_t len[MAX_P];
    uint32_t *all_keys, *all_values, *all_absent, *all_out; /* the one map's, in ctx[0] */
    uint32_t *host;                                         /* n words */
} Bench;

static void print_help(void)
{
    printf("Usage: geohash-match bench distmap [OPTIONS]\n\n"
           "A map split by key hash over several contexts (GhmDistMap: on CUDA one per GPU)\n"
           "against one map in the first, on 2^K unique random keys in the same run: build,\n"
           "find of every key, find of as many absent keys (G keys/s, best of --reps).\n"
           "  --gpus N|all       CUDA devices the parts are dealt across (default all)\n"
           "  --parts P          parts (default: one per GPU on CUDA, 2 on the CPU; up to %d)\n"
           "  --log2 K           keys (default 26 on CUDA, 22 on the CPU; up to 30)\n"
           "  --load F           each part's load factor, and the one map's (default 0.8)\n"
           "  --reps N           runs per measurement, the best is kept (default 3)\n"
           "  --quick            2^14 keys, one run (a smoke test)\n"
           "  --json-out FILE    also write the measurements as JSON\n"
           "  --backend, --threads, --seed as everywhere\n\n"
           "Under mpirun (a build with MPI) every rank is one part, on the GPU of its local\n"
           "rank (NCCL carries the keys where the library was built with it), and rank 0\n"
           "alone measures the one map: mpirun -n 2 geohash-match bench distmap --log2 28\n",
           MAX_P);
}

static int parse_option(DistArgs *a, int id, const char *arg)
{
    switch (id) {
    case OPT_LOG2:
        return ghm_cli_parse_long("--log2", arg, 4, 30, &a->log2);
    case OPT_GPUS:
        a->gpus_given = 1;
        if (strcmp(arg, "all") == 0) {
            a->gpus = -1;
            return 0;
        }
        return ghm_cli_parse_long("--gpus", arg, 1, MAX_P, &a->gpus);
    case OPT_PARTS:
        return ghm_cli_parse_long("--parts", arg, 1, MAX_P, &a->parts);
    case OPT_LOAD:
        return ghm_cli_parse_double("--load", arg, 0.05, 0.99, &a->load);
    case OPT_REPS:
        return ghm_cli_parse_long("--reps", arg, 1, 100, &a->reps);
    case OPT_QUICK:
        a->quick = 1;
        return 0;
    case OPT_JSON_OUT:
        a->json_out = arg;
        return 0;
    default:
        ghm_cli_usage_hint("bench distmap");
        return -1;
    }
}

static int parse_args(int argc, char **argv, DistArgs *a)
{
    *a = (DistArgs){.common = ghm_cli_common_defaults(), .reps = 3, .load = 0.8, .gpus = -1};
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used < 0 || (used == 0 && parse_option(a, id, optarg) < 0))
            return -1;
    }
    if (optind != argc) {
        ghm_cli_error("bench distmap", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

static int fail(const char *what, int ret)
{
    ghm_cli_error("bench distmap", "%s: %s", what, ghm_strerror(ret));
    return ret;
}

/* Key i: a bijection of i, so keys [0, n) are distinct and keys [n, 2n) are absent. */
static uint32_t key_of(size_t i) { return ghmi_hash_mix((uint32_t)i, 0x2545F491u, 0x9E3779B9u); }

/* The contexts: one per part, part p on device p % gpus (CUDA) or a CPU context with the run's
 * threads shared out. */
static int make_contexts(Bench *b, const DistArgs *a, GhmContext *first)
{
    b->ctx[0] = first;
    if (b->ranks > 1 && ghm_context_backend(first) == GHM_BACKEND_CUDA &&
        ghm_ranks_local_rank() % b->gpus != 0) { /* this rank's GPU */
        GhmContextOptions co = ghm_context_options(first);
        co.device = ghm_ranks_local_rank() % b->gpus;
        int ret = ghm_context_create(&co, &b->ctx[0]);
        if (ret < 0) {
            b->ctx[0] = first;
            return fail("creating a context", ret);
        }
        b->own_ctx0 = 1;
    }
    if (b->ranks > 1)
        return GHM_OK;
    for (int p = 1; p < b->parts; p++) {
        GhmContextOptions co = ghm_context_options(first);
        co.threads = a->common.threads;
        co.device = ghm_context_backend(first) == GHM_BACKEND_CUDA ? p % b->gpus : 0;
        int ret = ghm_context_create(&co, &b->ctx[p]);
        if (ret < 0)
            return fail("creating a context", ret);
    }
    return GHM_OK;
}

static int upload_u32(GhmContext *ctx, size_t n, size_t first, const uint32_t *host,
                      uint32_t **out)
{
    int ret = ghm_buffer_alloc(ctx, (n ? n : 1) * 4, (void **)out);
    return ret < 0 || n == 0 ? ret : ghm_buffer_upload(ctx, *out, host + first, n * 4);
}

/* Fills b->host with keys [from, from + n) (or their values, the index) and uploads the
 * shards and the one map's copy. */
static int upload_all(Bench *b, size_t from, int values, uint32_t **shard, uint32_t **all)
{
    for (size_t i = 0; i < b->n; i++)
        b->host[i] = values ? (uint32_t)i : key_of(from + i);
    int ret = b->rank == 0 ? upload_u32(b->ctx[0], b->n, 0, b->host, all) : GHM_OK;
    for (int p = 0; p < b->parts && ret == GHM_OK; p++)
        ret = upload_u32(b->ctx[p], b->len[p], b->first[p], b->host, &shard[p]);
    return ret;
}

static int bench_alloc(Bench *b)
{
    b->host = malloc(b->n * 4);
    if (!b->host)
        return fail("allocating host memory", GHM_ERR_NOMEM);
    /* shard p of all the parts (ranks x parts in this process) */
    size_t all = (size_t)b->parts * (size_t)b->ranks;
    for (int p = 0; p < b->parts; p++) {
        size_t k = (size_t)b->rank * (size_t)b->parts + (size_t)p;
        b->first[p] = b->n * k / all;
        b->len[p] = b->n * (k + 1) / all - b->first[p];
    }
    int ret = upload_all(b, 0, 0, b->keys, &b->all_keys);
    if (ret == GHM_OK)
        ret = upload_all(b, 0, 1, b->values, &b->all_values);
    if (ret == GHM_OK)
        ret = upload_all(b, b->n, 0, b->absent, &b->all_absent);
    if (ret == GHM_OK && b->rank == 0)
        ret = ghm_buffer_alloc(b->ctx[0], b->n * 4, (void **)&b->all_out);
    for (int p = 0; p < b->parts && ret == GHM_OK; p++)
        ret = ghm_buffer_alloc(b->ctx[p], (b->len[p] ? b->len[p] : 1) * 4, (void **)&b->out[p]);
    return ret < 0 ? fail("allocating backend memory", ret) : GHM_OK;
}

static void bench_free(Bench *b)
{
    for (int p = 0; p < b->parts && b->ctx[p]; p++) {
        ghm_buffer_free(b->ctx[p], (void **)&b->keys[p]);
        ghm_buffer_free(b->ctx[p], (void **)&b->values[p]);
        ghm_buffer_free(b->ctx[p], (void **)&b->absent[p]);
        ghm_buffer_free(b->ctx[p], (void **)&b->out[p]);
    }
    if (b->ctx[0]) {
        ghm_buffer_free(b->ctx[0], (void **)&b->all_keys);
        ghm_buffer_free(b->ctx[0], (void **)&b->all_values);
        ghm_buffer_free(b->ctx[0], (void **)&b->all_absent);
        ghm_buffer_free(b->ctx[0], (void **)&b->all_out);
    }
    free(b->host);
    for (int p = 1; p < b->parts; p++)
        ghm_context_free(&b->ctx[p]);
    if (b->own_ctx0)
        ghm_context_free(&b->ctx[0]);
}

/* Counts wrong answers in out (ctx's memory, n entries, starting at key index first): the
 * value is the key's index for present keys, GHM_NOT_FOUND for absent ones. */
static size_t wrong_answers(Bench *b, GhmContext *ctx, const uint32_t *out, size_t n,
                            size_t first, int present)
{
    if (n == 0 || ghm_buffer_download(ctx, b->host, out, n * 4) < 0)
        return n;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += b->host[i] != (present ? (uint32_t)(first + i) : GHM_NOT_FOUND);
    return bad;
}

/* A run whose answers were wrong (its error line printed): not a GHM_ERR_* value. */
#define WRONG_ANSWERS (-1000)

/* WRONG_ANSWERS after an error line when bad answers were found, else ret. */
static int judge(int ret, size_t bad, size_t n, const char *who, const char *what)
{
    if (ret != GHM_OK || bad == 0)
        return ret;
    ghm_cli_error("bench distmap", "%s answered %zu of %zu %s keys wrong", who, bad, n, what);
    return WRONG_ANSWERS;
}

static double rate(size_t n, double seconds) { return seconds > 0 ? n / seconds * 1e-9 : 0.0; }

/* Keeps the best of each rate: *best and the rates of one run's three timed calls. */
static void keep_best(Rates *best, size_t n, double t_build, double t_find, double t_absent)
{
    Rates now = {rate(n, t_build), rate(n, t_find), rate(n, t_absent)};
    best->build = now.build > best->build ? now.build : best->build;
    best->find = now.find > best->find ? now.find : best->find;
    best->absent = now.absent > best->absent ? now.absent : best->absent;
}

/* The one map: build, find present, find absent; the best of b->reps. */
static int run_one_map(Bench *b, Rates *r)
{
    GhmMap *m = NULL;
    int ret = ghm_map_create(b->ctx[0], &b->mo, &m);
    *r = (Rates){0};
    for (int rep = 0; rep < b->reps && ret == GHM_OK; rep++) {
        double t0 = ghm_now();
        ret = ghm_map_build(m, b->all_keys, b->all_values, b->n);
        double t_build = ghm_now() - t0;
        if (ret == GHM_OK) /* untimed: see the top of the file */
            ret = ghm_map_find(m, b->all_keys, b->n, b->all_out);
        double t1 = ghm_now();
        if (ret == GHM_OK)
            ret = ghm_map_find(m, b->all_keys, b->n, b->all_out);
        double t_find = ghm_now() - t1;
        if (ret == GHM_OK && rep == 0)
            ret = judge(ret, wrong_answers(b, b->ctx[0], b->all_out, b->n, 0, 1), b->n,
                        "the one map", "present");
        double t3 = ghm_now();
        if (ret == GHM_OK)
            ret = ghm_map_find(m, b->all_absent, b->n, b->all_out);
        double t4 = ghm_now();
        if (ret == GHM_OK && rep == 0)
            ret = judge(ret, wrong_answers(b, b->ctx[0], b->all_out, b->n, 0, 0), b->n,
                        "the one map", "absent");
        keep_best(r, b->n, t_build, t_find, t4 - t3);
    }
    ghm_map_free(&m);
    return ret == WRONG_ANSWERS ? ret : ret < 0 ? fail("the one map", ret) : GHM_OK;
}

static size_t wrong_in_shards(Bench *b, int present)
{
    size_t bad = 0;
    for (int p = 0; p < b->parts; p++)
        bad += wrong_answers(b, b->ctx[p], b->out[p], b->len[p], b->first[p], present);
    return bad;
}

/* Under MPI: the slowest rank's time for one call (on rank 0; the others keep their own). */
static double slowest(const Bench *b, double t)
{
    double all[MAX_P];
    if (b->ranks == 1)
        return t;
    ghm_ranks_gather_doubles(&t, 1, all);
    for (int r = 0; b->rank == 0 && r < b->ranks; r++)
        t = all[r] > t ? all[r] : t;
    return t;
}

/* Under MPI a rank's failure (its error line printed there) is every rank's. */
static int all_ranks(const Bench *b, int ret)
{
    if (b->ranks == 1)
        return ret;
    int st = ghm_ranks_agree(ret == GHM_OK ? GHM_EXIT_FOUND : GHM_EXIT_ERROR);
    return st != GHM_EXIT_ERROR ? GHM_OK : ret != GHM_OK ? ret : WRONG_ANSWERS;
}

/* The start of a timed call of the split map: every rank starts it together. */
static double start_together(void)
{
    ghm_ranks_barrier();
    return ghm_now();
}

static int create_dist_map(Bench *b, GhmDistMap **dm)
{
    if (b->ranks > 1)
        return ghm_dist_map_create_ranked(b->ctx[0], &b->dr, &b->mo, dm);
    return ghm_dist_map_create(b->ctx, b->parts, &b->mo, dm);
}

/* The shards' keys, absent keys and answers moved into arrays of the map
 * (ghm_dist_map_alloc_array), which ranks that map each other's memory probe and answer where
 * they lie, as a user of such a map would. Every rank moves or none does. */
static int move_to_map_arrays(Bench *b, GhmDistMap *dm)
{
    uint32_t **move[3] = {b->keys, b->absent, b->out};
    void *a[3][MAX_P] = {{NULL}};
    int ret = GHM_OK;
    for (int k = 0; k < 3; k++)
        for (int p = 0; p < b->parts && ret == GHM_OK; p++)
            ret = ghm_dist_map_alloc_array(dm, p, (b->len[p] ? b->len[p] : 1) * 4, &a[k][p]);
    for (int k = 0; k < 2; k++) /* the answers need no copy */
        for (int p = 0; p < b->parts && ret == GHM_OK; p++)
            ret = ghm_buffer_copy(b->ctx[p], a[k][p], move[k][p], b->len[p] * 4);
    ret = all_ranks(b, ret);
    for (int k = 0; k < 3; k++)
        for (int p = 0; p < b->parts; p++) {
            if (ret < 0) {
                ghm_dist_map_free_array(dm, p, &a[k][p]);
                continue;
            }
            ghm_buffer_free(b->ctx[p], (void **)&move[k][p]);
            move[k][p] = a[k][p];
        }
    return ret;
}

/* Frees what move_to_map_arrays moved (every rank together). */
static void free_map_arrays(Bench *b, GhmDistMap *dm)
{
    uint32_t **moved[3] = {b->keys, b->absent, b->out};
    for (int k = 0; k < 3; k++)
        for (int p = 0; p < b->parts; p++)
            ghm_dist_map_free_array(dm, p, (void **)&moved[k][p]);
}

static int run_dist_map(Bench *b, Rates *r)
{
    GhmDistMap *dm = NULL;
    int ret = create_dist_map(b, &dm);
    if (ret == GHM_OK)
        ret = move_to_map_arrays(b, dm);
    int moved = ret == GHM_OK;
    const uint32_t *const *keys = (const uint32_t *const *)b->keys;
    const uint32_t *const *values = (const uint32_t *const *)b->values;
    const uint32_t *const *absent = (const uint32_t *const *)b->absent;
    *r = (Rates){0};
    for (int rep = 0; rep < b->reps && ret == GHM_OK; rep++) {
        double t0 = start_together();
        ret = ghm_dist_map_build(dm, keys, values, b->len);
        double t_build = slowest(b, ghm_now() - t0), t_find = 0, t_absent = 0;
        if (ret == GHM_OK) /* untimed: see the top of the file */
            ret = ghm_dist_map_find(dm, keys, b->len, b->out);
        if (ret == GHM_OK) {
            t0 = start_together();
            ret = ghm_dist_map_find(dm, keys, b->len, b->out);
            t_find = slowest(b, ghm_now() - t0);
        }
        if (ret == GHM_OK && rep == 0)
            ret = all_ranks(b, judge(ret, wrong_in_shards(b, 1), b->n, "the split map",
                                     "present"));
        if (ret == GHM_OK) {
            t0 = start_together();
            ret = ghm_dist_map_find(dm, absent, b->len, b->out);
            t_absent = slowest(b, ghm_now() - t0);
        }
        if (ret == GHM_OK && rep == 0)
            ret = all_ranks(b, judge(ret, wrong_in_shards(b, 0), b->n, "the split map",
                                     "absent"));
        keep_best(r, b->n, t_build, t_find, t_absent);
    }
    if (ret == GHM_OK && b->ranks > 1 && b->rank == 0)
        printf("split map over %d MPI ranks, device data through %s\n", b->ranks,
               ghm_dist_map_uses_ipc(dm)    ? "CUDA IPC"
               : ghm_dist_map_uses_nccl(dm) ? "NCCL"
                                            : "host memory");
    if (moved)
        free_map_arrays(b, dm);
    ghm_dist_map_free(&dm);
    return ret == WRONG_ANSWERS ? ret : ret < 0 ? fail("the split map", ret) : GHM_OK;
}

static json_t *rates_json(const Rates *r)
{
    return json_pack("{s:f,s:f,s:f}", "build", r->build, "find_present", r->find, "find_absent",
                     r->absent);
}

static void print_header(const Bench *b, int log2, double load)
{
    char desc[256], where[96] = "";
    ghm_context_describe(b->ctx[0], desc, sizeof desc);
    int cuda = ghm_context_backend(b->ctx[0]) == GHM_BACKEND_CUDA;
    if (b->ranks > 1)
        snprintf(where, sizeof where, " (rank 0), one part per MPI rank, %d ranks", b->ranks);
    else if (cuda && b->gpus > 1)
        snprintf(where, sizeof where, " and %d more device%s", b->gpus - 1,
                 b->gpus == 2 ? "" : "s");
    int parts = b->parts * b->ranks;
    printf("bench distmap: %d part%s on %s%s, 2^%d keys, load %.2f, best of %d, G keys/s\n",
           parts, parts == 1 ? "" : "s", desc, where, log2, load, b->reps);
}

static int write_json(const Bench *b, const char *path, const Rates *one, const Rates *dist)
{
    json_t *devices = json_array();
    for (int p = 0; devices && p < b->parts; p++) {
        char desc[256];
        ghm_context_describe(b->ctx[p], desc, sizeof desc);
        json_array_append_new(devices, json_string(desc));
    }
    json_t *root = json_pack("{s:s,s:s,s:i,s:i,s:o,s:I,s:f,s:i,s:o,s:o}", "benchmark", "distmap",
                             "backend", ghm_context_backend_name(b->ctx[0]), "parts",
                             b->parts * b->ranks, "mpi_ranks", b->ranks,
                             "contexts", devices, "keys", (json_int_t)b->n, "load",
                             b->mo.load_factor, "reps", b->reps, "one_map", rates_json(one),
                             "dist_map", rates_json(dist));
    return ghm_json_write_file(path, root) < 0 ? GHM_ERR_IO : GHM_OK;
}

/* Parts and devices from the options and the context; -1 after an error line. */
static int plan_parts(Bench *b, const DistArgs *a, const GhmContext *ctx)
{
    int cuda = ghm_context_backend(ctx) == GHM_BACKEND_CUDA;
    int have = cuda ? ghm_cuda_device_count() : 0;
    b->ranks = 1;
    if (ghm_ranks_dist(&b->dr) == 0) { /* one part per rank, on its local rank's GPU */
        if (a->gpus_given || a->parts) { /* every rank's mistake: rank 0 says it */
            ghm_cli_options_quiet(1);
            ghm_cli_error(a->gpus_given ? "--gpus" : "--parts",
                          "under mpirun every rank is one part on its own GPU");
            ghm_cli_options_quiet(0);
            return -1;
        }
        b->ranks = b->dr.ranks;
        b->rank = b->dr.rank;
        b->parts = 1;
        b->gpus = have > 0 ? have : 1;
        return 0;
    }
    b->gpus = a->gpus < 0 ? (have > 0 ? have : 1) : (int)a->gpus;
    if (cuda && b->gpus > have) {
        ghm_cli_error("--gpus", "%d: this machine has %d CUDA device%s", b->gpus, have,
                      have == 1 ? "" : "s");
        return -1;
    }
    if (!cuda && a->gpus > 1) {
        ghm_cli_error("--gpus", "%ld needs the CUDA backend (use --parts on the CPU)", a->gpus);
        return -1;
    }
    b->parts = a->parts ? (int)a->parts : cuda ? b->gpus : 2;
    return 0;
}

/* parse_args, and --help printed: every MPI rank reads the same options, so rank 0 alone
 * says what is wrong with them or prints the help. */
static int read_options(int argc, char **argv, DistArgs *a)
{
    ghm_cli_options_quiet(1);
    int ret = parse_args(argc, argv, a);
    if (ret == 0 && a->common.help && !ghm_cli_quiet())
        print_help();
    ghm_cli_options_quiet(0);
    return ret;
}

int ghm_bench_distmap(int argc, char **argv)
{
    DistArgs a;
    if (read_options(argc, argv, &a) < 0)
        return GHM_EXIT_ERROR;
    if (a.common.help)
        return GHM_EXIT_FOUND;
    GhmContext *first = NULL;
    if (ghm_cli_context(&a.common, &first) < 0)
        return GHM_EXIT_ERROR;
    Bench b = {0};
    if (plan_parts(&b, &a, first) < 0) {
        ghm_context_free(&first);
        return GHM_EXIT_ERROR;
    }
    int cpu = ghm_context_backend(first) == GHM_BACKEND_CPU;
    int log2 = a.quick ? 14 : a.log2 ? (int)a.log2 : cpu ? 22 : 26;
    b.n = (size_t)1 << log2;
    b.reps = a.quick ? 1 : (int)a.reps;
    b.mo = ghm_map_defaults();
    b.mo.load_factor = a.load;
    Rates one = {0}, dist = {0};
    int ret = make_contexts(&b, &a, first);
    if (ret == GHM_OK && b.rank == 0)
        print_header(&b, log2, a.load);
    if (ret == GHM_OK)
        ret = bench_alloc(&b);
    ret = all_ranks(&b, ret); /* the ranks meet in the split map's calls: all or none go on */
    if (ret == GHM_OK && b.rank == 0)
        ret = run_one_map(&b, &one);
    ret = all_ranks(&b, ret);
    if (ret == GHM_OK)
        ret = run_dist_map(&b, &dist);
    if (ret == GHM_OK && b.rank == 0) {
        printf("%-22s %8s %13s %12s\n", "", "build", "find present", "find absent");
        printf("%-22s %8.2f %13.2f %12.2f\n", "one map (context 0)", one.build, one.find,
               one.absent);
        printf("%-22s %8.2f %13.2f %12.2f\n", "split map", dist.build, dist.find, dist.absent);
        printf("%-22s %7.2fx %12.2fx %11.2fx\n", "split / one", dist.build / one.build,
               dist.find / one.find, dist.absent / one.absent);
    }
    if (ret == GHM_OK && a.json_out && b.rank == 0)
        ret = write_json(&b, a.json_out, &one, &dist); /* its error line is the writer's */
    bench_free(&b);
    ghm_context_free(&first);
    return ret == GHM_OK ? GHM_EXIT_FOUND : GHM_EXIT_ERROR;
}
