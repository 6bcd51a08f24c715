/*
 * ghm_multimap.h - GhmMultimap: all values of a 32-bit key, stored contiguously
 * (thesis 6.3: sort the pairs by key, then a cuckoo map from each distinct key to its run).
 *
 * Usage:
 *     GhmMultimap *mm = NULL;
 *     if ((ret = ghm_multimap_create(ctx, 0.0, &mm)) < 0) goto fail;
 *     if ((ret = ghm_multimap_build(mm, keys, values, n)) < 0) goto fail;
 *     if ((ret = ghm_multimap_find(mm, queries, m, first, count)) < 0) goto fail;
 *     const uint32_t *vals; size_t nvals;
 *     ghm_multimap_values(mm, &vals, &nvals);   // backend memory: vals[first[i] .. +count[i])
 *     ghm_multimap_free(&mm);
 *
 * Order: values of one key appear in the order they had in the input (the sort is stable), so
 * both backends produce the same array. An absent key gets count 0 and first GHM_NOT_FOUND.
 * Memory rules as in ghm_map.h. Every 32-bit value is a valid key.
 */
#ifndef GHM_MULTIMAP_H
#define GHM_MULTIMAP_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmMultimap GhmMultimap;

/* load_factor of the key -> run map, in (0, 0.99], or 0 for the default. Keeps a pointer to ctx. */
GHM_API int ghm_multimap_create(GhmContext *ctx, double load_factor, GhmMultimap **out);

/* Replaces the content with the n (key, value) pairs. n may be 0. */
GHM_API int ghm_multimap_build(GhmMultimap *mm, const uint32_t *keys, const uint32_t *values,
                               size_t n);

/* For each key: first[i] = index of its first value in the values array and count[i] = how
 * many it has; absent keys give first GHM_NOT_FOUND and count 0. Either output may be NULL. */
GHM_API int ghm_multimap_find(const GhmMultimap *mm, const uint32_t *keys, size_t n,
                              uint32_t *first, uint32_t *count);

/* All values of each key, copied out: key i's count[i] values go to
 * values_out[offsets[i] .. offsets[i + 1]) in stored order, where offsets (n + 1 entries) is the
 * exclusive sum of the counts in key order and offsets[n] = *total (absent keys: 0 values).
 * offsets, values_out and keys follow the memory rules of ghm_map.h (host or backend memory).
 * If *total > capacity (entries of values_out), offsets and *total are still filled, so the
 * caller can size the buffer, nothing is written to values_out and GHM_ERR_TOO_LARGE is returned;
 * values_out may be NULL when capacity is 0. A total of 2^32 or more cannot be expressed in
 * 32-bit offsets: *total is set, offsets are left unspecified, GHM_ERR_TOO_LARGE. */
GHM_API int ghm_multimap_retrieve(const GhmMultimap *mm, const uint32_t *keys, size_t n,
                                  uint32_t *offsets, uint32_t *values_out, size_t capacity,
                                  size_t *total);

/* The contiguous values array in backend memory, owned by the multimap (valid until the next
 * build or free), and its length (= n of the last build). */
GHM_API int ghm_multimap_values(const GhmMultimap *mm, const uint32_t **values, size_t *n);

/* Number of distinct keys. */
GHM_API size_t ghm_multimap_keys(const GhmMultimap *mm);

/* A copy of mm's content in ctx, a context of mm's backend (GHM_ERR_INVALID otherwise; on CUDA
 * it may be another device's): the same finds, values and key count as mm, without building
 * again: a worker's own copy of a table built once. mm is unchanged. Free *out with
 * ghm_multimap_free. */
GHM_API int ghm_multimap_clone(GhmContext *ctx, const GhmMultimap *mm, GhmMultimap **out);

GHM_API void ghm_multimap_free(GhmMultimap **mm);

#ifdef __cplusplus
}
#endif

#endif /* GHM_MULTIMAP_H */
