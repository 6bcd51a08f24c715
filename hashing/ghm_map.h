/*
 * ghm_map.h - GhmMap: one 32-bit value per 32-bit key, by cuckoo hashing with a stash
 * (Alcantara's thesis, chapter 6), on the CPU or CUDA backend of its context.
 *
 * Usage:
 *     GhmMapOptions opt = ghm_map_defaults();
 *     opt.load_factor = 0.9;
 *     GhmMap *map = NULL;
 *     if ((ret = ghm_map_create(ctx, &opt, &map)) < 0) goto fail;
 *     if ((ret = ghm_map_build(map, keys, values, n)) < 0) goto fail;   // bulk, replaces content
 *     if ((ret = ghm_map_find(map, queries, m, results)) < 0) goto fail; // GHM_NOT_FOUND if absent
 *     ghm_map_free(&map);
 *
 * Arrays: on the CPU backend all arrays are host memory. On the CUDA backend every array
 * argument may be host or device memory (the backend asks CUDA where each pointer lives);
 * results are written where `out` points, so a pipeline that passes device arrays never
 * round-trips through the host. Calls are synchronous with respect to the host.
 *
 * Keys: every 32-bit value is a valid key, 0xFFFFFFFF included (the backends keep a key equal to
 * their internal empty marker out of band). Duplicate keys in one build are allowed: the map keeps
 * the smallest of their values, on both backends, so results never depend on thread timing.
 * Values: any 32-bit value; GHM_NOT_FOUND is also a legal value, so callers that store it
 * cannot tell it from absence (use ghm_set or a flag array if that matters).
 */
#ifndef GHM_MAP_H
#define GHM_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHM_NOT_FOUND 0xFFFFFFFFu

typedef enum GhmMapLayout {
    GHM_MAP_BUCKETED = 0, /* buckets of one 32-byte sector / cache line, probed cooperatively */
    GHM_MAP_THESIS = 1    /* one slot per probe, atomicExch eviction chains (thesis ch. 6) */
} GhmMapLayout;

typedef struct GhmMapOptions {
    double load_factor;     /* keys / slots, in (0, 0.99]; 0 = the layout's default */
    GhmMapLayout layout;    /* default GHM_MAP_BUCKETED */
    int hash_functions;     /* GHM_MAP_THESIS: 2..5 (default 4); bucketed: 2 or 3 (default 2) */
    int max_rebuilds;       /* new seeds tried after a failed build before giving up: 0 to
                             * GHM_MAP_MAX_REBUILDS (default 8) */
} GhmMapOptions;

/* Enough for any load a layout accepts (a failure at 8 seeds is a load too high, not bad luck);
 * the bound keeps a failing build quick. */
#define GHM_MAP_MAX_REBUILDS 64

typedef struct GhmMap GhmMap;

typedef struct GhmMapStats {
    size_t size;           /* distinct keys stored */
    size_t capacity;       /* slots in the main table */
    size_t stash_used;     /* keys that ended up in the stash */
    int rebuilds;          /* failed attempts before the build that succeeded */
    size_t bytes;          /* memory held by the table, stash included */
} GhmMapStats;

GHM_API GhmMapOptions ghm_map_defaults(void);

/* Creates an empty map in ctx's backend. GHM_ERR_INVALID for options out of range. The map keeps
 * a pointer to ctx, which must outlive it. The caller frees *out with ghm_map_free(). */
GHM_API int ghm_map_create(GhmContext *ctx, const GhmMapOptions *opt, GhmMap **out);

/* Replaces the map's content with n (key, value) pairs. n may be 0. Returns GHM_ERR_BUILD_FAILED
 * when no attempt within max_rebuilds succeeds (e.g. an impossible load factor) - quickly, never
 * hanging - and leaves the map empty; GHM_ERR_NOMEM, GHM_ERR_CUDA as they occur. */
GHM_API int ghm_map_build(GhmMap *map, const uint32_t *keys, const uint32_t *values, size_t n);

/* For each of the n keys writes its value, or GHM_NOT_FOUND, to out[i]. */
GHM_API int ghm_map_find(const GhmMap *map, const uint32_t *keys, size_t n, uint32_t *out);

GHM_API int ghm_map_stats(const GhmMap *map, GhmMapStats *out);

/* Frees the map and sets *map to NULL; accepts NULL and a pointer to NULL. */
GHM_API void ghm_map_free(GhmMap **map);

#ifdef __cplusplus
}
#endif

#endif /* GHM_MAP_H */
