/* check_set.c - GhmSet on the CPU backend: distinct keys, membership of present and absent keys,
 * sorted key listing, sizes, extreme keys, load factors and thread counts. */
#include <stdlib.h>
#include <string.h>

#include "ghm_set.h"
#include "hash_internal.h"
#include "test_support.h"

/* Check records every passing assertion (a write to its log pipe), so loops over a million
 * entries count the failures and assert once. */
/* Builds a set from n keys over `distinct` values and checks it against qsort + unique. */
static void check_set(GhmContext *ctx, double load, size_t n, size_t distinct, uint64_t seed)
{
    static const uint32_t extreme[] = {0x80000000u, 0xFFFFFFFFu, 1, 0, 0xFFFFFFFEu};
    uint32_t *pool = malloc((distinct ? distinct : 1) * 4);
    uint32_t *keys = malloc((n ? n : 1) * 4), *ref = malloc((n ? n : 1) * 4);
    uint32_t *listed = malloc((n ? n : 1) * 4);
    uint8_t *flags = malloc(n > 64 ? n : 64);
    ck_assert(pool && keys && ref && listed && flags);
    for (size_t i = 0; i < distinct; i++)
        pool[i] = i < 5 ? extreme[i] : ghmi_permute32((uint32_t)i, (uint32_t)seed);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++)
        ref[i] = keys[i] = pool[rng_next(&s) % distinct];
    qsort(ref, n, 4, cmp_u32);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || ref[i] != ref[i - 1])
            ref[k++] = ref[i];

    GhmSet *set = NULL;
    ck_assert_int_eq(ghm_set_create(ctx, load, &set), GHM_OK);
    ck_assert_int_eq(ghm_set_build(set, keys, n), GHM_OK);
    ck_assert_uint_eq(ghm_set_size(set), k);
    ck_assert_int_eq(ghm_set_keys(set, listed), GHM_OK);
    if (k)
        ck_assert_mem_eq(listed, ref, k * 4);
    ck_assert_int_eq(ghm_set_contains(set, keys, n, flags), GHM_OK);
    CHECK_EACH(n, flags[i] == 1);
    /* 64 probes from the pool and outside it: in the set exactly when the reference has them. */
    uint32_t probe[64];
    for (int i = 0; i < 64; i++)
        probe[i] = i % 2 ? pool[(size_t)i % distinct] : ghmi_permute32((uint32_t)i, 0x77u);
    ck_assert_int_eq(ghm_set_contains(set, probe, 64, flags), GHM_OK);
    for (int i = 0; i < 64; i++)
        ck_assert_uint_eq(flags[i], bsearch(&probe[i], ref, k, 4, cmp_u32) != NULL);
    ghm_set_free(&set);
    ck_assert_ptr_null(set);
    free(pool);
    free(keys);
    free(ref);
    free(listed);
    free(flags);
}

START_TEST(test_sizes)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    check_set(ctx, 0.0, 0, 1, 1);
    check_set(ctx, 0.0, 1, 1, 2);
    check_set(ctx, 0.0, 2, 1, 3);
    check_set(ctx, 0.0, 2, 2, 4);
    check_set(ctx, 0.0, 1000, 100, 5);
    check_set(ctx, 0.0, 1000000, 400000, 6);
    check_set(ctx, 0.0, 1000000, 3000000, 7);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_bad_arguments)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmSet *set = NULL;
    ck_assert_int_eq(ghm_set_create(ctx, -1.0, &set), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_set_create(ctx, 0.0, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_set_create(ctx, 0.0, &set), GHM_OK);
    uint32_t k = 3;
    uint8_t f = 7;
    ck_assert_int_eq(ghm_set_contains(set, &k, 1, &f), GHM_OK); /* empty before a build */
    ck_assert_uint_eq(f, 0);
    ck_assert_uint_eq(ghm_set_size(set), 0);
    ck_assert_int_eq(ghm_set_build(set, NULL, 2), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_set_contains(set, &k, 1, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_set_keys(set, NULL), GHM_ERR_INVALID);
    ghm_set_free(&set);
    ghm_set_free(&set);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_load_factors)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const double loads[] = {0.5, 0.8, 0.9, 0.95};
    for (int i = 0; i < 4; i++)
        check_set(ctx, loads[i], 300000, 150000, 40 + (uint64_t)i);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_thread_counts_agree)
{
    enum { N = 400000 };
    uint32_t *keys = malloc(N * 4), *k0 = malloc(N * 4), *k1 = malloc(N * 4);
    uint8_t *f0 = malloc(N), *f1 = malloc(N);
    ck_assert(keys && k0 && k1 && f0 && f1);
    uint64_t s = 11;
    for (int i = 0; i < N; i++)
        keys[i] = rng_next(&s) % 700000;
    static const int threads[] = {1, 2, 4};
    size_t size0 = 0;
    for (int t = 0; t < 3; t++) {
        GhmContextOptions opt = ghm_context_defaults();
        opt.backend = GHM_BACKEND_CPU;
        opt.threads = threads[t];
        GhmContext *ctx = NULL;
        ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_OK);
        GhmSet *set = NULL;
        ck_assert_int_eq(ghm_set_create(ctx, 0.0, &set), GHM_OK);
        ck_assert_int_eq(ghm_set_build(set, keys, N / 2), GHM_OK);
        ck_assert_int_eq(ghm_set_contains(set, keys, N, t ? f1 : f0), GHM_OK);
        ck_assert_int_eq(ghm_set_keys(set, t ? k1 : k0), GHM_OK);
        if (t == 0)
            size0 = ghm_set_size(set);
        else {
            ck_assert_uint_eq(ghm_set_size(set), size0);
            ck_assert_mem_eq(f1, f0, N);
            ck_assert_mem_eq(k1, k0, size0 * 4);
        }
        ghm_set_free(&set);
        ghm_context_free(&ctx);
    }
    free(keys);
    free(k0);
    free(k1);
    free(f0);
    free(f1);
}
END_TEST

static Suite *set_suite(void)
{
    Suite *s = suite_create("set");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_sizes);
    tcase_add_test(core, test_bad_arguments);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 300);
    tcase_add_test(limits, test_load_factors);
    tcase_add_test(limits, test_thread_counts_agree);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) { return ghm_test_main(set_suite()); }
