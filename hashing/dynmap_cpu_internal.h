/*
 * dynmap_cpu_internal.h - what the CPU backend's GhmDynmap files share (dynmap_cpu.c: the table,
 * its finds, erases and collection; dynmap_cpu_batch.c: insert and erase): the table's state and
 * the slot accessors of the layouts in dynmap_internal.h.
 */
#ifndef GHM_DYNMAP_CPU_INTERNAL_H
#define GHM_DYNMAP_CPU_INTERNAL_H

#include <string.h>

#include "dynmap_internal.h"

typedef struct GhmiCpuDynmap {
    GhmContext *ctx;
    int w, kw, slots; /* item words, key words, slots per slab */
    int hb;           /* bytes of a slot's head: 8 (Atomic64), 4 (one-word items, Accel32), 1
                       * (Accel8) */
    int hw;           /* item words kept in the head: 2 or 1 (Atomic64), 0 (the tags) */
    int rest;         /* the slab word where the items' words past their heads begin */
    uint32_t n_buckets;
    _Atomic uint32_t *buckets; /* first slab of each bucket, 0: none */
    uint8_t *dirty; /* per bucket: 1 where an erase emptied one of its slabs since the last gc,
                     * which walks only those buckets (set by the bucket's one erasing thread) */
    uint64_t seed;
    size_t items;
    GhmiSlabAlloc alloc;
} GhmiCpuDynmap;

static inline int ghmi_dyn_threads(const GhmiCpuDynmap *d)
{
    return d->ctx->threads > 0 ? d->ctx->threads : 1;
}

/* --- slab access ----------------------------------------------------------------------------- */

static inline _Atomic uint32_t *ghmi_dyn_link(const GhmiCpuDynmap *d, uint32_t slab, int which)
{
    return (_Atomic uint32_t *)&ghmi_slab_ptr(&d->alloc, slab)[which];
}

/* A slot's head: the item's first 8 bytes (4 for one-word items) or its key's tag (32 bits
 * Accel32, 8 bits Accel8); 0 when the slot is empty. */
static inline uint64_t ghmi_dyn_head_load(const GhmiCpuDynmap *d, uint32_t *slab, int slot)
{
    if (d->hb == 8)
        return atomic_load_explicit((_Atomic uint64_t *)&slab[2 * slot], memory_order_acquire);
    if (d->hb == 1)
        return atomic_load_explicit((_Atomic uint8_t *)slab + slot, memory_order_acquire);
    return atomic_load_explicit((_Atomic uint32_t *)&slab[slot], memory_order_acquire);
}

/* Sets a slot's head (0: empties it), by the one thread that owns the slot's bucket. */
static inline void ghmi_dyn_head_store(const GhmiCpuDynmap *d, uint32_t *slab, int slot,
                                       uint64_t head)
{
    if (d->hb == 8)
        atomic_store_explicit((_Atomic uint64_t *)&slab[2 * slot], head, memory_order_relaxed);
    else if (d->hb == 1)
        atomic_store_explicit((_Atomic uint8_t *)slab + slot, (uint8_t)head, memory_order_relaxed);
    else
        atomic_store_explicit((_Atomic uint32_t *)&slab[slot], (uint32_t)head,
                              memory_order_relaxed);
}

/* The head an item (or a key of at least hw words) is stored under. */
static inline uint64_t ghmi_dyn_head_of(const GhmiCpuDynmap *d, const uint32_t *item, uint64_t hash)
{
    if (d->hw == 0)
        return ghmi_dynmap_tag(hash, d->hb);
    return d->hw == 2 ? (uint64_t)item[0] | (uint64_t)item[1] << 32 : item[0];
}

static inline uint32_t *ghmi_dyn_rest(const GhmiCpuDynmap *d, uint32_t *slab, int slot)
{
    return slab + d->rest + slot * (d->w - d->hw);
}

/* What a slot's head must equal, under a mask, for the key to be there (a one-word key of a
 * table with 8-byte heads: the low half). */
typedef struct GhmiWant {
    uint64_t head, mask;
} GhmiWant;

static inline GhmiWant ghmi_dyn_want(const GhmiCpuDynmap *d, const uint32_t *key, uint64_t hash)
{
    GhmiWant x = {0, ~(uint64_t)0};
    if (d->hw == 2 && d->kw == 1) {
        x.head = key[0];
        x.mask = 0xffffffffu;
    } else {
        x.head = ghmi_dyn_head_of(d, key, hash);
    }
    return x;
}

/* Does the item in (slab, slot), whose head is h (non-zero), have this key? */
static inline int ghmi_dyn_matches(const GhmiCpuDynmap *d, uint32_t *slab, int slot, uint64_t h,
                                   GhmiWant want, const uint32_t *key)
{
    if ((h & want.mask) != want.head)
        return 0;
    const uint32_t *rest = ghmi_dyn_rest(d, slab, slot);
    for (int j = d->hw; j < d->kw; j++)
        if (rest[j - d->hw] != key[j])
            return 0;
    return 1;
}

static inline GhmDynmapHandle ghmi_dyn_handle(uint32_t slab, int slot)
{
    return (uint64_t)slab << 32 | (uint32_t)slot;
}

static inline void ghmi_dyn_copy_item(const GhmiCpuDynmap *d, uint32_t *slab, int slot, uint64_t h,
                                      uint32_t *out)
{
    if (d->hw >= 1)
        out[0] = (uint32_t)h;
    if (d->hw == 2)
        out[1] = (uint32_t)(h >> 32);
    memcpy(out + d->hw, ghmi_dyn_rest(d, slab, slot), (size_t)(d->w - d->hw) * sizeof *out);
}

/* hash[i] = the key hash of record i (n records of `stride` words), in parallel. */
void ghmi_dyn_hash_all(const GhmiCpuDynmap *d, const uint32_t *rec, size_t stride, size_t n,
                       uint64_t *hash);

/* The backend's insert and erase (dynmap_cpu_batch.c). */
int ghmi_cpu_dynmap_erase(void *impl, const uint32_t *keys, size_t n, uint8_t *erased);
int ghmi_cpu_dynmap_insert(void *impl, const uint32_t *items, size_t n, GhmDynmapHandle *handles,
                           uint8_t *inserted);

#endif /* GHM_DYNMAP_CPU_INTERNAL_H */
