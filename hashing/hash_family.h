/*
 * hash_family.h - what makes a CPU map (hashing/map_cpu.c) and a CUDA map (kernels/hashing/) the
 * same kind of table, defined once: the slot encoding, the hash family and the derivation of its
 * constants from the context's seed and the build attempt. Plain C11 that nvcc compiles too: the
 * slot and hash functions are static inline, and __host__ __device__ under nvcc (GHMI_HD), so a
 * kernel, a CPU loop and the host code that fills a device reference call the same code.
 *
 * Slots: 64 bits, key << 32 | value, so that one atomic exchange moves a key together with its
 * value (thesis 6.2.1). All ones is the empty slot, so the key 0xFFFFFFFF never enters a table:
 * each map keeps it out of band.
 *
 * Hash function i of build attempt a: h_i(k) = range(mix(k * A_i + B_i)), where mix is murmur3's
 * 32-bit finaliser and range Lemire's multiply-high onto [0, n). Every step of mix is a
 * bijection of 32-bit words, so distinct keys never collide before the range reduction, and the
 * seeded multiply-add keeps the functions independent enough for structured keys (sequential
 * ids, grid cells), on which the thesis's XOR-mod-p family is weaker. The pairs (A_i odd, B_i),
 * i = 0 .. GHMI_MAX_HASH - 1, and the stash's pair at GHMI_MAX_HASH come from splitmix64
 * (ghmi_mix64) of the seed and the attempt, so both backends draw the same constants for the
 * same seed and attempt.
 */
#ifndef GHM_HASH_FAMILY_H
#define GHM_HASH_FAMILY_H

#include <stdint.h>

#include "ghm_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The one test of the compiler (not of the backend, which only the registry knows): under nvcc
 * these functions exist on the host and on the device. */
#ifdef __CUDACC__
#define GHMI_HD static __host__ __device__ __forceinline__
#else
#define GHMI_HD static inline
#endif

#define GHMI_EMPTY_KEY 0xFFFFFFFFu
#define GHMI_EMPTY_SLOT 0xFFFFFFFFFFFFFFFFull
#define GHMI_MAX_HASH 5     /* hash functions per key: the thesis layout's most */
#define GHMI_STASH_SIZE 101 /* thesis 6.1.1: 101 slots hold ~10 keys without collisions */

GHMI_HD uint64_t ghmi_pack(uint32_t key, uint32_t value) { return (uint64_t)key << 32 | value; }
GHMI_HD uint32_t ghmi_slot_key(uint64_t slot) { return (uint32_t)(slot >> 32); }
GHMI_HD uint32_t ghmi_slot_value(uint64_t slot) { return (uint32_t)slot; }

/* murmur3's finaliser after the seeded multiply-add. */
GHMI_HD uint32_t ghmi_hash_mix(uint32_t k, uint32_t a, uint32_t b)
{
    uint32_t x = k * a + b;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

/* Maps a uniform 32-bit value onto [0, range) without a division (Lemire's multiply-high). */
GHMI_HD uint32_t ghmi_reduce(uint32_t x, uint32_t range)
{
#ifdef __CUDA_ARCH__
    return __umulhi(x, range);
#else
    return (uint32_t)(((uint64_t)x * range) >> 32);
#endif
}

/* h(k) in [0, range) for the constant pair (a, b). */
GHMI_HD uint32_t ghmi_hash_pair(uint32_t k, uint32_t a, uint32_t b, uint32_t range)
{
    return ghmi_reduce(ghmi_hash_mix(k, a, b), range);
}

/* The bucket that the mixed hash x picks inside the region of bucket `first`, the table's
 * `buckets` cut into regions of 2^shift buckets (at least one whole region; the last region also
 * takes the remainder). */
GHMI_HD uint32_t ghmi_region_bucket(uint32_t first, uint32_t x, uint32_t buckets, uint32_t shift)
{
    uint32_t last = (buckets >> shift) - 1, r = first >> shift;
    r = r < last ? r : last;
    uint32_t start = r << shift;
    return start + ghmi_reduce(x, r == last ? buckets - start : 1u << shift);
}

/* Constants of one build attempt: GHMI_MAX_HASH functions plus the stash's own (the last). */
typedef struct GhmiHashConsts {
    uint32_t a[GHMI_MAX_HASH + 1]; /* odd multipliers */
    uint32_t b[GHMI_MAX_HASH + 1];
} GhmiHashConsts;

/* Host only (a build draws its constants before it starts). */
static inline GhmiHashConsts ghmi_hash_consts(uint64_t seed, int attempt)
{
    GhmiHashConsts c;
    uint64_t base = ghmi_mix64(seed ^ ghmi_mix64(0x6A09E667F3BCC909ull + (uint64_t)attempt));
    for (int i = 0; i <= GHMI_MAX_HASH; i++) {
        uint64_t r = ghmi_mix64(base + (uint64_t)i);
        c.a[i] = (uint32_t)r | 1u;
        c.b[i] = (uint32_t)(r >> 32);
    }
    return c;
}

/* Hash function i (run-time i: host loops; kernels pick constants with constant indices, see
 * kernels/hashing/map_ref.cuh). */
static inline uint32_t ghmi_hash(const GhmiHashConsts *c, int i, uint32_t key, uint32_t range)
{
    return ghmi_hash_pair(key, c->a[i], c->b[i], range);
}

/* The part of key in a GhmDistMap, in [0, c.parts). */
GHMI_HD uint32_t ghmi_dist_part(uint32_t key, GhmiDistConsts c)
{
    return ghmi_hash_pair(key, c.a, c.b, c.parts);
}

/* The part hash's constants: drawn from the seed apart from every build attempt's, so that the
 * keys of one part spread over that part's table as any keys do (a part hash that agreed with
 * the table's would leave most of each part's table empty). Host only. */
static inline GhmiDistConsts ghmi_dist_consts(uint64_t seed, int parts)
{
    uint64_t r = ghmi_mix64(seed ^ 0x3C6EF372FE94F82Bull);
    GhmiDistConsts c = {(uint32_t)r | 1u, (uint32_t)(r >> 32), (uint32_t)parts};
    return c;
}

/* The stash slot of key, under the last constant pair. */
GHMI_HD uint32_t ghmi_stash_hash(const GhmiHashConsts *c, uint32_t key)
{
    return ghmi_hash_pair(key, c->a[GHMI_MAX_HASH], c->b[GHMI_MAX_HASH], GHMI_STASH_SIZE);
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_HASH_FAMILY_H */
