/*
 * dynmap_cpu.c - GhmDynmap on the CPU backend, the Atomic64 and 32-bit acceleration-hash
 * variants (Molenaar and Eisemann 2024, section 4.2; layouts in dynmap_internal.h). OpenMP
 * threads play the paper's warps, one item per thread; slots are claimed with C11 atomics. The
 * variants share one code path: a slot's head is the item's first 8 bytes (Atomic64; 4 for
 * one-word items) or its key's 32-bit tag (Accel32), and is what a search compares first.
 * Lookups go in groups of 16 with the bucket and first-slab cache misses prefetched.
 *
 * insert, in phases separated by the parallel loops' barriers:
 *   1. the batch's duplicates (the paper's second table, section 5.2): an open-addressing table
 *      of batch indices keyed by the item's key, where equal keys keep the smallest index, so
 *      the "leader" of each group is its first occurrence whatever the thread count;
 *   2. each leader is looked up in the table; the absent ones are the new items;
 *   3. the slabs they may need are reserved: per bucket, ceil(new items / slots per slab), plus
 *      one per thread for a slab allocated and then lost to another thread's link (the paper's
 *      "conservative estimate"); only this step can fail, before the table changes;
 *   4. the new items are inserted in parallel: walk the bucket's slabs, claim an empty slot by a
 *      compare-and-swap of its head (64-bit for Atomic64), write the rest of the item, set the
 *      slot's mask bit; at the end of the list, allocate a slab and link it with a compare-and-swap
 *      (the loser releases its slab and follows the winner's). New items are distinct and
 *      absent, so no thread ever needs to read another's half-written item;
 *   5. duplicates and already-present items get their leader's or the stored item's handle.
 * A slab is linked only when every slot before it was seen full, and no slot is freed during
 * an insert, so a bucket receiving k new items links at most ceil(k / S) slabs: step 3's bound.
 *
 * erase: the leaders of the batch's keys find their slot and clear its head with a
 * compare-and-swap and its mask bit; the slot is reused by later inserts, its slab stays linked.
 * gc: per bucket, one thread unlinks the slabs whose mask is zero and releases them.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dynmap_internal.h"

typedef struct CpuDynmap {
    GhmContext *ctx;
    int w, kw, slots; /* item words, key words, slots per slab */
    int hs;           /* words of a slot's head: 2 (Atomic64), 1 (one-word items, Accel32) */
    int hw;           /* item words kept in the head: 2 or 1 (Atomic64), 0 (Accel32) */
    uint32_t n_buckets;
    _Atomic uint32_t *buckets;   /* first slab of each bucket, 0: none */
    _Atomic uint32_t *counts;    /* per bucket, new items of the batch (zero between calls) */
    uint64_t seed;
    size_t items;
    GhmiSlabAlloc alloc;
} CpuDynmap;

static int threads_of(const CpuDynmap *d) { return d->ctx->threads > 0 ? d->ctx->threads : 1; }

/* --- slab access ----------------------------------------------------------------------------- */

static _Atomic uint32_t *link_word(const CpuDynmap *d, uint32_t slab, int which)
{
    return (_Atomic uint32_t *)&ghmi_slab_ptr(&d->alloc, slab)[which];
}

/* A slot's head: the item's first 8 bytes (4 for one-word items) or, Accel32, its key's 32-bit
 * tag; 0 when the slot is empty. */
static uint64_t head_load(const CpuDynmap *d, uint32_t *slab, int slot)
{
    if (d->hs == 2)
        return atomic_load_explicit((_Atomic uint64_t *)&slab[2 * slot], memory_order_acquire);
    return atomic_load_explicit((_Atomic uint32_t *)&slab[slot], memory_order_acquire);
}

static int head_cas(const CpuDynmap *d, uint32_t *slab, int slot, uint64_t expect, uint64_t v)
{
    if (d->hs == 2)
        return atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)&slab[2 * slot],
                                                       &expect, v, memory_order_acq_rel,
                                                       memory_order_acquire);
    uint32_t e32 = (uint32_t)expect;
    return atomic_compare_exchange_strong_explicit((_Atomic uint32_t *)&slab[slot], &e32,
                                                   (uint32_t)v, memory_order_acq_rel,
                                                   memory_order_acquire);
}

/* The head an item (or a key of at least hw words) is stored under. */
static uint64_t head_of(const CpuDynmap *d, const uint32_t *item, uint64_t hash)
{
    if (d->hw == 0)
        return (uint32_t)hash | 1u; /* the tag: never 0, the empty slot */
    return d->hw == 2 ? (uint64_t)item[0] | (uint64_t)item[1] << 32 : item[0];
}

static uint32_t *rest_of(const CpuDynmap *d, uint32_t *slab, int slot)
{
    return slab + d->hs * d->slots + slot * (d->w - d->hw);
}

/* What a slot's head must equal, under a mask, for the key to be there (a one-word key of a
 * table with 8-byte heads: the low half). */
typedef struct Want {
    uint64_t head, mask;
} Want;

static Want want_of(const CpuDynmap *d, const uint32_t *key, uint64_t hash)
{
    Want x = {0, ~(uint64_t)0};
    if (d->hw == 2 && d->kw == 1) {
        x.head = key[0];
        x.mask = 0xffffffffu;
    } else {
        x.head = head_of(d, key, hash);
    }
    return x;
}

/* Does the item in (slab, slot), whose head is h (non-zero), have this key? */
static int slot_matches(const CpuDynmap *d, uint32_t *slab, int slot, uint64_t h, Want want,
                        const uint32_t *key)
{
    if ((h & want.mask) != want.head)
        return 0;
    const uint32_t *rest = rest_of(d, slab, slot);
    for (int j = d->hw; j < d->kw; j++)
        if (rest[j - d->hw] != key[j])
            return 0;
    return 1;
}

static GhmDynmapHandle handle_of(uint32_t slab, int slot)
{
    return (uint64_t)slab << 32 | (uint32_t)slot;
}

static void copy_item(const CpuDynmap *d, uint32_t *slab, int slot, uint64_t h, uint32_t *out)
{
    if (d->hw >= 1)
        out[0] = (uint32_t)h;
    if (d->hw == 2)
        out[1] = (uint32_t)(h >> 32);
    memcpy(out + d->hw, rest_of(d, slab, slot), (size_t)(d->w - d->hw) * sizeof *out);
}

/* The stored item with this key in the list starting at slab s: its handle, or
 * GHM_DYNMAP_NO_HANDLE; its head in *head. */
static GhmDynmapHandle lookup_from(const CpuDynmap *d, const uint32_t *key, uint64_t hash,
                                   uint32_t s, uint64_t *head)
{
    Want want = want_of(d, key, hash);
    while (s) {
        uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
        for (int i = 0; i < d->slots; i++) {
            uint64_t h = head_load(d, slab, i);
            if (h && slot_matches(d, slab, i, h, want, key)) {
                if (head)
                    *head = h;
                return handle_of(s, i);
            }
        }
        s = atomic_load_explicit(link_word(d, s, GHMI_SLAB_NEXT), memory_order_acquire);
    }
    return GHM_DYNMAP_NO_HANDLE;
}

/* Looks up a group of up to GROUP keys (keys + i * stride, hashes hash[i]) with the memory
 * latency overlapped: every bucket is prefetched, then every first slab, then each list is
 * walked. Handles to out[i], heads to heads[i]. A lookup is two dependent cache misses (the
 * bucket, the slab); one at a time they, not the comparisons, set the pace. */
enum { GROUP = 16 };

static void lookup_group(const CpuDynmap *d, const uint32_t *keys, size_t stride,
                         const uint64_t *hash, size_t n, GhmDynmapHandle *out, uint64_t *heads)
{
    uint32_t first[GROUP];
    for (size_t i = 0; i < n; i++)
        __builtin_prefetch(&d->buckets[ghmi_dynmap_bucket(hash[i], d->n_buckets)]);
    for (size_t i = 0; i < n; i++) {
        first[i] = atomic_load_explicit(&d->buckets[ghmi_dynmap_bucket(hash[i], d->n_buckets)],
                                        memory_order_acquire);
        if (first[i]) {
            const uint32_t *p = ghmi_slab_ptr(&d->alloc, first[i]);
            __builtin_prefetch(p);
            __builtin_prefetch(p + 16);
        }
    }
    for (size_t i = 0; i < n; i++)
        out[i] = lookup_from(d, keys + i * stride, hash[i], first[i], heads ? &heads[i] : NULL);
}

/* Stores an item known to be absent and distinct from the others of its batch. */
static GhmDynmapHandle store(CpuDynmap *d, const uint32_t *item, uint64_t hash, uint64_t *rng)
{
    uint64_t head = head_of(d, item, hash);
    _Atomic uint32_t *link = &d->buckets[ghmi_dynmap_bucket(hash, d->n_buckets)];
    for (;;) {
        uint32_t s = atomic_load_explicit(link, memory_order_acquire);
        if (!s) {
            uint32_t fresh = ghmi_slab_alloc(&d->alloc, rng);
            uint32_t expect = 0;
            if (atomic_compare_exchange_strong_explicit(link, &expect, fresh, memory_order_acq_rel,
                                                        memory_order_acquire)) {
                s = fresh;
            } else {
                ghmi_slab_release(&d->alloc, fresh);
                s = expect;
            }
        }
        uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
        for (int i = 0; i < d->slots; i++) {
            if (head_load(d, slab, i) == 0 && head_cas(d, slab, i, 0, head)) {
                uint32_t *rest = rest_of(d, slab, i);
                for (int j = d->hw; j < d->w; j++)
                    rest[j - d->hw] = item[j];
                atomic_fetch_or_explicit(link_word(d, s, GHMI_SLAB_MASK), 1u << i,
                                         memory_order_relaxed);
                return handle_of(s, i);
            }
        }
        link = link_word(d, s, GHMI_SLAB_NEXT);
    }
}

/* --- the batch's duplicates ------------------------------------------------------------------ */

/* leader[i] = the smallest j with key(j) == key(i) among n records of `stride` words whose keys
 * are their first kw words; hash[i] is the key's hash. */
static int find_leaders(const CpuDynmap *d, const uint32_t *rec, size_t stride, size_t n,
                        const uint64_t *hash, uint32_t *leader)
{
    size_t cap = 16;
    while (cap < 2 * n) /* n < 2^31, so positions fit in 32 bits */
        cap *= 2;
    _Atomic uint32_t *tab = calloc(cap, sizeof *tab); /* batch index + 1, 0: empty */
    if (!tab)
        return GHM_ERR_NOMEM;
    size_t mask = cap - 1;
    int kw = d->kw;
#pragma omp parallel for schedule(static) num_threads(threads_of(d)) if (n > 4096)
    for (size_t i = 0; i < n; i++) {
        size_t p = (size_t)hash[i] & mask;
        for (;;) {
            uint32_t cur = atomic_load_explicit(&tab[p], memory_order_acquire);
            if (cur == 0) {
                if (atomic_compare_exchange_strong(&tab[p], &cur, (uint32_t)i + 1))
                    break;
                continue; /* cur now holds the winner: look at it again */
            }
            size_t j = cur - 1;
            if (hash[j] == hash[i] && !memcmp(rec + j * stride, rec + i * stride, kw * 4u)) {
                if (i < j && !atomic_compare_exchange_strong(&tab[p], &cur, (uint32_t)i + 1))
                    continue;
                break;
            }
            p = (p + 1) & mask;
        }
        leader[i] = (uint32_t)p; /* the key's entry, final once every thread is done */
    }
#pragma omp parallel for schedule(static) num_threads(threads_of(d)) if (n > 4096)
    for (size_t i = 0; i < n; i++)
        leader[i] = atomic_load_explicit(&tab[leader[i]], memory_order_relaxed) - 1;
    free(tab);
    return GHM_OK;
}

static void hash_all(const CpuDynmap *d, const uint32_t *rec, size_t stride, size_t n,
                     uint64_t *hash)
{
#pragma omp parallel for schedule(static) num_threads(threads_of(d)) if (n > 4096)
    for (size_t i = 0; i < n; i++)
        hash[i] = ghmi_dynmap_hash(rec + i * stride, d->kw, d->seed);
}

/* --- the op table ---------------------------------------------------------------------------- */

static void cpu_dynmap_destroy(void *impl)
{
    CpuDynmap *d = impl;
    if (!d)
        return;
    ghmi_slab_alloc_free(&d->alloc);
    free(d->buckets);
    free(d->counts);
    free(d);
}

static int cpu_dynmap_create(GhmContext *ctx, const GhmDynmapOptions *opt, void **impl)
{
    if (opt->variant == GHM_DYNMAP_ACCEL8)
        return GHM_ERR_UNSUPPORTED;
    CpuDynmap *d = calloc(1, sizeof *d);
    if (!d)
        return GHM_ERR_NOMEM;
    d->ctx = ctx;
    d->w = opt->item_words;
    d->kw = opt->key_words;
    d->hw = ghmi_dynmap_head_words(d->w, opt->variant);
    d->hs = d->hw == 2 ? 2 : 1;
    d->slots = ghmi_dynmap_slots(d->w, opt->variant);
    /* Buckets for the hint at 2/3 of a slab each, so a bucket rarely needs a second slab. */
    size_t per = (size_t)d->slots, cap = opt->capacity;
    size_t want = cap ? cap / per + cap / (2 * per) + 1 : 1024;
    if (want > ((size_t)1 << 31))
        want = (size_t)1 << 31;
    d->n_buckets = (uint32_t)(want ? want : 1);
    d->seed = ghmi_mix64(ctx->seed ^ 0xD1B54A32D192ED03ull);
    d->buckets = calloc(d->n_buckets, sizeof *d->buckets);
    d->counts = calloc(d->n_buckets, sizeof *d->counts);
    if (!d->buckets || !d->counts) {
        cpu_dynmap_destroy(d);
        return GHM_ERR_NOMEM;
    }
    *impl = d;
    return GHM_OK;
}

static int cpu_dynmap_insert(void *impl, const uint32_t *items, size_t n,
                             GhmDynmapHandle *handles, uint8_t *inserted)
{
    CpuDynmap *d = impl;
    size_t w = (size_t)d->w;
    int ret = GHM_OK;
    uint64_t *hash = malloc(n * sizeof *hash);
    uint32_t *leader = malloc(n * sizeof *leader);
    GhmDynmapHandle *h = handles ? handles : malloc(n * sizeof *h);
    uint8_t *fresh = calloc(n, 1);
    if (!hash || !leader || !h || !fresh) {
        ret = GHM_ERR_NOMEM;
        goto done;
    }
    hash_all(d, items, w, n, hash);
    if ((ret = find_leaders(d, items, w, n, hash, leader)) < 0)
        goto done;

    /* Leaders: stored already, or new (counted per bucket for the reservation). */
    size_t n_new = 0, groups = (n + GROUP - 1) / GROUP;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_of(d)) if (n > 4096)        \
    reduction(+ : n_new)
    for (size_t g = 0; g < groups; g++) {
        size_t lo = g * GROUP, m = n - lo < GROUP ? n - lo : GROUP;
        lookup_group(d, items + lo * w, w, hash + lo, m, h + lo, NULL);
        for (size_t i = lo; i < lo + m; i++) {
            if (leader[i] != i || h[i] != GHM_DYNMAP_NO_HANDLE)
                continue;
            fresh[i] = 1;
            n_new++;
            atomic_fetch_add_explicit(&d->counts[ghmi_dynmap_bucket(hash[i], d->n_buckets)], 1,
                                      memory_order_relaxed);
        }
    }
    if (n_new) {
        size_t need = 0;
        uint32_t nb = d->n_buckets, per = (uint32_t)d->slots;
#pragma omp parallel for schedule(static) num_threads(threads_of(d)) if (nb > 65536)           \
    reduction(+ : need)
        for (uint32_t b = 0; b < nb; b++) {
            uint32_t c = atomic_load_explicit(&d->counts[b], memory_order_relaxed);
            if (c) {
                need += (c + per - 1) / per;
                atomic_store_explicit(&d->counts[b], 0, memory_order_relaxed);
            }
        }
        if ((ret = ghmi_slab_reserve(&d->alloc, need + (size_t)threads_of(d))) < 0)
            goto done;
#pragma omp parallel num_threads(threads_of(d)) if (n_new > 4096)
        {
            uint64_t rng = d->seed + (uint64_t)omp_get_thread_num() * 0x9E3779B97F4A7C15ull;
#pragma omp for schedule(dynamic, 16)
            for (size_t g = 0; g < groups; g++) {
                size_t lo = g * GROUP, hi = n - lo < GROUP ? n : lo + GROUP;
                for (size_t i = lo; i < hi; i++) /* buckets, then slabs: overlap the misses */
                    if (fresh[i])
                        __builtin_prefetch(&d->buckets[ghmi_dynmap_bucket(hash[i], d->n_buckets)]);
                for (size_t i = lo; i < hi; i++) {
                    if (!fresh[i])
                        continue;
                    uint32_t b = ghmi_dynmap_bucket(hash[i], d->n_buckets);
                    uint32_t s = atomic_load_explicit(&d->buckets[b], memory_order_relaxed);
                    if (s) { /* both lines, for writing: heads, then the rest and the mask */
                        const uint32_t *p = ghmi_slab_ptr(&d->alloc, s);
                        __builtin_prefetch(p, 1);
                        __builtin_prefetch(p + 16, 1);
                    }
                }
                for (size_t i = lo; i < hi; i++)
                    if (fresh[i])
                        h[i] = store(d, items + i * w, hash[i], &rng);
            }
        }
        d->items += n_new;
    }
#pragma omp parallel for schedule(static) num_threads(threads_of(d)) if (n > 4096)
    for (size_t i = 0; i < n; i++) {
        if (leader[i] != i)
            h[i] = h[leader[i]];
        if (inserted)
            inserted[i] = fresh[i];
    }
done:
    if (ret < 0 && d->counts) /* a failure after counting leaves no count behind */
        for (uint32_t b = 0; b < d->n_buckets; b++)
            atomic_store_explicit(&d->counts[b], 0, memory_order_relaxed);
    if (h != handles)
        free(h);
    free(hash);
    free(leader);
    free(fresh);
    return ret;
}

static int cpu_dynmap_erase(void *impl, const uint32_t *keys, size_t n, uint8_t *erased)
{
    CpuDynmap *d = impl;
    size_t kw = (size_t)d->kw;
    uint64_t *hash = malloc(n * sizeof *hash);
    uint32_t *leader = malloc(n * sizeof *leader);
    int ret = GHM_OK;
    if (!hash || !leader) {
        ret = GHM_ERR_NOMEM;
        goto done;
    }
    hash_all(d, keys, kw, n, hash);
    if ((ret = find_leaders(d, keys, kw, n, hash, leader)) < 0)
        goto done;
    size_t gone = 0, groups = (n + GROUP - 1) / GROUP;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_of(d)) if (n > 4096)        \
    reduction(+ : gone)
    for (size_t g = 0; g < groups; g++) {
        size_t lo = g * GROUP, m = n - lo < GROUP ? n - lo : GROUP;
        uint64_t heads[GROUP];
        GhmDynmapHandle hd[GROUP];
        lookup_group(d, keys + lo * kw, kw, hash + lo, m, hd, heads);
        for (size_t k = 0; k < m; k++) {
            size_t i = lo + k;
            uint8_t hit = 0;
            if (leader[i] == i && hd[k] != GHM_DYNMAP_NO_HANDLE) {
                uint32_t s = ghm_dynmap_handle_slab(hd[k]);
                int slot = (int)ghm_dynmap_handle_slot(hd[k]);
                /* Keys of the batch are distinct here, so this CAS cannot lose. */
                if (head_cas(d, ghmi_slab_ptr(&d->alloc, s), slot, heads[k], 0)) {
                    atomic_fetch_and_explicit(link_word(d, s, GHMI_SLAB_MASK), ~(1u << slot),
                                              memory_order_relaxed);
                    hit = 1;
                    gone++;
                }
            }
            if (erased)
                erased[i] = hit;
        }
    }
    d->items -= gone;
done:
    free(hash);
    free(leader);
    return ret;
}

static int cpu_dynmap_find(const void *impl, const uint32_t *keys, size_t n,
                           GhmDynmapHandle *handles, uint32_t *items_out)
{
    const CpuDynmap *d = impl;
    size_t kw = (size_t)d->kw, w = (size_t)d->w, groups = (n + GROUP - 1) / GROUP;
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads_of(d)) if (n > 4096)
    for (size_t g = 0; g < groups; g++) {
        size_t lo = g * GROUP, m = n - lo < GROUP ? n - lo : GROUP;
        uint64_t hash[GROUP], heads[GROUP];
        GhmDynmapHandle hd[GROUP];
        for (size_t i = 0; i < m; i++)
            hash[i] = ghmi_dynmap_hash(keys + (lo + i) * kw, d->kw, d->seed);
        lookup_group(d, keys + lo * kw, kw, hash, m, hd, heads);
        for (size_t i = 0; i < m; i++) {
            if (handles)
                handles[lo + i] = hd[i];
            if (!items_out)
                continue;
            uint32_t *out = items_out + (lo + i) * w;
            if (hd[i] == GHM_DYNMAP_NO_HANDLE)
                memset(out, 0, w * sizeof *out);
            else
                copy_item(d, ghmi_slab_ptr(&d->alloc, ghm_dynmap_handle_slab(hd[i])),
                          (int)ghm_dynmap_handle_slot(hd[i]), heads[i], out);
        }
    }
    return GHM_OK;
}

static int cpu_dynmap_read(const void *impl, const GhmDynmapHandle *handles, size_t n,
                           uint32_t *items_out)
{
    const CpuDynmap *d = impl;
    int ret = GHM_OK;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = ghm_dynmap_handle_slab(handles[i]), slot = ghm_dynmap_handle_slot(handles[i]);
        uint64_t head = 0;
        if (slot < (uint32_t)d->slots && ghmi_slab_live(&d->alloc, s))
            head = head_load(d, ghmi_slab_ptr(&d->alloc, s), (int)slot);
        if (!head) {
            memset(items_out + i * (size_t)d->w, 0, (size_t)d->w * sizeof *items_out);
            ret = GHM_ERR_INVALID;
            continue;
        }
        copy_item(d, ghmi_slab_ptr(&d->alloc, s), (int)slot, head, items_out + i * (size_t)d->w);
    }
    return ret;
}

/* Bucket by bucket, slab by slab: one pass over the lists (memory bound, so serial). */
static int cpu_dynmap_items(const void *impl, uint32_t *items_out, GhmDynmapHandle *handles_out,
                            size_t cap, size_t *count)
{
    const CpuDynmap *d = impl;
    size_t n = 0;
    for (uint32_t b = 0; b < d->n_buckets; b++)
        for (uint32_t s = atomic_load_explicit(&d->buckets[b], memory_order_relaxed); s;
             s = atomic_load_explicit(link_word(d, s, GHMI_SLAB_NEXT), memory_order_relaxed)) {
            uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
            for (int i = 0; i < d->slots; i++) {
                uint64_t h = head_load(d, slab, i);
                if (!h)
                    continue;
                if (n == cap) /* the count said otherwise: the table is corrupt */
                    return GHM_ERR_INVALID;
                copy_item(d, slab, i, h, items_out + n * (size_t)d->w);
                if (handles_out)
                    handles_out[n] = handle_of(s, i);
                n++;
            }
        }
    *count = n;
    return GHM_OK;
}

static size_t cpu_dynmap_size(const void *impl) { return ((const CpuDynmap *)impl)->items; }

static int cpu_dynmap_gc(void *impl, size_t *released)
{
    CpuDynmap *d = impl;
    size_t freed = 0;
    uint32_t nb = d->n_buckets;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(threads_of(d)) if (nb > 4096)     \
    reduction(+ : freed)
    for (uint32_t b = 0; b < nb; b++) {
        _Atomic uint32_t *link = &d->buckets[b];
        uint32_t s;
        while ((s = atomic_load_explicit(link, memory_order_relaxed)) != 0) {
            if (atomic_load_explicit(link_word(d, s, GHMI_SLAB_MASK), memory_order_relaxed)) {
                link = link_word(d, s, GHMI_SLAB_NEXT);
                continue;
            }
            atomic_store_explicit(link,
                                  atomic_load_explicit(link_word(d, s, GHMI_SLAB_NEXT),
                                                       memory_order_relaxed),
                                  memory_order_relaxed);
            ghmi_slab_release(&d->alloc, s);
            freed++;
        }
    }
    *released = freed;
    return GHM_OK;
}

static int cpu_dynmap_stats(const void *impl, GhmDynmapStats *out)
{
    const CpuDynmap *d = impl;
    size_t total = ghmi_slab_total(&d->alloc);
    size_t used = ghmi_slab_used(&((CpuDynmap *)d)->alloc);
    memset(out, 0, sizeof *out);
    out->items = d->items;
    out->buckets = d->n_buckets;
    out->slots_per_slab = (size_t)d->slots;
    out->slabs_used = used ? used - 1 : 0; /* slab 0 is the null link */
    out->slabs_free = total - used;
    out->bytes = sizeof *d + ghmi_slab_bytes(&d->alloc) +
                 2 * (size_t)d->n_buckets * sizeof(uint32_t);
    return GHM_OK;
}

const GhmDynmapOps ghm_cpu_dynmap_ops = {
    .create = cpu_dynmap_create,
    .insert = cpu_dynmap_insert,
    .erase = cpu_dynmap_erase,
    .find = cpu_dynmap_find,
    .read = cpu_dynmap_read,
    .size = cpu_dynmap_size,
    .gc = cpu_dynmap_gc,
    .stats = cpu_dynmap_stats,
    .destroy = cpu_dynmap_destroy,
    .items = cpu_dynmap_items,
};
