/* check_cpu_sort.c - the CPU backend's radix sort (hashing/cpu_sort.c): sorted and stable for
 * keys of every width the digits are chosen from (0 to 32 bits: one pass, digits split evenly,
 * the top bit set), with and without values, on 1 to 4 threads, under and past the size where
 * the digits narrow. */
#include <stdlib.h>
#include <string.h>

#include "cpu_sort_internal.h"
#include "test_support.h"

static uint64_t state;

static uint32_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t)(state >> 16);
}

static uint32_t random_key(int bits)
{
    uint32_t k = next_random() ^ next_random() << 16;
    return bits == 32 ? k : k & ((1u << bits) - 1);
}

/* The first position where keys are not sorted ascending, where a value is not its key's input
 * position, or where the values of equal keys are not ascending (stability); n when none.
 * (One ck_assert per element would cost a write to Check's log each.) */
static size_t first_wrong(const uint32_t *keys, const uint32_t *vals, const uint32_t *input,
                          size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (vals && keys[i] != input[vals[i]])
            return i;
        if (i > 0 && (keys[i - 1] > keys[i] ||
                      (vals && keys[i - 1] == keys[i] && vals[i - 1] >= vals[i])))
            return i;
    }
    return n;
}

static int compare_keys(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorts a copy of input[0..n) on `threads` threads, with each key's input position riding
 * along as its value when with_values, and checks the result; returns the sorted keys (the
 * caller frees them). */
static uint32_t *sort_checked(const uint32_t *input, size_t n, int threads, int with_values)
{
    uint32_t *keys = malloc((n ? n : 1) * sizeof *keys);
    uint32_t *vals = malloc((n ? n : 1) * sizeof *vals);
    ck_assert(keys && vals);
    for (size_t i = 0; i < n; i++) {
        keys[i] = input[i];
        vals[i] = (uint32_t)i;
    }
    ck_assert_int_eq(ghmi_cpu_sort_pairs(threads, keys, with_values ? vals : NULL, n), GHM_OK);
    ck_assert_uint_eq(first_wrong(keys, with_values ? vals : NULL, input, n), n);
    if (!with_values) { /* the same multiset: every input key present as often */
        uint32_t *want = malloc((n ? n : 1) * sizeof *want);
        ck_assert(want);
        memcpy(want, input, n * sizeof *want);
        qsort(want, n, sizeof *want, compare_keys);
        ck_assert(n == 0 || memcmp(keys, want, n * sizeof *keys) == 0);
        free(want);
    }
    free(vals);
    return keys;
}

/* n random keys of `bits` bits, the largest such key among them. */
static void sort_and_check(size_t n, int bits, int threads, int with_values)
{
    uint32_t *input = malloc((n ? n : 1) * sizeof *input);
    ck_assert(input);
    state = 0x9E3779B97F4A7C15ull ^ (uint64_t)(n * 131 + (size_t)bits);
    for (size_t i = 0; i < n; i++)
        input[i] = random_key(bits);
    if (n > 2 && bits > 0)
        input[n / 2] = bits == 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
    free(sort_checked(input, n, threads, with_values));
    free(input);
}

START_TEST(test_small_arrays)
{
    for (size_t n = 0; n < 70; n++)
        sort_and_check(n, n % 33, 2, (int)(n % 2));
}
END_TEST

START_TEST(test_every_key_width)
{
    for (int bits = 0; bits <= 32; bits++)
        for (int values = 0; values < 2; values++)
            sort_and_check(20000 + (size_t)bits, bits, 1 + bits % 3, values);
}
END_TEST

/* Past 65536 keys a thread the passes run on several threads; stability then rests on the
 * (digit, thread) order of the scatter offsets. */
START_TEST(test_parallel_passes)
{
    const int widths[] = {8, 11, 12, 19, 22, 23, 32};
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
        for (int threads = 1; threads <= 4; threads++)
            sort_and_check(300007, widths[w], threads, 1);
}
END_TEST

/* Past 2^20 keys the digits are of at most 8 bits (cpu_sort.c). */
START_TEST(test_large_arrays)
{
    const int widths[] = {9, 17, 19, 32};
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
        sort_and_check(((size_t)1 << 20) + 5, widths[w], 2, 1);
}
END_TEST

/* Few distinct keys: most digits hold nothing, and a pass where every key shares the digit is
 * skipped. */
START_TEST(test_clustered_keys)
{
    size_t n = 200000;
    uint32_t *input = malloc(n * sizeof *input);
    ck_assert(input);
    for (size_t i = 0; i < n; i++)
        input[i] = 0x00ABC000u | (uint32_t)(i * 7 % 3) << 24;
    uint32_t *keys = sort_checked(input, n, 2, 1);
    ck_assert_uint_eq(keys[0], 0x00ABC000u);
    ck_assert_uint_eq(keys[n - 1], 0x02ABC000u);
    free(keys);
    free(input);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cpu_sort");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_small_arrays);
    tcase_add_test(tc, test_every_key_width);
    tcase_add_test(tc, test_parallel_passes);
    tcase_add_test(tc, test_large_arrays);
    tcase_add_test(tc, test_clustered_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ghm_test_main(suite()); }
