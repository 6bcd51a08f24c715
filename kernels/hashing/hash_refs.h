/*
 * hash_refs.h - device references to hash structures built on the CUDA backend, for kernels that
 * probe a table themselves (image voting, voxel neighbours) instead of calling the bulk API.
 *
 * Usage (in a launcher of another kernels/ folder):
 *     GhmMultimapRef ref;
 *     if ((ret = ghm_cuda_multimap_ref(mm, &ref)) < 0) return ret;  // mm built on CUDA
 *     vote_kernel<<<grid, block, 0, stream>>>(ref, ...);          // passed by value
 *     // in the kernel (#include "kernels/hashing/multimap_ref.cuh"):
 *     uint32_t first, count;
 *     if (ghm_multimap_ref_find(&ref, key, &first, &count)) ... ref.values[first + j] ...
 *
 * A reference is a small struct passed by value that owns nothing: it points into the
 * structure's device memory and is valid until the structure is rebuilt or freed. The structs are
 * plain C so that host code may hold them; the __device__ probe functions are in map_ref.cuh,
 * multimap_ref.cuh and index_ref.cuh. A probe gives exactly the answer of the bulk find call.
 */
#ifndef GHM_HASH_REFS_H
#define GHM_HASH_REFS_H

#include <stdint.h>

#include "hashing/ghm_dynmap.h"
#include "hashing/ghm_index.h"
#include "hashing/hash_family.h"
#include "hashing/ghm_map.h"
#include "hashing/ghm_multimap.h"
#include "hashing/ghm_set.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A GhmMap on the device. Slots are 64-bit in hash_family.h's encoding (key << 32 | value, all
 * ones empty); GHM_MAP_THESIS: one slot per hash function; GHM_MAP_BUCKETED: bucket_slots
 * consecutive slots per hash function. The key 0xFFFFFFFF (the empty marker) lives out of band,
 * in the slot after the stash: its value there, all ones (GHM_NOT_FOUND) while it is absent. */
typedef struct GhmMapRef {
    const unsigned long long *slots; /* num_buckets * bucket_slots slots */
    const unsigned long long *stash; /* GHMI_STASH_SIZE slots, then the out-of-band slot */
    uint32_t num_buckets;            /* buckets (THESIS: slots) in the main table */
    uint32_t bucket_slots;           /* 1 (THESIS), 4 (one 32-byte sector) or 8 (64 bytes) */
    uint32_t num_hashes;             /* THESIS 2..5, BUCKETED 2..3 */
    uint32_t layout;                 /* GhmMapLayout */
    GhmiHashConsts hc;    /* function i: (hc.a[i], hc.b[i]); the stash's: GHMI_MAX_HASH */
    uint32_t stash_used;  /* 0: no key lives in the stash (a probe skips it) */
    uint32_t full_prefix; /* 1: a key can only be in bucket h_i if h_1..h_{i-1} are full */
    uint32_t region_shift; /* BUCKETED tables of many regions: h_2, h_3 stay in the region of
                            * 2^region_shift buckets that holds h_1 (map_ref.cuh); else 0 */
} GhmMapRef;

/* A GhmMultimap: key -> run r through the map; the run's values are values[offsets[r] ..
 * offsets[r + 1]), its key keys[r] (runs follow ascending keys). After a queued build (below)
 * that the host has not yet waited for, num_keys is the bound n and only *key_count, on the
 * device, holds the true number. */
typedef struct GhmMultimapRef {
    GhmMapRef map;
    const uint32_t *offsets;   /* num_keys + 1 entries */
    const uint32_t *values;    /* num_values entries */
    const uint32_t *keys;      /* num_keys distinct keys, ascending */
    const uint32_t *key_count; /* device: the number of distinct keys */
    uint32_t num_keys;
    uint32_t num_values;
} GhmMultimapRef;

/* A GhmIndex (or GhmSet): key -> id through the map, id -> key through keys[]. */
typedef struct GhmIndexRef {
    GhmMapRef map;
    const uint32_t *keys; /* the size distinct keys, ascending */
    uint32_t size;
} GhmIndexRef;

/* A GhmDynmap, for kernels that work on its stored items themselves (dynmap_ref.cuh: a
 * bucket's list is slabs of 32 words, dyn_slab; a slab's filled slots are its mask's bits,
 * dyn_end_quad; word j of the item in a slot is at dyn_word_of). Unlike the probes above, such
 * a kernel may change the table, being the only work on it: rewrite an item's words after its
 * key (by a handle the bulk API gave, or visiting), or, giving each bucket to one thread, erase
 * items (dyn_erase_owned), after which the host calls ghm_cuda_dynmap_refresh. */
typedef struct GhmDynmapRef {
    uint32_t *const *dir;   /* super block i's 16384 slabs of 32 words: dir[i] */
    uint32_t *buckets;      /* first slab of each bucket, 0: none */
    uint8_t *dirty;         /* per bucket: 1 where an erase emptied one of its slabs since the
                             * last gc, which walks only those buckets */
    uint32_t *bits;         /* 32 words per memory block: bit set = slab handed out */
    int *block_free;        /* free slabs per memory block */
    unsigned long long *counters;
    uint32_t n_buckets, n_blocks;
    int w, kw, slots; /* item words, key words, slots per slab */
    int hb;           /* bytes of a slot's head: 8, 4 (one-word items, Accel32), 1 (Accel8) */
    int hw;           /* item words held in the head: 2 or 1 (Atomic64), 0 (the tags) */
    int rest;         /* the slab word where the items' words past their heads begin */
    unsigned long long seed;
} GhmDynmapRef;

/* Each fills *out with a reference to a structure built on the CUDA backend. GHM_ERR_INVALID when
 * an argument is NULL or the structure belongs to a context of another backend. The reference is
 * valid until the structure is rebuilt or freed. */
int ghm_cuda_map_ref(const GhmMap *map, GhmMapRef *out);
int ghm_cuda_multimap_ref(const GhmMultimap *mm, GhmMultimapRef *out);
int ghm_cuda_index_ref(const GhmIndex *ix, GhmIndexRef *out);
int ghm_cuda_set_ref(const GhmSet *set, GhmIndexRef *out);
/* The reference stays valid until the next call on the table (an insert may grow dir). */
int ghm_cuda_dynmap_ref(const GhmDynmap *dm, GhmDynmapRef *out);
/* After kernels erased items through a reference: the table takes its item count from the
 * device again (a wait for the context's stream). GHM_ERR_INVALID as above. */
int ghm_cuda_dynmap_refresh(GhmDynmap *dm);

/* ---- builds queued on the stream ----------------------------------------------------------------
 * For a pipeline whose keys are already on the device and whose next kernels probe the table: a
 * build that queues all its work on the context's stream and returns without waiting for any of
 * it. The table is sized for the bound n (the pipeline's own input size), since the number of
 * distinct keys is only counted on the device; the reference filled in is valid for work queued
 * after the build. Whether the attempt failed (an eviction chain and its stash slot both
 * exhausted: practically never at the load a bound gives) is known on the device only, in
 * *failed: the pipeline reads that word with its next download and, if it is set, builds again
 * with attempt + 1. Host calls on the structure (find, stats, keys, ...) first wait for the
 * build and report GHM_ERR_BUILD_FAILED (once) for a failed one, leaving it empty.
 *
 *     GhmQueuedBuild q = {.key_bits = 23, .attempt = 0, .failed = d_failed};  // zeroed word
 *     if ((ret = ghm_cuda_multimap_build_queued(mm, d_keys, d_values, n, &q, &ref)) < 0) ...
 *     kernel<<<grid, block, 0, stream>>>(ref, ...);  // *ref.key_count distinct keys
 */
typedef struct GhmQueuedBuild {
    int key_bits;         /* every key is below 2^key_bits (1..32; 0 = 32): the sort reads no
                           * more bits (ghm_cuda_multimap_build_queued only) */
    int attempt;          /* the hash constants of this attempt: 0, then 1, 2, ... */
    unsigned int *failed; /* device word set to 1 if the attempt fails (zeroed by the caller), or
                           * NULL */
} GhmQueuedBuild;

/* ghm_multimap_build of n (key, value) pairs in device memory (at most 2^31 - 1), queued as
 * above; *out gets the multimap's reference (out may be NULL). mm must be a CUDA multimap.
 * keys = values = NULL builds from the pairs staged by ghm_cuda_multimap_input (n at most the
 * staged count). GHM_ERR_INVALID for a NULL or foreign mm or q, one NULL array or both without
 * staged pairs (n > 0), key_bits out of range, a negative attempt; GHM_ERR_TOO_LARGE;
 * GHM_ERR_CUDA. */
int ghm_cuda_multimap_build_queued(GhmMultimap *mm, const uint32_t *keys, const uint32_t *values,
                                   size_t n, const GhmQueuedBuild *q, GhmMultimapRef *out);

/* Staging: *keys and *values get device arrays of n entries owned by mm, for the pipeline to
 * write the pairs of its next queued build into (then called with keys = values = NULL). The
 * sort then runs in place between them and the multimap's other buffers: no copy of the input
 * and no extra buffers in the sort's scratch. The multimap's content and references stay valid
 * until that build. GHM_ERR_INVALID, GHM_ERR_TOO_LARGE (n >= 2^31), GHM_ERR_CUDA. */
int ghm_cuda_multimap_input(GhmMultimap *mm, size_t n, uint32_t **keys, uint32_t **values);

/* ghm_map_build of the first *count (device memory, at most n) of n (key, value) pairs in device
 * memory, queued as above (q->key_bits is not used); *out gets the map's reference. */
int ghm_cuda_map_build_queued(GhmMap *map, const uint32_t *keys, const uint32_t *values,
                              const uint32_t *count, size_t n, const GhmQueuedBuild *q,
                              GhmMapRef *out);

/* Probe through a reference from the host, one thread per key calling ghm_map_ref_find /
 * ghm_multimap_ref_find (what a kernel holding the ref computes; tests compare it with the bulk
 * API). Arrays may be host or device memory; ctx must be a CUDA context. GHM_ERR_INVALID for a
 * NULL argument (keys may be NULL when n is 0). */
int ghm_cuda_map_ref_probe(GhmContext *ctx, const GhmMapRef *ref, const uint32_t *keys,
                           size_t n, uint32_t *out);
int ghm_cuda_multimap_ref_probe(GhmContext *ctx, const GhmMultimapRef *ref,
                                const uint32_t *keys, size_t n, uint32_t *first,
                                uint32_t *count);

#ifdef __cplusplus
}
#endif

#endif /* GHM_HASH_REFS_H */
