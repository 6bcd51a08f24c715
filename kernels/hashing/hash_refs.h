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

#include "hashing/ghm_index.h"
#include "hashing/ghm_map.h"
#include "hashing/ghm_multimap.h"
#include "hashing/ghm_set.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHM_MAP_MAX_HASHES 5
#define GHM_MAP_STASH_SLOTS 101 /* thesis 6.1.1: k^2 slots hold ~k = 10 items without collision */

/* A GhmMap on the device. Slots are 64-bit (key << 32 | value); a slot whose key is 0xFFFFFFFF is
 * empty, so that key itself lives out of band in oob_present / oob_value. GHM_MAP_THESIS: one
 * slot per hash function; GHM_MAP_BUCKETED: bucket_slots consecutive slots per hash function. */
typedef struct GhmMapRef {
    const unsigned long long *slots; /* num_buckets * bucket_slots slots */
    const unsigned long long *stash; /* GHM_MAP_STASH_SLOTS slots, probed when stash_used */
    uint32_t num_buckets;            /* buckets (THESIS: slots) in the main table */
    uint32_t bucket_slots;           /* 1 (THESIS), 4 (one 32-byte sector) or 8 (64 bytes) */
    uint32_t num_hashes;             /* THESIS 2..5, BUCKETED 2..3 */
    uint32_t layout;                 /* GhmMapLayout */
    uint32_t hash_a[GHM_MAP_MAX_HASHES]; /* h_i(k) = range(mix(k * a_i + b_i)), a_i odd */
    uint32_t hash_b[GHM_MAP_MAX_HASHES];
    uint32_t stash_a, stash_b;
    uint32_t stash_used;  /* 1 when some key lives in the stash */
    uint32_t oob_present; /* 1 when key 0xFFFFFFFF is in the map ... */
    uint32_t oob_value;   /* ... with this value */
    uint32_t full_prefix; /* 1: a key can only be in bucket h_i if h_1..h_{i-1} are full */
} GhmMapRef;

/* A GhmMultimap: key -> run r through the map; the run's values are values[offsets[r] ..
 * offsets[r + 1]). */
typedef struct GhmMultimapRef {
    GhmMapRef map;
    const uint32_t *offsets; /* num_keys + 1 entries */
    const uint32_t *values;  /* num_values entries */
    uint32_t num_keys;
    uint32_t num_values;
} GhmMultimapRef;

/* A GhmIndex (or GhmSet): key -> id through the map, id -> key through keys[]. */
typedef struct GhmIndexRef {
    GhmMapRef map;
    const uint32_t *keys; /* the size distinct keys, ascending */
    uint32_t size;
} GhmIndexRef;

/* Each fills *out with a reference to a structure built on the CUDA backend. GHM_ERR_INVALID when
 * an argument is NULL or the structure belongs to a context of another backend. The reference is
 * valid until the structure is rebuilt or freed. */
int ghm_cuda_map_ref(const GhmMap *map, GhmMapRef *out);
int ghm_cuda_multimap_ref(const GhmMultimap *mm, GhmMultimapRef *out);
int ghm_cuda_index_ref(const GhmIndex *ix, GhmIndexRef *out);
int ghm_cuda_set_ref(const GhmSet *set, GhmIndexRef *out);

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
