/* check_dist_map.c - GhmDistMap: the answers of one GhmMap holding every pair, for any number of
 * parts and any spread of the shards, on the CPU and on CUDA (every device, and one device
 * several times), with the pieces written straight into the parts' memory and copied there;
 * bad arguments leave the map as it was; a failed build leaves it empty. The ranked map (one
 * part per process) is run here with threads as its ranks; check_dist_map_ranks.c runs it
 * with processes. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dist_map_cases.h"
#include "dist_map_internal.h"
#include "ghm_dist_map.h"
#include "test_support.h"

static uint32_t *one_map_answers(GhmContext *ctx, const uint32_t *keys, const uint32_t *values,
                                 size_t n, const uint32_t *queries, size_t nq, size_t *size)
{
    uint32_t *want = malloc(nq * sizeof *want);
    ck_assert_ptr_nonnull(want);
    ck_assert_int_eq(ghm_test_map_answers(ctx, keys, values, n, queries, nq, want, size), GHM_OK);
    return want;
}

/* Builds a map over ctx[0..parts) from host shards, finds every pair's key and as many absent
 * keys, sharded another way, and compares with want. */
static void check_against(GhmContext *const *ctx, int parts, GhmMapScheme scheme,
                          const uint32_t *keys, const uint32_t *values, const uint32_t *queries,
                          size_t nq, const uint32_t *want, size_t want_size)
{
    size_t first[MAX_P], len[MAX_P], qfirst[MAX_P], qlen[MAX_P];
    ghm_test_cut(N, parts, first, len);
    ghm_test_cut(nq, parts, qfirst, qlen);
    for (int p = 0; p < parts / 2; p++) { /* the queries shard the other way round */
        size_t a = qlen[p];
        qlen[p] = qlen[parts - 1 - p];
        qlen[parts - 1 - p] = a;
    }
    for (int p = 1; p < parts; p++)
        qfirst[p] = qfirst[p - 1] + qlen[p - 1];
    const uint32_t *k[MAX_P], *v[MAX_P], *q[MAX_P];
    uint32_t *got = malloc(nq * sizeof *got), *o[MAX_P];
    ck_assert_ptr_nonnull(got);
    for (int p = 0; p < parts; p++) {
        k[p] = keys + first[p];
        v[p] = values + first[p];
        q[p] = queries + qfirst[p];
        o[p] = got + qfirst[p];
    }
    GhmDistMap *dm = NULL;
    GhmMapOptions mo = ghm_map_defaults();
    mo.scheme = scheme;
    ck_assert_int_eq(ghm_dist_map_create(ctx, parts, &mo, &dm), GHM_OK);
    ck_assert_int_eq(ghm_dist_map_build(dm, k, v, len), GHM_OK);
    ck_assert_uint_eq(ghm_dist_map_size(dm), want_size);
    for (int p = 0; p < parts && parts > 1; p++) /* the part hash spreads the keys */
        ck_assert_uint_gt(ghm_dist_map_part_size(dm, p), want_size / (size_t)(2 * parts));
    ck_assert_int_eq(ghm_dist_map_find(dm, q, qlen, o), GHM_OK);
    CHECK_EACH(nq, got[i] == want[i]);
    ghm_dist_map_free(&dm);
    ck_assert_ptr_null(dm);
    free(got);
}

static Pairs *make_case(uint64_t seed)
{
    Pairs *c = malloc(sizeof *c);
    ck_assert_ptr_nonnull(c);
    ghm_test_fill_pairs(c, seed);
    return c;
}

static GhmContext *context_on(GhmBackendKind backend, int device, int threads)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = backend;
    opt.device = device;
    opt.threads = threads;
    return ghm_test_context_opt(opt);
}

START_TEST(test_cpu_parts_match_one_map)
{
    Pairs *c = make_case(7);
    GhmContext *ctx[MAX_P];
    for (int p = 0; p < MAX_P; p++)
        ctx[p] = context_on(GHM_BACKEND_CPU, 0, 2);
    size_t size = 0;
    uint32_t *want = one_map_answers(ctx[0], c->keys, c->values, N, c->queries, 2 * N, &size);
    int parts[] = {1, 2, 3, 5};
    for (int copies = 0; copies <= 1; copies++) {
        ghmi_dist_map_force_copies(copies);
        for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
            check_against(ctx, parts[i], GHM_MAP_CUCKOO, c->keys, c->values, c->queries, 2 * N,
                          want, size);
    }
    ghmi_dist_map_force_copies(0);
    free(want);
    for (int p = 0; p < MAX_P; p++)
        ghm_context_free(&ctx[p]);
    free(c);
}
END_TEST

/* Wrong arguments are refused and leave a built map's answers as they were; a build that fails
 * in a part leaves every part empty. */
START_TEST(test_bad_arguments_and_failure)
{
    GhmContext *ctx[2] = {context_on(GHM_BACKEND_CPU, 0, 1), context_on(GHM_BACKEND_CPU, 0, 1)};
    GhmContext *twice[2] = {ctx[0], ctx[0]};
    GhmMapOptions mo = ghm_map_defaults();
    GhmDistMap *dm = NULL;
    ck_assert_int_eq(ghm_dist_map_create(ctx, 0, &mo, &dm), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dist_map_create(ctx, GHM_DIST_MAP_MAX_PARTS + 1, &mo, &dm),
                     GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dist_map_create(twice, 2, &mo, &dm), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dist_map_create(ctx, 2, NULL, &dm), GHM_ERR_INVALID);
    ck_assert_ptr_null(dm);
    if (ghm_test_have_cuda()) {
        GhmContext *mixed[2] = {ctx[0], context_on(GHM_BACKEND_CUDA, 0, 1)};
        ck_assert_int_eq(ghm_dist_map_create(mixed, 2, &mo, &dm), GHM_ERR_INVALID);
        ghm_context_free(&mixed[1]);
    }
    ck_assert_int_eq(ghm_dist_map_create(ctx, 2, &mo, &dm), GHM_OK);
    uint32_t keys[4] = {1, 2, 3, 4}, vals[4] = {10, 20, 30, 40}, got[4];
    const uint32_t *k[2] = {keys, keys + 2}, *v[2] = {vals, vals + 2}, *none[2] = {keys, NULL};
    uint32_t *o[2] = {got, got + 2};
    size_t n[2] = {2, 2};
    ck_assert_int_eq(ghm_dist_map_build(dm, k, v, n), GHM_OK);
    ck_assert_int_eq(ghm_dist_map_build(dm, k, none, n), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dist_map_build(dm, NULL, v, n), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dist_map_find(dm, none, n, o), GHM_ERR_INVALID);
    uint32_t *in_keys[2] = {keys, got + 2}; /* answers over a shard's own keys, or another's */
    ck_assert_int_eq(ghm_dist_map_find(dm, k, n, in_keys), GHM_ERR_INVALID);
    in_keys[0] = got;
    in_keys[1] = keys + 1;
    ck_assert_int_eq(ghm_dist_map_find(dm, k, n, in_keys), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dist_map_find(dm, k, n, o), GHM_OK);
    CHECK_EACH(4, got[i] == vals[i]);
    ghm_dist_map_free(&dm);
    /* two thesis-layout functions cannot hold a table at load 0.99 */
    mo.layout = GHM_MAP_THESIS;
    mo.hash_functions = 2;
    mo.load_factor = 0.99;
    mo.max_rebuilds = 0;
    enum { M = 1 << 14 };
    static uint32_t many[M];
    uint64_t s = 5;
    for (size_t i = 0; i < M; i++)
        many[i] = rng_next(&s);
    ck_assert_int_eq(ghm_dist_map_create(ctx, 2, &mo, &dm), GHM_OK);
    const uint32_t *mk[2] = {many, many + M / 2};
    size_t mn[2] = {M / 2, M / 2};
    ck_assert_int_eq(ghm_dist_map_build(dm, mk, mk, mn), GHM_ERR_BUILD_FAILED);
    ck_assert_uint_eq(ghm_dist_map_size(dm), 0);
    ghm_dist_map_free(&dm);
    ghm_dist_map_free(&dm); /* a pointer to NULL is fine */
    ghm_dist_map_free(NULL);
    ghm_context_free(&ctx[0]);
    ghm_context_free(&ctx[1]);
}
END_TEST

/* CUDA parts on every device (and on one device several times where there is one), shards in
 * host and in device memory, give the CPU's answers. */
START_TEST(test_cuda_parts_match_one_map)
{
    GHM_REQUIRE_CUDA();
    Pairs *c = make_case(11);
    GhmContext *cpu = context_on(GHM_BACKEND_CPU, 0, 0);
    size_t size = 0;
    uint32_t *want = one_map_answers(cpu, c->keys, c->values, N, c->queries, 2 * N, &size);
    int devices = ghm_cuda_device_count();
    GhmContext *ctx[MAX_P];
    for (int p = 0; p < 3; p++)
        ctx[p] = context_on(GHM_BACKEND_CUDA, p % devices, 0);
    for (int copies = 0; copies <= 1; copies++) {
        ghmi_dist_map_force_copies(copies);
        for (int parts = 1; parts <= 3; parts++)
            check_against(ctx, parts, GHM_MAP_CUCKOO, c->keys, c->values, c->queries, 2 * N,
                          want, size);
        /* the other schemes' parts (their finds queued without a wait, as the cuckoo map's;
         * the split path's finds) */
        for (int s = GHM_MAP_LINEAR; s <= GHM_MAP_TWO_LEVEL; s++)
            check_against(ctx, 2, (GhmMapScheme)s, c->keys, c->values, c->queries, 2 * N, want,
                          size);
    }
    ghmi_dist_map_force_copies(0);
    /* shard 1 in device memory, its answers written to device memory */
    void *dk = NULL, *dv = NULL, *dout = NULL;
    ck_assert_int_eq(ghm_buffer_alloc(ctx[1], N / 2 * 4, &dk), GHM_OK);
    ck_assert_int_eq(ghm_buffer_alloc(ctx[1], N / 2 * 4, &dv), GHM_OK);
    ck_assert_int_eq(ghm_buffer_alloc(ctx[1], N / 2 * 4, &dout), GHM_OK);
    ck_assert_int_eq(ghm_buffer_upload(ctx[1], dk, c->keys + N / 2, N / 2 * 4), GHM_OK);
    ck_assert_int_eq(ghm_buffer_upload(ctx[1], dv, c->values + N / 2, N / 2 * 4), GHM_OK);
    GhmDistMap *dm = NULL;
    GhmMapOptions mo = ghm_map_defaults();
    ck_assert_int_eq(ghm_dist_map_create(ctx, 2, &mo, &dm), GHM_OK);
    const uint32_t *k[2] = {c->keys, dk}, *v[2] = {c->values, dv};
    size_t n[2] = {N / 2, N / 2};
    uint32_t *got = malloc(N * sizeof *got), *o[2] = {got, dout};
    ck_assert_ptr_nonnull(got);
    ck_assert_int_eq(ghm_dist_map_build(dm, k, v, n), GHM_OK);
    ck_assert_uint_eq(ghm_dist_map_size(dm), size);
    ck_assert_int_eq(ghm_dist_map_find(dm, k, n, o), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(ctx[1], got + N / 2, dout, N / 2 * 4), GHM_OK);
    CHECK_EACH(N, got[i] == want[i]);
    free(got);
    ghm_dist_map_free(&dm);
    ghm_buffer_free(ctx[1], &dk);
    ghm_buffer_free(ctx[1], &dv);
    ghm_buffer_free(ctx[1], &dout);
    for (int p = 0; p < 3; p++)
        ghm_context_free(&ctx[p]);
    ghm_context_free(&cpu);
    free(want);
    free(c);
}
END_TEST

/* ---------------------------------------------------------------- ranks as threads */

/* The host messages of GhmDistRanks between threads of this process: every rank posts what it
 * sends, all meet, each takes its share, all meet again. */
typedef struct Hub {
    int ranks;
    pthread_barrier_t meet;
    const void *data[MAX_P];
    const size_t *n[MAX_P], *at[MAX_P];
} Hub;

/* One rank's thread: its arguments and what it saw (checked on the main thread). */
typedef struct Rank {
    Hub *hub;
    int rank;
    GhmBackendKind backend;
    const Pairs *c;
    const uint32_t *want;
    size_t want_size;
    int one_device; /* every rank on device 0 (CUDA) */
    int ret_create, ret_build, ret_find, ret_bad_find, ret_failed_build;
    size_t wrong, part_size, size_after_failure;
    int nccl, in_place;
} Rank;

static int hub_all_to_all(void *user, const uint64_t *send, uint64_t *recv)
{
    Rank *r = user;
    r->hub->data[r->rank] = send;
    pthread_barrier_wait(&r->hub->meet);
    for (int q = 0; q < r->hub->ranks; q++)
        recv[q] = ((const uint64_t *)r->hub->data[q])[r->rank];
    pthread_barrier_wait(&r->hub->meet);
    return 0;
}

static int hub_all_to_all_v(void *user, const uint32_t *send, const size_t *send_n,
                            const size_t *send_at, uint32_t *recv, const size_t *recv_n,
                            const size_t *recv_at)
{
    Rank *r = user;
    Hub *h = r->hub;
    h->data[r->rank] = send, h->n[r->rank] = send_n, h->at[r->rank] = send_at;
    pthread_barrier_wait(&h->meet);
    int ret = 0;
    for (int q = 0; q < h->ranks; q++) {
        if (h->n[q][r->rank] != recv_n[q]) /* the ranks' plans disagree */
            ret = -1;
        else if (recv_n[q])
            memcpy(recv + recv_at[q], (const uint32_t *)h->data[q] + h->at[q][r->rank],
                   recv_n[q] * 4);
    }
    pthread_barrier_wait(&h->meet);
    return ret;
}

static int hub_broadcast(void *user, void *buf, size_t bytes, int root)
{
    Rank *r = user;
    if (r->rank == root)
        r->hub->data[root] = buf;
    pthread_barrier_wait(&r->hub->meet);
    if (r->rank != root)
        memcpy(buf, r->hub->data[root], bytes);
    pthread_barrier_wait(&r->hub->meet);
    return 0;
}

/* A rank's thread: its own context (a seed of its own: the part hash must still agree), a
 * shard of the pairs and of the queries, a find with one rank's bad arguments, a build that
 * fails in some part. */
static void *rank_main(void *arg)
{
    Rank *r = arg;
    int ranks = r->hub->ranks, devices = ghm_test_have_cuda() ? ghm_cuda_device_count() : 1;
    GhmContextOptions co = ghm_context_defaults();
    co.backend = r->backend;
    co.device = r->backend == GHM_BACKEND_CUDA && !r->one_device ? r->rank % devices : 0;
    co.threads = 1;
    co.seed = 1000 + (uint64_t)r->rank;
    GhmContext *ctx = NULL;
    if ((r->ret_create = ghm_context_create(&co, &ctx)) < 0)
        return NULL; /* (the other ranks then wait: the main thread's check fails first) */
    GhmDistRanks dr = {r->rank, ranks, r, hub_all_to_all, hub_all_to_all_v, hub_broadcast};
    GhmMapOptions mo = ghm_map_defaults();
    GhmDistMap *dm = NULL;
    r->ret_create = ghm_dist_map_create_ranked(ctx, &dr, &mo, &dm);
    size_t first[MAX_P], len[MAX_P], qfirst[MAX_P], qlen[MAX_P];
    ghm_test_cut(N, ranks, first, len);
    ghm_test_cut(2 * N, ranks, qfirst, qlen);
    const uint32_t *k = r->c->keys + first[r->rank], *v = r->c->values + first[r->rank];
    const uint32_t *q = r->c->queries + qfirst[r->rank];
    uint32_t *got = malloc((qlen[r->rank] + 1) * sizeof *got);
    const size_t n = len[r->rank], nq = qlen[r->rank];
    r->ret_build = ghm_dist_map_build(dm, &k, &v, &n);
    r->part_size = ghm_dist_map_part_size(dm, 0);
    r->nccl = ghm_dist_map_uses_nccl(dm);
    r->in_place = ghm_dist_map_uses_ipc(dm);
    r->ret_find = ghm_dist_map_find(dm, &q, &nq, &got);
    for (size_t i = 0; got && i < nq; i++)
        r->wrong += got[i] != r->want[qfirst[r->rank] + i];
    const uint32_t *bad = r->rank == ranks - 1 ? NULL : q; /* the last rank's keys missing */
    size_t one = 1;
    r->ret_bad_find = ghm_dist_map_find(dm, &bad, &one, &got);
    ghm_dist_map_free(&dm);
    mo.layout = GHM_MAP_THESIS; /* two functions cannot hold a table at load 0.99 */
    mo.hash_functions = 2;
    mo.load_factor = 0.99;
    mo.max_rebuilds = 0;
    if (ghm_dist_map_create_ranked(ctx, &dr, &mo, &dm) == GHM_OK) {
        r->ret_failed_build = ghm_dist_map_build(dm, &k, &k, &n);
        r->size_after_failure = ghm_dist_map_size(dm);
    }
    ghm_dist_map_free(&dm);
    free(got);
    ghm_context_free(&ctx);
    return NULL;
}

/* Every rank's answers are the one map's; errors are every rank's. */
static void check_ranked(GhmBackendKind backend, int ranks, int one_device, int expect_nccl)
{
    Pairs *c = make_case(13);
    GhmContext *cpu = context_on(GHM_BACKEND_CPU, 0, 0);
    size_t size = 0;
    uint32_t *want = one_map_answers(cpu, c->keys, c->values, N, c->queries, 2 * N, &size);
    Hub hub = {.ranks = ranks};
    ck_assert_int_eq(pthread_barrier_init(&hub.meet, NULL, (unsigned)ranks), 0);
    Rank r[MAX_P];
    pthread_t t[MAX_P];
    for (int p = 0; p < ranks; p++) {
        r[p] = (Rank){.hub = &hub, .rank = p, .backend = backend, .c = c, .want = want,
                      .one_device = one_device};
        ck_assert_int_eq(pthread_create(&t[p], NULL, rank_main, &r[p]), 0);
    }
    size_t total = 0;
    for (int p = 0; p < ranks; p++) {
        ck_assert_int_eq(pthread_join(t[p], NULL), 0);
        ck_assert_int_eq(r[p].ret_create, GHM_OK);
        ck_assert_int_eq(r[p].ret_build, GHM_OK);
        ck_assert_int_eq(r[p].ret_find, GHM_OK);
        ck_assert_uint_eq(r[p].wrong, 0);
        ck_assert_int_eq(r[p].ret_bad_find, GHM_ERR_INVALID); /* one rank's, every rank's */
        ck_assert_int_eq(r[p].ret_failed_build, GHM_ERR_BUILD_FAILED);
        ck_assert_uint_eq(r[p].size_after_failure, 0);
        if (expect_nccl >= 0)
            ck_assert_int_eq(r[p].nccl, expect_nccl);
        ck_assert_int_eq(r[p].in_place, 0); /* threads of one process cannot map by IPC */
        total += r[p].part_size;
    }
    ck_assert_uint_eq(total, size);
    pthread_barrier_destroy(&hub.meet);
    ghm_context_free(&cpu);
    free(want);
    free(c);
}

START_TEST(test_ranked_cpu_match_one_map)
{
    for (int ranks = 1; ranks <= 3; ranks++)
        check_ranked(GHM_BACKEND_CPU, ranks, 0, 0);
}
END_TEST

/* Two ranks on two GPUs (NCCL where it loads), and two on one GPU (through host memory: NCCL
 * takes one rank per GPU). */
START_TEST(test_ranked_cuda_match_one_map)
{
    GHM_REQUIRE_CUDA();
    check_ranked(GHM_BACKEND_CUDA, 2, 0, ghm_cuda_device_count() < 2 ? 0 : -1);
    check_ranked(GHM_BACKEND_CUDA, 2, 1, 0);
}
END_TEST

START_TEST(test_ranked_bad_arguments)
{
    GhmContext *ctx = context_on(GHM_BACKEND_CPU, 0, 1);
    GhmMapOptions mo = ghm_map_defaults();
    GhmDistMap *dm = NULL;
    GhmDistRanks dr = {0, 1, NULL, hub_all_to_all, hub_all_to_all_v, hub_broadcast};
    GhmDistRanks bad = dr;
    bad.rank = 1;
    ck_assert_int_eq(ghm_dist_map_create_ranked(ctx, &bad, &mo, &dm), GHM_ERR_INVALID);
    bad = dr;
    bad.ranks = GHM_DIST_MAP_MAX_PARTS + 1;
    ck_assert_int_eq(ghm_dist_map_create_ranked(ctx, &bad, &mo, &dm), GHM_ERR_INVALID);
    bad = dr;
    bad.broadcast = NULL;
    ck_assert_int_eq(ghm_dist_map_create_ranked(ctx, &bad, &mo, &dm), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dist_map_create_ranked(NULL, &dr, &mo, &dm), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dist_map_create_ranked(ctx, &dr, NULL, &dm), GHM_ERR_INVALID);
    ck_assert_ptr_null(dm);
    ck_assert_int_eq(ghm_dist_map_uses_nccl(NULL), 0);
    ck_assert_int_eq(ghm_dist_map_uses_ipc(NULL), 0);
    ghm_context_free(&ctx);
}
END_TEST

static Suite *dist_map_suite(void)
{
    Suite *s = suite_create("dist_map");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 120);
    tcase_add_test(core, test_cpu_parts_match_one_map);
    tcase_add_test(core, test_bad_arguments_and_failure);
    tcase_add_test(core, test_ranked_cpu_match_one_map);
    tcase_add_test(core, test_ranked_bad_arguments);
    suite_add_tcase(s, core);
    TCase *cuda = tcase_create("cuda");
    tcase_set_timeout(cuda, 120);
    tcase_add_test(cuda, test_cuda_parts_match_one_map);
    tcase_add_test(cuda, test_ranked_cuda_match_one_map);
    suite_add_tcase(s, cuda);
    return s;
}

int main(void) { return ghm_test_main(dist_map_suite()); }
