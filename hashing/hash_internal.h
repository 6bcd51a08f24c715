/*
 * hash_internal.h - what the hash structures of hashing/ share beyond the hash family
 * (hash_family.h, which the CUDA maps share too): the CPU bucket width, a byte fingerprint, a key
 * permutation for tests and benchmarks, and the options of the map inside the set, multimap and
 * index.
 */
#ifndef GHM_HASH_INTERNAL_H
#define GHM_HASH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_backend_internal.h"
#include "hash_family.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHMI_BUCKET_SLOTS 8 /* CPU buckets: 8 slots of 8 bytes, one 64-byte cache line */

/* FNV-1a over n bytes: a cheap fingerprint (a file's checksum, a GPU's or a host's identity),
 * not a table hash. */
static inline uint64_t ghmi_fnv1a64(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

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
    opt.scheme = GHM_MAP_CUCKOO;
    return opt;
}

/* The least l with 2^l >= n (0 for n <= 1), at most 63: the cuckoo maps' chain bounds and the
 * dynamic table's index bits (both backends). */
static inline int ghmi_ceil_log2(size_t n)
{
    int l = 0;
    while (l < 63 && ((size_t)1 << l) < n)
        l++;
    return l;
}

/* Load factors accepted by the set, multimap and index: 0 (default) or (0, 0.99]. */
static inline int ghmi_load_factor_ok(double load_factor)
{
    return load_factor >= 0.0 && load_factor <= 0.99;
}

/* n words of src in a new array (free()); one zero word when n is 0, as a fresh multimap or
 * index holds: what the CPU clones copy their arrays with. NULL when memory runs out. */
static inline uint32_t *ghmi_copy_words(const uint32_t *src, size_t n)
{
    uint32_t *d = n ? (uint32_t *)malloc(n * sizeof *d) : (uint32_t *)calloc(1, sizeof *d);
    if (d && n)
        memcpy(d, src, n * sizeof *d);
    return d;
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_HASH_INTERNAL_H */
