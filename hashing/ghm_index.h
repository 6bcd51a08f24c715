/*
 * ghm_index.h - GhmIndex: the compacting table (2009 paper, 4.3), a "two-way index" between the
 * K distinct keys of an input and dense ids 0..K-1.
 *
 * Usage:
 *     GhmIndex *ix = NULL;
 *     if ((ret = ghm_index_create(ctx, 0.0, &ix)) < 0) goto fail;
 *     if ((ret = ghm_index_build(ix, keys, n)) < 0) goto fail;
 *     size_t k = ghm_index_size(ix);
 *     ghm_index_ids(ix, keys, n, ids);     // key -> id (GHM_NOT_FOUND when absent)
 *     ghm_index_keys(ix, ids, k, back);    // id -> key
 *     ghm_index_free(&ix);
 *
 * Ids are assigned in ascending key order, so they are identical on both backends and for any
 * order of the input. Memory rules as in ghm_map.h. Every 32-bit value is a valid key.
 */
#ifndef GHM_INDEX_H
#define GHM_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmIndex GhmIndex;

/* load_factor of the key -> id map, in (0, 0.99], or 0 for the default. Keeps a pointer to ctx. */
GHM_API int ghm_index_create(GhmContext *ctx, double load_factor, GhmIndex **out);

/* Replaces the content with the distinct keys among keys[0..n). */
GHM_API int ghm_index_build(GhmIndex *ix, const uint32_t *keys, size_t n);

/* K, the number of distinct keys. */
GHM_API size_t ghm_index_size(const GhmIndex *ix);

/* ids[i] = the dense id of keys[i], or GHM_NOT_FOUND. */
GHM_API int ghm_index_ids(const GhmIndex *ix, const uint32_t *keys, size_t n, uint32_t *ids);

/* keys[i] = the key of ids[i]; GHM_ERR_INVALID if an id is >= K (the CUDA backend writes
 * GHM_NOT_FOUND for such ids and reports the error after the call). */
GHM_API int ghm_index_keys(const GhmIndex *ix, const uint32_t *ids, size_t n, uint32_t *keys);

/* The ascending array of the K keys, in backend memory, owned by the index. */
GHM_API int ghm_index_key_array(const GhmIndex *ix, const uint32_t **keys);

/* A copy of ix's content in ctx, a context of ix's backend (as ghm_multimap_clone): the same
 * ids and keys as ix. Free *out with ghm_index_free. */
GHM_API int ghm_index_clone(GhmContext *ctx, const GhmIndex *ix, GhmIndex **out);

GHM_API void ghm_index_free(GhmIndex **ix);

#ifdef __cplusplus
}
#endif

#endif /* GHM_INDEX_H */
