/*
 * map_cpu_internal.h - the CPU backend's cuckoo table (GhmMap), shared by map_cpu.c (table memory,
 * build attempts, find) and map_cpu_insert.c (the parallel insert and the merge pass). Slots are
 * _Atomic uint64_t in hash_family.h's encoding; see map_cpu_insert.c for the algorithm.
 */
#ifndef GHM_MAP_CPU_INTERNAL_H
#define GHM_MAP_CPU_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ghm_backend_internal.h"
#include "hash_internal.h"

/* Keys whose slots are prefetched together: enough misses in flight per core. Parallel loops
 * hand out work in chunks of batches rather than one static share per thread: on a machine busy
 * with other work a descheduled thread then delays a chunk, not half of the call. */
#define GHMI_CPU_BATCH 32

typedef _Atomic uint64_t Slot;

/* Slots in one 64-byte cache line; tables are 64-byte aligned, so slot p lies in line p / 8. */
#define GHMI_SLOTS_PER_LINE 8

typedef struct CpuMap {
    GhmContext *ctx;
    GhmMapOptions opt;
    Slot *slots;     /* capacity slots, 64-byte aligned; NULL before a successful build */
    size_t capacity; /* slots; a multiple of 8 in the bucketed layout */
    uint32_t range;  /* buckets (bucketed) or slots (thesis) that the hashes pick among */
    Slot stash[GHMI_STASH_SIZE];
    int stash_active; /* some key went to the stash: find must look there */
    GhmiHashConsts hc;
    int built;        /* the last build succeeded: the table holds its content */
    int have_oob; /* the key 0xFFFFFFFF, which equals the empty marker, was inserted */
    uint32_t oob_value;
    size_t size;
    size_t stash_count;
    int rebuilds;
} CpuMap;

/* State shared by the threads of one build attempt. */
typedef struct BuildShared {
    atomic_int failed;
    atomic_int stash_used;
    _Atomic uint32_t oob_min;
    atomic_int oob_seen;
    int max_chain;
} BuildShared;

static inline int ghmi_cpu_threads(const CpuMap *m)
{
    return m->ctx->threads > 0 ? m->ctx->threads : 1;
}

/* Lowers the value of the entry for `key` at *slot to v. Returns 1 on success, 0 when the slot no
 * longer holds the key (it was evicted meanwhile; the caller looks again). */
static inline int ghmi_merge_min(Slot *slot, uint32_t key, uint32_t v)
{
    uint64_t cur = atomic_load_explicit(slot, memory_order_relaxed);
    for (;;) {
        if (ghmi_slot_key(cur) != key)
            return 0;
        if (ghmi_slot_value(cur) <= v)
            return 1;
        if (atomic_compare_exchange_weak(slot, &cur, ghmi_pack(key, v)))
            return 1;
    }
}

/* Bit s set when slot s of the bucket holds key. With SSE2 the 64-byte bucket is compared in four
 * 16-byte loads (the key is the odd 32-bit lane of each slot). These are plain loads of atomic
 * slots: each aligned 8-byte half is still read whole on x86, and during a build the answer is
 * only a hint that the caller re-checks with an atomic operation. */
static inline unsigned ghmi_key_mask(const Slot *bucket, uint32_t key)
{
#ifdef __SSE2__
    const __m128i *p = (const __m128i *)(const void *)bucket;
    __m128 k = _mm_castsi128_ps(_mm_set1_epi32((int)key));
    /* Gather the odd lanes (the keys) of slots 0-3 and 4-7, compare, one bit per slot. */
    __m128 lo = _mm_shuffle_ps(_mm_castsi128_ps(_mm_load_si128(p)),
                               _mm_castsi128_ps(_mm_load_si128(p + 1)), _MM_SHUFFLE(3, 1, 3, 1));
    __m128 hi = _mm_shuffle_ps(_mm_castsi128_ps(_mm_load_si128(p + 2)),
                               _mm_castsi128_ps(_mm_load_si128(p + 3)), _MM_SHUFFLE(3, 1, 3, 1));
    unsigned m_lo = (unsigned)_mm_movemask_ps(
        _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_castps_si128(lo), _mm_castps_si128(k))));
    unsigned m_hi = (unsigned)_mm_movemask_ps(
        _mm_castsi128_ps(_mm_cmpeq_epi32(_mm_castps_si128(hi), _mm_castps_si128(k))));
    return m_lo | m_hi << 4;
#else
    unsigned mask = 0;
    for (int s = 0; s < GHMI_BUCKET_SLOTS; s++)
        mask |= (unsigned)(ghmi_slot_key(atomic_load_explicit(&bucket[s], memory_order_relaxed)) ==
                           key)
                << s;
    return mask;
#endif
}

/* Where probe i of key starts: its bucket's first slot, or its slot. The callers prefetch it
 * themselves: GCC deems a function that only prefetches free of effects and drops its calls. */
static inline const Slot *ghmi_probe_address(const CpuMap *m, int i, uint32_t key)
{
    uint32_t h = ghmi_hash(&m->hc, i, key, m->range);
    return m->slots + (m->opt.layout == GHM_MAP_BUCKETED ? (size_t)h * GHMI_BUCKET_SLOTS : h);
}

/* Memory for a table of `bytes` (uninitialised), 64-byte aligned, and on 2 MiB huge pages when
 * large: every map reads its tables at random (map_cpu.c). Free with free(). */
void *ghmi_cpu_alloc_table(size_t bytes);

/* ghmi_cpu_alloc_table for cap slots. */
Slot *ghmi_cpu_alloc_slots(size_t cap);

/* Inserts the n pairs with the constants in m->hc into the cleared table, threads in parallel;
 * sets sh->failed when a key finds neither a slot nor a free stash slot (map_cpu_insert.c). */
void ghmi_cpu_map_insert_all(CpuMap *m, BuildShared *sh, const uint32_t *keys,
                             const uint32_t *values, size_t n);

/* Settles duplicate copies after the insert (each key's first copy in probe order ends up with
 * its smallest value) and returns the number of distinct keys in the table and the stash; counts
 * m->stash_count. */
size_t ghmi_cpu_map_merge(CpuMap *m);

#endif /* GHM_MAP_CPU_INTERNAL_H */
