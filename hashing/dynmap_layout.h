/*
 * dynmap_layout.h - GhmDynmap's layout in numbers, defined once for both backends: a variant's
 * slots per slab and slot heads, where the items' other words begin, the bucket count for a
 * capacity hint, a key's hash, its bucket and its acceleration-hash tag; the slab's size and the
 * allocator's blocks. Plain C11 that nvcc compiles too
 * (GHMI_HD, hash_family.h), so the CPU table (dynmap_cpu.c) and the CUDA table's create and
 * kernels (kernels/hashing/dynmap*.cu, dynmap_ref.cuh) call the same code. What the words of a
 * slab hold is described in dynmap_internal.h.
 */
#ifndef GHM_DYNMAP_LAYOUT_H
#define GHM_DYNMAP_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_dynmap.h"
#include "hash_family.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    GHMI_SLAB_WORDS = 32,
    GHMI_SLAB_NEXT = 30,
    GHMI_SLAB_MASK = 31,
    GHMI_SLABS_PER_BLOCK = 1024,
    GHMI_BLOCKS_PER_SUPER = 16,
    GHMI_SLABS_PER_SUPER = GHMI_SLABS_PER_BLOCK * GHMI_BLOCKS_PER_SUPER, /* 16384: 2 MiB */
};

/* A slab's layout for items of w words of one variant. */
typedef struct GhmiDynLayout {
    int slots; /* per slab: Atomic64 30 / w, Accel32 30 / (w + 1), Accel8 120 / (4w + 1) */
    int hw;    /* item words a slot's head holds: 2, or 1 for one-word items (Atomic64); 0, the
                * head being the key's tag (the acceleration hashes) */
    int hb;    /* bytes of a slot's head: 8, 4 (one-word Atomic64 items, Accel32), 1 (Accel8) */
    int rest;  /* the slab word where the items' words past their heads begin */
} GhmiDynLayout;

GHMI_HD GhmiDynLayout ghmi_dynmap_layout(int w, GhmDynmapVariant v)
{
    GhmiDynLayout l;
    l.slots = v == GHM_DYNMAP_ACCEL8    ? 120 / (4 * w + 1)
              : v == GHM_DYNMAP_ACCEL32 ? 30 / (w + 1)
                                        : 30 / w;
    l.hw = v != GHM_DYNMAP_ATOMIC64 ? 0 : w >= 2 ? 2 : 1;
    l.hb = v == GHM_DYNMAP_ACCEL8 ? 1 : v == GHM_DYNMAP_ACCEL32 || w == 1 ? 4 : 8;
    l.rest = (l.hb * l.slots + 3) / 4;
    return l;
}

/* Buckets for a capacity hint (0: 1024): a slab holds 1.5 buckets' worth of items, so a bucket
 * rarely needs a second slab; at most 2^31. */
GHMI_HD uint32_t ghmi_dynmap_buckets(size_t capacity, int slots)
{
    size_t per = (size_t)slots;
    size_t want = capacity ? capacity / per + capacity / (2 * per) + 1 : 1024;
    return (uint32_t)(want > ((size_t)1 << 31) ? (size_t)1 << 31 : want);
}

/* The key's 64-bit hash: splitmix64 of the seed-derived start and each word in turn. */
GHMI_HD uint64_t ghmi_dynmap_hash(const uint32_t *key, int key_words, uint64_t seed)
{
    uint64_t h = seed;
    for (int i = 0; i < key_words; i++)
        h = ghmi_mix64(h ^ ((uint64_t)key[i] << 7 | (uint64_t)i << 40));
    return h;
}

/* A key's bucket, from its hash's high half (Lemire's multiply-high), so the low half stays
 * independent for the tags and the batch's duplicate table. */
GHMI_HD uint32_t ghmi_dynmap_bucket(uint64_t hash, uint32_t buckets)
{
    return (uint32_t)(((hash >> 32) * (uint64_t)buckets) >> 32);
}

/* The acceleration-hash tag of a key's hash, never 0 (the empty slot): its low half with bit 0
 * set (Accel32, heads of 4 bytes), or 1..255 (Accel8, heads of 1 byte). */
GHMI_HD uint32_t ghmi_dynmap_tag(uint64_t hash, int hb)
{
    return hb == 1 ? 1 + (uint32_t)hash % 255u : ((uint32_t)hash | 1u);
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_DYNMAP_LAYOUT_H */
