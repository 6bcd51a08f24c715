/*
 * map.c - GhmMap: the public API (dispatch through the context's backend) and the CPU backend's
 * cuckoo hash table with a stash (Alcantara's thesis, chapter 6), in two layouts:
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
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE): a Linux hint, used where available */
#endif
#include "ghm_map.h"

#include <math.h>
#ifdef MAPTIME
#include <stdio.h>
#include <time.h>
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "ghm_backend_internal.h"
#include "hash_internal.h"

struct GhmMap {
    GhmContext *ctx;
    const GhmMapOps *ops;
    void *impl;
};

#define DEFAULT_LOAD 0.8
#define MAX_LOAD 0.99

GhmMapOptions ghm_map_defaults(void)
{
    GhmMapOptions opt = {
        .load_factor = 0.0, .layout = GHM_MAP_BUCKETED, .hash_functions = 0, .max_rebuilds = 8};
    return opt;
}

/* Fills in the layout defaults, so that every backend receives complete options. */
static int resolve_options(const GhmMapOptions *in, GhmMapOptions *out)
{
    *out = *in;
    if (!(in->load_factor >= 0.0 && in->load_factor <= MAX_LOAD) || in->max_rebuilds < 0)
        return GHM_ERR_INVALID;
    if (out->load_factor == 0.0)
        out->load_factor = DEFAULT_LOAD;
    if (in->layout == GHM_MAP_BUCKETED) {
        if (out->hash_functions == 0)
            out->hash_functions = 2;
        return out->hash_functions == 2 || out->hash_functions == 3 ? GHM_OK : GHM_ERR_INVALID;
    }
    if (in->layout == GHM_MAP_THESIS) {
        if (out->hash_functions == 0)
            out->hash_functions = 4;
        return out->hash_functions >= 2 && out->hash_functions <= GHMI_MAX_HASH ? GHM_OK
                                                                               : GHM_ERR_INVALID;
    }
    return GHM_ERR_INVALID;
}

int ghm_map_create(GhmContext *ctx, const GhmMapOptions *opt, GhmMap **out)
{
    if (!ctx || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmMapOptions full;
    int ret = resolve_options(opt ? opt : &(GhmMapOptions){.max_rebuilds = 8}, &full);
    if (ret < 0)
        return ret;
    const GhmMapOps *ops = ctx->backend->map;
    if (!ops)
        return GHM_ERR_UNSUPPORTED;
    GhmMap *map = calloc(1, sizeof *map);
    if (!map)
        return GHM_ERR_NOMEM;
    map->ctx = ctx;
    map->ops = ops;
    if ((ret = ops->create(ctx, &full, &map->impl)) < 0) {
        free(map);
        return ret;
    }
    *out = map;
    return GHM_OK;
}

int ghm_map_build(GhmMap *map, const uint32_t *keys, const uint32_t *values, size_t n)
{
    if (!map || (n && (!keys || !values)))
        return GHM_ERR_INVALID;
    return map->ops->build(map->impl, keys, values, n);
}

int ghm_map_find(const GhmMap *map, const uint32_t *keys, size_t n, uint32_t *out)
{
    if (!map || (n && (!keys || !out)))
        return GHM_ERR_INVALID;
    return map->ops->find(map->impl, keys, n, out);
}

int ghm_map_stats(const GhmMap *map, GhmMapStats *out)
{
    if (!map || !out)
        return GHM_ERR_INVALID;
    return map->ops->stats(map->impl, out);
}

void ghm_map_free(GhmMap **map)
{
    if (!map || !*map)
        return;
    (*map)->ops->destroy((*map)->impl);
    free(*map);
    *map = NULL;
}

/* ---------------------------------------------------------------------------------------------
 * The CPU backend.
 */

#define BATCH 32 /* keys whose slots are prefetched together: enough misses in flight per core */
/* Parallel loops hand out work in chunks rather than one static share per thread: on a machine
 * busy with other work a descheduled thread then delays a chunk, not half of the call. */
#define MERGE_BATCH 256 /* slots per merge batch: about one in ten needs a random line */

typedef _Atomic uint64_t Slot;

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

static int cpu_map_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    CpuMap *m = calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->opt = *opt;
    *impl = m;
    return GHM_OK;
}

static void cpu_map_destroy(void *impl)
{
    CpuMap *m = impl;
    if (!m)
        return;
    free(m->slots);
    free(m);
}

static int nthreads(const CpuMap *m) { return m->ctx->threads > 0 ? m->ctx->threads : 1; }

static void bucket_candidates(const CpuMap *m, uint32_t key, uint32_t *b)
{
    for (int i = 0; i < m->opt.hash_functions; i++)
        b[i] = ghmi_hash(&m->hc, i, key, m->range);
}

/* Lowers the value of the entry for `key` at *slot to v. Returns 1 on success, 0 when the slot no
 * longer holds the key (it was evicted meanwhile; the caller looks again). */
static int merge_min(Slot *slot, uint32_t key, uint32_t v)
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
        if (merge_min(s, key, ghmi_slot_value(entry)))
            return 0;
    }
}

/* Bit s set when slot s of the bucket holds key. With SSE2 the 64-byte bucket is compared in four
 * 16-byte loads (the key is the odd 32-bit lane of each slot). These are plain loads of atomic
 * slots: each aligned 8-byte half is still read whole on x86, and during a build the answer is
 * only a hint that the caller re-checks with an atomic operation. */
static unsigned key_mask(const Slot *bucket, uint32_t key)
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

/* Scans one bucket for the key (merging into it) or a free slot (taking it).
 * Returns 1 when the entry is placed or merged, 0 when the bucket is full of other keys. */
static int bucket_try(Slot *bucket, uint64_t entry)
{
    uint32_t key = ghmi_slot_key(entry);
    for (;;) {
        unsigned mine = key_mask(bucket, key);
        if (mine) {
            if (merge_min(&bucket[__builtin_ctz(mine)], key, ghmi_slot_value(entry)))
                return 1;
            continue; /* it moved away under us: look again */
        }
        unsigned free_slots = key_mask(bucket, GHMI_EMPTY_KEY);
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
            } else if (merge_min(slot, key, ghmi_slot_value(entry))) {
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
        if (ghmi_slot_key(old) == key && merge_min(&m->slots[loc], key, ghmi_slot_value(old)))
            return 0;
        entry = old;
        loc = next_location(m, ghmi_slot_key(entry), loc);
    }
    return stash_insert(m, sh, entry);
}

/* Where probe i of key starts: its bucket's first slot, or its slot. The callers prefetch it
 * themselves: GCC deems a function that only prefetches free of effects and drops its calls. */
static const Slot *probe_address(const CpuMap *m, int i, uint32_t key)
{
    uint32_t h = ghmi_hash(&m->hc, i, key, m->range);
    return m->slots + (m->opt.layout == GHM_MAP_BUCKETED ? (size_t)h * GHMI_BUCKET_SLOTS : h);
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
            __builtin_prefetch(probe_address(m, j, keys[i]));
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

static void insert_all(CpuMap *m, BuildShared *sh, const uint32_t *keys, const uint32_t *values,
                       size_t n)
{
    size_t nbatch = (n + BATCH - 1) / BATCH;
#pragma omp parallel num_threads(nthreads(m))
    {
        uint32_t rng = (uint32_t)ghmi_mix64(m->hc.a[0] + (uint64_t)omp_get_thread_num()) | 1u;
#pragma omp for schedule(dynamic, 64)
        for (size_t bi = 0; bi < nbatch; bi++) {
            size_t lo = bi * BATCH, hi = lo + BATCH < n ? lo + BATCH : n;
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
        base[i] = (size_t)(probe_address(m, i, key) - m->slots);
        int again = 0; /* two functions may pick the same bucket or slot */
        for (int j = 0; j < i; j++)
            again |= base[j] == base[i];
        if (again)
            continue;
        int holds_upto = upto >= base[i] && upto < base[i] + width;
        unsigned before = holds_upto ? (1u << (upto - base[i])) - 1u : ~0u;
        unsigned hits = bucketed ? key_mask(m->slots + base[i], key)
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
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : distinct) num_threads(nthreads(m))
    for (size_t bi = 0; bi < nbatch; bi++) {
        size_t lo = bi * MERGE_BATCH;
        size_t hi = lo + MERGE_BATCH < m->capacity ? lo + MERGE_BATCH : m->capacity;
        for (size_t p = lo; p < hi; p++) {
            uint64_t e = atomic_load_explicit(&m->slots[p], memory_order_relaxed);
            /* Only the probes before the one that holds p can hold an earlier copy. */
            for (int i = 0; e != GHMI_EMPTY_SLOT && i < m->opt.hash_functions; i++) {
                const Slot *a = probe_address(m, i, ghmi_slot_key(e));
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
                merge_min(&m->slots[c], ghmi_slot_key(e), ghmi_slot_value(e));
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
            merge_min(&m->slots[c], ghmi_slot_key(e), ghmi_slot_value(e));
    }
    return distinct;
}

/* ---- build ---- */

static int ceil_log2(size_t n)
{
    int l = 0;
    while (l < 63 && ((size_t)1 << l) < n)
        l++;
    return l;
}

/* Chain bound. The thesis uses 7 lg N for 4 functions at load 0.8; fuller tables and fewer
 * functions need longer chains before the stash is worth trying, so the bound grows as the free
 * share of the table shrinks (an empirical rule, like the thesis's own). */
static int max_chain_for(const CpuMap *m, size_t n)
{
    double lg = ceil_log2(n) < 4 ? 4 : ceil_log2(n);
    double free_share = 1.0 - m->opt.load_factor;
    double scale = free_share >= 0.2 ? 1.0 : 0.2 / (free_share > 0.01 ? free_share : 0.01);
    double base = m->opt.layout == GHM_MAP_BUCKETED ? 16.0 * lg : 7.0 * lg;
    return (int)(base * scale);
}

#define HUGE_PAGE ((size_t)2 << 20)

/* Tables are probed at random, so with 4 KiB pages nearly every probe also misses the TLB; big
 * tables are therefore 2 MiB aligned and offered to the kernel as transparent huge pages. */
static Slot *alloc_slots(size_t cap)
{
    size_t bytes = (cap * sizeof(Slot) + 63) / 64 * 64;
    if (bytes < 2 * HUGE_PAGE)
        return aligned_alloc(64, bytes);
    bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    Slot *p = aligned_alloc(HUGE_PAGE, bytes);
#ifdef MADV_HUGEPAGE
    if (p)
        madvise(p, bytes, MADV_HUGEPAGE); /* only a hint: failure changes nothing */
#endif
    return p;
}

/* Sizes the table for n keys; keeps the current one when it has the same size already (repeated
 * builds then touch no new pages). */
static int alloc_table(CpuMap *m, size_t n)
{
    double want = ceil((double)(n ? n : 1) / m->opt.load_factor);
    size_t units = m->opt.layout == GHM_MAP_BUCKETED
                       ? (size_t)ceil(want / GHMI_BUCKET_SLOTS)
                       : (size_t)want;
    if (units < 1)
        units = 1;
    if (units > UINT32_MAX)
        return GHM_ERR_TOO_LARGE;
    size_t cap = m->opt.layout == GHM_MAP_BUCKETED ? units * GHMI_BUCKET_SLOTS : units;
    m->range = (uint32_t)units;
    if (m->slots && m->capacity == cap)
        return GHM_OK;
    free(m->slots);
    m->slots = alloc_slots(cap);
    m->capacity = m->slots ? cap : 0;
    return m->slots ? GHM_OK : GHM_ERR_NOMEM;
}

static void clear_table(CpuMap *m)
{
    size_t cap = m->capacity;
#pragma omp parallel for schedule(static) num_threads(nthreads(m))
    for (size_t p = 0; p < cap; p++)
        atomic_store_explicit(&m->slots[p], GHMI_EMPTY_SLOT, memory_order_relaxed);
    for (int s = 0; s < GHMI_STASH_SIZE; s++)
        atomic_store_explicit(&m->stash[s], GHMI_EMPTY_SLOT, memory_order_relaxed);
}

/* Forgets the content (the table memory is kept for the next build unless release is set). */
static void reset_content(CpuMap *m, int release)
{
    if (release) {
        free(m->slots);
        m->slots = NULL;
        m->capacity = 0;
        m->range = 0;
    }
    m->built = 0;
    m->stash_active = 0;
    m->have_oob = 0;
    m->size = 0;
    m->stash_count = 0;
}

static int try_build(CpuMap *m, int attempt, const uint32_t *keys, const uint32_t *values,
                     size_t n)
{
    BuildShared sh;
    atomic_init(&sh.failed, 0);
    atomic_init(&sh.stash_used, 0);
    atomic_init(&sh.oob_min, UINT32_MAX);
    atomic_init(&sh.oob_seen, 0);
    sh.max_chain = max_chain_for(m, n);
    m->hc = ghmi_hash_consts(m->ctx->seed, attempt);
#ifdef MAPTIME
    double t0 = cpu_now();
#endif
    clear_table(m);
#ifdef MAPTIME
    double t1 = cpu_now();
#endif
    insert_all(m, &sh, keys, values, n);
#ifdef MAPTIME
    double t2 = cpu_now();
#endif
    if (atomic_load(&sh.failed))
        return GHM_ERR_BUILD_FAILED;
    m->stash_active = atomic_load(&sh.stash_used);
    m->have_oob = atomic_load(&sh.oob_seen);
    m->oob_value = atomic_load(&sh.oob_min);
    m->stash_count = 0;
    m->size = merge_main(m) + (size_t)m->have_oob;
    if (m->stash_active)
        m->size += merge_stash(m);
#ifdef MAPTIME
    double t3 = cpu_now();
    fprintf(stderr, "clear %.3f insert %.3f merge %.3f\n", t1 - t0, t2 - t1, t3 - t2);
#endif
    return GHM_OK;
}

static int cpu_map_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CpuMap *m = impl;
    reset_content(m, 0);
    int ret = alloc_table(m, n);
    if (ret < 0) {
        reset_content(m, 1);
        return ret;
    }
    for (int attempt = 0; attempt <= m->opt.max_rebuilds; attempt++) {
        ret = try_build(m, attempt, keys, values, n);
        if (ret == GHM_OK) {
            m->rebuilds = attempt;
            m->built = 1;
            return GHM_OK;
        }
    }
    reset_content(m, 1);
    m->rebuilds = m->opt.max_rebuilds;
    return GHM_ERR_BUILD_FAILED;
}

/* ---- find ---- */

static uint32_t stash_find(const CpuMap *m, uint32_t key)
{
    uint64_t e = atomic_load_explicit(&m->stash[ghmi_stash_hash(&m->hc, key)],
                                      memory_order_relaxed);
    return ghmi_slot_key(e) == key ? ghmi_slot_value(e) : GHM_NOT_FOUND;
}

static uint32_t bucketed_find(const CpuMap *m, uint32_t key, const uint32_t *b)
{
    for (int i = 0; i < m->opt.hash_functions; i++) {
        const Slot *bucket = m->slots + (size_t)b[i] * GHMI_BUCKET_SLOTS;
        unsigned mine = key_mask(bucket, key);
        if (mine)
            return ghmi_slot_value(
                atomic_load_explicit(&bucket[__builtin_ctz(mine)], memory_order_relaxed));
    }
    return m->stash_active ? stash_find(m, key) : GHM_NOT_FOUND;
}

/* Probes h_1, h_2, ... in order and stops at the first empty slot: the key cannot lie beyond it,
 * because it only reaches h_{i+1} after being evicted from an (ever after full) h_i. */
static uint32_t thesis_find(const CpuMap *m, uint32_t key, const uint32_t *h)
{
    for (int i = 0; i < m->opt.hash_functions; i++) {
        uint64_t e = atomic_load_explicit(&m->slots[h[i]], memory_order_relaxed);
        if (ghmi_slot_key(e) == key)
            return ghmi_slot_value(e);
        if (e == GHMI_EMPTY_SLOT)
            break;
    }
    return m->stash_active ? stash_find(m, key) : GHM_NOT_FOUND;
}

/* Finds one batch: first all hashes and prefetches, then the probes, so that BATCH cache misses
 * are in flight at once instead of one. */
static void find_batch(const CpuMap *m, const uint32_t *keys, size_t cnt, uint32_t *out)
{
    uint32_t h[BATCH][GHMI_MAX_HASH];
    int nh = m->opt.hash_functions;
    int nfetch = m->opt.layout == GHM_MAP_BUCKETED ? nh : 2;
    for (size_t i = 0; i < cnt; i++) {
        for (int j = 0; j < nh; j++) {
            h[i][j] = ghmi_hash(&m->hc, j, keys[i], m->range);
            if (j < nfetch)
                __builtin_prefetch(m->slots + (m->opt.layout == GHM_MAP_BUCKETED
                                                   ? (size_t)h[i][j] * GHMI_BUCKET_SLOTS
                                                   : (size_t)h[i][j]));
        }
    }
    for (size_t i = 0; i < cnt; i++) {
        uint32_t k = keys[i];
        if (k == GHMI_EMPTY_KEY)
            out[i] = m->have_oob ? m->oob_value : GHM_NOT_FOUND;
        else if (m->opt.layout == GHM_MAP_BUCKETED)
            out[i] = bucketed_find(m, k, h[i]);
        else
            out[i] = thesis_find(m, k, h[i]);
    }
}

static int cpu_map_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const CpuMap *m = impl;
    if (!m->built) {
        for (size_t i = 0; i < n; i++)
            out[i] = GHM_NOT_FOUND;
        return GHM_OK;
    }
    size_t nbatch = (n + BATCH - 1) / BATCH;
#pragma omp parallel for schedule(dynamic, 64) num_threads(nthreads(m)) if (n > 4096)
    for (size_t bi = 0; bi < nbatch; bi++) {
        size_t lo = bi * BATCH, cnt = lo + BATCH < n ? BATCH : n - lo;
        find_batch(m, keys + lo, cnt, out + lo);
    }
    return GHM_OK;
}

static int cpu_map_stats(const void *impl, GhmMapStats *out)
{
    const CpuMap *m = impl;
    out->size = m->size;
    out->capacity = m->capacity;
    out->stash_used = m->stash_count;
    out->rebuilds = m->rebuilds;
    out->bytes = m->capacity * sizeof(Slot) + sizeof m->stash;
    return GHM_OK;
}

const GhmMapOps ghm_cpu_map_ops = {
    .create = cpu_map_create,
    .build = cpu_map_build,
    .find = cpu_map_find,
    .stats = cpu_map_stats,
    .destroy = cpu_map_destroy,
};
