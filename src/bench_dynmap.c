/*
 * bench_dynmap.c - `geohash-match bench dynmap`: the dynamic slab-list table (GhmDynmap)
 * measured as in section 6.1 of Molenaar and Eisemann 2024, per variant (Atomic64, the 32- and
 * 8-bit acceleration hashes):
 *
 *   buckets   items of 6 words: a table filled with 2^fill items (timed: "fill"), then 2^ops
 *             searches at 25 / 50 / 75 % hits, 2^ops inserts of new items, their erase and a
 *             garbage collection, at several bucket counts (capacity hints of 2, 1, 1/2 and 1/4
 *             times the fill: about 1/3, 2/3, 4/3 and 8/3 slabs' worth of items per bucket);
 *             the memory in slabs and bytes after the fill;
 *   sizes     items of 1 to 10 words at the default bucket count: fill, searches at 50 % hits,
 *             inserts;
 *   baseline  in the same run on the same backend: the static GhmMap (default scheme) built
 *             from and searched for 2^ops 32-bit keys.
 *
 * Inputs live in backend memory (device arrays on CUDA, uploaded outside the clock); every
 * timed call is synchronous. Each number is the best of --reps runs; the inserts of a rep go
 * into the same filled table, after the previous rep's erase and collection returned their
 * slabs, so every rep allocates as the first did. Times in milliseconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "ghm_backend_internal.h"
#include "ghm_dynmap.h"
#include "ghm_map.h"
#include "json_out.h"

enum {
    OPT_FILL_LOG2 = GHM_OPT_FIRST_COMMAND,
    OPT_OPS_LOG2,
    OPT_JSON_OUT,
    OPT_QUICK,
    OPT_REPS,
    OPT_VARIANT
};

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    {"fill-log2", required_argument, NULL, OPT_FILL_LOG2},
    {"ops-log2", required_argument, NULL, OPT_OPS_LOG2},
    {"json-out", required_argument, NULL, OPT_JSON_OUT},
    {"quick", no_argument, NULL, OPT_QUICK},
    {"reps", required_argument, NULL, OPT_REPS},
    {"variant", required_argument, NULL, OPT_VARIANT},
    {NULL, 0, NULL, 0}};

static const double capacity_factors[] = {2.0, 1.0, 0.5, 0.25};
static const int hit_percents[] = {25, 50, 75};

typedef struct DynArgs {
    GhmCommonOptions common;
    long fill_log2, ops_log2, reps; /* 0: the backend's default */
    unsigned variants;              /* bit v: variant v measured (0: every one) */
    int quick;
    const char *json_out;
} DynArgs;

typedef struct Bench {
    GhmContext *ctx;
    size_t fill, ops;
    int reps;
    unsigned variants; /* bit v: variant v measured */
    uint32_t *host;                         /* (fill or ops) * 10 words of host scratch */
    uint32_t *fill_items, *new_items, *queries; /* backend memory, 10 words per item */
    GhmDynmapHandle *handles;               /* backend memory, ops entries */
    uint32_t *out32;                        /* baseline: ops values */
    json_t *rows, *size_rows, *baseline;
} Bench;

static void print_help(void)
{
    printf("Usage: geohash-match bench dynmap [OPTIONS]\n\n"
           "The dynamic slab-list table (GhmDynmap) after Molenaar and Eisemann 2024, 6.1: per\n"
           "variant (atomic64, accel32, accel8), a table filled with 2^F items, then 2^O\n"
           "searches at 25/50/75 %% hits and 2^O inserts, at several bucket counts and item\n"
           "sizes 1..10 words; the static GhmMap on 2^O keys as the baseline of the same run.\n"
           "  --fill-log2 F      items in the filled table (default 25 on CUDA, 22 on the CPU)\n"
           "  --ops-log2 O       searches and inserts per measurement (default 23 / 20)\n"
           "  --reps N           runs per measurement, the best is kept (default 3)\n"
           "  --variant NAME     only this variant (atomic64, accel32 or accel8); may be given\n"
           "                     again for more (default: all three)\n"
           "  --quick            2^12 items, 2^10 operations, one run (a smoke test)\n"
           "  --json-out FILE    also write the measurements as JSON\n"
           "  --backend, --threads, --seed as everywhere\n");
}

static int parse_args(int argc, char **argv, DynArgs *a)
{
    *a = (DynArgs){.common = ghm_cli_common_defaults(), .reps = 3};
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used < 0)
            return -1;
        if (used > 0)
            continue;
        if (id == OPT_FILL_LOG2) {
            if (ghm_cli_parse_long("--fill-log2", optarg, 4, 28, &a->fill_log2) < 0)
                return -1;
        } else if (id == OPT_OPS_LOG2) {
            if (ghm_cli_parse_long("--ops-log2", optarg, 4, 28, &a->ops_log2) < 0)
                return -1;
        } else if (id == OPT_REPS) {
            if (ghm_cli_parse_long("--reps", optarg, 1, 100, &a->reps) < 0)
                return -1;
        } else if (id == OPT_VARIANT) {
            int v = ghm_dynmap_variant_from_name(optarg);
            if (v < 0) {
                ghm_cli_error("bench dynmap", "--variant '%s': not atomic64, accel32 or accel8",
                              optarg);
                return -1;
            }
            a->variants |= 1u << v;
        } else if (id == OPT_QUICK) {
            a->quick = 1;
        } else if (id == OPT_JSON_OUT) {
            a->json_out = optarg;
        } else {
            ghm_cli_usage_hint("bench dynmap");
            return -1;
        }
    }
    if (optind != argc) {
        ghm_cli_error("bench dynmap", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

static int fail(const char *what, int ret)
{
    ghm_cli_error("bench dynmap", "%s: %s", what, ghm_strerror(ret));
    return ret;
}

/* Item of id (< 2^32 - 1): w words, distinct per id (word 1 is id + 1, so the first 8 bytes
 * are never zero; one-word items: id + 1), the other words pseudo-random. Stored ids are
 * [0, fill), inserted ones [fill, fill + ops), missing ones from 2^31 on. */
static void make_item(uint64_t id, int w, uint32_t *out)
{
    uint64_t a = ghmi_mix64(id ^ 0x5bd1e995u);
    out[0] = w == 1 ? (uint32_t)id + 1 : (uint32_t)a;
    for (int j = 1; j < w; j++)
        out[j] = j == 1 ? (uint32_t)id + 1 : (uint32_t)ghmi_mix64(a + (uint64_t)j);
}

/* Uploads n items of w words, item i being id ids(i) = first + i, or for queries a hit
 * (an id < fill) for `hit` percent of them and a miss (never stored) for the rest. */
static int upload_items(Bench *b, uint32_t *dst, size_t n, int w, uint64_t first, int hit)
{
    uint64_t s = 0x9E3779B97F4A7C15ull ^ first;
    for (size_t i = 0; i < n; i++) {
        uint64_t id = first + i;
        if (hit >= 0) {
            s = ghmi_mix64(s);
            id = (s % 100) < (uint64_t)hit ? (s >> 8) % b->fill
                                            : ((uint64_t)1 << 31) + (s >> 34);
        }
        make_item(id, w, b->host + i * (size_t)w);
    }
    int ret = ghm_buffer_upload(b->ctx, dst, b->host, n * (size_t)w * 4);
    return ret < 0 ? fail("upload", ret) : GHM_OK;
}

static double ms(double s) { return s * 1e3; }

/* One configuration: a table of w-word items with the capacity hint `cap`, filled; searches at
 * each hit rate (or only 50 % when !all_rates); inserts, erases and collections over reps. */
typedef struct Result {
    double fill, find[3], insert, erase, gc;
    GhmDynmapStats st;
} Result;

static int measure(Bench *b, GhmDynmapVariant v, int w, size_t cap, int all_rates, Result *r)
{
    GhmDynmapOptions opt = ghm_dynmap_defaults();
    opt.variant = v;
    opt.item_words = w;
    opt.capacity = cap;
    GhmDynmap *dm = NULL;
    memset(r, 0, sizeof *r);
    int ret = ghm_dynmap_create(b->ctx, &opt, &dm);
    if (ret < 0)
        return fail("create", ret);
    double t0 = ghm_now();
    ret = ghm_dynmap_insert(dm, b->fill_items, b->fill, NULL, NULL);
    r->fill = ghm_now() - t0;
    if (ret >= 0)
        ret = ghm_dynmap_stats(dm, &r->st);
    for (int h = 0; h < 3 && ret >= 0; h++) {
        if (!all_rates && hit_percents[h] != 50)
            continue;
        if ((ret = upload_items(b, b->queries, b->ops, w, 0, hit_percents[h])) < 0)
            break;
        for (int k = 0; k < b->reps && ret >= 0; k++) {
            t0 = ghm_now();
            ret = ghm_dynmap_find(dm, b->queries, b->ops, b->handles, NULL);
            double dt = ghm_now() - t0;
            if (k == 0 || dt < r->find[h])
                r->find[h] = dt;
        }
    }
    for (int k = 0; k < b->reps && ret >= 0; k++) {
        size_t released = 0;
        double t1 = ghm_now();
        ret = ghm_dynmap_insert(dm, b->new_items, b->ops, b->handles, NULL);
        double t2 = ghm_now();
        if (ret >= 0)
            ret = ghm_dynmap_erase(dm, b->new_items, b->ops, NULL);
        double t3 = ghm_now();
        if (ret >= 0)
            ret = ghm_dynmap_gc(dm, &released);
        double t4 = ghm_now();
        if (k == 0 || t2 - t1 < r->insert)
            r->insert = t2 - t1;
        if (k == 0 || t3 - t2 < r->erase)
            r->erase = t3 - t2;
        if (k == 0 || t4 - t3 < r->gc)
            r->gc = t4 - t3;
    }
    size_t left = ghm_dynmap_size(dm);
    ghm_dynmap_free(&dm);
    if (ret >= 0 && left != b->fill) { /* every insert erased again: the fill is what is left */
        ghm_cli_error("bench dynmap", "the table holds %zu items, %zu expected", left, b->fill);
        return GHM_ERR_INVALID;
    }
    return ret < 0 ? fail("dynmap", ret) : GHM_OK;
}

static double mops(size_t n, double s) { return s > 0 ? (double)n / s / 1e6 : 0.0; }

static int add_row(json_t *rows, json_t *row)
{
    if (!row || json_array_append_new(rows, row) < 0)
        return fail("json", GHM_ERR_NOMEM);
    return GHM_OK;
}

static int bench_buckets(Bench *b)
{
    int ret = upload_items(b, b->fill_items, b->fill, 6, 0, -1);
    if (ret >= 0)
        ret = upload_items(b, b->new_items, b->ops, 6, b->fill, -1);
    printf("%-9s %5s %10s %8s %8s %8s %8s %8s %8s %8s %6s %10s %8s\n", "variant", "words",
           "buckets", "per_bkt", "fill_ms", "find25", "find50", "find75", "insert", "erase",
           "gc_ms", "slabs", "MiB");
    for (int v = 0; v < GHM_DYNMAP_VARIANTS && ret >= 0; v++) {
        if (!(b->variants >> v & 1))
            continue;
        const char *name = ghm_dynmap_variant_name((GhmDynmapVariant)v);
        for (int c = 0; c < 4 && ret >= 0; c++) {
            Result r;
            size_t cap = (size_t)(capacity_factors[c] * (double)b->fill);
            if ((ret = measure(b, (GhmDynmapVariant)v, 6, cap, 1, &r)) < 0)
                break;
            double per = (double)b->fill / (double)r.st.buckets;
            printf("%-9s %5d %10zu %8.2f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %6.3f %10zu %8.1f\n",
                   name, 6, r.st.buckets, per, ms(r.fill), ms(r.find[0]), ms(r.find[1]),
                   ms(r.find[2]), ms(r.insert), ms(r.erase), ms(r.gc), r.st.slabs_used,
                   (double)r.st.bytes / (1 << 20));
            fflush(stdout);
            ret = add_row(b->rows,
                          json_pack("{s:s,s:i,s:I,s:f,s:I,s:I,s:f,s:f,s:f,s:f,s:f,s:f,s:f,s:I,"
                                    "s:I,s:I}",
                                    "variant", name, "item_words", 6, "buckets",
                                    (json_int_t)r.st.buckets, "items_per_bucket", per, "fill",
                                    (json_int_t)b->fill, "ops", (json_int_t)b->ops, "fill_ms",
                                    ms(r.fill), "find25_ms", ms(r.find[0]), "find50_ms",
                                    ms(r.find[1]), "find75_ms", ms(r.find[2]), "insert_ms",
                                    ms(r.insert), "erase_ms", ms(r.erase), "gc_ms", ms(r.gc),
                                    "slabs_used", (json_int_t)r.st.slabs_used, "slots_per_slab",
                                    (json_int_t)r.st.slots_per_slab, "bytes",
                                    (json_int_t)r.st.bytes));
        }
    }
    return ret;
}

static int bench_sizes(Bench *b)
{
    int ret = GHM_OK;
    printf("\nitem sizes (capacity hint = fill)\n%-9s %5s %8s %8s %8s %8s %10s\n", "variant",
           "words", "fill_ms", "find50", "insert", "Mops", "slabs");
    for (int w = 1; w <= GHM_DYNMAP_MAX_WORDS && ret >= 0; w++) {
        if ((ret = upload_items(b, b->fill_items, b->fill, w, 0, -1)) < 0 ||
            (ret = upload_items(b, b->new_items, b->ops, w, b->fill, -1)) < 0)
            break;
        for (int v = 0; v < GHM_DYNMAP_VARIANTS && ret >= 0; v++) {
            if (!(b->variants >> v & 1))
                continue;
            const char *name = ghm_dynmap_variant_name((GhmDynmapVariant)v);
            Result r;
            if ((ret = measure(b, (GhmDynmapVariant)v, w, b->fill, 0, &r)) < 0)
                break;
            printf("%-9s %5d %8.3f %8.3f %8.3f %8.1f %10zu\n", name, w, ms(r.fill),
                   ms(r.find[1]), ms(r.insert), mops(b->ops, r.find[1]), r.st.slabs_used);
            fflush(stdout);
            ret = add_row(b->size_rows,
                          json_pack("{s:s,s:i,s:f,s:f,s:f,s:I,s:I}", "variant", name,
                                    "item_words", w, "fill_ms", ms(r.fill), "find50_ms",
                                    ms(r.find[1]), "insert_ms", ms(r.insert), "slabs_used",
                                    (json_int_t)r.st.slabs_used, "bytes",
                                    (json_int_t)r.st.bytes));
        }
    }
    return ret;
}

/* The static GhmMap on the same number of 32-bit keys (the first word of the new items). */
static int bench_baseline(Bench *b)
{
    for (size_t i = 0; i < b->ops; i++)
        b->host[i] = (uint32_t)ghmi_mix64(i) | 1u;
    int ret = ghm_buffer_upload(b->ctx, b->queries, b->host, b->ops * 4);
    GhmMapOptions opt = ghm_map_defaults();
    GhmMap *map = NULL;
    if (ret >= 0)
        ret = ghm_map_create(b->ctx, &opt, &map);
    double build = 0, find = 0;
    for (int k = 0; k < b->reps && ret >= 0; k++) {
        double t0 = ghm_now();
        ret = ghm_map_build(map, b->queries, b->queries, b->ops);
        if (ret >= 0)
            ret = ghm_context_sync(b->ctx);
        double t1 = ghm_now();
        if (ret >= 0)
            ret = ghm_map_find(map, b->queries, b->ops, b->out32);
        if (ret >= 0)
            ret = ghm_context_sync(b->ctx);
        double t2 = ghm_now();
        if (k == 0 || t1 - t0 < build)
            build = t1 - t0;
        if (k == 0 || t2 - t1 < find)
            find = t2 - t1;
    }
    ghm_map_free(&map);
    if (ret < 0)
        return fail("baseline map", ret);
    printf("\nbaseline  GhmMap (%s) of 2^%d 32-bit keys: build %.3f ms, find %.3f ms\n",
           ghm_map_scheme_name(opt.scheme), __builtin_ctzll(b->ops), ms(build), ms(find));
    b->baseline = json_pack("{s:s,s:I,s:f,s:f}", "scheme", ghm_map_scheme_name(opt.scheme), "n",
                            (json_int_t)b->ops, "build_ms", ms(build), "find_ms", ms(find));
    return b->baseline ? GHM_OK : fail("json", GHM_ERR_NOMEM);
}

static void bench_free(Bench *b)
{
    void **bufs[] = {(void **)&b->fill_items, (void **)&b->new_items, (void **)&b->queries,
                     (void **)&b->handles, (void **)&b->out32};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        ghm_buffer_free(b->ctx, bufs[i]);
    free(b->host);
    json_decref(b->rows);
    json_decref(b->size_rows);
    json_decref(b->baseline);
}

static int bench_alloc(Bench *b)
{
    size_t words = (size_t)GHM_DYNMAP_MAX_WORDS * 4;
    int ret = ghm_buffer_alloc(b->ctx, b->fill * words, (void **)&b->fill_items);
    if (ret >= 0)
        ret = ghm_buffer_alloc(b->ctx, b->ops * words, (void **)&b->new_items);
    if (ret >= 0)
        ret = ghm_buffer_alloc(b->ctx, b->ops * words, (void **)&b->queries);
    if (ret >= 0)
        ret = ghm_buffer_alloc(b->ctx, b->ops * sizeof *b->handles, (void **)&b->handles);
    if (ret >= 0)
        ret = ghm_buffer_alloc(b->ctx, b->ops * 4, (void **)&b->out32);
    if (ret < 0)
        return fail("allocating backend memory", ret);
    b->host = malloc((b->fill > b->ops ? b->fill : b->ops) * words);
    b->rows = json_array();
    b->size_rows = json_array();
    if (!b->host || !b->rows || !b->size_rows)
        return fail("allocating host memory", GHM_ERR_NOMEM);
    return GHM_OK;
}

static int write_json(const Bench *b, const char *path)
{
    char desc[256];
    ghm_context_describe(b->ctx, desc, sizeof desc);
    json_t *root = json_pack("{s:s,s:s,s:s,s:i,s:I,s:i,s:I,s:I,s:O,s:O,s:O}", "benchmark",
                             "dynmap", "backend", ghm_context_backend_name(b->ctx), "device",
                             desc, "threads", ghm_context_threads(b->ctx), "seed",
                             (json_int_t)ghm_context_seed(b->ctx), "reps", b->reps, "fill",
                             (json_int_t)b->fill, "ops", (json_int_t)b->ops, "buckets",
                             b->rows, "sizes", b->size_rows, "baseline", b->baseline);
    return ghm_json_write_file(path, root) < 0 ? GHM_ERR_IO : GHM_OK;
}

int ghm_bench_dynmap(int argc, char **argv)
{
    DynArgs a;
    if (parse_args(argc, argv, &a) < 0)
        return GHM_EXIT_ERROR;
    if (a.common.help) {
        print_help();
        return GHM_EXIT_FOUND;
    }
    Bench b = {0};
    if (ghm_cli_context(&a.common, &b.ctx) < 0)
        return GHM_EXIT_ERROR;
    int cpu = ghm_context_backend(b.ctx) == GHM_BACKEND_CPU;
    int fill = a.fill_log2 ? (int)a.fill_log2 : cpu ? 22 : 25;
    int ops = a.ops_log2 ? (int)a.ops_log2 : cpu ? 20 : 23;
    b.reps = (int)a.reps;
    b.variants = a.variants ? a.variants : (1u << GHM_DYNMAP_VARIANTS) - 1;
    if (a.quick) {
        fill = 12;
        ops = 10;
        b.reps = 1;
    }
    b.fill = (size_t)1 << fill;
    b.ops = (size_t)1 << ops;
    char desc[256];
    ghm_context_describe(b.ctx, desc, sizeof desc);
    printf("bench dynmap: %s, fill 2^%d items, 2^%d operations, best of %d, times in ms\n",
           desc, fill, ops, b.reps);
    int ret = bench_alloc(&b);
    if (ret >= 0)
        ret = bench_buckets(&b);
    if (ret >= 0)
        ret = bench_sizes(&b);
    if (ret >= 0)
        ret = bench_baseline(&b);
    if (ret >= 0 && a.json_out && (ret = write_json(&b, a.json_out)) < 0)
        fail("writing the JSON", ret);
    bench_free(&b);
    ghm_context_free(&b.ctx);
    return ret >= 0 ? GHM_EXIT_FOUND : GHM_EXIT_ERROR;
}
