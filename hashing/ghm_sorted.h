/*
 * ghm_sorted.h - GhmSorted: the baseline every table is measured against (thesis ch. 3-6):
 * the (key, value) pairs sorted by key (CUB radix sort on the GPU, a parallel radix sort on the
 * CPU), queried by binary search. It is also a correct, if slower, key -> value structure.
 *
 * Usage:
 *     GhmSorted *s = NULL;
 *     if ((ret = ghm_sorted_create(ctx, &s)) < 0) goto fail;
 *     if ((ret = ghm_sorted_build(s, keys, values, n)) < 0) goto fail;
 *     if ((ret = ghm_sorted_find(s, queries, m, out)) < 0) goto fail;  // GHM_NOT_FOUND if absent
 *     ghm_sorted_free(&s);
 *
 * Duplicate keys: the smallest value is returned, as for GhmMap. Memory rules as in ghm_map.h.
 */
#ifndef GHM_SORTED_H
#define GHM_SORTED_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmSorted GhmSorted;

GHM_API int ghm_sorted_create(GhmContext *ctx, GhmSorted **out);
GHM_API int ghm_sorted_build(GhmSorted *s, const uint32_t *keys, const uint32_t *values, size_t n);
GHM_API int ghm_sorted_find(const GhmSorted *s, const uint32_t *keys, size_t n, uint32_t *out);
GHM_API void ghm_sorted_free(GhmSorted **s);

#ifdef __cplusplus
}
#endif

#endif /* GHM_SORTED_H */
