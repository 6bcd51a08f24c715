/* check_sorted.c - GhmSorted (sort + binary search) on the CPU backend: every key answers its
 * smallest value, absent keys are absent, sizes, extreme keys, thread counts; and the radix sort
 * underneath agrees with the hash map on the same input. */
#include <stdlib.h>
#include <string.h>

#include "ghm_map.h"
#include "ghm_sorted.h"
#include "hash_internal.h"
#include "test_support.h"

/* Check records every passing assertion (a write to its log pipe), so loops over a million
 * entries count the failures and assert once. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Smallest value of key in the sorted (key << 32 | value) list, or GHM_NOT_FOUND. */
static uint32_t reference_min(const uint64_t *ref, size_t n, uint32_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((uint32_t)(ref[mid] >> 32) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && (uint32_t)(ref[lo] >> 32) == key ? (uint32_t)ref[lo] : GHM_NOT_FOUND;
}

/* n pairs over `distinct` keys; queries the input keys plus n fresh keys against the reference
 * and, for the same input, against GhmMap. */
static void check_sorted(GhmContext *ctx, size_t n, size_t distinct, uint64_t seed)
{
    static const uint32_t extreme[] = {0xFFFFFFFFu, 0, 1, 0x80000000u, 0xFFFFFFFEu};
    size_t m = 2 * n + 5;
    uint32_t *keys = malloc(m * 4), *vals = malloc((n ? n : 1) * 4);
    uint32_t *out = malloc(m * 4), *mout = malloc(m * 4);
    uint64_t *ref = malloc((n ? n : 1) * 8);
    ck_assert(keys && vals && out && mout && ref);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        uint32_t r = rng_next(&s) % distinct;
        keys[i] = r < 5 ? extreme[r] : ghmi_permute32(r, (uint32_t)seed);
        vals[i] = rng_next(&s);
        ref[i] = (uint64_t)keys[i] << 32 | vals[i];
    }
    for (size_t i = n; i < m; i++) /* mostly absent, sometimes not: the reference decides */
        keys[i] = i - n < 5 ? extreme[i - n] : rng_next(&s);
    qsort(ref, n, 8, cmp_u64);
    GhmSorted *srt = NULL;
    ck_assert_int_eq(ghm_sorted_create(ctx, &srt), GHM_OK);
    ck_assert_int_eq(ghm_sorted_build(srt, keys, vals, n), GHM_OK);
    ck_assert_int_eq(ghm_sorted_find(srt, keys, m, out), GHM_OK);
    CHECK_EACH(m, out[i] == reference_min(ref, n, keys[i]));
    GhmMap *map = NULL;
    ck_assert_int_eq(ghm_map_create(ctx, NULL, &map), GHM_OK);
    ck_assert_int_eq(ghm_map_build(map, keys, vals, n), GHM_OK);
    ck_assert_int_eq(ghm_map_find(map, keys, m, mout), GHM_OK);
    ck_assert_mem_eq(out, mout, m * 4);
    ghm_map_free(&map);
    ghm_sorted_free(&srt);
    ck_assert_ptr_null(srt);
    free(keys);
    free(vals);
    free(out);
    free(mout);
    free(ref);
}

START_TEST(test_sizes)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    check_sorted(ctx, 0, 1, 1);
    check_sorted(ctx, 1, 1, 2);
    check_sorted(ctx, 2, 1, 3);
    check_sorted(ctx, 2, 2, 4);
    check_sorted(ctx, 1000, 1000, 5);
    check_sorted(ctx, 1000, 30, 6);
    check_sorted(ctx, 1000000, 1000000000, 7);
    check_sorted(ctx, 1000000, 10000, 8);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_bad_arguments)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmSorted *s = NULL;
    ck_assert_int_eq(ghm_sorted_create(NULL, &s), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_sorted_create(ctx, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_sorted_create(ctx, &s), GHM_OK);
    uint32_t k = 1, o = 0;
    ck_assert_int_eq(ghm_sorted_find(s, &k, 1, &o), GHM_OK);
    ck_assert_uint_eq(o, GHM_NOT_FOUND);
    ck_assert_int_eq(ghm_sorted_build(s, &k, NULL, 1), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_sorted_find(s, &k, 1, NULL), GHM_ERR_INVALID);
    ghm_sorted_free(&s);
    ghm_sorted_free(&s);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_thread_counts_agree)
{
    enum { N = 600000 };
    uint32_t *keys = malloc(N * 4), *vals = malloc(N * 4), *o0 = malloc(N * 4), *o1 = malloc(N * 4);
    ck_assert(keys && vals && o0 && o1);
    uint64_t s = 21;
    for (int i = 0; i < N; i++) {
        keys[i] = rng_next(&s) % 400000;
        vals[i] = rng_next(&s);
    }
    static const int threads[] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        GhmContextOptions opt = ghm_context_defaults();
        opt.backend = GHM_BACKEND_CPU;
        opt.threads = threads[t];
        GhmContext *ctx = NULL;
        ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_OK);
        GhmSorted *srt = NULL;
        ck_assert_int_eq(ghm_sorted_create(ctx, &srt), GHM_OK);
        ck_assert_int_eq(ghm_sorted_build(srt, keys, vals, N / 2), GHM_OK);
        ck_assert_int_eq(ghm_sorted_find(srt, keys, N, t ? o1 : o0), GHM_OK);
        if (t)
            ck_assert_mem_eq(o1, o0, N * 4);
        ghm_sorted_free(&srt);
        ghm_context_free(&ctx);
    }
    free(keys);
    free(vals);
    free(o0);
    free(o1);
}
END_TEST

static Suite *sorted_suite(void)
{
    Suite *s = suite_create("sorted");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_sizes);
    tcase_add_test(core, test_bad_arguments);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 300);
    tcase_add_test(limits, test_thread_counts_agree);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) { return ghm_test_main(sorted_suite()); }
