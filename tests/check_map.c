/* check_map.c - GhmMap on the CPU backend: every scheme (the cuckoo map's two layouts, open
 * addressing's three probe sequences, both Robin Hood sequences, chaining, two-level cuckoo),
 * sizes, duplicates, extreme keys, load factors, the failure path and the rebuild budget, and
 * independence of the thread count. A scheme this build does not have (GHM_ERR_UNSUPPORTED from
 * create) is skipped with a line saying so. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_map.h"
#include "hash_internal.h"
#include "probe_family.h"
#include "two_level_family.h"
#include "test_support.h"

/* Check records every passing assertion (a write to its log pipe), so loops over a million
 * entries count the failures and assert once. */
/* n distinct keys (a permutation of counters), and m more keys none of them equals. */
static uint32_t *unique_keys(size_t n, uint32_t seed)
{
    uint32_t *k = malloc((n ? n : 1) * sizeof *k);
    ck_assert_ptr_nonnull(k);
    for (size_t i = 0; i < n; i++)
        k[i] = ghmi_permute32((uint32_t)i, seed);
    return k;
}

static GhmContext *context_with_threads(int threads, uint64_t seed)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = GHM_BACKEND_CPU;
    opt.threads = threads;
    opt.seed = seed;
    return ghm_test_context_opt(opt);
}

static GhmMapOptions options(GhmMapLayout layout, double load, int hash_functions)
{
    GhmMapOptions opt = ghm_map_defaults();
    opt.layout = layout;
    opt.load_factor = load;
    opt.hash_functions = hash_functions;
    return opt;
}

/* Every kind of map: the cuckoo layouts, then one per other scheme (kind = scheme + 1). */
enum {
    MAP_KINDS = 2 + GHM_MAP_SCHEMES - 1,
    ROBIN_KIND = GHM_MAP_ROBIN_HOOD + 1, /* the Robin Hood kinds: ROBIN_KIND .. ROBIN_KINDS_END-1 */
    ROBIN_KINDS_END = GHM_MAP_ROBIN_HOOD_RANDOM + 2,
    CHAIN_KIND = GHM_MAP_CHAINING + 1
};

/* The options of a kind at `load`; a two-level map takes at most GHM_MAP_TWO_LEVEL_MAX_LOAD
 * (higher loads are out of its range), so a loop over kinds at a higher load gets that. */
static GhmMapOptions map_kind(int kind, double load)
{
    GhmMapOptions opt = ghm_map_defaults();
    opt.load_factor = load;
    if (kind < 2)
        opt.layout = (GhmMapLayout)kind;
    else
        opt.scheme = (GhmMapScheme)(kind - 1);
    if (opt.scheme == GHM_MAP_TWO_LEVEL && load > GHM_MAP_TWO_LEVEL_MAX_LOAD)
        opt.load_factor = GHM_MAP_TWO_LEVEL_MAX_LOAD;
    return opt;
}

/* 1 when this build lacks the kind's scheme (create says GHM_ERR_UNSUPPORTED), after a line
 * that says it was skipped. */
static int kind_missing(GhmContext *ctx, int kind)
{
    GhmMapOptions opt = map_kind(kind, 0.0);
    GhmMap *map = NULL;
    int ret = ghm_map_create(ctx, &opt, &map);
    ghm_map_free(&map);
    if (ret == GHM_ERR_UNSUPPORTED)
        printf("map scheme %d: not in this build, skipped\n", (int)opt.scheme);
    else
        ck_assert_int_eq(ret, GHM_OK);
    return ret == GHM_ERR_UNSUPPORTED;
}

static const char *kind_name(int kind)
{
    const char *name = kind == 0   ? "cuckoo bucketed"
                       : kind == 1 ? "cuckoo thesis"
                                   : ghm_map_scheme_name((GhmMapScheme)(kind - 1));
    return name ? name : "(not in this build)";
}

/* Builds n unique random keys with random values, checks every key, n absent keys and the
 * stats. Returns the stats for callers that count rebuilds. */
static GhmMapStats check_unique(GhmContext *ctx, const GhmMapOptions *opt, size_t n, uint32_t seed)
{
    uint32_t *all = unique_keys(2 * n, seed); /* second half: absent keys */
    uint32_t *vals = malloc((n ? n : 1) * sizeof *vals);
    uint32_t *out = malloc((n ? n : 1) * sizeof *out);
    ck_assert(vals && out);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++)
        vals[i] = rng_next(&s) & 0x7FFFFFFF;
    GhmMap *map = NULL;
    ck_assert_int_eq(ghm_map_create(ctx, opt, &map), GHM_OK);
    int ret = ghm_map_build(map, all, vals, n);
    ck_assert_msg(ret == GHM_OK, "build of %zu keys at load %.2f layout %d scheme %d: %s", n,
                  opt->load_factor, opt->layout, opt->scheme, ghm_strerror(ret));
    ck_assert_int_eq(ghm_map_find(map, all, n, out), GHM_OK);
    CHECK_EACH(n, out[i] == vals[i]);
    ck_assert_int_eq(ghm_map_find(map, all + n, n, out), GHM_OK);
    CHECK_EACH(n, out[i] == GHM_NOT_FOUND);
    GhmMapStats st;
    ck_assert_int_eq(ghm_map_stats(map, &st), GHM_OK);
    ck_assert_uint_eq(st.size, n);
    ck_assert_uint_ge(st.capacity, n);
    ck_assert_uint_ge(st.bytes, st.capacity * 8);
    ghm_map_free(&map);
    ck_assert_ptr_null(map);
    free(all);
    free(vals);
    free(out);
    return st;
}

START_TEST(test_sizes_both_layouts)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const size_t sizes[] = {0, 1, 2, 1000, 1000000};
    for (int layout = 0; layout < 2; layout++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
            GhmMapOptions opt = options((GhmMapLayout)layout, 0.0, 0);
            check_unique(ctx, &opt, sizes[i], (uint32_t)(7 + i));
        }
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_more_hash_functions)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmMapOptions b3 = options(GHM_MAP_BUCKETED, 0.9, 3);
    check_unique(ctx, &b3, 100000, 3);
    for (int h = 2; h <= 5; h++) {
        GhmMapOptions t = options(GHM_MAP_THESIS, h == 2 ? 0.4 : 0.8, h);
        check_unique(ctx, &t, 100000, (uint32_t)h);
    }
    ghm_context_free(&ctx);
}
END_TEST

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Expected answer per key: the smallest value, found with a sorted (key << 32 | value) list. */
static uint32_t reference_min(const uint64_t *sorted, size_t n, uint32_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uint32_t)(sorted[mid] >> 32) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && (uint32_t)(sorted[lo] >> 32) == key ? (uint32_t)sorted[lo] : GHM_NOT_FOUND;
}

/* n pairs drawn from `distinct` keys (many duplicates, extreme keys included); checks that each
 * key answers its smallest value and that size counts distinct keys. */
static void check_duplicates(GhmContext *ctx, const GhmMapOptions *opt, size_t n,
                             size_t distinct)
{
    static const uint32_t extreme[] = {0, 1, 0xFFFFFFFEu, 0xFFFFFFFFu, 0x80000000u};
    uint32_t *pool = unique_keys(distinct, 99);
    for (size_t i = 0; i < 5 && i < distinct; i++)
        pool[i] = extreme[i];
    uint32_t *keys = malloc(n * sizeof *keys), *vals = malloc(n * sizeof *vals);
    uint32_t *out = malloc(n * sizeof *out);
    uint64_t *ref = malloc(n * sizeof *ref);
    ck_assert(keys && vals && out && ref);
    uint64_t s = 12345;
    for (size_t i = 0; i < n; i++) {
        keys[i] = pool[rng_next(&s) % distinct];
        vals[i] = rng_next(&s);
        ref[i] = (uint64_t)keys[i] << 32 | vals[i];
    }
    qsort(ref, n, sizeof *ref, cmp_pair);
    size_t want_size = 0;
    for (size_t i = 0; i < n; i++)
        want_size += i == 0 || (ref[i] >> 32) != (ref[i - 1] >> 32);
    GhmMap *map = NULL;
    ck_assert_int_eq(ghm_map_create(ctx, opt, &map), GHM_OK);
    ck_assert_int_eq(ghm_map_build(map, keys, vals, n), GHM_OK);
    ck_assert_int_eq(ghm_map_find(map, keys, n, out), GHM_OK);
    CHECK_EACH(n, out[i] == reference_min(ref, n, keys[i]));
    GhmMapStats st;
    ck_assert_int_eq(ghm_map_stats(map, &st), GHM_OK);
    ck_assert_uint_eq(st.size, want_size);
    ghm_map_free(&map);
    free(pool);
    free(keys);
    free(vals);
    free(out);
    free(ref);
}

START_TEST(test_duplicates_keep_smallest)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    for (int kind = 0; kind < MAP_KINDS; kind++) {
        if (kind_missing(ctx, kind))
            continue;
        GhmMapOptions opt = map_kind(kind, 0.0);
        check_duplicates(ctx, &opt, 2, 1);
        check_duplicates(ctx, &opt, 1000, 10);
        check_duplicates(ctx, &opt, 200000, 50000);
        check_duplicates(ctx, &opt, 200000, 1000);
        /* More dropped copies than a Robin Hood build lists: the pass over every pair. */
        check_duplicates(ctx, &opt, 300000, 100);
    }
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_extreme_keys)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    const uint32_t keys[] = {0, 1, 0xFFFFFFFEu, 0xFFFFFFFFu, 0x80000000u};
    const uint32_t vals[] = {10, 11, 12, GHM_NOT_FOUND - 1, 0};
    const uint32_t absent[] = {2, 0x7FFFFFFFu, 0x80000001u, 0xFFFFFFFDu};
    for (int kind = 0; kind < MAP_KINDS; kind++) {
        if (kind_missing(ctx, kind))
            continue;
        GhmMapOptions opt = map_kind(kind, 0.0);
        GhmMap *map = NULL;
        uint32_t out[5];
        ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
        /* Before any build every key is absent, 0xFFFFFFFF included. */
        ck_assert_int_eq(ghm_map_find(map, keys, 5, out), GHM_OK);
        for (int i = 0; i < 5; i++)
            ck_assert_uint_eq(out[i], GHM_NOT_FOUND);
        ck_assert_int_eq(ghm_map_build(map, keys, vals, 5), GHM_OK);
        ck_assert_int_eq(ghm_map_find(map, keys, 5, out), GHM_OK);
        ck_assert_mem_eq(out, vals, sizeof vals);
        ck_assert_int_eq(ghm_map_find(map, absent, 4, out), GHM_OK);
        for (int i = 0; i < 4; i++)
            ck_assert_uint_eq(out[i], GHM_NOT_FOUND);
        /* A rebuild replaces the content: 0xFFFFFFFF without it is absent again. */
        ck_assert_int_eq(ghm_map_build(map, keys, vals, 3), GHM_OK);
        ck_assert_int_eq(ghm_map_find(map, keys, 5, out), GHM_OK);
        ck_assert_uint_eq(out[2], 12);
        ck_assert_uint_eq(out[3], GHM_NOT_FOUND);
        ck_assert_uint_eq(out[4], GHM_NOT_FOUND);
        GhmMapStats st;
        ck_assert_int_eq(ghm_map_stats(map, &st), GHM_OK);
        ck_assert_uint_eq(st.size, 3);
        ghm_map_free(&map);
    }
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_thread_counts_agree)
{
    enum { N = 300000 };
    uint32_t *keys = malloc(N * sizeof *keys), *vals = malloc(N * sizeof *vals);
    uint32_t *ref = malloc(N * sizeof *ref), *out = malloc(N * sizeof *out);
    ck_assert(keys && vals && ref && out);
    uint64_t s = 77;
    for (int i = 0; i < N; i++) {
        keys[i] = rng_next(&s) % 100000; /* duplicates, and queries that miss */
        vals[i] = rng_next(&s);
    }
    static const int threads[] = {1, 2, 4};
    for (int kind = 0; kind < MAP_KINDS; kind++)
        for (int t = 0; t < 3; t++) {
            GhmContext *ctx = context_with_threads(threads[t], 5);
            if (kind_missing(ctx, kind)) {
                ghm_context_free(&ctx);
                break;
            }
            GhmMapOptions opt = map_kind(kind, 0.9);
            GhmMap *map = NULL;
            ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
            ck_assert_int_eq(ghm_map_build(map, keys, vals, N / 2), GHM_OK);
            ck_assert_int_eq(ghm_map_find(map, keys, N, t == 0 ? ref : out), GHM_OK);
            if (t > 0)
                ck_assert_mem_eq(ref, out, N * sizeof *out);
            ghm_map_free(&map);
            ghm_context_free(&ctx);
        }
    free(keys);
    free(vals);
    free(ref);
    free(out);
}
END_TEST

START_TEST(test_bad_arguments)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmMap *map = NULL;
    GhmMapOptions opt = ghm_map_defaults();
    ck_assert_int_eq(ghm_map_create(NULL, &opt, &map), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_map_create(ctx, &opt, NULL), GHM_ERR_INVALID);
    opt.load_factor = 1.0;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt.load_factor = -0.1;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt = options(GHM_MAP_THESIS, 0.5, 6);
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt = options(GHM_MAP_BUCKETED, 0.5, 4);
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt = options((GhmMapLayout)9, 0.5, 0);
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt = map_kind(2, 0.5); /* open addressing has one probe sequence: nothing to choose */
    opt.hash_functions = 2;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt = map_kind(2, 0.5);
    opt.layout = GHM_MAP_THESIS;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt = map_kind(0, 0.5);
    opt.scheme = GHM_MAP_SCHEMES;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt = ghm_map_defaults();
    opt.max_rebuilds = INT_MAX; /* attempt <= max_rebuilds would never end */
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    opt.max_rebuilds = -1;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    ck_assert_ptr_null(map);
    opt = ghm_map_defaults();
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
    uint32_t k = 1, v = 2, o = 0;
    ck_assert_int_eq(ghm_map_build(map, NULL, &v, 1), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_map_build(map, &k, NULL, 1), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_map_build(map, NULL, NULL, 0), GHM_OK);
    ck_assert_int_eq(ghm_map_find(map, &k, 1, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_map_find(NULL, &k, 1, &o), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_map_find(map, &k, 1, &o), GHM_OK);
    ck_assert_uint_eq(o, GHM_NOT_FOUND);
    ck_assert_int_eq(ghm_map_stats(map, NULL), GHM_ERR_INVALID);
    ghm_map_free(&map);
    ghm_map_free(&map);
    ghm_map_free(NULL);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_scheme_names)
{
    for (int i = 0; i < GHM_MAP_SCHEMES; i++) {
        const char *name = ghm_map_scheme_name((GhmMapScheme)i);
        if (!name) { /* a scheme of another branch, not in this build */
            GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
            ck_assert(kind_missing(ctx, i + 1));
            ghm_context_free(&ctx);
            continue;
        }
        ck_assert_int_eq(ghm_map_scheme_from_name(name), i);
    }
    ck_assert_ptr_null(ghm_map_scheme_name(GHM_MAP_SCHEMES));
    ck_assert_ptr_null(ghm_map_scheme_name((GhmMapScheme)-1));
    ck_assert_int_eq(ghm_map_scheme_from_name("robin"), -1);
    ck_assert_int_eq(ghm_map_scheme_from_name("two-level"), GHM_MAP_TWO_LEVEL);
    ck_assert_int_eq(ghm_map_scheme_from_name(NULL), -1);
}
END_TEST

START_TEST(test_schemes_sizes)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const size_t sizes[] = {0, 1, 2, 1000, 1000000};
    for (int kind = 2; kind < MAP_KINDS; kind++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes && !kind_missing(ctx, kind); i++) {
            GhmMapOptions opt = map_kind(kind, 0.0);
            GhmMapStats st = check_unique(ctx, &opt, sizes[i], (uint32_t)(17 + i));
            ck_assert_uint_ge(st.max_probes, sizes[i] ? 1 : 0);
        }
    ghm_context_free(&ctx);
}
END_TEST

/* The open-addressing and Robin Hood schemes at loads up to 0.99, the table as full as asked;
 * Robin Hood keeps every key within its 15 probes there. */
START_TEST(test_schemes_load_factors)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const double loads[] = {0.5, 0.8, 0.95, 0.99};
    for (int kind = 2; kind < ROBIN_KINDS_END; kind++)
        for (int i = 0; i < 4; i++) {
            GhmMapOptions opt = map_kind(kind, loads[i]);
            GhmMapStats st = check_unique(ctx, &opt, 1 << 18, (uint32_t)(200 + i));
            ck_assert_double_le((double)(1 << 18) / (double)st.capacity, loads[i] + 1e-9);
            ck_assert_double_ge((double)(1 << 18) / (double)st.capacity, loads[i] - 0.001);
            if (opt.scheme == GHM_MAP_ROBIN_HOOD || opt.scheme == GHM_MAP_ROBIN_HOOD_RANDOM)
                ck_assert_uint_le(st.max_probes, 15);
            printf("map %s, load %.2f, 2^18 keys: longest probe sequence %u, %d rebuilds\n",
                   kind_name(kind), loads[i], st.max_probes, st.rebuilds);
        }
    ghm_context_free(&ctx);
}
END_TEST

/* Keys of a sparse 2D image (the coherent-hashing paper's setting), row-major and Morton order,
 * at load 0.99; every defined pixel found, every other one absent. */
static uint32_t morton2(uint32_t x, uint32_t y)
{
    uint32_t k = 0;
    for (int b = 0; b < 16; b++)
        k |= (x >> b & 1u) << (2 * b) | (y >> b & 1u) << (2 * b + 1);
    return k;
}

START_TEST(test_robin_hood_image_keys)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    enum { W = 1024, H = 1024 };
    uint32_t *keys = malloc((size_t)W * H * sizeof *keys);
    uint32_t *out = malloc((size_t)W * H * sizeof *out);
    uint8_t *defined = malloc((size_t)W * H);
    ck_assert(keys && out && defined);
    for (int order = 0; order < 2; order++) {
        size_t n = 0;
        uint64_t s = 4242;
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++) {
                /* a disc and a sprinkle: the defined pixels of a sparse image */
                int dx = (int)x - W / 2, dy = (int)y - H / 2;
                defined[y * W + x] = dx * dx + dy * dy < 300 * 300 || rng_next(&s) % 16 == 0;
                if (defined[y * W + x])
                    keys[n++] = order ? morton2(x, y) : y * W + x;
            }
        for (int kind = ROBIN_KIND; kind < ROBIN_KINDS_END; kind++) {
            GhmMapOptions opt = map_kind(kind, 0.99);
            GhmMap *map = NULL;
            ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
            ck_assert_int_eq(ghm_map_build(map, keys, keys, n), GHM_OK);
            for (uint32_t y = 0; y < H; y++)
                for (uint32_t x = 0; x < W; x++)
                    keys[y * W + x] = order ? morton2(x, y) : y * W + x;
            ck_assert_int_eq(ghm_map_find(map, keys, (size_t)W * H, out), GHM_OK);
            CHECK_EACH((size_t)W * H, out[i] == (defined[i] ? keys[i] : GHM_NOT_FOUND));
            ghm_map_free(&map);
            /* the defined keys again, for the next kind */
            n = 0;
            for (size_t i = 0; i < (size_t)W * H; i++)
                if (defined[i])
                    keys[n++] = keys[i];
        }
    }
    free(keys);
    free(out);
    free(defined);
    ghm_context_free(&ctx);
}
END_TEST

/* Keys on a power-of-two lattice (a grid's z column, packed fields): with an even |H| their
 * coherent homes k mod |H| would fall on two slots and every attempt would fail alike; the
 * prime |H| spreads them. Every key found, its neighbours absent. */
START_TEST(test_robin_hood_strided_keys)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    enum { N = 65536 };
    uint32_t *keys = malloc(N * sizeof *keys), *out = malloc(N * sizeof *out);
    ck_assert(keys && out);
    const double loads[] = {0.5, 0.9, 0.99};
    for (int kind = ROBIN_KIND; kind < ROBIN_KINDS_END; kind++)
        for (int l = 0; l < 3; l++) {
            for (uint32_t i = 0; i < N; i++)
                keys[i] = i << 16;
            GhmMapOptions opt = map_kind(kind, loads[l]);
            GhmMap *map = NULL;
            ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
            ck_assert_int_eq(ghm_map_build(map, keys, keys, N), GHM_OK);
            ck_assert_int_eq(ghm_map_find(map, keys, N, out), GHM_OK);
            CHECK_EACH(N, out[i] == (uint32_t)i << 16);
            for (uint32_t i = 0; i < N; i++)
                keys[i] = i << 16 | 1u;
            ck_assert_int_eq(ghm_map_find(map, keys, N, out), GHM_OK);
            CHECK_EACH(N, out[i] == GHM_NOT_FOUND);
            ghm_map_free(&map);
        }
    free(keys);
    free(out);
    ghm_context_free(&ctx);
}
END_TEST

/* 100 keys on one coherent sequence (equal modulo the 241 slots of 120 pairs at load 0.5): at
 * most 15 fit in it (fewer where two ages' offsets meet), the others go to the stash; 20 of them
 * also come again with smaller values (a copy may be stashed too, as a word of its own). Every
 * key answers its smallest value, its neighbours are absent, and the map counts 100 keys. */
START_TEST(test_robin_hood_stash)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    enum { N = 100, DUPS = 20 };
    uint32_t keys[N + DUPS], values[N + DUPS], out[N], expect[N];
    for (uint32_t i = 0; i < N; i++) {
        keys[i] = i * 241;
        values[i] = 500 + i;
        expect[i] = i < DUPS ? i : 500 + i;
    }
    for (uint32_t i = 0; i < DUPS; i++) {
        keys[N + i] = i * 241;
        values[N + i] = i;
    }
    GhmMapOptions opt = map_kind(ROBIN_KIND, 0.5);
    opt.max_rebuilds = 0;
    GhmMap *map = NULL;
    GhmMapStats st;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
    ck_assert_int_eq(ghm_map_build(map, keys, values, N + DUPS), GHM_OK);
    ck_assert_int_eq(ghm_map_stats(map, &st), GHM_OK);
    ck_assert_uint_eq(st.size, N);
    ck_assert_uint_ge(st.stash_used, N - GHMI_RH_MAX_AGE);
    ck_assert_uint_le(st.stash_used, N + DUPS - 1);
    ck_assert_int_eq(ghm_map_find(map, keys, N, out), GHM_OK);
    CHECK_EACH(N, out[i] == expect[i]);
    for (uint32_t i = 0; i < N; i++)
        keys[i] = i * 241 + 1;
    ck_assert_int_eq(ghm_map_find(map, keys, N, out), GHM_OK);
    CHECK_EACH(N, out[i] == GHM_NOT_FOUND);
    ghm_map_free(&map);
    ghm_context_free(&ctx);
}
END_TEST

/* A Robin Hood build past its 2^28 pairs is refused before it reads an array. */
START_TEST(test_robin_hood_too_large)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmMapOptions opt = map_kind(ROBIN_KIND, 0.0);
    GhmMap *map = NULL;
    uint32_t k = 1, v = 1, o = 0;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
    ck_assert_int_eq(ghm_map_build(map, &k, &v, GHM_MAP_ROBIN_HOOD_MAX_PAIRS + 1),
                     GHM_ERR_TOO_LARGE);
    ck_assert_int_eq(ghm_map_find(map, &k, 1, &o), GHM_OK);
    ck_assert_uint_eq(o, GHM_NOT_FOUND);
    ck_assert_int_eq(ghm_map_build(map, &k, &v, 1), GHM_OK);
    ck_assert_int_eq(ghm_map_find(map, &k, 1, &o), GHM_OK);
    ck_assert_uint_eq(o, 1);
    ghm_map_free(&map);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_load_factors)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const double loads[] = {0.5, 0.8, 0.9, 0.95};
    for (int layout = 0; layout < 2; layout++)
        for (int i = 0; i < 4; i++) {
            GhmMapOptions opt = options((GhmMapLayout)layout, loads[i], 0);
            GhmMapStats st = check_unique(ctx, &opt, 1 << 18, (uint32_t)(100 + i));
            /* The table really is as full as asked (within bucket rounding). */
            ck_assert_double_le((double)(1 << 18) / (double)st.capacity, loads[i] + 1e-9);
            ck_assert_double_ge((double)(1 << 18) / (double)st.capacity, loads[i] - 0.01);
        }
    ghm_context_free(&ctx);
}
END_TEST

/* An impossible table (two thesis functions cannot pass load 0.5) must fail within the rebuild
 * budget - and leave an empty map - instead of hanging. */
START_TEST(test_impossible_load_fails)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    size_t n = 1 << 16;
    uint32_t *keys = unique_keys(n, 3);
    uint32_t *out = malloc(n * sizeof *out);
    ck_assert_ptr_nonnull(out);
    GhmMapOptions opts[] = {options(GHM_MAP_THESIS, 0.99, 2), options(GHM_MAP_THESIS, 0.7, 2)};
    for (int o = 0; o < 2; o++)
        ghm_test_map_fails_cleanly(ctx, &opts[o], keys, keys, n, 1);
    /* Keys that share one coherent Robin Hood sequence (equal modulo the table's 401 slots, the
     * first prime at or above 200 / 0.5) cannot all fit in its 15 probes and its stash of 128,
     * whatever the offsets. */
    uint32_t same[200];
    for (uint32_t i = 0; i < 200; i++)
        same[i] = i * 401;
    GhmMapOptions robin = map_kind(ROBIN_KIND, 0.5);
    ghm_test_map_fails_cleanly(ctx, &robin, same, same, 200, 8);
    /* Bucketed at 0.99 is at the edge of what two 8-slot buckets can hold: the build may fail,
     * but it must end within the budget, and a success must be complete. */
    GhmMapOptions edge = options(GHM_MAP_BUCKETED, 0.99, 2);
    edge.max_rebuilds = 2;
    GhmMap *map = NULL;
    ck_assert_int_eq(ghm_map_create(ctx, &edge, &map), GHM_OK);
    int ret = ghm_map_build(map, keys, keys, n);
    ck_assert(ret == GHM_OK || ret == GHM_ERR_BUILD_FAILED);
    ck_assert_int_eq(ghm_map_find(map, keys, n, out), GHM_OK);
    CHECK_EACH(n, out[i] == (ret == GHM_OK ? keys[i] : GHM_NOT_FOUND));
    printf("map bucketed, load 0.99, 2^16 keys: %s\n", ghm_strerror(ret));
    ghm_map_free(&map);
    free(keys);
    free(out);
    ghm_context_free(&ctx);
}
END_TEST

/* 100 seeds at load 0.95 with 2^16 keys: no build may fail (the stash and rebuilds absorb the
 * rare bad draws); prints how often they were needed. */
static void hundred_seeds(GhmMapLayout layout)
{
    size_t n = 1 << 16, stash = 0, with_stash = 0;
    int rebuilds = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        GhmContext *ctx = context_with_threads(0, seed);
        GhmMapOptions opt = options(layout, 0.95, 0);
        GhmMapStats st = check_unique(ctx, &opt, n, (uint32_t)seed * 31);
        stash += st.stash_used;
        with_stash += st.stash_used > 0;
        rebuilds += st.rebuilds;
        ghm_context_free(&ctx);
    }
    printf("map %s, load 0.95, 2^16 keys, 100 seeds: %zu keys in stashes (%zu builds), "
           "%d rebuilds\n",
           layout == GHM_MAP_THESIS ? "thesis" : "bucketed", stash, with_stash, rebuilds);
}

START_TEST(test_hundred_seeds_bucketed) { hundred_seeds(GHM_MAP_BUCKETED); }
END_TEST

START_TEST(test_hundred_seeds_thesis) { hundred_seeds(GHM_MAP_THESIS); }
END_TEST

/* The coherent-hashing paper's claim: load 0.99 with no failed build, over 100 seeds. */
START_TEST(test_robin_hood_hundred_seeds)
{
    for (int kind = ROBIN_KIND; kind < ROBIN_KINDS_END; kind++) {
        unsigned oldest = 0;
        for (uint64_t seed = 1; seed <= 100; seed++) {
            GhmContext *ctx = context_with_threads(0, seed);
            GhmMapOptions opt = map_kind(kind, 0.99);
            opt.max_rebuilds = 0; /* a failed build fails check_unique */
            GhmMapStats st = check_unique(ctx, &opt, 1 << 16, (uint32_t)seed * 37);
            oldest = st.max_probes > oldest ? st.max_probes : oldest;
            ghm_context_free(&ctx);
        }
        printf("map %s, load 0.99, 2^16 keys, 100 seeds: no rebuild, oldest key %u\n",
               kind_name(kind), oldest);
    }
}
END_TEST

/* Chaining: structured keys (counters, multiples of 2^13: what a weak bucket hash would pile into
 * a few buckets), one key copied many times (0xFFFFFFFF, an ordinary key here), and a rebuild
 * into a smaller table that reuses the memory; prints the longest chain per load. */
START_TEST(test_chaining_chains)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    enum { N = 1 << 18 };
    uint32_t *keys = malloc(2 * N * sizeof *keys), *out = malloc(2 * N * sizeof *out);
    ck_assert(keys && out);
    static const double loads[] = {0.5, 0.8, 0.95, 0.99};
    for (int shape = 0; shape < 2; shape++)
        for (int l = 0; l < 4; l++) {
            for (uint32_t i = 0; i < 2 * N; i++) /* the first N stored, the next N absent */
                keys[i] = shape ? i << 13 : i;
            GhmMapOptions opt = map_kind(CHAIN_KIND, loads[l]);
            GhmMap *map = NULL;
            ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
            ck_assert_int_eq(ghm_map_build(map, keys, keys, N), GHM_OK);
            ck_assert_int_eq(ghm_map_find(map, keys, 2 * N, out), GHM_OK);
            CHECK_EACH(2 * (size_t)N, out[i] == (i < N ? keys[i] : GHM_NOT_FOUND));
            GhmMapStats st;
            ck_assert_int_eq(ghm_map_stats(map, &st), GHM_OK);
            ck_assert_uint_eq(st.size, N);
            ck_assert_uint_ge(st.max_probes, 1);
            printf("map chaining, load %.2f, 2^18 %s keys: longest chain %u\n", loads[l],
                   shape ? "spaced" : "sequential", st.max_probes);
            ghm_map_free(&map);
        }
    GhmMapOptions opt = map_kind(CHAIN_KIND, 0.0);
    GhmMap *map = NULL;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
    for (uint32_t i = 0; i < N; i++) {
        keys[i] = 0xFFFFFFFFu;
        out[i] = N + 5 - i; /* the values, smallest last */
    }
    ck_assert_int_eq(ghm_map_build(map, keys, out, N), GHM_OK);
    uint32_t q[2] = {0xFFFFFFFFu, 0xFFFFFFFEu}, r[2];
    ck_assert_int_eq(ghm_map_find(map, q, 2, r), GHM_OK);
    ck_assert_uint_eq(r[0], 6);
    ck_assert_uint_eq(r[1], GHM_NOT_FOUND);
    GhmMapStats st;
    ck_assert_int_eq(ghm_map_stats(map, &st), GHM_OK);
    ck_assert_uint_eq(st.size, 1);
    ck_assert_uint_eq(st.max_probes, 1);
    /* smaller content into the same map: the old key is gone */
    uint32_t k2[3] = {7, 8, 9}, v2[3] = {70, 80, 90};
    ck_assert_int_eq(ghm_map_build(map, k2, v2, 3), GHM_OK);
    uint32_t q2[4] = {7, 8, 9, 0xFFFFFFFFu}, r2[4];
    ck_assert_int_eq(ghm_map_find(map, q2, 4, r2), GHM_OK);
    ck_assert_uint_eq(r2[0], 70);
    ck_assert_uint_eq(r2[1], 80);
    ck_assert_uint_eq(r2[2], 90);
    ck_assert_uint_eq(r2[3], GHM_NOT_FOUND);
    ghm_map_free(&map);
    free(keys);
    free(out);
    ghm_context_free(&ctx);
}
END_TEST

/* Two-level cuckoo across its load range (0, GHM_MAP_TWO_LEVEL_MAX_LOAD]: the table as full as
 * asked, at most three sub-tables probed; above the range create refuses. */
START_TEST(test_two_level_loads)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const double loads[] = {0.1, 0.3, 0.5, GHM_MAP_TWO_LEVEL_MAX_LOAD};
    for (int i = 0; i < 4; i++) {
        GhmMapOptions opt = map_kind(1 + GHM_MAP_TWO_LEVEL, loads[i]);
        size_t n = i == 3 ? (size_t)1 << 21 : (size_t)1 << 18;
        GhmMapStats st = check_unique(ctx, &opt, n, (uint32_t)(300 + i));
        double load = (double)n / (double)st.capacity;
        ck_assert_double_le(load, loads[i] + 1e-9);
        ck_assert_double_ge(load, loads[i] - 0.005);
        ck_assert_uint_ge(st.max_probes, 1);
        ck_assert_uint_le(st.max_probes, 3);
        printf("map two-level, load %.2f, %zu keys: %zu buckets, sub-tables probed at most %u, "
               "%d rebuilds\n",
               loads[i], n, st.capacity / GHMI_TL_BUCKET_SLOTS, st.max_probes, st.rebuilds);
    }
    GhmMapOptions opt = map_kind(1 + GHM_MAP_TWO_LEVEL, 0.0);
    opt.load_factor = GHM_MAP_TWO_LEVEL_MAX_LOAD + 0.01;
    GhmMap *map = NULL;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_ERR_INVALID);
    ghm_context_free(&ctx);
}
END_TEST

/* 600 distinct keys that the first split of 600 pairs sends to one bucket: more than its 576
 * slots hold, so every seed of that bucket fails; with no rebuild allowed the build fails
 * cleanly, and with rebuilds a new split spreads the keys and the build succeeds. */
START_TEST(test_two_level_build_failed)
{
    enum { N = 600 };
    uint64_t seed = 5;
    GhmContext *ctx = context_with_threads(0, seed);
    GhmiTwoLevelTable t;
    ck_assert_int_eq(ghmi_two_level_table(N, GHM_MAP_TWO_LEVEL_MAX_LOAD, seed, 0, &t), GHM_OK);
    ck_assert_uint_ge(t.buckets, 2);
    uint32_t keys[N];
    size_t n = 0;
    for (uint32_t k = 0; n < N; k++)
        if (ghmi_tl_bucket(&t, k) == 0)
            keys[n++] = k;
    GhmMapOptions opt = map_kind(1 + GHM_MAP_TWO_LEVEL, 0.0);
    opt.max_rebuilds = 0;
    ghm_test_map_fails_cleanly(ctx, &opt, keys, keys, N, 400);
    opt.max_rebuilds = 8;
    GhmMap *map = NULL;
    uint32_t out[N];
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
    ck_assert_int_eq(ghm_map_build(map, keys, keys, N), GHM_OK);
    ck_assert_int_eq(ghm_map_find(map, keys, N, out), GHM_OK);
    ck_assert_mem_eq(out, keys, sizeof keys);
    GhmMapStats st;
    ck_assert_int_eq(ghm_map_stats(map, &st), GHM_OK);
    ck_assert_int_ge(st.rebuilds, 1);
    ghm_map_free(&map);
    ghm_context_free(&ctx);
}
END_TEST

/* The top load over 100 seeds: no build may fail (the buckets' own seeds absorb bad draws). */
START_TEST(test_two_level_hundred_seeds)
{
    int rebuilds = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        GhmContext *ctx = context_with_threads(0, seed);
        GhmMapOptions opt = map_kind(1 + GHM_MAP_TWO_LEVEL, GHM_MAP_TWO_LEVEL_MAX_LOAD);
        rebuilds += check_unique(ctx, &opt, 1 << 16, (uint32_t)seed * 41).rebuilds;
        ghm_context_free(&ctx);
    }
    printf("map two-level, load %.2f, 2^16 keys, 100 seeds: %d rebuilds\n",
           GHM_MAP_TWO_LEVEL_MAX_LOAD, rebuilds);
}
END_TEST

static Suite *map_suite(void)
{
    Suite *s = suite_create("map");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_sizes_both_layouts);
    tcase_add_test(core, test_more_hash_functions);
    tcase_add_test(core, test_duplicates_keep_smallest);
    tcase_add_test(core, test_extreme_keys);
    tcase_add_test(core, test_thread_counts_agree);
    tcase_add_test(core, test_bad_arguments);
    tcase_add_test(core, test_scheme_names);
    tcase_add_test(core, test_schemes_sizes);
    tcase_add_test(core, test_robin_hood_too_large);
    tcase_add_test(core, test_chaining_chains);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 600);
    tcase_add_test(limits, test_load_factors);
    tcase_add_test(limits, test_impossible_load_fails);
    tcase_add_test(limits, test_hundred_seeds_bucketed);
    tcase_add_test(limits, test_hundred_seeds_thesis);
    tcase_add_test(limits, test_schemes_load_factors);
    tcase_add_test(limits, test_robin_hood_image_keys);
    tcase_add_test(limits, test_robin_hood_strided_keys);
    tcase_add_test(limits, test_robin_hood_stash);
    tcase_add_test(limits, test_robin_hood_hundred_seeds);
    tcase_add_test(limits, test_two_level_loads);
    tcase_add_test(limits, test_two_level_build_failed);
    tcase_add_test(limits, test_two_level_hundred_seeds);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) { return ghm_test_main(map_suite()); }
