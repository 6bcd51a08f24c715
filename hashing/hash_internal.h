/*
 * hash_internal.h - the hash functions and slot encoding shared by the hash structures of
 * hashing/ (and usable by kernels/hashing/, which is why everything here is plain static inline
 * C on 32/64-bit integers).
 *
 * A table slot is 64 bits: key << 32 | value, so that one atomic exchange moves a key together
 * with its value (thesis 6.2.1). The empty slot is all ones; the real key 0xFFFFFFFF therefore
 * never enters a table and is kept out of band by the map.
 *
 * Hash function i of build attempt a is h_i(k) = lowbias32(k * A_i + B_i) reduced to the table
 * size by a multiply-high; A_i (odd) and B_i come from ghmi_mix64 of the context seed and the
 * attempt, so every backend draws the same constants for the same seed and attempt.
 */
#ifndef GHM_HASH_INTERNAL_H
#define GHM_HASH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_backend_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHMI_EMPTY_KEY 0xFFFFFFFFu
#define GHMI_EMPTY_SLOT 0xFFFFFFFFFFFFFFFFull
#define GHMI_MAX_HASH 5        /* hash functions per key, thesis layout */
#define GHMI_STASH_SIZE 101    /* thesis 6.1.1: 101 slots hold ~10 keys without collisions */
#define GHMI_BUCKET_SLOTS 8    /* 8 slots of 8 bytes: one 64-byte cache line */

/* Constants of one build attempt: GHMI_MAX_HASH functions plus the stash's own. */
typedef struct GhmiHashConsts {
    uint32_t a[GHMI_MAX_HASH + 1]; /* odd multipliers */
    uint32_t b[GHMI_MAX_HASH + 1];
} GhmiHashConsts;

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

/* Wellons' lowbias32: a bijective 32-bit finalizer with good avalanche. */
static inline uint32_t ghmi_lowbias32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}

/* Maps a uniform 32-bit value onto [0, range) without a division (Lemire's multiply-high). */
static inline uint32_t ghmi_reduce(uint32_t x, uint32_t range)
{
    return (uint32_t)(((uint64_t)x * range) >> 32);
}

static inline uint32_t ghmi_hash(const GhmiHashConsts *c, int i, uint32_t key, uint32_t range)
{
    return ghmi_reduce(ghmi_lowbias32(key * c->a[i] + c->b[i]), range);
}

/* The stash's hash uses the last constant pair. */
static inline uint32_t ghmi_stash_hash(const GhmiHashConsts *c, uint32_t key)
{
    return ghmi_hash(c, GHMI_MAX_HASH, key, GHMI_STASH_SIZE);
}

static inline uint64_t ghmi_pack(uint32_t key, uint32_t value)
{
    return (uint64_t)key << 32 | value;
}

static inline uint32_t ghmi_slot_key(uint64_t slot) { return (uint32_t)(slot >> 32); }
static inline uint32_t ghmi_slot_value(uint64_t slot) { return (uint32_t)slot; }

/* A 32-bit permutation (multiply by an odd constant, xorshift, repeat): distinct counters give
 * distinct keys, which benchmarks and tests use to draw unique random keys from a seed. */
static inline uint32_t ghmi_permute32(uint32_t x, uint32_t seed)
{
    x ^= seed;
    x *= 0x9E3779B1u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x += seed * 0x27D4EB2Fu;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

/* Options of the key -> slot map inside the set, multimap and index: the bucketed default layout
 * at the caller's load factor (0 = 0.8), 8 rebuilds. */
static inline GhmMapOptions ghmi_inner_map_options(double load_factor)
{
    GhmMapOptions opt;
    opt.load_factor = load_factor > 0.0 ? load_factor : 0.8;
    opt.layout = GHM_MAP_BUCKETED;
    opt.hash_functions = 2;
    opt.max_rebuilds = 8;
    return opt;
}

/* Load factors accepted by the set, multimap and index: 0 (default) or (0, 0.99]. */
static inline int ghmi_load_factor_ok(double load_factor)
{
    return load_factor >= 0.0 && load_factor <= 0.99;
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_HASH_INTERNAL_H */
