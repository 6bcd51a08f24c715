/*
 * map_ref.cuh - probing a GhmMap from device code: the hash functions both layouts share and
 * ghm_map_ref_find(), one thread per key. The bulk find kernel (hash_cuda_internal.cuh) is this
 * same function, so a kernel that probes through a GhmMapRef gets the bulk answer.
 *
 * Layout (hash_refs.h): 64-bit slots key << 32 | value, empty = all ones. A key is looked for in
 * the slots (THESIS) or buckets (BUCKETED) h_1(k), h_2(k), ... in that order; construction
 * guarantees that a key is never stored behind a slot or bucket that still had room, so the
 * probe stops at the first one with an empty slot. Then the stash, when it is in use.
 */
#ifndef GHM_MAP_REF_CUH
#define GHM_MAP_REF_CUH

#include <stdint.h>

#include "hash_refs.h"

#define GHM_EMPTY_KEY 0xFFFFFFFFu
#define GHM_EMPTY_SLOT 0xFFFFFFFFFFFFFFFFull

static __host__ __device__ __forceinline__ unsigned long long ghm_slot_pack(uint32_t key, uint32_t value)
{
    return ((unsigned long long)key << 32) | value;
}

static __host__ __device__ __forceinline__ uint32_t ghm_slot_key(unsigned long long e)
{
    return (uint32_t)(e >> 32);
}

static __host__ __device__ __forceinline__ uint32_t ghm_slot_value(unsigned long long e)
{
    return (uint32_t)e;
}

/* murmur3's finaliser after a seeded multiply-add: every step is a bijection of 32-bit words, so
 * distinct keys never collide before the range reduction, and the seeds make the H functions
 * independent enough for structured keys (sequential ids, grid cells). The thesis's XOR-mod-p
 * family is weaker on such keys. */
static __host__ __device__ __forceinline__ uint32_t ghm_hash_mix(uint32_t k, uint32_t a, uint32_t b)
{
    uint32_t x = k * a + b;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

/* Maps a 32-bit hash onto [0, n) by a multiply-high (Lemire), cheaper than a modulo. */
static __device__ __forceinline__ uint32_t ghm_hash_range(uint32_t h, uint32_t n)
{
    return __umulhi(h, n);
}

/* Bucket (or, for THESIS, slot) of key k under hash function i. The constants are picked with
 * constant indices: indexing the by-value kernel parameter with a run-time i would copy the
 * whole ref to local memory (a 96-byte stack frame in every kernel that probes). */
static __device__ __forceinline__ uint32_t ghm_map_ref_bucket(const GhmMapRef *r, uint32_t k,
                                                              uint32_t i)
{
    uint32_t a = r->hash_a[0], b = r->hash_b[0];
#pragma unroll
    for (uint32_t j = 1; j < GHM_MAP_MAX_HASHES; j++)
        if (i == j) {
            a = r->hash_a[j];
            b = r->hash_b[j];
        }
    return ghm_hash_range(ghm_hash_mix(k, a, b), r->num_buckets);
}

static __device__ __forceinline__ uint32_t ghm_map_ref_stash_slot(const GhmMapRef *r, uint32_t k)
{
    return ghm_hash_mix(k, r->stash_a, r->stash_b) % GHM_MAP_STASH_SLOTS;
}

/* Looks one bucket of B slots through (16-byte loads for B > 1): 1 = found (value in *out),
 * 0 = not here but the bucket is full, -1 = not here and the bucket has room (so the key is
 * absent from the main table). */
template <int B>
static __device__ __forceinline__ int ghm_map_ref_scan(const unsigned long long *bucket,
                                                       uint32_t key, uint32_t *out)
{
    unsigned long long e[B];
    if constexpr (B == 1) {
        e[0] = __ldg(bucket);
    } else {
#pragma unroll
        for (int j = 0; j < B; j += 2) {
            ulonglong2 v = __ldg((const ulonglong2 *)(bucket + j));
            e[j] = v.x;
            e[(j + 1) % B] = v.y;
        }
    }
    int room = 0;
#pragma unroll
    for (int j = B - 1; j >= 0; j--) { /* the first match wins */
        if (ghm_slot_key(e[j]) == key)
            *out = ghm_slot_value(e[j]);
        room |= ghm_slot_key(e[j]) == GHM_EMPTY_KEY;
    }
#pragma unroll
    for (int j = 0; j < B; j++)
        if (ghm_slot_key(e[j]) == key)
            return 1;
    return room ? -1 : 0;
}

template <int B>
static __device__ __forceinline__ uint32_t ghm_map_ref_find_main(const GhmMapRef *r, uint32_t key,
                                                                 int *found)
{
    for (uint32_t i = 0; i < r->num_hashes; i++) {
        uint32_t b = ghm_map_ref_bucket(r, key, i);
        uint32_t value = GHM_NOT_FOUND;
        int s = ghm_map_ref_scan<B>(r->slots + (size_t)b * B, key, &value);
        if (s > 0) {
            *found = 1;
            return value;
        }
        if (s < 0 && r->full_prefix)
            break;
    }
    *found = 0;
    return GHM_NOT_FOUND;
}

/* The stash probe and the out-of-band key, shared by every find path. */
static __device__ __forceinline__ uint32_t ghm_map_ref_find_stash(const GhmMapRef *r, uint32_t key)
{
    if (!r->stash_used)
        return GHM_NOT_FOUND;
    unsigned long long e = r->stash[ghm_map_ref_stash_slot(r, key)];
    return ghm_slot_key(e) == key ? ghm_slot_value(e) : GHM_NOT_FOUND;
}

/* The value of key, or GHM_NOT_FOUND; one thread, any layout. */
static __device__ __forceinline__ uint32_t ghm_map_ref_find(const GhmMapRef *r, uint32_t key)
{
    if (key == GHM_EMPTY_KEY)
        return r->oob_present ? r->oob_value : GHM_NOT_FOUND;
    int found = 0;
    uint32_t v = r->bucket_slots == 4   ? ghm_map_ref_find_main<4>(r, key, &found)
                 : r->bucket_slots == 8 ? ghm_map_ref_find_main<8>(r, key, &found)
                                        : ghm_map_ref_find_main<1>(r, key, &found);
    return found ? v : ghm_map_ref_find_stash(r, key);
}

#endif /* GHM_MAP_REF_CUH */
