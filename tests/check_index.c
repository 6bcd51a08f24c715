/* check_index.c - GhmIndex on the CPU backend: ids dense and in ascending key order, round trips
 * key -> id -> key and id -> key -> id, absent keys, bad ids, sizes, extreme keys, load factors
 * and thread counts. */
#include <stdlib.h>
#include <string.h>

#include "ghm_index.h"
#include "ghm_map.h"
#include "hash_internal.h"
#include "test_support.h"

/* Check records every passing assertion (a write to its log pipe), so loops over a million
 * entries count the failures and assert once. */
static GhmContext *context_with_threads(int threads)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = GHM_BACKEND_CPU;
    opt.threads = threads;
    GhmContext *ctx = NULL;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_OK);
    return ctx;
}

/* n keys drawn from `distinct` values (extreme keys among them); checks the index against a
 * sorted, deduplicated reference. */
static void check_index(GhmContext *ctx, double load, size_t n, size_t distinct, uint64_t seed)
{
    static const uint32_t extreme[] = {0xFFFFFFFFu, 0, 0x80000000u, 1, 0xFFFFFFFEu};
    uint32_t *pool = malloc((distinct ? distinct : 1) * 4);
    uint32_t *keys = malloc((n ? n : 1) * 4), *ref = malloc((n ? n : 1) * 4);
    uint32_t *ids = malloc((n ? n : 1) * 4), *back = malloc((n ? n : 1) * 4);
    ck_assert(pool && keys && ref && ids && back);
    for (size_t i = 0; i < distinct; i++)
        pool[i] = i < 5 ? extreme[i] : ghmi_permute32((uint32_t)i, (uint32_t)seed);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++)
        ref[i] = keys[i] = pool[i < distinct ? i : rng_next(&s) % distinct];
    qsort(ref, n, sizeof *ref, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || ref[i] != ref[i - 1])
            ref[k++] = ref[i];

    GhmIndex *ix = NULL;
    ck_assert_int_eq(ghm_index_create(ctx, load, &ix), GHM_OK);
    ck_assert_int_eq(ghm_index_build(ix, keys, n), GHM_OK);
    ck_assert_uint_eq(ghm_index_size(ix), k);
    const uint32_t *arr = NULL;
    ck_assert_int_eq(ghm_index_key_array(ix, &arr), GHM_OK);
    if (k)
        ck_assert_mem_eq(arr, ref, k * 4);
    /* key -> id is the key's rank; id -> key gives the key back. */
    ck_assert_int_eq(ghm_index_ids(ix, keys, n, ids), GHM_OK);
    CHECK_EACH(n, ids[i] < k && ref[ids[i]] == keys[i]);
    ck_assert_int_eq(ghm_index_keys(ix, ids, n, back), GHM_OK);
    ck_assert_mem_eq(back, keys, n * 4);
    /* Every id 0..K-1 round-trips the other way: dense ids. */
    for (size_t i = 0; i < k; i++)
        ids[i] = (uint32_t)i;
    ck_assert_int_eq(ghm_index_keys(ix, ids, k, back), GHM_OK);
    ck_assert_int_eq(ghm_index_ids(ix, back, k, ids), GHM_OK);
    CHECK_EACH(k, ids[i] == i);
    /* Absent keys have no id. */
    uint32_t probe[32], pid[32];
    size_t np = 0;
    for (uint32_t c = 0; np < 32; c++) {
        uint32_t key = ghmi_permute32(c, 0x5151u);
        if (!bsearch(&key, ref, k, 4, cmp_u32))
            probe[np++] = key;
    }
    ck_assert_int_eq(ghm_index_ids(ix, probe, np, pid), GHM_OK);
    for (size_t i = 0; i < np; i++)
        ck_assert_uint_eq(pid[i], GHM_NOT_FOUND);
    ghm_index_free(&ix);
    ck_assert_ptr_null(ix);
    free(pool);
    free(keys);
    free(ref);
    free(ids);
    free(back);
}

START_TEST(test_sizes)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    check_index(ctx, 0.0, 0, 1, 1);
    check_index(ctx, 0.0, 1, 1, 2);
    check_index(ctx, 0.0, 2, 2, 3);
    check_index(ctx, 0.0, 2, 1, 4);
    check_index(ctx, 0.0, 1000, 1000, 5);
    check_index(ctx, 0.0, 1000, 20, 6);
    check_index(ctx, 0.0, 1000000, 1000000, 7);
    check_index(ctx, 0.0, 1000000, 70000, 8);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_bad_ids_and_arguments)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmIndex *ix = NULL;
    ck_assert_int_eq(ghm_index_create(ctx, 2.0, &ix), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_index_create(NULL, 0.0, &ix), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_index_create(ctx, 0.0, &ix), GHM_OK);
    const uint32_t keys[] = {30, 10, 20, 10};
    ck_assert_int_eq(ghm_index_build(ix, keys, 4), GHM_OK);
    ck_assert_uint_eq(ghm_index_size(ix), 3);
    uint32_t ids[] = {2, 3, 0}, out[3];
    ck_assert_int_eq(ghm_index_keys(ix, ids, 3, out), GHM_ERR_INVALID);
    ck_assert_uint_eq(out[0], 30);
    ck_assert_uint_eq(out[1], GHM_NOT_FOUND);
    ck_assert_uint_eq(out[2], 10);
    ck_assert_int_eq(ghm_index_ids(ix, NULL, 1, out), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_index_build(ix, NULL, 1), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_index_key_array(ix, NULL), GHM_ERR_INVALID);
    /* A rebuild replaces the content. */
    ck_assert_int_eq(ghm_index_build(ix, keys + 2, 1), GHM_OK);
    ck_assert_uint_eq(ghm_index_size(ix), 1);
    ck_assert_int_eq(ghm_index_ids(ix, keys, 3, out), GHM_OK);
    ck_assert_uint_eq(out[0], GHM_NOT_FOUND);
    ck_assert_uint_eq(out[2], 0);
    ghm_index_free(&ix);
    ghm_index_free(&ix);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_load_factors)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const double loads[] = {0.5, 0.8, 0.9, 0.95};
    for (int i = 0; i < 4; i++)
        check_index(ctx, loads[i], 300000, 100000, 30 + (uint64_t)i);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_thread_counts_agree)
{
    enum { N = 400000 };
    uint32_t *keys = malloc(N * 4), *ids0 = malloc(N * 4), *ids = malloc(N * 4);
    ck_assert(keys && ids0 && ids);
    uint64_t s = 9;
    for (int i = 0; i < N; i++)
        keys[i] = rng_next(&s) % 1000000;
    static const int threads[] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        GhmContext *ctx = context_with_threads(threads[t]);
        GhmIndex *ix = NULL;
        ck_assert_int_eq(ghm_index_create(ctx, 0.0, &ix), GHM_OK);
        ck_assert_int_eq(ghm_index_build(ix, keys, N / 2), GHM_OK);
        ck_assert_int_eq(ghm_index_ids(ix, keys, N, t ? ids : ids0), GHM_OK);
        if (t)
            ck_assert_mem_eq(ids, ids0, N * 4);
        ghm_index_free(&ix);
        ghm_context_free(&ctx);
    }
    free(keys);
    free(ids0);
    free(ids);
}
END_TEST

/* A clone in a context of other threads gives its source's ids and keys, after the source is
 * freed; bad arguments are refused. */
START_TEST(test_clone)
{
    enum { N = 200000 };
    uint32_t *keys = malloc(N * 4), *ids0 = malloc(N * 4), *ids = malloc(N * 4);
    uint32_t *back = malloc(N * 4);
    ck_assert(keys && ids0 && ids && back);
    uint64_t s = 9;
    for (int i = 0; i < N; i++)
        keys[i] = i == 0 ? 0xFFFFFFFFu : (uint32_t)rng_next(&s) % 150000u;
    GhmContext *four = context_with_threads(4), *one = context_with_threads(1);
    GhmIndex *ix = NULL, *cl = NULL;
    ck_assert_int_eq(ghm_index_create(four, 0.0, &ix), GHM_OK);
    ck_assert_int_eq(ghm_index_build(ix, keys, N), GHM_OK);
    ck_assert_int_eq(ghm_index_ids(ix, keys, N, ids0), GHM_OK);
    size_t k = ghm_index_size(ix);
    ck_assert_int_eq(ghm_index_clone(one, ix, &cl), GHM_OK);
    ghm_index_free(&ix);
    ck_assert_uint_eq(ghm_index_size(cl), k);
    ck_assert_int_eq(ghm_index_ids(cl, keys, N, ids), GHM_OK);
    ck_assert_mem_eq(ids, ids0, N * 4);
    ck_assert_int_eq(ghm_index_keys(cl, ids, N, back), GHM_OK);
    ck_assert_mem_eq(back, keys, N * 4);
    ck_assert_int_eq(ghm_index_clone(NULL, cl, &ix), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_index_clone(one, NULL, &ix), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_index_clone(one, cl, NULL), GHM_ERR_INVALID);
    ghm_index_free(&cl);
    ghm_context_free(&four);
    ghm_context_free(&one);
    free(keys);
    free(ids0);
    free(ids);
    free(back);
}
END_TEST

static Suite *index_suite(void)
{
    Suite *s = suite_create("index");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_sizes);
    tcase_add_test(core, test_bad_ids_and_arguments);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 300);
    tcase_add_test(limits, test_load_factors);
    tcase_add_test(limits, test_thread_counts_agree);
    tcase_add_test(limits, test_clone);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) { return ghm_test_main(index_suite()); }
