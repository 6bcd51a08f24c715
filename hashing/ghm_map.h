/*
 * ghm_map.h - GhmMap: one 32-bit value per 32-bit key, on the CPU or CUDA backend of its context,
 * by one of the static hash table families of the papers (the scheme option): cuckoo hashing with
 * a stash (Alcantara's thesis, chapter 6; the default), open addressing with linear, quadratic or
 * double-hashing probes (thesis chapter 3), coherent Robin Hood hashing (Garcia et al. 2011), or
 * chaining built by radix sort (thesis chapter 4), or two-level cuckoo hashing (Alcantara et
 * al. 2009, section 4; thesis chapter 5).
 * Every scheme has the same API and gives the same answers on both backends.
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
 * Keys: every 32-bit value is a valid key, 0xFFFFFFFF included (the schemes with an empty marker
 * keep a key equal to it out of band; chaining has none). Duplicate keys in one build are
 * allowed: the map keeps the smallest of their values, on both backends, so results never depend
 * on thread timing.
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

/* The table family. Which one suits a key set is a trade-off the benchmarks measure
 * (`geohash-match bench hash --scheme all`, docs/BENCHMARKS.md):
 * - CUCKOO: at most hash_functions probes per find, present or absent; the build moves keys.
 * - LINEAR / QUADRATIC / DOUBLE (open addressing, one 64-bit compare-and-swap per probe): the
 *   cheapest build; a find walks the key's probe sequence to the key or an empty slot, which
 *   grows long for absent keys in full tables. LINEAR probes neighbouring slots (one cache line
 *   serves several probes), QUADRATIC steps by 1, 2, 3 ..., DOUBLE by a second hash of the key.
 * - ROBIN_HOOD: open addressing in which an older key (further along its sequence) evicts a
 *   younger one, by one 64-bit atomic max per step (the age in the top bits), so that no key is
 *   more than 15 probes from home even at load 0.99 (the rare key that would go further waits
 *   in a stash of 128, which a find that misses looks through); a table of the largest age per
 *   home slot rejects most absent keys after one 4-bit read. Its probe sequence is coherent,
 *   h_i(k) = (k + o_i) mod |H| (|H| prime, so that keys on a power-of-two lattice do not share
 *   a few homes): neighbouring keys probe neighbouring slots at every step, so coherent queries
 *   (pixels, voxels in Morton order) share cache lines. ROBIN_HOOD_RANDOM is the same table
 *   with a random sequence h_i(k) = hash_i(k), the paper's comparison. At most 2^28
 *   pairs per build (the pair's index shares the 64-bit word with its age and key).
 * - CHAINING (thesis chapter 4): the pairs radix-sorted by bucket into one array, each bucket's
 *   run contiguous, and the start of every bucket; a find reads its bucket's two starts and scans
 *   the run (present or absent, the run's length: no probe bound, no failed build). The build is
 *   a sort, so it costs about one radix sort of the pairs whatever the load. Its load factor is
 *   keys over the table's memory in 8-byte slots (a pair each, and a 4-byte start per bucket), as
 *   the thesis compares it with open addressing: load 0.8 gives its balanced 0.5 bucket per key,
 *   0.95 0.1 per key, 0.5 two per key.
 * - TWO_LEVEL: a first hash splits the keys into buckets of ~409 on average (at the top load);
 *   each bucket is a small cuckoo table of three sub-tables of 192 slots, built on its own (CUDA:
 *   one block per bucket in shared memory; CPU: one thread per bucket), with its own seed; a
 *   bucket that fails is rebuilt alone with its next seed, and when one runs out of seeds the
 *   keys are split again with new constants. A find reads the bucket's seed and at most three
 *   slots, present or absent. Loads up to GHM_MAP_TWO_LEVEL_MAX_LOAD (the paper's 409 / 576):
 *   above it, too many buckets draw more keys than three sub-tables of 192 can hold. */
typedef enum GhmMapScheme {
    GHM_MAP_CUCKOO = 0,
    GHM_MAP_LINEAR = 1,
    GHM_MAP_QUADRATIC = 2,
    GHM_MAP_DOUBLE = 3,
    GHM_MAP_ROBIN_HOOD = 4,
    GHM_MAP_ROBIN_HOOD_RANDOM = 5,
    GHM_MAP_CHAINING = 6,
    GHM_MAP_TWO_LEVEL = 7,
    GHM_MAP_SCHEMES = 8 /* the number of schemes, not a scheme */
} GhmMapScheme;

typedef struct GhmMapOptions {
    double load_factor;     /* keys / slots, in (0, 0.99]; 0 = the scheme's default (0.8;
                             * TWO_LEVEL: GHM_MAP_TWO_LEVEL_MAX_LOAD, also its most) */
    GhmMapLayout layout;    /* CUCKOO only; default GHM_MAP_BUCKETED */
    int hash_functions;     /* CUCKOO only: THESIS 2..5 (default 4); bucketed: 2 or 3 (default 2);
                             * other schemes: 0 */
    int max_rebuilds;       /* new seeds tried after a failed build before giving up (TWO_LEVEL:
                             * new splits into buckets; its buckets retry alone first): 0 to
                             * GHM_MAP_MAX_REBUILDS (default 8) */
    GhmMapScheme scheme;    /* default GHM_MAP_CUCKOO */
} GhmMapOptions;

/* At most this many pairs in one ROBIN_HOOD or ROBIN_HOOD_RANDOM build (GHM_ERR_TOO_LARGE). */
#define GHM_MAP_ROBIN_HOOD_MAX_PAIRS ((size_t)1 << 28)

/* The highest (and default) load of a TWO_LEVEL map: 409 keys per bucket of 576 slots on
 * average, so that a bucket draws more than 512 keys with a probability under 1e-6 (the paper's
 * Poisson estimate). Higher loads are GHM_ERR_INVALID. */
#define GHM_MAP_TWO_LEVEL_MAX_LOAD 0.71

/* Enough for any load a layout accepts (a failure at 8 seeds is a load too high, not bad luck);
 * the bound keeps a failing build quick. */
#define GHM_MAP_MAX_REBUILDS 64

typedef struct GhmMap GhmMap;

typedef struct GhmMapStats {
    size_t size;           /* distinct keys stored */
    size_t capacity;       /* slots in the main table; chaining: its memory in 8-byte slots */
    size_t stash_used;     /* keys that ended up in the stash */
    int rebuilds;          /* failed attempts before the build that succeeded */
    size_t bytes;          /* memory held by the table, stash included */
    unsigned max_probes;   /* open addressing and Robin Hood: the longest probe sequence of a
                            * stored key (a find of an absent key walks at most this far);
                            * chaining: the longest chain (bucket run); two-level: the
                            * sub-tables a find of a stored key probes at most (1 .. 3: the last
                            * sub-table that holds a key; absent keys probe all three);
                            * cuckoo: 0 */
} GhmMapStats;

GHM_API GhmMapOptions ghm_map_defaults(void);

/* The scheme's name as the command line spells it ("cuckoo", "linear", "quadratic", "double",
 * "robin-hood", "robin-hood-random", "chaining", "two-level"), or NULL for a value that is no
 * scheme. */
GHM_API const char *ghm_map_scheme_name(GhmMapScheme scheme);
/* The scheme named name, or -1 when no scheme has that name. */
GHM_API int ghm_map_scheme_from_name(const char *name);

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
