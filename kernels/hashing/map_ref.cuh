/*
 * map_ref.cuh - probing a GhmMap from device code: the hash functions both layouts share and
 * ghm_map_ref_find(), one thread per key. The bulk find kernels (map_find.cuh) use the same
 * functions cooperatively, so a kernel that probes through a GhmMapRef gets the bulk answer.
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

static __host__ __device__ inline unsigned long long ghm_slot_pack(uint32_t key, uint32_t value)
{
    return ((unsigned long long)key << 32) | value;
}

static __host__ __device__ inline uint32_t ghm_slot_key(unsigned long long e)
{
    return (uint32_t)(e >> 32);
}

static __host__ __device__ inline uint32_t ghm_slot_value(unsigned long long e)
{
    return (uint32_t)e;
}

/* murmur3's finaliser after a seeded multiply-add: every step is a bijection of 32-bit words, so
 * distinct keys never collide before the range reduction, and the seeds make the H functions
 * independent enough for structured keys (sequential ids, grid cells). The thesis's XOR-mod-p
 * family is weaker on such keys. */
static __host__ __device__ inline uint32_t ghm_hash_mix(uint32_t k, uint32_t a, uint32_t b)
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
static __device__ inline uint32_t ghm_hash_range(uint32_t h, uint32_t n)
{
    return __umulhi(h, n);
}

/* Bucket (or, for THESIS, slot) of key k under hash function i. */
static __device__ inline uint32_t ghm_map_ref_bucket(const GhmMapRef *r, uint32_t k, uint32_t i)
{
    return ghm_hash_range(ghm_hash_mix(k, r->hash_a[i], r->hash_b[i]), r->num_buckets);
}

static __device__ inline uint32_t ghm_map_ref_stash_slot(const GhmMapRef *r, uint32_t k)
{
    return ghm_hash_mix(k, r->stash_a, r->stash_b) % GHM_MAP_STASH_SLOTS;
}

/* Looks one bucket through: 1 = found (value in *out), 0 = not here but the bucket is full,
 * -1 = not here and the bucket has room (so the key is absent from the main table). */
static __device__ inline int ghm_map_ref_scan(const unsigned long long *bucket, uint32_t nslots,
                                              uint32_t key, uint32_t *out)
{
    int room = 0;
    for (uint32_t j = 0; j < nslots; j += 2) {
        unsigned long long e0, e1;
        if (nslots == 1) {
            e0 = bucket[0];
            e1 = e0;
        } else {
            ulonglong2 v = *(const ulonglong2 *)(bucket + j); /* 16-byte loads */
            e0 = v.x;
            e1 = v.y;
        }
        if (ghm_slot_key(e0) == key) {
            *out = ghm_slot_value(e0);
            return 1;
        }
        if (ghm_slot_key(e1) == key) {
            *out = ghm_slot_value(e1);
            return 1;
        }
        room |= ghm_slot_key(e0) == GHM_EMPTY_KEY || ghm_slot_key(e1) == GHM_EMPTY_KEY;
    }
    return room ? -1 : 0;
}

/* The stash probe and the out-of-band key, shared by every find path. */
static __device__ inline uint32_t ghm_map_ref_find_stash(const GhmMapRef *r, uint32_t key)
{
    if (!r->stash_used)
        return GHM_NOT_FOUND;
    unsigned long long e = r->stash[ghm_map_ref_stash_slot(r, key)];
    return ghm_slot_key(e) == key ? ghm_slot_value(e) : GHM_NOT_FOUND;
}

/* The value of key, or GHM_NOT_FOUND; one thread, any layout. */
static __device__ inline uint32_t ghm_map_ref_find(const GhmMapRef *r, uint32_t key)
{
    if (key == GHM_EMPTY_KEY)
        return r->oob_present ? r->oob_value : GHM_NOT_FOUND;
    for (uint32_t i = 0; i < r->num_hashes; i++) {
        uint32_t b = ghm_map_ref_bucket(r, key, i);
        uint32_t value;
        int s = ghm_map_ref_scan(r->slots + (size_t)b * r->bucket_slots, r->bucket_slots, key,
                                 &value);
        if (s > 0)
            return value;
        if (s < 0 && r->full_prefix)
            break;
    }
    return ghm_map_ref_find_stash(r, key);
}

#endif /* GHM_MAP_REF_CUH */
