/*
 * bench_hash.c - `geohash-match bench hash`: the hash tables against the sort + binary search
 * baseline (thesis ch. 6 figures), measured in the same run on the same backend memory.
 *
 *   map       every scheme chosen by --scheme (cuckoo in both layouts, open addressing's three
 *             sequences, both Robin Hood sequences, chaining, two-level cuckoo) at loads
 *             0.5/0.8/0.9/0.95 (Robin Hood and chaining also 0.99; two-level 0.5/0.6/0.71, its
 *             range) for every N = 2^min .. 2^max: insert, find of present keys, find of absent
 *             keys (keys/s)
 *   absent    at the largest N, load 0.8 (two-level 0.71): find rate vs the share of absent
 *             queries 0..100 % (every chosen scheme and the sorted baseline)
 *   coherent  the coherent-hashing paper's 2D experiment: the defined pixels of a sparse image
 *             of the largest N pixels as keys at load 0.99, every pixel queried in the paper's
 *             three orders (ghm_keys.h: row-major keys by row, Morton keys in Morton order,
 *             bit-reversed Morton keys by row), for each chosen scheme
 *   sorted    the baseline at every N: build (sort) and binary-search find
 *   multimap  at the largest N pairs: multiplicity 1..64, build and retrieve (values/s;
 *             retrieve = ghm_multimap_retrieve of every distinct key: offsets and all its values
 *             copied into a backend buffer)
 *   index     at the largest N: build, key -> id and id -> key
 *
 * Keys are distinct by construction (a 32-bit permutation of counters); absent keys are the
 * permutation of other counters. Inputs are uploaded to backend memory once, outside the clock;
 * every timed call ends with ghm_context_sync, and each number is the best of --reps runs.
 * Uses the public API only, so it runs unchanged on every backend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_hash_args.h"
#include "cli.h"
#include "ghm_index.h"
#include "ghm_keys.h"
#include "ghm_map.h"
#include "ghm_multimap.h"
#include "ghm_sorted.h"
#include "json_out.h"

static const double loads[] = {0.5, 0.8, 0.9, 0.95, 0.99};
static const int absent_percent[] = {0, 25, 50, 75, 100};
static const int multiplicities[] = {1, 2, 4, 8, 16, 32, 64};

/* Backend arrays for the largest N, reused by every measurement. */
typedef struct Bench {
    GhmContext *ctx;
    const HashArgs *args;
    int reps;
    size_t cap;
    uint32_t *host; /* cap entries of host scratch for generating inputs */
    uint32_t *keys, *vals, *absent, *queries, *out, *out2; /* backend memory */
    json_t *map_rows, *absent_rows, *sorted_rows, *multimap_rows, *index_rows, *coherent_rows;
} Bench;

/* A table kind measured: a scheme, and for cuckoo a layout. */
typedef struct Kind {
    GhmMapScheme scheme;
    GhmMapLayout layout;
} Kind;

#define MAX_KINDS (GHM_MAP_SCHEMES + 1)

/* A bijection of 32-bit counters (odd multiplies and xorshifts), so distinct counters give
 * distinct keys and the keys of counters >= N are certainly absent from a table of the first N. */
static uint32_t key_of(uint32_t counter, uint32_t seed)
{
    uint32_t x = counter ^ seed;
    x *= 0x9E3779B1u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

static int upload(Bench *b, uint32_t *dst, size_t n)
{
    int ret = ghm_buffer_upload(b->ctx, dst, b->host, n * sizeof *dst);
    if (ret < 0)
        ghm_cli_error("bench hash", "upload: %s", ghm_strerror(ret));
    return ret;
}

/* Fills keys (counters 0..n), values and absent keys (counters n..2n) for a table of n keys. */
static int make_inputs(Bench *b, size_t n, uint32_t seed)
{
    int ret;
    for (size_t i = 0; i < n; i++)
        b->host[i] = key_of((uint32_t)i, seed);
    if ((ret = upload(b, b->keys, n)) < 0)
        return ret;
    for (size_t i = 0; i < n; i++)
        b->host[i] = (uint32_t)i;
    if ((ret = upload(b, b->vals, n)) < 0)
        return ret;
    for (size_t i = 0; i < n; i++)
        b->host[i] = key_of((uint32_t)(n + i), seed);
    return upload(b, b->absent, n);
}

/* ---- timing: one operation, run reps times, best time kept ---- */

typedef enum OpKind {
    OP_MAP_BUILD,
    OP_MAP_FIND,
    OP_SORTED_BUILD,
    OP_SORTED_FIND,
    OP_MM_BUILD,
    OP_MM_RETRIEVE,
    OP_INDEX_BUILD,
    OP_INDEX_IDS,
    OP_INDEX_KEYS
} OpKind;

typedef struct Op {
    OpKind kind;
    void *handle;
    const uint32_t *in;
    size_t n;
    size_t total; /* multimap retrieve: values written by the last run */
} Op;

static int run_op(Bench *b, Op *op)
{
    switch (op->kind) {
    case OP_MAP_BUILD:
        return ghm_map_build(op->handle, op->in, b->vals, op->n);
    case OP_MAP_FIND:
        return ghm_map_find(op->handle, op->in, op->n, b->out);
    case OP_SORTED_BUILD:
        return ghm_sorted_build(op->handle, op->in, b->vals, op->n);
    case OP_SORTED_FIND:
        return ghm_sorted_find(op->handle, op->in, op->n, b->out);
    case OP_MM_BUILD:
        return ghm_multimap_build(op->handle, op->in, b->vals, op->n);
    case OP_MM_RETRIEVE: {
        /* offsets (n + 1 entries) into out2, the values into out; both hold cap + 1 */
        return ghm_multimap_retrieve(op->handle, op->in, op->n, b->out2, b->out, b->cap + 1,
                                     &op->total);
    }
    case OP_INDEX_BUILD:
        return ghm_index_build(op->handle, op->in, op->n);
    case OP_INDEX_IDS:
        return ghm_index_ids(op->handle, op->in, op->n, b->out2);
    case OP_INDEX_KEYS:
        return ghm_index_keys(op->handle, op->in, op->n, b->out);
    }
    return GHM_ERR_INVALID;
}

/* Best wall time of reps runs in seconds, or a negative GHM_ERR_* from the operation. */
static int time_op(Bench *b, Op *op, double *best)
{
    *best = 0.0;
    for (int r = 0; r < b->reps; r++) {
        double t0 = ghm_now();
        int ret = run_op(b, op);
        if (ret == GHM_OK)
            ret = ghm_context_sync(b->ctx);
        double dt = ghm_now() - t0;
        if (ret < 0)
            return ret;
        if (r == 0 || dt < *best)
            *best = dt;
    }
    return GHM_OK;
}

static double rate(size_t n, double seconds) { return seconds > 0 ? (double)n / seconds : 0.0; }

static int add_row(json_t *rows, json_t *row)
{
    if (!row || json_array_append_new(rows, row) < 0) {
        ghm_cli_error("bench hash", "out of memory");
        return GHM_ERR_NOMEM;
    }
    return GHM_OK;
}

static int report_failure(const char *what, int ret)
{
    ghm_cli_error("bench hash", "%s: %s", what, ghm_strerror(ret));
    return ret;
}

/* ---- the measurements ---- */

static const char *layout_name(GhmMapLayout l) { return l == GHM_MAP_THESIS ? "thesis" : "bucketed"; }

/* "bucketed" / "thesis" for the cuckoo layouts, else the scheme's name. */
static const char *kind_name(Kind k)
{
    return k.scheme == GHM_MAP_CUCKOO ? layout_name(k.layout) : ghm_map_scheme_name(k.scheme);
}

/* The options of kind k at `load`, or at the highest load it takes when that is lower (two-level
 * ends at GHM_MAP_TWO_LEVEL_MAX_LOAD): the rows print the load used. */
static GhmMapOptions kind_options(Kind k, double load)
{
    GhmMapOptions opt = ghm_map_defaults();
    opt.scheme = k.scheme;
    opt.layout = k.layout;
    opt.load_factor = load;
    if (k.scheme == GHM_MAP_TWO_LEVEL && load > GHM_MAP_TWO_LEVEL_MAX_LOAD)
        opt.load_factor = GHM_MAP_TWO_LEVEL_MAX_LOAD;
    return opt;
}

/* The kinds --scheme chose, into kinds[MAX_KINDS]; returns how many. */
static int chosen_kinds(const HashArgs *a, Kind *kinds)
{
    int count = 0;
    for (int s = 0; s < GHM_MAP_SCHEMES; s++) {
        if ((a->scheme >= 0 && a->scheme != s) || !ghm_map_scheme_name((GhmMapScheme)s))
            continue; /* not chosen, or not in this build (a scheme of another branch) */
        kinds[count++] = (Kind){(GhmMapScheme)s, GHM_MAP_BUCKETED};
        if (s == GHM_MAP_CUCKOO)
            kinds[count++] = (Kind){(GhmMapScheme)s, GHM_MAP_THESIS};
    }
    return count;
}

/* Loads a kind is measured at: open addressing and cuckoo up to 0.95 (a linear table at 0.99
 * walks ~5000 slots per absent key); Robin Hood (its point) and chaining (a bucket per 50 keys
 * there, ~25 pairs scanned per absent key: slow but bounded by the memory, not by luck) also
 * 0.99; two-level across its range, up to the paper's 0.71. */
static const double two_level_loads[] = {0.5, 0.6, GHM_MAP_TWO_LEVEL_MAX_LOAD};

static int full_load(Kind k)
{
    return k.scheme == GHM_MAP_ROBIN_HOOD || k.scheme == GHM_MAP_ROBIN_HOOD_RANDOM ||
           k.scheme == GHM_MAP_CHAINING;
}

static int kind_loads(Kind k)
{
    if (k.scheme == GHM_MAP_TWO_LEVEL)
        return 3;
    return full_load(k) ? 5 : 4;
}

static double kind_load(Kind k, int l)
{
    return k.scheme == GHM_MAP_TWO_LEVEL ? two_level_loads[l] : loads[l];
}

/* One map configuration at n keys: insert, find present, find absent. A build that fails within
 * its rebuild budget is recorded as failed, not fatal. */
static int bench_map(Bench *b, Kind kind, double load, size_t n)
{
    GhmMapOptions opt = kind_options(kind, load);
    GhmMap *map = NULL;
    int ret = ghm_map_create(b->ctx, &opt, &map);
    if (ret < 0)
        return report_failure("map create", ret);
    double t_ins = 0, t_hit = 0, t_miss = 0;
    Op build = {OP_MAP_BUILD, map, b->keys, n, 0};
    Op hit = {OP_MAP_FIND, map, b->keys, n, 0};
    Op miss = {OP_MAP_FIND, map, b->absent, n, 0};
    ret = time_op(b, &build, &t_ins);
    int failed = ret == GHM_ERR_BUILD_FAILED;
    if (ret == GHM_OK && (ret = time_op(b, &hit, &t_hit)) == GHM_OK)
        ret = time_op(b, &miss, &t_miss);
    GhmMapStats st = {0};
    if (ret == GHM_OK)
        ret = ghm_map_stats(map, &st);
    ghm_map_free(&map);
    if (ret < 0 && !failed)
        return report_failure("map", ret);
    printf("map       %-17s load %.2f  2^%-2d  insert %8.1f  find %8.1f  absent %8.1f M/s"
           "  probes <= %u%s\n",
           kind_name(kind), load, __builtin_ctzll(n), rate(n, t_ins) / 1e6,
           rate(n, t_hit) / 1e6, rate(n, t_miss) / 1e6, st.max_probes,
           failed ? "  (build failed)" : "");
    fflush(stdout);
    return add_row(b->map_rows,
                   json_pack("{s:s,s:s,s:f,s:I,s:b,s:f,s:f,s:f,s:I,s:I,s:i,s:I,s:i}", "scheme",
                             ghm_map_scheme_name(kind.scheme), "layout", kind_name(kind),
                             "load", load, "n", (json_int_t)n, "failed",
                             failed, "insert_keys_per_s", rate(n, t_ins),
                             "find_present_keys_per_s", rate(n, t_hit),
                             "find_absent_keys_per_s", rate(n, t_miss), "capacity",
                             (json_int_t)st.capacity, "stash_used", (json_int_t)st.stash_used,
                             "rebuilds", st.rebuilds, "bytes", (json_int_t)st.bytes,
                             "max_probes", (int)st.max_probes));
}

static int bench_sorted(Bench *b, size_t n)
{
    GhmSorted *s = NULL;
    int ret = ghm_sorted_create(b->ctx, &s);
    if (ret < 0)
        return report_failure("sorted create", ret);
    double t_build = 0, t_hit = 0, t_miss = 0;
    Op build = {OP_SORTED_BUILD, s, b->keys, n, 0};
    Op hit = {OP_SORTED_FIND, s, b->keys, n, 0};
    Op miss = {OP_SORTED_FIND, s, b->absent, n, 0};
    if ((ret = time_op(b, &build, &t_build)) == GHM_OK &&
        (ret = time_op(b, &hit, &t_hit)) == GHM_OK)
        ret = time_op(b, &miss, &t_miss);
    ghm_sorted_free(&s);
    if (ret < 0)
        return report_failure("sorted", ret);
    printf("sorted    baseline            2^%-2d  build  %8.1f  find %8.1f  absent %8.1f M/s\n",
           __builtin_ctzll(n), rate(n, t_build) / 1e6, rate(n, t_hit) / 1e6,
           rate(n, t_miss) / 1e6);
    fflush(stdout);
    return add_row(b->sorted_rows,
                   json_pack("{s:I,s:f,s:f,s:f}", "n", (json_int_t)n, "build_keys_per_s",
                             rate(n, t_build), "find_present_keys_per_s", rate(n, t_hit),
                             "find_absent_keys_per_s", rate(n, t_miss)));
}

/* Queries with `percent` % absent keys, spread evenly, into b->queries. */
static int make_mixed_queries(Bench *b, size_t n, int percent)
{
    uint32_t *host = b->host;
    int ret = ghm_buffer_download(b->ctx, host, b->keys, n * sizeof *host);
    if (ret < 0)
        return report_failure("download", ret);
    for (size_t i = 0; i < n; i++)
        if ((uint32_t)(i * 2654435761u) % 100u < (uint32_t)percent)
            host[i] = key_of((uint32_t)(n + i), (uint32_t)b->args->common.seed);
    return upload(b, b->queries, n);
}

static int absent_row(Bench *b, const char *what, double load, size_t n, int percent, double t)
{
    printf("absent    %-17s load %.2f  2^%-2d  %3d %% absent  find %8.1f M/s\n", what, load,
           __builtin_ctzll(n), percent, rate(n, t) / 1e6);
    fflush(stdout);
    return add_row(b->absent_rows, json_pack("{s:s,s:f,s:I,s:i,s:f}", "structure", what, "load",
                                             load, "n", (json_int_t)n, "absent_percent", percent,
                                             "find_keys_per_s", rate(n, t)));
}

/* Find rate vs share of absent queries: every chosen kind at load 0.8 and the sorted baseline. */
static int bench_absent_share(Bench *b, const Kind *kinds, int nkinds, size_t n)
{
    GhmMap *maps[MAX_KINDS] = {NULL};
    double load[MAX_KINDS] = {0};
    GhmSorted *s = NULL;
    int ret = GHM_OK;
    for (int k = 0; k < nkinds && ret == GHM_OK; k++) {
        GhmMapOptions opt = kind_options(kinds[k], 0.8);
        load[k] = opt.load_factor;
        if ((ret = ghm_map_create(b->ctx, &opt, &maps[k])) == GHM_OK)
            ret = ghm_map_build(maps[k], b->keys, b->vals, n);
    }
    if (ret == GHM_OK && (ret = ghm_sorted_create(b->ctx, &s)) == GHM_OK)
        ret = ghm_sorted_build(s, b->keys, b->vals, n);
    for (int p = 0; p < 5 && ret == GHM_OK; p++) {
        if ((ret = make_mixed_queries(b, n, absent_percent[p])) < 0)
            break;
        double t = 0;
        for (int k = 0; k < nkinds && ret == GHM_OK; k++) {
            Op find = {OP_MAP_FIND, maps[k], b->queries, n, 0};
            if ((ret = time_op(b, &find, &t)) == GHM_OK)
                ret = absent_row(b, kind_name(kinds[k]), load[k], n, absent_percent[p], t);
        }
        Op sfind = {OP_SORTED_FIND, s, b->queries, n, 0};
        if (ret == GHM_OK && (ret = time_op(b, &sfind, &t)) == GHM_OK)
            ret = absent_row(b, "sorted", 0.0, n, absent_percent[p], t);
    }
    for (int k = 0; k < nkinds; k++)
        ghm_map_free(&maps[k]);
    ghm_sorted_free(&s);
    return ret < 0 ? report_failure("absent-share", ret) : GHM_OK;
}

/* ---- the coherent-hashing paper's 2D experiment ---- */

/* The paper's three orders (section 4.2): keys by row, Morton keys queried in Morton order, and
 * bit-reversed Morton keys queried by row (no coherence). */
enum { ORDER_ROW_MAJOR, ORDER_MORTON, ORDER_BIT_REVERSAL, ORDERS };
static const char *const order_names[ORDERS] = {"row-major", "morton", "bit-reversal"};

static uint32_t pixel_key(uint32_t x, uint32_t y, uint32_t side, int order)
{
    unsigned bits = side > 1 ? (unsigned)__builtin_ctz(side) : 1; /* side: a power of two */
    if (order == ORDER_ROW_MAJOR)
        return ghm_key2d_row_major(x, y, side);
    if (order == ORDER_MORTON)
        return ghm_key2d_morton(x, y);
    return ghm_key2d_bit_reversal(x, y, bits);
}

/* Whether pixel (x, y) of the sparse image is defined: tiles of 64 x 64 pixels, a third of them
 * full (regions, as in the paper's images), and 1 pixel in 32 elsewhere (scattered detail). */
static int pixel_defined(uint32_t x, uint32_t y, uint32_t seed)
{
    if (key_of(y / 64 * 65536u + x / 64, seed) % 3 == 0)
        return 1;
    return key_of(y * 65536u + x, seed ^ 0x5555u) % 32 == 0;
}

/* The defined pixels' keys in `order` into b->keys (count in *defined) and every pixel's key into
 * b->queries, row by row, or for Morton keys in Morton order. side * side <= b->cap, side a power
 * of two up to 2^16. */
static int make_image_keys(Bench *b, uint32_t side, int order, size_t *defined)
{
    uint32_t seed = (uint32_t)b->args->common.seed;
    size_t n = 0;
    for (uint32_t y = 0; y < side; y++)
        for (uint32_t x = 0; x < side; x++)
            if (pixel_defined(x, y, seed))
                b->host[n++] = pixel_key(x, y, side, order);
    *defined = n;
    int ret = upload(b, b->keys, n);
    for (uint32_t y = 0; ret == GHM_OK && y < side; y++)
        for (uint32_t x = 0; x < side; x++)
            b->host[(size_t)y * side + x] = pixel_key(x, y, side, order);
    if (ret == GHM_OK && order == ORDER_MORTON) /* queries walk the image in Morton order */
        for (size_t i = 0; i < (size_t)side * side; i++)
            b->host[i] = (uint32_t)i;
    return ret == GHM_OK ? upload(b, b->queries, (size_t)side * side) : ret;
}

static int bench_coherent(Bench *b, const Kind *kinds, int nkinds, size_t cap)
{
    uint32_t side = 1;
    while ((size_t)side * side * 4 <= cap && side < 65536)
        side *= 2;
    int ret = GHM_OK;
    for (int order = 0; order < ORDERS && ret == GHM_OK; order++) {
        size_t n = 0, q = (size_t)side * side;
        if ((ret = make_image_keys(b, side, order, &n)) < 0)
            break;
        for (int k = 0; k < nkinds && ret == GHM_OK; k++) {
            GhmMapOptions opt = kind_options(kinds[k], full_load(kinds[k]) ? 0.99 : 0.9);
            GhmMap *map = NULL;
            double t_build = 0, t_find = 0;
            if ((ret = ghm_map_create(b->ctx, &opt, &map)) < 0)
                break;
            Op build = {OP_MAP_BUILD, map, b->keys, n, 0};
            Op find = {OP_MAP_FIND, map, b->queries, q, 0};
            ret = time_op(b, &build, &t_build);
            int failed = ret == GHM_ERR_BUILD_FAILED;
            if (ret == GHM_OK)
                ret = time_op(b, &find, &t_find);
            ghm_map_free(&map);
            if (failed)
                ret = GHM_OK;
            if (ret < 0)
                break;
            printf("coherent  %-17s load %.2f  %ux%u %-12s %zu keys  insert %8.1f  find %8.1f M/s%s\n",
                   kind_name(kinds[k]), opt.load_factor, side, side, order_names[order],
                   n, rate(n, t_build) / 1e6, rate(q, t_find) / 1e6,
                   failed ? "  (build failed)" : "");
            fflush(stdout);
            ret = add_row(b->coherent_rows,
                          json_pack("{s:s,s:f,s:i,s:s,s:I,s:I,s:b,s:f,s:f}", "layout",
                                    kind_name(kinds[k]), "load", opt.load_factor, "side",
                                    (int)side, "order", order_names[order], "keys",
                                    (json_int_t)n, "queries", (json_int_t)q, "failed", failed,
                                    "insert_keys_per_s", rate(n, t_build), "find_keys_per_s",
                                    rate(q, t_find)));
        }
    }
    return ret < 0 ? report_failure("coherent", ret) : GHM_OK;
}

/* n pairs, each of n / m distinct keys m times (interleaved), values 0..n-1. Builds into
 * b->queries the keys, and into b->absent's first n / m entries the distinct keys. */
static int make_multimap_inputs(Bench *b, size_t n, size_t m)
{
    size_t k = n / m;
    uint32_t seed = (uint32_t)b->args->common.seed + 7u;
    for (size_t i = 0; i < n; i++)
        b->host[i] = key_of((uint32_t)(i % k), seed);
    int ret = upload(b, b->queries, n);
    for (size_t i = 0; ret == GHM_OK && i < k; i++)
        b->host[i] = key_of((uint32_t)i, seed);
    return ret == GHM_OK ? upload(b, b->absent, k) : ret;
}

static int bench_multimap(Bench *b, size_t n)
{
    int ret = GHM_OK;
    for (int mi = 0; mi < 7 && ret == GHM_OK; mi++) {
        size_t m = (size_t)multiplicities[mi];
        if (m > n)
            break;
        if ((ret = make_multimap_inputs(b, n, m)) < 0)
            break;
        GhmMultimap *mm = NULL;
        if ((ret = ghm_multimap_create(b->ctx, 0.0, &mm)) < 0)
            break;
        double t_build = 0, t_get = 0;
        Op build = {OP_MM_BUILD, mm, b->queries, n, 0};
        Op get = {OP_MM_RETRIEVE, mm, b->absent, n / m, 0};
        if ((ret = time_op(b, &build, &t_build)) == GHM_OK)
            ret = time_op(b, &get, &t_get);
        int gathered = ret == GHM_OK && get.total == n; /* every value was copied */
        ghm_multimap_free(&mm);
        if (ret < 0)
            break;
        printf("multimap  x%-2zu                 2^%-2d  build  %8.1f  retrieve %8.1f M values/s\n",
               m, __builtin_ctzll(n), rate(n, t_build) / 1e6, rate(n, t_get) / 1e6);
        fflush(stdout);
        ret = add_row(b->multimap_rows,
                      json_pack("{s:I,s:I,s:I,s:f,s:f,s:b}", "n", (json_int_t)n, "multiplicity",
                                (json_int_t)m, "keys", (json_int_t)(n / m), "build_values_per_s",
                                rate(n, t_build), "retrieve_values_per_s", rate(n, t_get),
                                "retrieve_reads_values", gathered));
    }
    return ret < 0 ? report_failure("multimap", ret) : GHM_OK;
}

static int bench_index(Bench *b, size_t n)
{
    GhmIndex *ix = NULL;
    int ret = ghm_index_create(b->ctx, 0.0, &ix);
    if (ret < 0)
        return report_failure("index create", ret);
    double t_build = 0, t_ids = 0, t_keys = 0;
    Op build = {OP_INDEX_BUILD, ix, b->keys, n, 0};
    Op ids = {OP_INDEX_IDS, ix, b->keys, n, 0};
    Op keys = {OP_INDEX_KEYS, ix, b->out2, n, 0}; /* the ids just found, in random order */
    if ((ret = time_op(b, &build, &t_build)) == GHM_OK && (ret = time_op(b, &ids, &t_ids)) == GHM_OK)
        ret = time_op(b, &keys, &t_keys);
    ghm_index_free(&ix);
    if (ret < 0)
        return report_failure("index", ret);
    printf("index     unique keys         2^%-2d  build  %8.1f  key->id %8.1f  id->key %8.1f M/s\n",
           __builtin_ctzll(n), rate(n, t_build) / 1e6, rate(n, t_ids) / 1e6,
           rate(n, t_keys) / 1e6);
    fflush(stdout);
    return add_row(b->index_rows,
                   json_pack("{s:I,s:f,s:f,s:f}", "n", (json_int_t)n, "build_keys_per_s",
                             rate(n, t_build), "key_to_id_per_s", rate(n, t_ids),
                             "id_to_key_per_s", rate(n, t_keys)));
}

/* ---- set-up, the run, output ---- */

static void bench_free(Bench *b)
{
    uint32_t **bufs[] = {&b->keys, &b->vals, &b->absent, &b->queries, &b->out, &b->out2};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++)
        ghm_buffer_free(b->ctx, (void **)bufs[i]);
    free(b->host);
    json_decref(b->map_rows);
    json_decref(b->absent_rows);
    json_decref(b->sorted_rows);
    json_decref(b->multimap_rows);
    json_decref(b->index_rows);
    json_decref(b->coherent_rows);
}

static int bench_alloc(Bench *b, size_t cap)
{
    b->cap = cap;
    uint32_t **bufs[] = {&b->keys, &b->vals, &b->absent, &b->queries, &b->out, &b->out2};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        /* + 1: the n + 1 offsets of a multimap retrieve of n keys */
        int ret = ghm_buffer_alloc(b->ctx, (cap + 1) * sizeof(uint32_t), (void **)bufs[i]);
        if (ret < 0)
            return report_failure("allocating backend memory", ret);
    }
    b->host = malloc(cap * sizeof *b->host);
    b->map_rows = json_array();
    b->absent_rows = json_array();
    b->sorted_rows = json_array();
    b->multimap_rows = json_array();
    b->index_rows = json_array();
    b->coherent_rows = json_array();
    if (!b->host || !b->map_rows || !b->absent_rows || !b->sorted_rows || !b->multimap_rows ||
        !b->index_rows || !b->coherent_rows)
        return report_failure("allocating host memory", GHM_ERR_NOMEM);
    return GHM_OK;
}

static int run_all(Bench *b, int lo, int hi)
{
    int ret = GHM_OK;
    uint32_t seed = (uint32_t)b->args->common.seed;
    Kind kinds[MAX_KINDS];
    int nkinds = chosen_kinds(b->args, kinds);
    for (int lg = lo; lg <= hi && ret == GHM_OK; lg++) {
        size_t n = (size_t)1 << lg;
        if ((ret = make_inputs(b, n, seed)) < 0)
            break;
        for (int k = 0; k < nkinds && ret == GHM_OK; k++)
            for (int l = 0; l < kind_loads(kinds[k]) && ret == GHM_OK; l++)
                ret = bench_map(b, kinds[k], kind_load(kinds[k], l), n);
        if (ret == GHM_OK)
            ret = bench_sorted(b, n);
    }
    size_t n = (size_t)1 << hi;
    if (ret == GHM_OK) /* inputs of the largest N are still in place */
        ret = bench_absent_share(b, kinds, nkinds, n);
    if (ret == GHM_OK)
        ret = bench_index(b, n);
    if (ret == GHM_OK)
        ret = bench_multimap(b, n);
    if (ret == GHM_OK) /* last: it overwrites the keys */
        ret = bench_coherent(b, kinds, nkinds, n);
    return ret;
}

/* Writes the JSON atomically (ghm_json_write_file), so FILE is complete or untouched. */
static int write_json(const Bench *b, const char *path, int lo, int hi)
{
    char desc[256];
    ghm_context_describe(b->ctx, desc, sizeof desc);
    json_t *root = json_pack(
        "{s:s,s:s,s:s,s:i,s:I,s:i,s:i,s:i,s:O,s:O,s:O,s:O,s:O,s:O}", "benchmark", "hash", "backend",
        ghm_context_backend_name(b->ctx), "device", desc, "threads",
        ghm_context_threads(b->ctx), "seed", (json_int_t)b->args->common.seed, "reps", b->reps,
        "min_log2", lo, "max_log2", hi, "map", b->map_rows, "absent_share", b->absent_rows,
        "sorted", b->sorted_rows, "multimap", b->multimap_rows, "index", b->index_rows,
        "coherent", b->coherent_rows);
    return ghm_json_write_file(path, root) < 0 ? GHM_ERR_IO : GHM_OK;
}

int ghm_bench_hash(int argc, char **argv)
{
    HashArgs a;
    if (ghm_bench_hash_args(argc, argv, &a) < 0)
        return GHM_EXIT_ERROR;
    if (a.common.help) {
        ghm_bench_hash_help();
        return GHM_EXIT_FOUND;
    }
    Bench b = {0};
    if (ghm_cli_context(&a.common, &b.ctx) < 0)
        return GHM_EXIT_ERROR;
    int lo = (int)a.min_log2;
    int hi = a.max_log2 ? (int)a.max_log2
                        : ghm_context_backend(b.ctx) == GHM_BACKEND_CPU ? 22 : 26;
    b.reps = (int)a.reps;
    if (a.quick) {
        lo = 16;
        hi = 18;
        b.reps = 1;
    }
    b.args = &a;
    int ret = GHM_OK;
    if (lo > hi) {
        ghm_cli_error("bench hash", "--min-log2 %d is above --max-log2 %d", lo, hi);
        ret = GHM_ERR_INVALID;
    }
    char desc[256];
    ghm_context_describe(b.ctx, desc, sizeof desc);
    if (ret == GHM_OK) {
        printf("bench hash: %s, 2^%d .. 2^%d keys, best of %d, rates in millions per second\n",
               desc, lo, hi, b.reps);
        ret = bench_alloc(&b, (size_t)1 << hi);
    }
    if (ret == GHM_OK)
        ret = run_all(&b, lo, hi);
    if (ret == GHM_OK && a.json_out)
        ret = write_json(&b, a.json_out, lo, hi);
    bench_free(&b);
    ghm_context_free(&b.ctx);
    return ret == GHM_OK ? GHM_EXIT_FOUND : GHM_EXIT_ERROR;
}
