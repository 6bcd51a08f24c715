/*
 * dynmap_internal.h - what GhmDynmap's CPU files share: the slab layout described, and the CPU
 * slab allocator (dynmap_cpu_alloc.c). The layout's numbers, the key hash and the bucket are in
 * dynmap_layout.h, which the CUDA files (kernels/hashing/dynmap_ref.cuh) use too; this header's
 * C11 atomics do not compile as C++.
 *
 * A slab is 32 words (128 bytes, one cache line), Atomic64 layout (the paper's figure 5):
 *   words [0, hw * S)                 the first hw words of each of the S slots (hw = 2, or 1 for
 *                                     one-word items): slot i's first 8 bytes at word 2i, so a
 *                                     slot is claimed by one 64-bit compare-and-swap;
 *   words [hw * S, hw * S + S * (w - hw))  the rest of each item, slot after slot (AoS);
 *   word 30                           index of the next slab of the bucket (0: none);
 *   word 31                           a mask with bit i set while slot i holds an item (the
 *                                     garbage collector frees slabs whose mask is 0).
 * S = 30 / w: 30 one-word items, 15 of 2 words, 5 of 6 words, 3 of 10 words. A slot is empty
 * when its first hw words are zero, which is why items never start with 8 zero bytes.
 *
 * Accel32 (the paper's 32-bit acceleration hash): words [0, S) a 32-bit tag per slot (low half
 * of the key's hash with bit 0 set, so never 0 = empty), then the S whole items, then the same
 * next link and mask; S = 30 / (w + 1): 15 one-word items, 4 of 6 words, 2 of 10 words. A slot
 * is claimed by a 32-bit compare-and-swap of its tag; a search compares tags first.
 *
 * Accel8 (the paper's 8-bit acceleration hash): bytes [0, S) an 8-bit tag per slot (1..255 from
 * the low half of the key's hash), padded to a word, then the S whole items, next link and mask;
 * S = 120 / (4w + 1), the most with S * w + ceil(S / 4) <= 30: 24 one-word items, 13 of 2
 * words, 4 of 6, 2 of 10. A slot is claimed by a 32-bit compare-and-swap of the word that holds
 * its tag. We depart from the paper here: its Accel8 slab has 32 slots and no padding (several
 * cache lines for large items); ours keeps the one 128-byte slab of the other layouts, so one
 * allocator serves every variant and a search reads a slab's tags, link and mask from one line.
 * Its memory falls between the other two, as the paper's does (2-word items: 13 slots against
 * Atomic64's 15 and Accel32's 10; the paper's table 2: 363 MiB against 319 and 478).
 *
 * The paper's fourth layout, the ticket board (a bitmask of the occupied slots, then whole
 * items), is not built. Here an insert's look-ups run beside its claims, so a slot is published
 * after its words: a ticket board's claim (a bit of that mask) would need a second publication,
 * the two atomics of Atomic64's compare-and-swap and mask bit again, while a search would read
 * the mask before it knew which items' words to read (a second dependent miss) and then words
 * spread over the whole line, where the other layouts read the heads or tags and the mask in
 * one round. The paper too found it the slowest to search by far (2.51 ms against 0.70-0.94).
 *
 * Slab indices are 32-bit; slab 0 is never handed out, so 0 is the null link and the bucket
 * array starts out all empty (zero). Memory blocks of 1024 slabs carry a 1024-bit mask of the
 * slabs handed out; super blocks of 16 memory blocks are what the allocator obtains at once.
 */
#ifndef GHM_DYNMAP_INTERNAL_H
#define GHM_DYNMAP_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dynmap_layout.h"
#include "ghm_backend_internal.h"
#include "ghm_dynmap.h"

/* The CPU slab allocator. Super blocks are never moved or freed before the table is, so a slab's
 * address is stable; the directory of super blocks grows only in ghmi_slab_reserve, which runs
 * between parallel phases. Allocation and release are safe from many threads. */
typedef struct GhmiSuperBlock {
    _Atomic uint64_t bits[GHMI_SLABS_PER_SUPER / 64]; /* 16 memory blocks x 1024 bits */
    /* Free slabs per memory block and in all: hints that let a search skip full blocks (a bit
     * is taken before its count drops), so a nearly full allocator costs a few loads, not a
     * scan of every mask. */
    _Atomic int32_t free_in_block[GHMI_BLOCKS_PER_SUPER];
    _Atomic int32_t free_slabs;
    uint32_t *slabs; /* 16384 slabs, 128-byte aligned */
} GhmiSuperBlock;

typedef struct GhmiSlabAlloc {
    GhmiSuperBlock **supers;
    size_t n_supers, cap_supers;
} GhmiSlabAlloc;

/* Makes sure at least `need` slabs are free, adding super blocks. GHM_ERR_TOO_LARGE beyond 2^32
 * slabs, GHM_ERR_NOMEM; super blocks added before a failure stay (free). */
int ghmi_slab_reserve(GhmiSlabAlloc *a, size_t need);
/* n zeroed slabs (all slots empty, no next, mask 0) to out. `hint`: the thread's own, a random
 * number at first (it spreads threads over the blocks), then the thread's last slab.
 * The caller has reserved them: never fails then. */
void ghmi_slab_alloc_many(GhmiSlabAlloc *a, uint64_t *hint, uint32_t *out, size_t n);
/* Returns a slab whose slots are empty; resets its next link and mask. */
void ghmi_slab_release_many(GhmiSlabAlloc *a, uint32_t *slabs, size_t n);
/* 1 when `slab` is handed out. */
int ghmi_slab_live(const GhmiSlabAlloc *a, uint32_t slab);
size_t ghmi_slab_total(const GhmiSlabAlloc *a);
/* Slabs handed out, slab 0 (reserved) included; exact when no thread is taking or returning. */
size_t ghmi_slab_used(const GhmiSlabAlloc *a);
size_t ghmi_slab_bytes(const GhmiSlabAlloc *a);
void ghmi_slab_alloc_free(GhmiSlabAlloc *a);

static inline uint32_t *ghmi_slab_ptr(const GhmiSlabAlloc *a, uint32_t slab)
{
    return a->supers[slab / GHMI_SLABS_PER_SUPER]->slabs +
           (size_t)(slab % GHMI_SLABS_PER_SUPER) * GHMI_SLAB_WORDS;
}

/* A batch of n items in bucket order (dynmap_cpu_order.c): entries[] holds bucket << 32 | batch
 * index, ascending (so a bucket's items are together and in batch order); bin b is the entries
 * [bin_start[b], bin_start[b + 1]), and no bucket spans two bins. n < 2^32. */
typedef struct GhmiBucketOrder {
    uint64_t *entries;
    uint32_t *bin_start; /* bins + 1 */
    size_t bins;
} GhmiBucketOrder;

int ghmi_dynmap_bucket_order(const uint64_t *hash, size_t n, uint32_t n_buckets, int threads,
                             GhmiBucketOrder *out);
void ghmi_dynmap_bucket_order_free(GhmiBucketOrder *o);

#endif /* GHM_DYNMAP_INTERNAL_H */
