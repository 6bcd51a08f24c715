/* check_hash_cuda.c - the CUDA backend's GhmMap against the CPU backend's, every scheme: tables
 * built on both from the same inputs (sizes 0..10^6, duplicates, extreme keys, load factors,
 * host and device arrays, grouped inserts, pairs that arrive after a wait) must give the same
 * answers; plus the failure path, 100 seeds at load 0.95, Robin Hood's stash and the two-level
 * table's buckets. The other structures: check_tables_cuda.c. GHM_TEST_SMALL=1 caps sizes at
 * 10^4 (for compute-sanitizer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_compare.h"
#include "ghm_map.h"
#include "hash_internal.h"
#include "kernels/hashing/device_memory.h"
#include "kernels/hashing/hash_refs.h"
#include "kernels/hashing/map_group.h"
#include "test_support.h"
#include "two_level_family.h"

/* ---- GhmMap ------------------------------------------------------------------------------------ */

/* Builds the map on both backends and compares every query; device_io also runs the CUDA side
 * with device input and output arrays. Returns the CUDA stats. */
static GhmMapStats compare_map(Backends *b, const GhmMapOptions *opt, const Input *in,
                               int device_io)
{
    GhmMap *mc = NULL, *mg = NULL;
    uint32_t *oc = xmalloc(in->nq * 4), *og = xmalloc(in->nq * 4);
    ck_assert_int_eq(ghm_map_create(b->cpu, opt, &mc), GHM_OK);
    ck_assert_int_eq(ghm_map_create(b->gpu, opt, &mg), GHM_OK);
    ck_assert_int_eq(ghm_map_build(mc, in->keys, in->values, in->n), GHM_OK);
    int ret = ghm_map_build(mg, in->keys, in->values, in->n);
    ck_assert_msg(ret == GHM_OK, "cuda build n=%zu load %.2f layout %d: %s", in->n,
                  opt->load_factor, opt->layout, ghm_strerror(ret));
    ck_assert_int_eq(ghm_map_find(mc, in->queries, in->nq, oc), GHM_OK);
    memset(og, 0xA5, in->nq * 4);
    ck_assert_int_eq(ghm_map_find(mg, in->queries, in->nq, og), GHM_OK);
    assert_same(oc, og, in->nq, "map find");
    if (device_io) {
        uint32_t *dk = to_device(b->gpu, in->keys, in->n);
        uint32_t *dv = to_device(b->gpu, in->values, in->n);
        uint32_t *dq = to_device(b->gpu, in->queries, in->nq);
        void *dout = NULL;
        ck_assert_int_eq(ghm_buffer_alloc(b->gpu, in->nq * 4, &dout), GHM_OK);
        ck_assert_int_eq(ghm_map_build(mg, dk, dv, in->n), GHM_OK);
        ck_assert_int_eq(ghm_map_find(mg, dq, in->nq, dout), GHM_OK);
        memset(og, 0xA5, in->nq * 4);
        ck_assert_int_eq(ghm_buffer_download(b->gpu, og, dout, in->nq * 4), GHM_OK);
        assert_same(oc, og, in->nq, "map find (device arrays)");
        ck_assert_int_eq(ghm_map_find(mg, dq, in->nq, og), GHM_OK); /* device in, host out */
        assert_same(oc, og, in->nq, "map find (device keys, host out)");
        ghm_buffer_free(b->gpu, (void **)&dk);
        ghm_buffer_free(b->gpu, (void **)&dv);
        ghm_buffer_free(b->gpu, (void **)&dq);
        ghm_buffer_free(b->gpu, &dout);
    }
    GhmMapStats sc, sg;
    ck_assert_int_eq(ghm_map_stats(mc, &sc), GHM_OK);
    ck_assert_int_eq(ghm_map_stats(mg, &sg), GHM_OK);
    ck_assert_uint_eq(sc.size, sg.size);
    ck_assert_uint_ge(sg.capacity, in->n);
    /* Robin Hood's and chaining's tables do not depend on the order of the inserts: the same on
     * both. */
    if (opt->scheme == GHM_MAP_ROBIN_HOOD || opt->scheme == GHM_MAP_ROBIN_HOOD_RANDOM ||
        opt->scheme == GHM_MAP_CHAINING)
        ck_assert_uint_eq(sc.max_probes, sg.max_probes);
    ghm_map_free(&mc);
    ghm_map_free(&mg);
    ck_assert_ptr_null(mg);
    free(oc);
    free(og);
    return sg;
}

START_TEST(test_map_sizes)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(1);
    const size_t sizes[] = {0, 1, 2, 1000, 1000000};
    for (int layout = 0; layout < 2; layout++)
        for (int i = 0; i < 5; i++) {
            Input in = make_input(cap_size(sizes[i]), 0, 10 + i);
            GhmMapOptions opt = map_options((GhmMapLayout)layout, 0.0, 0);
            GhmMapStats st = compare_map(&b, &opt, &in, i == 3 || i == 4);
            ck_assert_uint_eq(st.size, in.n);
            free_input(&in);
        }
    backends_free(&b);
}
END_TEST

START_TEST(test_map_duplicates)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(2);
    /* distinct candidates: 1 (one key repeated), 7 (extremes only), 1000, n/2 */
    size_t n = cap_size(1000000);
    const size_t distinct[] = {1, 7, 1000, n / 2};
    for (int layout = 0; layout < 2; layout++)
        for (int i = 0; i < 4; i++) {
            Input in = make_input(n, distinct[i], 20 + i);
            GhmMapOptions opt = map_options((GhmMapLayout)layout, 0.9, 0);
            compare_map(&b, &opt, &in, i == 2);
            opt.load_factor = 0.95; /* 8-slot buckets, long eviction chains */
            compare_map(&b, &opt, &in, 0);
            free_input(&in);
        }
    backends_free(&b);
}
END_TEST

/* Device allocations that one rebuild of a CUDA map takes (its table kept from the first build). */
static long rebuild_allocations(GhmContext *gpu, const GhmMapOptions *opt, const Input *in)
{
    GhmMap *m = NULL;
    ck_assert_int_eq(ghm_map_create(gpu, opt, &m), GHM_OK);
    ck_assert_int_eq(ghm_map_build(m, in->keys, in->values, in->n), GHM_OK);
    ghmi_device_fault_arm(GHMI_FAULT_ALLOC, 0); /* count, fail none */
    ck_assert_int_eq(ghm_map_build(m, in->keys, in->values, in->n), GHM_OK);
    long count = ghmi_device_fault_disarm();
    ghm_map_free(&m);
    return count;
}

/* A large bucketed insert groups its pairs by table region first (map_group.cu): the same answers
 * as the CPU. Forced on small tables with tiny regions (many regions, duplicates, loads with 4- and
 * 8-slot buckets, host and device arrays), then at its own threshold: a table of 2^24 keys at
 * load 0.8 (168 MB) is grouped on the H100 (L2 50 MB, grouped from 100 MB). */
/* A bucketed table of at least four ~4 MB regions keeps every key's other buckets in the region
 * of its first (map_ref.cuh), the remainder going to the last region; a smaller one has none. */
static void check_regions(GhmContext *gpu, const GhmMapOptions *opt, const Input *in)
{
    GhmMap *m = NULL;
    GhmMapRef ref;
    ck_assert_int_eq(ghm_map_create(gpu, opt, &m), GHM_OK);
    ck_assert_int_eq(ghm_map_build(m, in->keys, in->values, in->n), GHM_OK);
    ck_assert_int_eq(ghm_cuda_map_ref(m, &ref), GHM_OK);
    size_t table = (size_t)ref.num_buckets * ref.bucket_slots * 8;
    ck_assert_uint_eq(ref.region_shift != 0, table >= ((size_t)16 << 20));
    if (ref.region_shift) {
        ck_assert_uint_eq((size_t)ref.bucket_slots * 8 << ref.region_shift, (size_t)4 << 20);
        uint32_t last = (ref.num_buckets >> ref.region_shift) - 1;
        for (size_t i = 0; i < in->n; i += 997) {
            uint32_t k = in->keys[i], b0 = ghmi_hash_pair(k, ref.hc.a[0], ref.hc.b[0],
                                                          ref.num_buckets);
            uint32_t r = b0 >> ref.region_shift < last ? b0 >> ref.region_shift : last;
            uint32_t b1 = ghmi_region_bucket(b0, ghmi_hash_mix(k, ref.hc.a[1], ref.hc.b[1]),
                                             ref.num_buckets, ref.region_shift);
            ck_assert_uint_eq(b1 >> ref.region_shift < last ? b1 >> ref.region_shift : last, r);
            ck_assert_uint_lt(b1, ref.num_buckets);
        }
    }
    ghm_map_free(&m);
}

START_TEST(test_map_grouped)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(5);
    const size_t sizes[] = {1, 1000, 200000};
    ghmi_map_group_tune(1, 4096);
    for (int i = 0; i < 3; i++)
        for (int dup = 0; dup < 2; dup++) {
            size_t n = cap_size(sizes[i]);
            Input in = make_input(n, dup ? n / 2 + 7 : 0, 50 + i);
            GhmMapOptions opt = map_options(GHM_MAP_BUCKETED, 0.8, 0);
            compare_map(&b, &opt, &in, i == 2);
            opt.load_factor = 0.95;
            opt.hash_functions = 3;
            compare_map(&b, &opt, &in, 0);
            free_input(&in);
        }
    /* The grouped path really ran: one allocation more (its scratch) than the plain one. */
    Input small = make_input(1000, 0, 54);
    for (int slots8 = 0; slots8 < 2; slots8++) {
        GhmMapOptions opt = map_options(GHM_MAP_BUCKETED, slots8 ? 0.95 : 0.8, 0);
        long grouped = rebuild_allocations(b.gpu, &opt, &small);
        ghmi_map_group_tune(0, 0);
        ck_assert_int_eq(grouped, rebuild_allocations(b.gpu, &opt, &small) + 1);
        ghmi_map_group_tune(1, 4096);
    }
    free_input(&small);
    /* At the edge of what two 8-slot buckets hold (load 0.99) a grouped build may fail, and then
     * its warps stop early (insert_refill_kernel): it ends, and a success answers every key. */
    Input edge = make_input((size_t)1 << 16, 0, 56);
    GhmMapOptions eo = map_options(GHM_MAP_BUCKETED, 0.99, 2);
    eo.max_rebuilds = 2;
    GhmMap *em = NULL;
    uint32_t *eout = xmalloc(edge.n * 4);
    ck_assert_int_eq(ghm_map_create(b.gpu, &eo, &em), GHM_OK);
    int ret = ghm_map_build(em, edge.keys, edge.values, edge.n);
    ck_assert(ret == GHM_OK || ret == GHM_ERR_BUILD_FAILED);
    ck_assert_int_eq(ghm_map_find(em, edge.keys, edge.n, eout), GHM_OK);
    CHECK_EACH(edge.n, eout[i] == (ret == GHM_OK ? edge.values[i] : GHM_NOT_FOUND));
    printf("grouped map, load 0.99, two functions, 2^16 keys: %s\n", ghm_strerror(ret));
    ghm_map_free(&em);
    free(eout);
    free_input(&edge);
    ghmi_map_group_tune(0, 0);
    Input in = make_input(cap_size((size_t)1 << 24), 0, 55);
    for (int slots8 = 0; slots8 < 2; slots8++) {
        GhmMapOptions opt = map_options(GHM_MAP_BUCKETED, slots8 ? 0.95 : 0.8, 0);
        GhmMapStats st = compare_map(&b, &opt, &in, 0);
        ck_assert_uint_eq(st.size, in.n);
        check_regions(b.gpu, &opt, &in);
    }
    free_input(&in);
    backends_free(&b);
}
END_TEST

/* The rest of a ghmi_map_build_after's pairs, uploaded by its wait: so the map can only be right
 * if nothing read them before the wait. */
typedef struct LateUpload {
    GhmContext *gpu;
    uint32_t *dk, *dv;
    const Input *in;
    size_t ready;
    int waits;
} LateUpload;

static int upload_rest(void *arg)
{
    LateUpload *u = arg;
    size_t rest = u->in->n - u->ready;
    u->waits++;
    int ret = ghm_buffer_upload(u->gpu, u->dk + u->ready, u->in->keys + u->ready, rest * 4);
    return ret < 0 ? ret : ghm_buffer_upload(u->gpu, u->dv + u->ready, u->in->values + u->ready,
                                             rest * 4);
}

/* ghmi_map_build_after (a GhmDistMap part's build: its own piece first, the others after a
 * wait) gives the CPU map's answers and size, whatever is ready first, grouped or not,
 * duplicates across the two pieces (the smallest value kept) and the extreme keys included. */
START_TEST(test_map_build_after)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(6);
    const size_t sizes[] = {1000, 200000};
    for (int grouped = 0; grouped < 2; grouped++)
        for (int i = 0; i < 2; i++) {
            size_t n = cap_size(sizes[i]);
            Input in = make_input(n, n / 2 + 7, 60 + i);
            GhmMapOptions opt = map_options(GHM_MAP_BUCKETED, 0.9, 0);
            GhmMap *mc = NULL, *mg = NULL;
            uint32_t *want = xmalloc(in.nq * 4), *got = xmalloc(in.nq * 4);
            ck_assert_int_eq(ghm_map_create(b.cpu, &opt, &mc), GHM_OK);
            ck_assert_int_eq(ghm_map_build(mc, in.keys, in.values, in.n), GHM_OK);
            ck_assert_int_eq(ghm_map_find(mc, in.queries, in.nq, want), GHM_OK);
            ck_assert_int_eq(ghm_map_create(b.gpu, &opt, &mg), GHM_OK);
            ghmi_map_group_tune(grouped, 4096);
            const size_t ready[] = {0, n / 3, n};
            for (int r = 0; r < 3; r++) {
                uint32_t *garbage = xmalloc(n * 4);
                memset(garbage, 0x5A, n * 4);
                LateUpload u = {b.gpu, to_device(b.gpu, garbage, n), to_device(b.gpu, garbage, n),
                                &in, ready[r], 0};
                ck_assert_int_eq(ghm_buffer_upload(b.gpu, u.dk, in.keys, ready[r] * 4), GHM_OK);
                ck_assert_int_eq(ghm_buffer_upload(b.gpu, u.dv, in.values, ready[r] * 4), GHM_OK);
                ck_assert_int_eq(ghmi_map_build_after(mg, u.dk, u.dv, ready[r], n, upload_rest, &u),
                                 GHM_OK);
                ck_assert_int_eq(u.waits, 1);
                memset(got, 0xA5, in.nq * 4);
                ck_assert_int_eq(ghm_map_find(mg, in.queries, in.nq, got), GHM_OK);
                assert_same(want, got, in.nq, "map built after a wait");
                GhmMapStats sc, sg;
                ck_assert_int_eq(ghm_map_stats(mc, &sc), GHM_OK);
                ck_assert_int_eq(ghm_map_stats(mg, &sg), GHM_OK);
                ck_assert_uint_eq(sc.size, sg.size);
                ghm_buffer_free(b.gpu, (void **)&u.dk);
                ghm_buffer_free(b.gpu, (void **)&u.dv);
                free(garbage);
            }
            ghmi_map_group_tune(0, 0);
            ghm_map_free(&mc);
            ghm_map_free(&mg);
            free(want);
            free(got);
            free_input(&in);
        }
    backends_free(&b);
}
END_TEST

/* Extreme keys and values by hand: 0xFFFFFFFF (the empty marker) as a key, repeated with
 * different values, and GHM_NOT_FOUND as a value. */
START_TEST(test_map_extreme_keys)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(3);
    uint32_t keys[] = {0xFFFFFFFFu, 0, 0xFFFFFFFFu, 1, 0xFFFFFFFEu, 0, 0x80000000u, 0xFFFFFFFFu};
    uint32_t vals[] = {9, 0xFFFFFFFFu, 4, 7, 0, 3, 0xFFFFFFFFu, 6};
    Input in = {8, keys, vals, keys, 8};
    for (int layout = 0; layout < 2; layout++) {
        GhmMapOptions opt = map_options((GhmMapLayout)layout, 0.5, 0);
        GhmMapStats st = compare_map(&b, &opt, &in, 1);
        ck_assert_uint_eq(st.size, 5);
        GhmMap *m = NULL;
        uint32_t out[8];
        ck_assert_int_eq(ghm_map_create(b.gpu, &opt, &m), GHM_OK);
        ck_assert_int_eq(ghm_map_build(m, keys, vals, 8), GHM_OK);
        ck_assert_int_eq(ghm_map_find(m, keys, 8, out), GHM_OK);
        ck_assert_uint_eq(out[0], 4); /* 0xFFFFFFFF: smallest of 9, 4, 6 */
        ck_assert_uint_eq(out[1], 3); /* 0: smallest of 0xFFFFFFFF, 3 */
        ck_assert_uint_eq(out[4], 0);
        ck_assert_uint_eq(out[6], 0xFFFFFFFFu);
        ghm_map_free(&m);
    }
    backends_free(&b);
}
END_TEST

START_TEST(test_map_loads)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(4);
    const double loads[] = {0.5, 0.6, 0.7, 0.8, 0.9, 0.95};
    for (int layout = 0; layout < 2; layout++)
        for (int i = 0; i < 6; i++)
            for (int h = 0; h < 2; h++) {
                int hashes = layout == GHM_MAP_THESIS ? (h ? 5 : 4) : (h ? 3 : 2);
                Input in = make_input(cap_size(200000), 0, 40 + i);
                GhmMapOptions opt = map_options((GhmMapLayout)layout, loads[i], hashes);
                GhmMapStats st = compare_map(&b, &opt, &in, 0);
                ck_assert_double_le((double)in.n / (double)st.capacity, loads[i] + 1e-9);
                free_input(&in);
            }
    backends_free(&b);
}
END_TEST

/* Two thesis functions cannot reach load 0.99: the build must fail within the budget, leave an
 * empty map, and the map must build normally afterwards. */
START_TEST(test_map_build_failed)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(5);
    size_t n = cap_size(1 << 16);
    Input in = make_input(n, 0, 50);
    GhmMapOptions opt = map_options(GHM_MAP_THESIS, 0.99, 2);
    opt.max_rebuilds = 3;
    ghm_test_map_fails_cleanly(b.gpu, &opt, in.keys, in.values, n, 1);
    free_input(&in);
    backends_free(&b);
}
END_TEST

/* Structures that were never built answer "absent" on the device too, the out-of-band key
 * (all ones, read from the stash's extra slot) included: the reference of a new map used to
 * name no stash at all. The same after a build that failed with an error. */
START_TEST(test_never_built)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(7);
    uint32_t keys[3] = {1, 0xFFFFFFFFu, 12345}, out[3] = {0, 0, 0}, first[3], count[3];
    GhmMap *m = NULL;
    GhmMapOptions opt = ghm_map_defaults();
    ck_assert_int_eq(ghm_map_create(b.gpu, &opt, &m), GHM_OK);
    ck_assert_int_eq(ghm_map_find(m, keys, 3, out), GHM_OK);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(out[i], GHM_NOT_FOUND);
    GhmMultimap *mm = NULL;
    ck_assert_int_eq(ghm_multimap_create(b.gpu, 0.0, &mm), GHM_OK);
    ck_assert_int_eq(ghm_multimap_find(mm, keys, 3, first, count), GHM_OK);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(count[i], 0);
    /* a build refused for its arguments leaves the old content or nothing, never a stale table */
    uint32_t vals[3] = {7, 8, 9};
    ck_assert_int_eq(ghm_multimap_build(mm, keys, vals, 3), GHM_OK);
    ck_assert_int_eq(ghm_multimap_build(mm, NULL, vals, 3), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_find(mm, keys, 3, first, count), GHM_OK);
    ghm_multimap_free(&mm);
    ghm_map_free(&m);
    backends_free(&b);
}
END_TEST

/* 100 seeds at load 0.95, both layouts: no build may fail, every answer right. */
START_TEST(test_map_hundred_seeds)
{
    GHM_REQUIRE_CUDA();
    size_t n = cap_size(1 << 16);
    for (int layout = 0; layout < 2; layout++) {
        size_t stash = 0;
        int rebuilds = 0;
        for (uint64_t seed = 1; seed <= 100; seed++) {
            GhmContextOptions copt = ghm_context_defaults();
            copt.backend = GHM_BACKEND_CUDA;
            copt.seed = seed;
            GhmContext *ctx = NULL;
            ck_assert_int_eq(ghm_context_create(&copt, &ctx), GHM_OK);
            Input in = make_input(n, 0, seed * 31);
            uint32_t *out = xmalloc(in.nq * 4);
            GhmMapOptions opt = map_options((GhmMapLayout)layout, 0.95, 0);
            GhmMap *m = NULL;
            ck_assert_int_eq(ghm_map_create(ctx, &opt, &m), GHM_OK);
            int ret = ghm_map_build(m, in.keys, in.values, n);
            ck_assert_msg(ret == GHM_OK, "layout %d seed %llu: %s", layout,
                          (unsigned long long)seed, ghm_strerror(ret));
            ck_assert_int_eq(ghm_map_find(m, in.queries, 2 * n, out), GHM_OK);
            CHECK_EACH(2 * n, out[i] == (i < n ? in.values[(i * 7919) % n] : GHM_NOT_FOUND));
            GhmMapStats st;
            ck_assert_int_eq(ghm_map_stats(m, &st), GHM_OK);
            stash += st.stash_used;
            rebuilds += st.rebuilds;
            ghm_map_free(&m);
            free(out);
            free_input(&in);
            ghm_context_free(&ctx);
        }
        printf("cuda map %s, load 0.95, %zu keys, 100 seeds: %zu keys in stashes, %d rebuilds\n",
               layout ? "thesis" : "bucketed", n, stash, rebuilds);
    }
}
END_TEST

/* The schemes other than cuckoo: sizes, duplicates (few, listed; many, settled by the pass over
 * every pair), extreme keys, loads up to 0.99, host and device arrays. */
START_TEST(test_map_schemes)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(8);
    const size_t sizes[] = {0, 1, 2, 1000, 1000000};
    const double loads[] = {0.5, 0.8, 0.95, 0.99};
    uint32_t keys[] = {0xFFFFFFFFu, 0, 0xFFFFFFFFu, 1, 0xFFFFFFFEu, 0, 0x80000000u, 0xFFFFFFFFu};
    uint32_t vals[] = {9, 0xFFFFFFFFu, 4, 7, 0, 3, 0xFFFFFFFFu, 6};
    Input extreme = {8, keys, vals, keys, 8};
    for (int scheme = 1; scheme < GHM_MAP_SCHEMES; scheme++) {
        GhmMapOptions opt = ghm_map_defaults();
        opt.scheme = (GhmMapScheme)scheme;
        GhmMap *probe = NULL;
        int have = ghm_map_create(b.gpu, &opt, &probe);
        ghm_map_free(&probe);
        if (have == GHM_ERR_UNSUPPORTED) { /* a scheme of another branch, not in this build */
            printf("cuda map scheme %d: not in this build, skipped\n", scheme);
            continue;
        }
        ck_assert_int_eq(have, GHM_OK);
        for (int i = 0; i < 5; i++) {
            Input in = make_input(cap_size(sizes[i]), 0, 60 + i);
            ck_assert_uint_eq(compare_map(&b, &opt, &in, i == 3 || i == 4).size, in.n);
            free_input(&in);
        }
        size_t n = cap_size(1000000);
        const size_t distinct[] = {1, 7, 1000, n / 2, 16 * n};
        for (int i = 0; i < 5; i++) {
            Input in = make_input(n, distinct[i], 70 + i);
            compare_map(&b, &opt, &in, i == 2);
            free_input(&in);
        }
        ck_assert_uint_eq(compare_map(&b, &opt, &extreme, 1).size, 5);
        for (int i = 0; i < 4; i++) {
            Input in = make_input(cap_size(200000), 0, 80 + i);
            /* two-level's range ends at GHM_MAP_TWO_LEVEL_MAX_LOAD */
            opt.load_factor = scheme == GHM_MAP_TWO_LEVEL && loads[i] > GHM_MAP_TWO_LEVEL_MAX_LOAD
                                  ? GHM_MAP_TWO_LEVEL_MAX_LOAD
                                  : loads[i];
            GhmMapStats st = compare_map(&b, &opt, &in, 0);
            ck_assert_double_le((double)in.n / (double)st.capacity, opt.load_factor + 1e-9);
            free_input(&in);
        }
    }
    backends_free(&b);
}
END_TEST

/* Keys that share one coherent probe sequence (all equal modulo the table size) cannot all fit
 * in 15 probes and the stash of 128: the build fails on both backends, quickly, leaves an empty
 * map, and the map builds normally afterwards. */
START_TEST(test_robin_hood_build_failed)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(9);
    enum { N = 200 };
    uint32_t keys[N];
    for (uint32_t i = 0; i < N; i++)
        keys[i] = i * 401; /* 200 keys at load 0.5: 401 slots (the prime at or above 400) */
    GhmMapOptions opt = ghm_map_defaults();
    opt.scheme = GHM_MAP_ROBIN_HOOD;
    opt.load_factor = 0.5;
    ghm_test_map_fails_cleanly(b.gpu, &opt, keys, keys, N, 8);
    backends_free(&b);
}
END_TEST

/* 100 keys on one coherent sequence (120 pairs at load 0.5: 241 slots, every key a multiple):
 * most go to the stash, 20 come again with smaller values; both backends answer alike (present
 * keys, their neighbours, the extremes) and count 100 keys. */
START_TEST(test_robin_hood_stash)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(10);
    enum { N = 100, DUPS = 20 };
    uint32_t keys[N + DUPS], vals[N + DUPS], queries[2 * N];
    for (uint32_t i = 0; i < N + DUPS; i++) {
        keys[i] = (i % N) * 241;
        vals[i] = i < N ? 500 + i : i - N;
    }
    for (uint32_t i = 0; i < N; i++) {
        queries[i] = i * 241;
        queries[N + i] = i * 241 + 1;
    }
    Input in = {N + DUPS, keys, vals, queries, 2 * N};
    for (int scheme = GHM_MAP_ROBIN_HOOD; scheme <= GHM_MAP_ROBIN_HOOD_RANDOM; scheme++) {
        GhmMapOptions opt = ghm_map_defaults();
        opt.scheme = (GhmMapScheme)scheme;
        opt.load_factor = 0.5;
        GhmMapStats st = compare_map(&b, &opt, &in, 0);
        ck_assert_uint_eq(st.size, N);
        if (scheme == GHM_MAP_ROBIN_HOOD)
            ck_assert_uint_ge(st.stash_used, N - 15);
    }
    backends_free(&b);
}
END_TEST

/* The coherent-hashing paper's load 0.99 over 100 seeds, both sequences: no failed build. */
START_TEST(test_robin_hood_hundred_seeds)
{
    GHM_REQUIRE_CUDA();
    size_t n = cap_size(1 << 16);
    for (int scheme = GHM_MAP_ROBIN_HOOD; scheme <= GHM_MAP_ROBIN_HOOD_RANDOM; scheme++) {
        unsigned oldest = 0;
        for (uint64_t seed = 1; seed <= 100; seed++) {
            Backends b = backends(seed);
            Input in = make_input(n, 0, seed * 37);
            GhmMapOptions opt = ghm_map_defaults();
            opt.scheme = (GhmMapScheme)scheme;
            opt.load_factor = 0.99;
            opt.max_rebuilds = 0;
            GhmMapStats st = compare_map(&b, &opt, &in, 0);
            oldest = st.max_probes > oldest ? st.max_probes : oldest;
            free_input(&in);
            backends_free(&b);
        }
        printf("cuda map %s, load 0.99, %zu keys, 100 seeds: no rebuild, oldest key %u\n",
               ghm_map_scheme_name((GhmMapScheme)scheme), n, oldest);
    }
}
END_TEST

/* Two-level cuckoo: 600 keys that the first split sends to one bucket of 576 slots fail on
 * the device as on the CPU (check_map.c), cleanly; with rebuilds a new split builds them. */
START_TEST(test_two_level_build_failed)
{
    GHM_REQUIRE_CUDA();
    enum { N = 600 };
    uint64_t seed = 5;
    Backends b = backends(seed);
    GhmiTwoLevelTable t;
    ck_assert_int_eq(ghmi_two_level_table(N, GHM_MAP_TWO_LEVEL_MAX_LOAD, seed, 0, &t), GHM_OK);
    uint32_t keys[N];
    size_t n = 0;
    for (uint32_t k = 0; n < N; k++)
        if (ghmi_tl_bucket(&t, k) == 0)
            keys[n++] = k;
    GhmMapOptions opt = ghm_map_defaults();
    opt.scheme = GHM_MAP_TWO_LEVEL;
    opt.max_rebuilds = 0;
    ghm_test_map_fails_cleanly(b.gpu, &opt, keys, keys, N, 400);
    opt.max_rebuilds = 8;
    Input in = {N, keys, keys, keys, N};
    GhmMapStats st = compare_map(&b, &opt, &in, 1);
    ck_assert_uint_eq(st.size, N);
    backends_free(&b);
}
END_TEST

/* Two-level at its top load over 100 seeds: no failed build, the same answers on both. */
START_TEST(test_two_level_hundred_seeds)
{
    GHM_REQUIRE_CUDA();
    size_t n = cap_size(1 << 16);
    int rebuilds = 0;
    unsigned deepest = 0;
    for (uint64_t seed = 1; seed <= 100; seed++) {
        Backends b = backends(seed);
        Input in = make_input(n, 0, seed * 41);
        GhmMapOptions opt = ghm_map_defaults();
        opt.scheme = GHM_MAP_TWO_LEVEL;
        GhmMapStats st = compare_map(&b, &opt, &in, 0);
        rebuilds += st.rebuilds;
        deepest = st.max_probes > deepest ? st.max_probes : deepest;
        free_input(&in);
        backends_free(&b);
    }
    printf("cuda map two-level, load %.2f, %zu keys, 100 seeds: %d rebuilds, sub-tables probed "
           "at most %u\n",
           GHM_MAP_TWO_LEVEL_MAX_LOAD, n, rebuilds, deepest);
}
END_TEST

static Suite *hash_cuda_suite(void)
{
    Suite *s = suite_create("hash_cuda");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_map_sizes);
    tcase_add_test(tc, test_map_duplicates);
    tcase_add_test(tc, test_map_grouped);
    tcase_add_test(tc, test_map_build_after);
    tcase_add_test(tc, test_map_extreme_keys);
    tcase_add_test(tc, test_map_loads);
    tcase_add_test(tc, test_map_build_failed);
    tcase_add_test(tc, test_never_built);
    tcase_add_test(tc, test_map_hundred_seeds);
    tcase_add_test(tc, test_map_schemes);
    tcase_add_test(tc, test_robin_hood_build_failed);
    tcase_add_test(tc, test_robin_hood_stash);
    tcase_add_test(tc, test_robin_hood_hundred_seeds);
    tcase_add_test(tc, test_two_level_build_failed);
    tcase_add_test(tc, test_two_level_hundred_seeds);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ghm_test_main(hash_cuda_suite()); }
