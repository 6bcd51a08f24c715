/*
 * map_ref.cuh - probing a GhmMap from device code: the hash functions both layouts share and
 * ghm_map_ref_find(), one thread per key. The bulk find kernel (hash_cuda_internal.cuh) is this
 * same function, so a kernel that probes through a GhmMapRef gets the bulk answer.
 *
 * Layout (hash_refs.h): 64-bit slots in hash_family.h's encoding, hashed with its family (the
 * code the CPU map runs too). A bucketed table of four or more ~4 MB regions (region_shift set)
 * draws a key's second and third buckets inside the region of its first: a grouped insert
 * (map_group.cu) then keeps its evictions in the region it works on, in L2, as well as its first
 * placements. Departure from the thesis and BGHT (independent functions over the whole table):
 * the regions are large enough (~500k keys at load 0.95) that each region's load stays within
 * 0.2 % of the table's, and a find still reads at most two buckets; the CPU map, which does not
 * group, keeps the whole-table functions (its answers are the same). A key is looked for in the
 * slots (THESIS) or buckets (BUCKETED)
 * h_1(k), h_2(k), ... in that order; construction guarantees that a key is never stored behind a
 * slot or bucket that still had room, so the probe stops at the first one with an empty slot.
 * Then the stash, when it is in use - and, in the bucketed layout, only when every bucket of the
 * key was full: the build leaves no other key there, and buckets never empty.
 */
#ifndef GHM_MAP_REF_CUH
#define GHM_MAP_REF_CUH

#include <stdint.h>

#include "hash_refs.h"

/* Bucket (or, for THESIS, slot) of key k under hash function i. The constants are picked with
 * constant indices: indexing the by-value kernel parameter with a run-time i would copy the
 * whole ref to local memory (a 96-byte stack frame in every kernel that probes). */
static __device__ __forceinline__ uint32_t ghm_map_ref_bucket(const GhmMapRef *r, uint32_t k,
                                                              uint32_t i)
{
    uint32_t a = r->hc.a[0], b = r->hc.b[0];
#pragma unroll
    for (uint32_t j = 1; j < GHMI_MAX_HASH; j++)
        if (i == j) {
            a = r->hc.a[j];
            b = r->hc.b[j];
        }
    if (i == 0 || r->region_shift == 0)
        return ghmi_hash_pair(k, a, b, r->num_buckets);
    uint32_t first = ghmi_hash_pair(k, r->hc.a[0], r->hc.b[0], r->num_buckets);
    return ghmi_region_bucket(first, ghmi_hash_mix(k, a, b), r->num_buckets, r->region_shift);
}

static __device__ __forceinline__ uint32_t ghm_map_ref_stash_slot(const GhmMapRef *r, uint32_t k)
{
    return ghmi_stash_hash(&r->hc, k);
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
        if (ghmi_slot_key(e[j]) == key)
            *out = ghmi_slot_value(e[j]);
        room |= ghmi_slot_key(e[j]) == GHMI_EMPTY_KEY;
    }
#pragma unroll
    for (int j = 0; j < B; j++)
        if (ghmi_slot_key(e[j]) == key)
            return 1;
    return room ? -1 : 0;
}

/* The main table's answer: *found 1 (the value returned), -1 (absent, stash included), 0 (absent
 * from the main table; the stash may hold it). */
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
        if (s < 0 && r->full_prefix) {
            /* A bucket with room: not in the table, nor (bucketed) in the stash, which only
             * keeps a key whose buckets are all full (map_insert.cu's stash_fixup_kernel). */
            *found = B > 1 ? -1 : 0;
            return GHM_NOT_FOUND;
        }
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
    return ghmi_slot_key(e) == key ? ghmi_slot_value(e) : GHM_NOT_FOUND;
}

/* The value of key, or GHM_NOT_FOUND; one thread, any layout. */
static __device__ __forceinline__ uint32_t ghm_map_ref_find(const GhmMapRef *r, uint32_t key)
{
    if (key == GHMI_EMPTY_KEY) /* out of band: all ones (GHM_NOT_FOUND) while absent */
        return ghmi_slot_value(r->stash[GHMI_STASH_SIZE]);
    int found = 0;
    uint32_t v = r->bucket_slots == 4   ? ghm_map_ref_find_main<4>(r, key, &found)
                 : r->bucket_slots == 8 ? ghm_map_ref_find_main<8>(r, key, &found)
                                        : ghm_map_ref_find_main<1>(r, key, &found);
    return found > 0 ? v : found < 0 ? GHM_NOT_FOUND : ghm_map_ref_find_stash(r, key);
}

#endif /* GHM_MAP_REF_CUH */
