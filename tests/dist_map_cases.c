/* dist_map_cases.c - the GhmDistMap suites' inputs (dist_map_cases.h). */
#include "dist_map_cases.h"

#include <string.h>

#include "test_support.h"

void ghm_test_fill_pairs(Pairs *c, uint64_t seed)
{
    for (size_t i = 0; i < N; i++) {
        c->keys[i] = i % 7 == 3 && i > 0 ? c->keys[i / 2] : rng_next(&seed);
        c->values[i] = (uint32_t)(N - i) * 2654435761u;
    }
    c->keys[1] = 0;
    c->keys[2] = 0xFFFFFFFFu;
    c->keys[5] = 0xFFFFFFFFu;
    memcpy(c->queries, c->keys, sizeof c->keys);
    for (size_t i = 0; i < N; i++) /* mostly absent */
        c->queries[N + i] = rng_next(&seed) | 1u;
}

void ghm_test_cut(size_t n, int parts, size_t *first, size_t *len)
{
    size_t at = 0;
    for (int p = 0; p < parts; p++) {
        size_t want = p == parts - 1 ? n - at : (p == 1 && parts > 2) ? 0 : n / (size_t)(p + 2);
        want = want > n - at ? n - at : want;
        first[p] = at;
        len[p] = want;
        at += want;
    }
}

int ghm_test_map_answers(GhmContext *ctx, const uint32_t *keys, const uint32_t *values, size_t n,
                         const uint32_t *queries, size_t nq, uint32_t *want, size_t *size)
{
    GhmMap *m = NULL;
    GhmMapOptions mo = ghm_map_defaults();
    GhmMapStats st;
    int ret = ghm_map_create(ctx, &mo, &m);
    if (ret == GHM_OK)
        ret = ghm_map_build(m, keys, values, n);
    if (ret == GHM_OK)
        ret = ghm_map_find(m, queries, nq, want);
    if (ret == GHM_OK)
        ret = ghm_map_stats(m, &st);
    *size = ret == GHM_OK ? st.size : 0;
    ghm_map_free(&m);
    return ret;
}
