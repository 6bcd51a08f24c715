/*
 * dist_map_cases.h - the inputs of the GhmDistMap suites (check_dist_map.c,
 * check_dist_map_ranks.c): pairs with duplicates and the extreme keys, their queries (present,
 * then mostly absent), shards of uneven sizes, and the single map's answers. No Check asserts
 * in here: the ranks of check_dist_map_ranks.c run outside a test.
 */
#ifndef GHM_TEST_DIST_MAP_CASES_H
#define GHM_TEST_DIST_MAP_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_map.h"

enum { N = 60000, MAX_P = 5 };

typedef struct Pairs {
    uint32_t keys[N], values[N], queries[2 * N];
} Pairs;

/* N pairs from seed (keys with duplicates, 0 and 0xFFFFFFFF among them; values distinct), the
 * queries their keys then N mostly absent keys. */
void ghm_test_fill_pairs(Pairs *c, uint64_t seed);

/* Cuts [0, n) into `parts` shards of uneven sizes (the second one empty when there are more
 * than two): first[p] .. first[p] + len[p]. */
void ghm_test_cut(size_t n, int parts, size_t *first, size_t *len);

/* The single map's answers for the queries in want (nq words), its size in *size. */
int ghm_test_map_answers(GhmContext *ctx, const uint32_t *keys, const uint32_t *values, size_t n,
                         const uint32_t *queries, size_t nq, uint32_t *want, size_t *size);

#endif /* GHM_TEST_DIST_MAP_CASES_H */
