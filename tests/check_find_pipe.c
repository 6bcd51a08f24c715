/* check_find_pipe.c - hashing/cpu_find_pipe.h's software pipeline on its own: every key gets
 * its stages in order and exactly one answer, in its own place, for every count around the
 * pipeline's distance and the parallel work items' size, with two and three stages. The maps'
 * suites check the schemes that use it (chaining, the bucketed cuckoo layout) answer by answer. */
#include <stdlib.h>

#include "cpu_find_pipe.h"
#include "test_support.h"

enum { TABLE = 1000, CANARY = 0xC0FFEEu };

typedef struct FakeMap {
    uint32_t table[TABLE];
} FakeMap;

/* Stage 0: a key's slot; stage 1: the word there; stage 2: the answer from both. Each stage
 * checks that the one before ran for this very key. */
static void first(const void *map, GhmiPipeKey *k)
{
    (void)map;
    k->w[0] = k->key % TABLE;
    k->w[1] = ~k->key;
    k->value = CANARY;
}

static void second(const void *map, GhmiPipeKey *k)
{
    const FakeMap *m = map;
    k->w[2] = k->w[1] == ~k->key ? m->table[k->w[0]] : CANARY;
    k->value = k->w[2] ^ k->key;
}

static void third(const void *map, GhmiPipeKey *k)
{
    (void)map;
    k->value = k->w[2] + k->key;
}

static uint32_t answer(const FakeMap *m, uint32_t key, int stages)
{
    uint32_t w = m->table[key % TABLE];
    return stages == 2 ? w ^ key : w + key;
}

static void check_count(const FakeMap *m, size_t n, int stages, int threads)
{
    uint32_t *keys = malloc((n + 1) * sizeof *keys), *out = malloc((n + 1) * sizeof *out);
    ck_assert_ptr_nonnull(keys);
    ck_assert_ptr_nonnull(out);
    for (size_t i = 0; i < n; i++)
        keys[i] = (uint32_t)(i * 2654435761u);
    for (size_t i = 0; i <= n; i++)
        out[i] = CANARY;
    if (stages == 2)
        GHMI_FIND_PIPE_PARALLEL(m, keys, n, out, threads, 2, first, second, NULL);
    else
        GHMI_FIND_PIPE_PARALLEL(m, keys, n, out, threads, 3, first, second, third);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(out[i], answer(m, keys[i], stages));
    ck_assert_uint_eq(out[n], CANARY); /* nothing written past the keys */
    free(keys);
    free(out);
}

static FakeMap *fake_map(void)
{
    FakeMap *m = malloc(sizeof *m);
    ck_assert_ptr_nonnull(m);
    for (uint32_t i = 0; i < TABLE; i++)
        m->table[i] = i * 40503u + 7;
    return m;
}

START_TEST(test_counts_around_the_distance)
{
    FakeMap *m = fake_map();
    for (int stages = 2; stages <= 3; stages++)
        for (size_t n = 0; n <= 4 * GHMI_PIPE_DIST + 3; n++)
            check_count(m, n, stages, 1);
    free(m);
}
END_TEST

START_TEST(test_counts_around_the_work_items)
{
    FakeMap *m = fake_map();
    static const size_t counts[] = {GHMI_FIND_CHUNK - 1, GHMI_FIND_CHUNK, GHMI_FIND_CHUNK + 1,
                                    3 * GHMI_FIND_CHUNK + GHMI_PIPE_DIST + 1, 100000};
    for (int stages = 2; stages <= 3; stages++)
        for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
            check_count(m, counts[i], stages, 1);
            check_count(m, counts[i], stages, 3);
        }
    free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("find_pipe");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_counts_around_the_distance);
    tcase_add_test(tc, test_counts_around_the_work_items);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ghm_test_main(suite()); }
