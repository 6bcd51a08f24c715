/*
 * map_cpu_insert.c - the CPU backend's cuckoo hash table with a stash (Alcantara's thesis,
 * chapter 6): the parallel insert and the merge pass, in two layouts:
 *
 *   GHM_MAP_BUCKETED  buckets of 8 slots (one 64-byte cache line); a key may live in any slot of
 *                     its 2 (or 3) buckets. Insert takes a free slot of the first bucket, else of
 *                     the next; when all are full it evicts a random slot of a bucket other than
 *                     the one the carried key came from (bucketized cuckoo, bounded chain).
 *   GHM_MAP_THESIS    one slot per hash function (2..5); an insert takes the first empty slot
 *                     among h_1, h_2, ... if there is one, else swaps its entry into h_1 by
 *                     atomic exchange and carries the evicted entry on to that entry's next
 *                     function, round-robin, for at most ~7 lg N steps (thesis 6.2.1).
 *
 * Either way a key whose chain runs out gets one try at a 101-slot stash with its own hash; if
 * that slot holds another key the attempt fails and the table is rebuilt with the constants of
 * the next attempt, at most max_rebuilds times. Slots are _Atomic uint64_t (key << 32 | value),
 * all ones when empty; the real key 0xFFFFFFFF is kept out of band.
 *
 * Duplicate keys. Threads insert without locks, so two threads carrying the same key (or one
 * carrying it while its earlier copy is in flight in another thread's eviction chain) can both
 * store it. Rather than try to prevent that, the build ends with a merge pass over the quiescent
 * table: the canonical copy of a key is its first occurrence in probe order (the order find
 * looks in: bucket 1 slots 0..7, bucket 2, ..., or h_1, h_2, ..., then the stash); every other
 * copy atomically lowers the canonical copy's value to its own if smaller. Find stops at the
 * first occurrence, so it always returns the canonical copy, which then holds the smallest value
 * of the key: the answer never depends on thread timing. Values only move with their key and are
 * only ever lowered, so no input value is lost on the way. Non-canonical copies stay where they
 * are (emptying them would break the thesis layout's stop-at-empty rule); they only cost a slot.
 * Inserts also merge into an existing copy they see (atomic min by compare-exchange), which keeps
 * such copies rare.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "map_cpu_internal.h"

#define MERGE_BATCH 256 /* slots per merge batch: about one in ten needs a random line */

static void bucket_candidates(const CpuMap *m, uint32_t key, uint32_t *b)
{
    for (int i = 0; i < m->opt.hash_functions; i++)
        b[i] = ghmi_hash(&m->hc, i, key, m->range);
}

/* One try at the stash. 0 on success, -1 when the slot holds another key (attempt fails). */
static int stash_insert(CpuMap *m, BuildShared *sh, uint64_t entry)
{
    uint32_t key = ghmi_slot_key(entry);
    Slot *s = &m->stash[ghmi_stash_hash(&m->hc, key)];
    atomic_store_explicit(&sh->stash_used, 1, memory_order_relaxed);
    for (;;) {
        uint64_t expect = GHMI_EMPTY_SLOT;
        if (atomic_compare_exchange_strong(s, &expect, entry))
            return 0;
        if (ghmi_slot_key(expect) != key)
            return -1;
        if (ghmi_merge_min(s, key, ghmi_slot_value(entry)))
            return 0;
    }
}

/* Scans one bucket for the key (merging into it) or a free slot (taking it).
 * Returns 1 when the entry is placed or merged, 0 when the bucket is full of other keys. */
static int bucket_try(Slot *bucket, uint64_t entry)
{
    uint32_t key = ghmi_slot_key(entry);
    for (;;) {
        unsigned mine = ghmi_key_mask(bucket, key);
        if (mine) {
            if (ghmi_merge_min(&bucket[__builtin_ctz(mine)], key, ghmi_slot_value(entry)))
                return 1;
            continue; /* it moved away under us: look again */
        }
        unsigned free_slots = ghmi_key_mask(bucket, GHMI_EMPTY_KEY);
        if (!free_slots)
            return 0;
        uint64_t expect = GHMI_EMPTY_SLOT;
        if (atomic_compare_exchange_strong(&bucket[__builtin_ctz(free_slots)], &expect, entry))
            return 1;
    }
}

static uint32_t xorshift32(uint32_t *state)
{
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *state = x;
}

static int bucketed_insert(CpuMap *m, BuildShared *sh, uint64_t entry, uint32_t *rng)
{
    int nh = m->opt.hash_functions;
    uint32_t from = UINT32_MAX; /* bucket the carried entry was evicted from */
    for (int step = 0; step < sh->max_chain; step++) {
        if (atomic_load_explicit(&sh->failed, memory_order_relaxed))
            return -1;
        uint32_t b[GHMI_MAX_HASH];
        bucket_candidates(m, ghmi_slot_key(entry), b);
        for (int i = 0; i < nh; i++)
            if (bucket_try(m->slots + (size_t)b[i] * GHMI_BUCKET_SLOTS, entry))
                return 0;
        /* All candidate buckets are full: evict from one the entry did not just leave. */
        uint32_t r = xorshift32(rng);
        uint32_t victim = b[(r >> 8) % (uint32_t)nh];
        for (int i = 0; victim == from && i < nh; i++)
            victim = b[i];
        Slot *slot = m->slots + (size_t)victim * GHMI_BUCKET_SLOTS + (r & (GHMI_BUCKET_SLOTS - 1));
        entry = atomic_exchange(slot, entry);
        if (entry == GHMI_EMPTY_SLOT)
            return 0;
        from = victim;
    }
    return stash_insert(m, sh, entry);
}

static uint32_t next_location(const CpuMap *m, uint32_t key, uint32_t loc)
{
    int nh = m->opt.hash_functions;
    uint32_t h[GHMI_MAX_HASH];
    int at = nh - 1;
    for (int i = nh - 1; i >= 0; i--) {
        h[i] = ghmi_hash(&m->hc, i, key, m->range);
        if (h[i] == loc)
            at = i;
    }
    /* The function after the one that placed it, skipping functions that point at the same
     * slot (thesis 6.2.1), round-robin. */
    for (int k = 1; k < nh; k++) {
        uint32_t cand = h[(at + k) % nh];
        if (cand != loc)
            return cand;
    }
    return loc;
}

/* The thesis starts every insert with an exchange at h_1, which on a CPU turns most inserts
 * into eviction chains of dependent cache misses. First looking along h_1, h_2, ... for the key
 * (merge) or an empty slot (compare-exchange) keeps the layout's invariant - a key sits at h_j
 * only while h_1 .. h_{j-1} are full - and leaves chains to the keys that need them.
 * Returns 1 when placed or merged, 0 when all its slots hold other keys. */
static int thesis_place(CpuMap *m, uint64_t entry)
{
    uint32_t key = ghmi_slot_key(entry);
    for (int i = 0; i < m->opt.hash_functions; i++) {
        Slot *slot = &m->slots[ghmi_hash(&m->hc, i, key, m->range)];
        uint64_t cur = atomic_load_explicit(slot, memory_order_relaxed);
        while (cur == GHMI_EMPTY_SLOT || ghmi_slot_key(cur) == key) {
            if (cur == GHMI_EMPTY_SLOT) {
                if (atomic_compare_exchange_strong(slot, &cur, entry))
                    return 1;
            } else if (ghmi_merge_min(slot, key, ghmi_slot_value(entry))) {
                return 1;
            } else {
                cur = atomic_load_explicit(slot, memory_order_relaxed);
            }
        }
    }
    return 0;
}

static int thesis_insert(CpuMap *m, BuildShared *sh, uint64_t entry)
{
    if (thesis_place(m, entry))
        return 0;
    uint32_t loc = ghmi_hash(&m->hc, 0, ghmi_slot_key(entry), m->range);
    for (int step = 0; step < sh->max_chain; step++) {
        if (atomic_load_explicit(&sh->failed, memory_order_relaxed))
            return -1;
        uint32_t key = ghmi_slot_key(entry);
        uint64_t old = atomic_exchange(&m->slots[loc], entry);
        if (old == GHMI_EMPTY_SLOT)
            return 0;
        /* Swapped out a copy of the same key: fold it into what we just stored if that is
         * still there, else carry it on like any evicted entry. */
        if (ghmi_slot_key(old) == key && ghmi_merge_min(&m->slots[loc], key, ghmi_slot_value(old)))
            return 0;
        entry = old;
        loc = next_location(m, ghmi_slot_key(entry), loc);
    }
    return stash_insert(m, sh, entry);
}



static void note_oob(BuildShared *sh, uint32_t v)
{
    atomic_store_explicit(&sh->oob_seen, 1, memory_order_relaxed);
    uint32_t cur = atomic_load(&sh->oob_min);
    while (v < cur && !atomic_compare_exchange_weak(&sh->oob_min, &cur, v))
        ;
}

/* Inserts keys[lo..hi): prefetches the first bucket of all of them, then inserts, so that the
 * batch's cache misses overlap. Returns -1 when the attempt has failed. */
static int insert_batch(CpuMap *m, BuildShared *sh, const uint32_t *keys, const uint32_t *values,
                        size_t lo, size_t hi, uint32_t *rng)
{
    int nfetch = m->opt.layout == GHM_MAP_BUCKETED ? m->opt.hash_functions : 2;
    for (size_t i = lo; i < hi; i++)
        for (int j = 0; j < nfetch && keys[i] != GHMI_EMPTY_KEY; j++)
            __builtin_prefetch(ghmi_probe_address(m, j, keys[i]));
    for (size_t i = lo; i < hi; i++) {
        if (keys[i] == GHMI_EMPTY_KEY) {
            note_oob(sh, values[i]);
            continue;
        }
        uint64_t e = ghmi_pack(keys[i], values[i]);
        int r = m->opt.layout == GHM_MAP_BUCKETED ? bucketed_insert(m, sh, e, rng)
                                                  : thesis_insert(m, sh, e);
        if (r < 0)
            return -1;
    }
    return 0;
}

void ghmi_cpu_map_insert_all(CpuMap *m, BuildShared *sh, const uint32_t *keys,
                             const uint32_t *values, size_t n)
{
    size_t nbatch = (n + GHMI_CPU_BATCH - 1) / GHMI_CPU_BATCH;
#pragma omp parallel num_threads(ghmi_cpu_threads(m))
    {
        uint32_t rng = (uint32_t)ghmi_mix64(m->hc.a[0] + (uint64_t)omp_get_thread_num()) | 1u;
#pragma omp for schedule(dynamic, 64)
        for (size_t bi = 0; bi < nbatch; bi++) {
            size_t lo = bi * GHMI_CPU_BATCH;
            size_t hi = lo + GHMI_CPU_BATCH < n ? lo + GHMI_CPU_BATCH : n;
            if (atomic_load_explicit(&sh->failed, memory_order_relaxed))
                continue;
            if (insert_batch(m, sh, keys, values, lo, hi, &rng) < 0)
                atomic_store(&sh->failed, 1);
        }
    }
}

/* ---- the merge pass (see the comment at the top) ---- */

/* Index of the canonical (first in probe order) copy of key in the main table, or SIZE_MAX when
 * the main table lacks it. `upto` limits the search to slots before position `upto` in probe
 * order (pass SIZE_MAX for the whole order). */
static size_t first_copy(const CpuMap *m, uint32_t key, size_t upto)
{
    int bucketed = m->opt.layout == GHM_MAP_BUCKETED;
    size_t width = bucketed ? GHMI_BUCKET_SLOTS : 1;
    size_t base[GHMI_MAX_HASH];
    for (int i = 0; i < m->opt.hash_functions; i++) {
        base[i] = (size_t)(ghmi_probe_address(m, i, key) - m->slots);
        int again = 0; /* two functions may pick the same bucket or slot */
        for (int j = 0; j < i; j++)
            again |= base[j] == base[i];
        if (again)
            continue;
        int holds_upto = upto >= base[i] && upto < base[i] + width;
        unsigned before = holds_upto ? (1u << (upto - base[i])) - 1u : ~0u;
        unsigned hits = bucketed ? ghmi_key_mask(m->slots + base[i], key)
                                 : ghmi_slot_key(atomic_load_explicit(
                                       &m->slots[base[i]], memory_order_relaxed)) == key;
        hits &= before;
        if (hits)
            return base[i] + (size_t)__builtin_ctz(hits);
        if (holds_upto)
            return SIZE_MAX;
    }
    return SIZE_MAX;
}

/* Merges every non-canonical main-table copy into its canonical copy; returns the number of
 * canonical entries (distinct keys) in the main table. */
static size_t merge_main(CpuMap *m)
{
    size_t distinct = 0;
    size_t nbatch = (m->capacity + MERGE_BATCH - 1) / MERGE_BATCH;
    size_t width = m->opt.layout == GHM_MAP_BUCKETED ? GHMI_BUCKET_SLOTS : 1;
    int threads = ghmi_cpu_threads(m);
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : distinct) num_threads(threads)
    for (size_t bi = 0; bi < nbatch; bi++) {
        size_t lo = bi * MERGE_BATCH;
        size_t hi = lo + MERGE_BATCH < m->capacity ? lo + MERGE_BATCH : m->capacity;
        for (size_t p = lo; p < hi; p++) {
            uint64_t e = atomic_load_explicit(&m->slots[p], memory_order_relaxed);
            /* Only the probes before the one that holds p can hold an earlier copy. */
            for (int i = 0; e != GHMI_EMPTY_SLOT && i < m->opt.hash_functions; i++) {
                const Slot *a = ghmi_probe_address(m, i, ghmi_slot_key(e));
                if (m->slots + p >= a && m->slots + p < a + width)
                    break;
                __builtin_prefetch(a);
            }
        }
        for (size_t p = lo; p < hi; p++) {
            uint64_t e = atomic_load_explicit(&m->slots[p], memory_order_relaxed);
            if (e == GHMI_EMPTY_SLOT)
                continue;
            size_t c = first_copy(m, ghmi_slot_key(e), p);
            if (c == SIZE_MAX)
                distinct++;
            else
                ghmi_merge_min(&m->slots[c], ghmi_slot_key(e), ghmi_slot_value(e));
        }
    }
    return distinct;
}

/* Stash entries come last in probe order: canonical only when the main table lacks the key. */
static size_t merge_stash(CpuMap *m)
{
    size_t distinct = 0;
    for (int s = 0; s < GHMI_STASH_SIZE; s++) {
        uint64_t e = atomic_load(&m->stash[s]);
        if (e == GHMI_EMPTY_SLOT)
            continue;
        m->stash_count++;
        size_t c = first_copy(m, ghmi_slot_key(e), SIZE_MAX);
        if (c == SIZE_MAX)
            distinct++;
        else
            ghmi_merge_min(&m->slots[c], ghmi_slot_key(e), ghmi_slot_value(e));
    }
    return distinct;
}

size_t ghmi_cpu_map_merge(CpuMap *m)
{
    m->stash_count = 0;
    size_t distinct = merge_main(m);
    return m->stash_active ? distinct + merge_stash(m) : distinct;
}
