/*
 * ghm_set.h - GhmSet: a set of 32-bit keys, duplicates removed (thesis 6.3), CPU or CUDA.
 *
 * Usage:
 *     GhmSet *set = NULL;
 *     if ((ret = ghm_set_create(ctx, 0.0, &set)) < 0) goto fail;      // 0.0 = default load
 *     if ((ret = ghm_set_build(set, keys, n)) < 0) goto fail;
 *     if ((ret = ghm_set_contains(set, queries, m, flags)) < 0) goto fail; // flags[i] = 0 or 1
 *     ghm_set_free(&set);
 *
 * Memory rules as in ghm_map.h: host or device arrays on CUDA, host arrays on the CPU.
 * Every 32-bit value is a valid key.
 */
#ifndef GHM_SET_H
#define GHM_SET_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmSet GhmSet;

/* load_factor in (0, 0.99], or 0 for the default. The set keeps a pointer to ctx. */
GHM_API int ghm_set_create(GhmContext *ctx, double load_factor, GhmSet **out);

/* Replaces the content with the distinct keys among keys[0..n). GHM_ERR_BUILD_FAILED as for maps. */
GHM_API int ghm_set_build(GhmSet *set, const uint32_t *keys, size_t n);

/* Number of distinct keys stored. */
GHM_API size_t ghm_set_size(const GhmSet *set);

/* out[i] = 1 if keys[i] is in the set, else 0. */
GHM_API int ghm_set_contains(const GhmSet *set, const uint32_t *keys, size_t n, uint8_t *out);

/* Writes the distinct keys in ascending order to out, which holds ghm_set_size() entries. */
GHM_API int ghm_set_keys(const GhmSet *set, uint32_t *out);

GHM_API void ghm_set_free(GhmSet **set);

#ifdef __cplusplus
}
#endif

#endif /* GHM_SET_H */
