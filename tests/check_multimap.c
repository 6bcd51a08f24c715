/* check_multimap.c - GhmMultimap on the CPU backend: counts and value lists against a sorted
 * reference (qsort), input order within a key, sizes, extreme keys, load factors, thread counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_map.h"
#include "ghm_multimap.h"
#include "hash_internal.h"
#include "test_support.h"

/* Check records every passing assertion (a write to its log pipe), so loops over a million
 * entries count the failures and assert once. */
typedef struct Pair {
    uint32_t key, value, pos; /* pos: input index, the tie-break that makes qsort stable */
} Pair;

static int cmp_pair(const void *a, const void *b)
{
    const Pair *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static GhmContext *context_with_threads(int threads)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = GHM_BACKEND_CPU;
    opt.threads = threads;
    GhmContext *ctx = NULL;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_OK);
    return ctx;
}

/* Builds a multimap of n pairs over `distinct` keys and checks it against the stable qsort
 * reference: number of keys, each key's count and values in input order, absent keys. */
static void check_against_reference(GhmContext *ctx, double load, size_t n, size_t distinct,
                                    uint64_t seed)
{
    static const uint32_t extreme[] = {0, 1, 0xFFFFFFFEu, 0xFFFFFFFFu, 0x80000000u};
    uint32_t *pool = malloc((distinct ? distinct : 1) * sizeof *pool);
    uint32_t *keys = malloc((n ? n : 1) * sizeof *keys), *vals = malloc((n ? n : 1) * 4);
    uint32_t *first = malloc((n > 64 ? n : 64) * 4), *count = malloc((n > 64 ? n : 64) * 4);
    Pair *ref = malloc((n ? n : 1) * sizeof *ref);
    ck_assert(pool && keys && vals && first && count && ref);
    for (size_t i = 0; i < distinct; i++)
        pool[i] = i < 5 ? extreme[i] : ghmi_permute32((uint32_t)i, (uint32_t)seed);
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        keys[i] = pool[rng_next(&s) % distinct];
        vals[i] = rng_next(&s);
        ref[i] = (Pair){keys[i], vals[i], (uint32_t)i};
    }
    qsort(ref, n, sizeof *ref, cmp_pair);
    size_t want_keys = 0;
    for (size_t i = 0; i < n; i++)
        want_keys += i == 0 || ref[i].key != ref[i - 1].key;

    GhmMultimap *mm = NULL;
    ck_assert_int_eq(ghm_multimap_create(ctx, load, &mm), GHM_OK);
    ck_assert_int_eq(ghm_multimap_build(mm, keys, vals, n), GHM_OK);
    ck_assert_uint_eq(ghm_multimap_keys(mm), want_keys);
    const uint32_t *values = NULL;
    size_t nvalues = 0;
    ck_assert_int_eq(ghm_multimap_values(mm, &values, &nvalues), GHM_OK);
    ck_assert_uint_eq(nvalues, n);
    ck_assert_int_eq(ghm_multimap_find(mm, keys, n, first, count), GHM_OK);
    /* The values array is the reference's value column, and each key points at its run. */
    CHECK_EACH(n, values[i] == ref[i].value);
    CHECK_EACH(n, first[i] < n && count[i] >= 1 && first[i] + count[i] <= n);
    CHECK_EACH(n, ref[first[i]].key == keys[i] && ref[first[i] + count[i] - 1].key == keys[i]);
    CHECK_EACH(n, first[i] == 0 || ref[first[i] - 1].key != keys[i]);
    CHECK_EACH(n, first[i] + count[i] == n || ref[first[i] + count[i]].key != keys[i]);
    if (n) { /* either output may be NULL */
        uint32_t c1 = 7, f1 = 7;
        ck_assert_int_eq(ghm_multimap_find(mm, keys, 1, NULL, &c1), GHM_OK);
        ck_assert_int_eq(ghm_multimap_find(mm, keys, 1, &f1, NULL), GHM_OK);
        ck_assert_uint_eq(c1, count[0]);
        ck_assert_uint_eq(f1, first[0]);
    }
    /* Absent keys: first GHM_NOT_FOUND, count 0. */
    uint32_t absent[64];
    size_t na = 0;
    for (uint32_t c = 0; na < 64 && c < 1000000; c++) {
        uint32_t k = ghmi_permute32(c, 0xABCDu);
        Pair probe = {k, 0, 0};
        int present = 0;
        for (size_t j = 0; j < distinct && !present; j++)
            present = pool[j] == probe.key;
        if (!present)
            absent[na++] = k;
    }
    ck_assert_int_eq(ghm_multimap_find(mm, absent, na, first, count), GHM_OK);
    for (size_t i = 0; i < na; i++) {
        ck_assert_uint_eq(first[i], GHM_NOT_FOUND);
        ck_assert_uint_eq(count[i], 0);
    }
    ghm_multimap_free(&mm);
    ck_assert_ptr_null(mm);
    free(pool);
    free(keys);
    free(vals);
    free(first);
    free(count);
    free(ref);
}

/* Expected retrieve of queries q[0..nq) from the stable-sorted pairs ref[0..n): offsets and
 * values; returns the total. want_val holds at least the total. */
static size_t reference_retrieve(const Pair *ref, size_t n, const uint32_t *q, size_t nq,
                                 uint32_t *want_off, uint32_t *want_val)
{
    size_t total = 0;
    for (size_t i = 0; i < nq; i++) {
        want_off[i] = (uint32_t)total;
        size_t lo = 0, hi = n; /* first pair with key >= q[i] */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (ref[mid].key < q[i])
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t j = lo; j < n && ref[j].key == q[i]; j++)
            want_val[total++] = ref[j].value;
    }
    want_off[nq] = (uint32_t)total;
    return total;
}

/* Retrieve of present keys (some repeated) mixed with absent ones, n = 0 and too small a
 * capacity, against the sorted reference. */
START_TEST(test_retrieve)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    enum { N = 20000, DISTINCT = 2500, NQ = 6000 };
    uint32_t *keys = malloc(N * 4), *vals = malloc(N * 4), *q = malloc(NQ * 4);
    uint32_t *off = malloc((NQ + 1) * 4), *want_off = malloc((NQ + 1) * 4);
    size_t room = (size_t)NQ * N / DISTINCT * 2; /* twice the expected total */
    uint32_t *out = malloc(room * 4), *want = malloc(room * 4);
    Pair *ref = malloc(N * sizeof *ref);
    ck_assert(keys && vals && q && off && want_off && out && want && ref);
    uint64_t s = 77;
    for (size_t i = 0; i < N; i++) {
        keys[i] = ghmi_permute32((uint32_t)(rng_next(&s) % DISTINCT), 5u);
        vals[i] = rng_next(&s);
        ref[i] = (Pair){keys[i], vals[i], (uint32_t)i};
    }
    qsort(ref, N, sizeof *ref, cmp_pair);
    for (size_t i = 0; i < NQ; i++) /* counters >= DISTINCT give absent keys */
        q[i] = ghmi_permute32((uint32_t)(rng_next(&s) % (DISTINCT + DISTINCT / 4)), 5u);
    size_t want_total = reference_retrieve(ref, N, q, NQ, want_off, want);
    ck_assert_uint_lt(want_total, room);

    GhmMultimap *mm = NULL;
    ck_assert_int_eq(ghm_multimap_create(ctx, 0.0, &mm), GHM_OK);
    ck_assert_int_eq(ghm_multimap_build(mm, keys, vals, N), GHM_OK);
    size_t total = 0;
    ck_assert_int_eq(ghm_multimap_retrieve(mm, q, NQ, off, out, want_total, &total), GHM_OK);
    ck_assert_uint_eq(total, want_total);
    CHECK_EACH(NQ + 1, off[i] == want_off[i]);
    CHECK_EACH(want_total, out[i] == want[i]);
    size_t absent = 0;
    for (size_t i = 0; i < NQ; i++)
        absent += off[i + 1] == off[i];
    ck_assert_uint_gt(absent, 0); /* the mix did contain absent keys */

    /* Too small: offsets and total filled, values_out untouched. */
    memset(off, 0xEE, (NQ + 1) * 4);
    for (size_t i = 0; i < want_total; i++)
        out[i] = 0xDEADBEEFu;
    total = 0;
    ck_assert_int_eq(ghm_multimap_retrieve(mm, q, NQ, off, out, want_total - 1, &total),
                     GHM_ERR_TOO_LARGE);
    ck_assert_uint_eq(total, want_total);
    CHECK_EACH(NQ + 1, off[i] == want_off[i]);
    CHECK_EACH(want_total, out[i] == 0xDEADBEEFu);

    /* n = 0: one offset, total 0, values_out may be NULL with capacity 0. */
    off[0] = 5;
    total = 9;
    ck_assert_int_eq(ghm_multimap_retrieve(mm, NULL, 0, off, NULL, 0, &total), GHM_OK);
    ck_assert_uint_eq(total, 0);
    ck_assert_uint_eq(off[0], 0);
    ck_assert_int_eq(ghm_multimap_retrieve(mm, q, 1, NULL, out, 8, &total), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_retrieve(mm, q, 1, off, NULL, 8, &total), GHM_ERR_INVALID);
    ghm_multimap_free(&mm);
    ghm_context_free(&ctx);
    free(keys);
    free(vals);
    free(q);
    free(off);
    free(want_off);
    free(out);
    free(want);
    free(ref);
}
END_TEST

START_TEST(test_sizes)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    check_against_reference(ctx, 0.0, 0, 1, 1);
    check_against_reference(ctx, 0.0, 1, 1, 2);
    check_against_reference(ctx, 0.0, 2, 1, 3);
    check_against_reference(ctx, 0.0, 2, 2, 4);
    check_against_reference(ctx, 0.0, 1000, 37, 5);
    check_against_reference(ctx, 0.0, 1000000, 300000, 6);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_multiplicities)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const size_t mult[] = {1, 2, 4, 8, 16, 32, 64};
    for (int i = 0; i < 7; i++)
        check_against_reference(ctx, 0.0, 100000, 100000 / mult[i], 10 + (uint64_t)i);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_input_order_kept)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    /* Keys interleaved, values counting up: each key's values must come out ascending. */
    enum { N = 100000, K = 7 };
    uint32_t *keys = malloc(N * 4), *vals = malloc(N * 4);
    ck_assert(keys && vals);
    for (uint32_t i = 0; i < N; i++) {
        keys[i] = (K - 1 - i % K) * 0x20000000u;
        vals[i] = i;
    }
    GhmMultimap *mm = NULL;
    ck_assert_int_eq(ghm_multimap_create(ctx, 0.5, &mm), GHM_OK);
    ck_assert_int_eq(ghm_multimap_build(mm, keys, vals, N), GHM_OK);
    const uint32_t *values;
    size_t nv;
    ck_assert_int_eq(ghm_multimap_values(mm, &values, &nv), GHM_OK);
    for (uint32_t k = 0; k < K; k++) {
        uint32_t key = k * 0x20000000u, f, c;
        ck_assert_int_eq(ghm_multimap_find(mm, &key, 1, &f, &c), GHM_OK);
        ck_assert_uint_eq(c, N / K + (K - 1 - k < N % K));
        for (uint32_t j = 1; j < c; j++)
            ck_assert_uint_eq(values[f + j], values[f + j - 1] + K);
    }
    ghm_multimap_free(&mm);
    free(keys);
    free(vals);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_bad_arguments)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmMultimap *mm = NULL;
    ck_assert_int_eq(ghm_multimap_create(ctx, 1.5, &mm), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_create(NULL, 0.0, &mm), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_create(ctx, 0.0, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_create(ctx, 0.0, &mm), GHM_OK);
    uint32_t k = 5, v = 6, f = 0, c = 9;
    ck_assert_int_eq(ghm_multimap_build(mm, NULL, &v, 1), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_find(mm, NULL, 1, &f, &c), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_values(mm, NULL, NULL), GHM_ERR_INVALID);
    /* Before a build, every key is absent. */
    ck_assert_int_eq(ghm_multimap_find(mm, &k, 1, &f, &c), GHM_OK);
    ck_assert_uint_eq(f, GHM_NOT_FOUND);
    ck_assert_uint_eq(c, 0);
    ck_assert_uint_eq(ghm_multimap_keys(mm), 0);
    ghm_multimap_free(&mm);
    ghm_multimap_free(&mm);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_load_factors)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    static const double loads[] = {0.5, 0.8, 0.9, 0.95};
    for (int i = 0; i < 4; i++)
        check_against_reference(ctx, loads[i], 200000, 60000, 20 + (uint64_t)i);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_thread_counts_agree)
{
    enum { N = 500000 };
    uint32_t *keys = malloc(N * 4), *vals = malloc(N * 4);
    uint32_t *f0 = malloc(N * 4), *c0 = malloc(N * 4), *f = malloc(N * 4), *c = malloc(N * 4);
    uint32_t *v0 = malloc(N * 4);
    ck_assert(keys && vals && f0 && c0 && f && c && v0);
    uint64_t s = 3;
    for (int i = 0; i < N; i++) {
        keys[i] = rng_next(&s) % 50000;
        vals[i] = rng_next(&s);
    }
    static const int threads[] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        GhmContext *ctx = context_with_threads(threads[t]);
        GhmMultimap *mm = NULL;
        ck_assert_int_eq(ghm_multimap_create(ctx, 0.0, &mm), GHM_OK);
        ck_assert_int_eq(ghm_multimap_build(mm, keys, vals, N), GHM_OK);
        ck_assert_int_eq(ghm_multimap_find(mm, keys, N, t ? f : f0, t ? c : c0), GHM_OK);
        const uint32_t *values;
        size_t nv;
        ck_assert_int_eq(ghm_multimap_values(mm, &values, &nv), GHM_OK);
        if (t == 0)
            memcpy(v0, values, N * 4);
        else {
            ck_assert_mem_eq(f, f0, N * 4);
            ck_assert_mem_eq(c, c0, N * 4);
            ck_assert_mem_eq(values, v0, N * 4);
        }
        ghm_multimap_free(&mm);
        ghm_context_free(&ctx);
    }
    free(keys);
    free(vals);
    free(f0);
    free(c0);
    free(f);
    free(c);
    free(v0);
}
END_TEST

/* A clone in a context of other threads answers as its source, after the source is freed; the
 * clone of an empty multimap is empty; bad arguments are refused. */
START_TEST(test_clone)
{
    enum { N = 300000 };
    uint32_t *keys = malloc(N * 4), *vals = malloc(N * 4), *v0 = malloc(N * 4);
    uint32_t *f0 = malloc(N * 4), *c0 = malloc(N * 4), *f = malloc(N * 4), *c = malloc(N * 4);
    ck_assert(keys && vals && v0 && f0 && c0 && f && c);
    uint64_t s = 5;
    for (int i = 0; i < N; i++) {
        keys[i] = i == 0 ? 0xFFFFFFFFu : (uint32_t)rng_next(&s) % 40000u;
        vals[i] = rng_next(&s);
    }
    GhmContext *four = context_with_threads(4), *one = context_with_threads(1);
    GhmMultimap *mm = NULL, *cl = NULL, *empty = NULL;
    ck_assert_int_eq(ghm_multimap_create(four, 0.9, &mm), GHM_OK);
    ck_assert_int_eq(ghm_multimap_build(mm, keys, vals, N), GHM_OK);
    ck_assert_int_eq(ghm_multimap_find(mm, keys, N, f0, c0), GHM_OK);
    const uint32_t *values;
    size_t nv, nkeys = ghm_multimap_keys(mm);
    ck_assert_int_eq(ghm_multimap_values(mm, &values, &nv), GHM_OK);
    memcpy(v0, values, N * 4);
    ck_assert_int_eq(ghm_multimap_clone(one, mm, &cl), GHM_OK);
    ghm_multimap_free(&mm);
    ck_assert_uint_eq(ghm_multimap_keys(cl), nkeys);
    ck_assert_int_eq(ghm_multimap_find(cl, keys, N, f, c), GHM_OK);
    ck_assert_mem_eq(f, f0, N * 4);
    ck_assert_mem_eq(c, c0, N * 4);
    ck_assert_int_eq(ghm_multimap_values(cl, &values, &nv), GHM_OK);
    ck_assert_uint_eq(nv, N);
    ck_assert_mem_eq(values, v0, N * 4);
    ck_assert_int_eq(ghm_multimap_create(four, 0.0, &empty), GHM_OK);
    ghm_multimap_free(&cl);
    ck_assert_int_eq(ghm_multimap_clone(one, empty, &cl), GHM_OK);
    ck_assert_uint_eq(ghm_multimap_keys(cl), 0);
    ck_assert_int_eq(ghm_multimap_find(cl, keys, 1, f, c), GHM_OK);
    ck_assert_uint_eq(f[0], GHM_NOT_FOUND);
    ck_assert_uint_eq(c[0], 0);
    ghm_multimap_free(&cl);
    ck_assert_int_eq(ghm_multimap_clone(NULL, empty, &cl), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_clone(one, NULL, &cl), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_multimap_clone(one, empty, NULL), GHM_ERR_INVALID);
    ghm_multimap_free(&empty);
    ghm_context_free(&four);
    ghm_context_free(&one);
    free(keys);
    free(vals);
    free(v0);
    free(f0);
    free(c0);
    free(f);
    free(c);
}
END_TEST

static Suite *multimap_suite(void)
{
    Suite *s = suite_create("multimap");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 300);
    tcase_add_test(core, test_sizes);
    tcase_add_test(core, test_multiplicities);
    tcase_add_test(core, test_input_order_kept);
    tcase_add_test(core, test_bad_arguments);
    tcase_add_test(core, test_retrieve);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 300);
    tcase_add_test(limits, test_load_factors);
    tcase_add_test(limits, test_thread_counts_agree);
    tcase_add_test(limits, test_clone);
    suite_add_tcase(s, limits);
    return s;
}

int main(void) { return ghm_test_main(multimap_suite()); }
