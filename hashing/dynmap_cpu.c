/*
 * dynmap_cpu.c - GhmDynmap on the CPU backend, the Atomic64 and 32- and 8-bit
 * acceleration-hash variants (Molenaar and Eisemann 2024, section 4.2; layouts in
 * dynmap_internal.h). OpenMP threads play the paper's warps, one key per thread for finds. The
 * variants share one code path: a slot's head is the item's first 8 bytes (Atomic64; 4 for
 * one-word items) or its key's tag (32 bits Accel32, 8 bits Accel8), and is what a search
 * compares first.
 * Lookups go in groups of 16 with the bucket and first-slab cache misses prefetched.
 *
 * insert and erase: dynmap_cpu_batch.c (the batch in bucket order, each bucket planned and
 * written by one thread). An erased slot is reused by later inserts, its slab stays linked.
 * gc: per bucket that an erase left dirty, one thread unlinks the slabs whose mask is zero and
 * releases them. erase_if: per bucket, one thread tests its items and erases those picked.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "dynmap_cpu_internal.h"

/* The stored item with this key in the list starting at slab s: its handle, or
 * GHM_DYNMAP_NO_HANDLE; its head in *head. */
static GhmDynmapHandle lookup_from(const GhmiCpuDynmap *d, const uint32_t *key, uint64_t hash,
                                   uint32_t s, uint64_t *head)
{
    GhmiWant want = ghmi_dyn_want(d, key, hash);
    while (s) {
        uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
        for (int i = 0; i < d->slots; i++) {
            uint64_t h = ghmi_dyn_head_load(d, slab, i);
            if (h && ghmi_dyn_matches(d, slab, i, h, want, key)) {
                if (head)
                    *head = h;
                return ghmi_dyn_handle(s, i);
            }
        }
        s = atomic_load_explicit(ghmi_dyn_link(d, s, GHMI_SLAB_NEXT), memory_order_acquire);
    }
    return GHM_DYNMAP_NO_HANDLE;
}

/* Looks up a group of up to GROUP keys (keys + i * stride, hashes hash[i]) with the memory
 * latency overlapped: every bucket is prefetched, then every first slab, then each list is
 * walked. Handles to out[i], heads to heads[i]. A lookup is two dependent cache misses (the
 * bucket, the slab); one at a time they, not the comparisons, set the pace. */
enum { GROUP = 16 };

static void lookup_group(const GhmiCpuDynmap *d, const uint32_t *keys, size_t stride,
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

void ghmi_dyn_hash_all(const GhmiCpuDynmap *d, const uint32_t *rec, size_t stride, size_t n,
                       uint64_t *hash)
{
#pragma omp parallel for schedule(static) num_threads(ghmi_dyn_threads(d)) if (n > 4096)
    for (size_t i = 0; i < n; i++)
        hash[i] = ghmi_dynmap_hash(rec + i * stride, d->kw, d->seed);
}

/* --- the op table ---------------------------------------------------------------------------- */

static void cpu_dynmap_destroy(void *impl)
{
    GhmiCpuDynmap *d = impl;
    if (!d)
        return;
    ghmi_slab_alloc_free(&d->alloc);
    free(d->buckets);
    free(d->dirty);
    free(d);
}

static int cpu_dynmap_create(GhmContext *ctx, const GhmDynmapOptions *opt, void **impl)
{
    GhmiCpuDynmap *d = calloc(1, sizeof *d);
    if (!d)
        return GHM_ERR_NOMEM;
    d->ctx = ctx;
    d->w = opt->item_words;
    d->kw = opt->key_words;
    GhmiDynLayout l = ghmi_dynmap_layout(d->w, opt->variant);
    d->slots = l.slots;
    d->hw = l.hw;
    d->hb = l.hb;
    d->rest = l.rest;
    d->n_buckets = ghmi_dynmap_buckets(opt->capacity, l.slots);
    d->seed = ghmi_mix64(ctx->seed ^ 0xD1B54A32D192ED03ull);
    d->buckets = calloc(d->n_buckets, sizeof *d->buckets);
    d->dirty = calloc(d->n_buckets, 1);
    if (!d->buckets || !d->dirty) {
        cpu_dynmap_destroy(d);
        return GHM_ERR_NOMEM;
    }
    *impl = d;
    return GHM_OK;
}

static int cpu_dynmap_find(const void *impl, const uint32_t *keys, size_t n,
                           GhmDynmapHandle *handles, uint32_t *items_out)
{
    const GhmiCpuDynmap *d = impl;
    size_t kw = (size_t)d->kw, w = (size_t)d->w, groups = (n + GROUP - 1) / GROUP;
#pragma omp parallel for schedule(dynamic, 16) num_threads(ghmi_dyn_threads(d)) if (n > 4096)
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
                ghmi_dyn_copy_item(d, ghmi_slab_ptr(&d->alloc, ghm_dynmap_handle_slab(hd[i])),
                                   (int)ghm_dynmap_handle_slot(hd[i]), heads[i], out);
        }
    }
    return GHM_OK;
}

static int cpu_dynmap_read(const void *impl, const GhmDynmapHandle *handles, size_t n,
                           uint32_t *items_out)
{
    const GhmiCpuDynmap *d = impl;
    int ret = GHM_OK;
    for (size_t i = 0; i < n; i++) {
        uint32_t s = ghm_dynmap_handle_slab(handles[i]), slot = ghm_dynmap_handle_slot(handles[i]);
        uint64_t head = 0;
        if (slot < (uint32_t)d->slots && ghmi_slab_live(&d->alloc, s))
            head = ghmi_dyn_head_load(d, ghmi_slab_ptr(&d->alloc, s), (int)slot);
        if (!head) {
            memset(items_out + i * (size_t)d->w, 0, (size_t)d->w * sizeof *items_out);
            ret = GHM_ERR_INVALID;
            continue;
        }
        ghmi_dyn_copy_item(d, ghmi_slab_ptr(&d->alloc, s), (int)slot, head,
                           items_out + i * (size_t)d->w);
    }
    return ret;
}

/* Bucket by bucket, slab by slab: one pass over the lists (memory bound, so serial). */
static int cpu_dynmap_items(const void *impl, uint32_t *items_out, GhmDynmapHandle *handles_out,
                            size_t cap, size_t *count)
{
    const GhmiCpuDynmap *d = impl;
    size_t n = 0;
    for (uint32_t b = 0; b < d->n_buckets; b++)
        for (uint32_t s = atomic_load_explicit(&d->buckets[b], memory_order_relaxed); s;
             s = atomic_load_explicit(ghmi_dyn_link(d, s, GHMI_SLAB_NEXT), memory_order_relaxed)) {
            uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
            for (int i = 0; i < d->slots; i++) {
                uint64_t h = ghmi_dyn_head_load(d, slab, i);
                if (!h)
                    continue;
                if (n == cap) /* the count said otherwise: the table is corrupt */
                    return GHM_ERR_INVALID;
                ghmi_dyn_copy_item(d, slab, i, h, items_out + n * (size_t)d->w);
                if (handles_out)
                    handles_out[n] = ghmi_dyn_handle(s, i);
                n++;
            }
        }
    *count = n;
    return GHM_OK;
}

static size_t cpu_dynmap_size(const void *impl)
{
    return ((const GhmiCpuDynmap *)impl)->items;
}

/* A pass over every bucket (erase_if, gc) goes in chunks of BUCKET_CHUNK buckets on the
 * context's threads, the first slab of the list BUCKET_AHEAD buckets on prefetched (a list's
 * first slab is a cache miss). */
enum { BUCKET_CHUNK = 1024, BUCKET_AHEAD = 8 };

static uint32_t chunk_end(uint32_t c, uint32_t n_buckets)
{
    uint64_t end = ((uint64_t)c + 1) * BUCKET_CHUNK;
    return end < n_buckets ? (uint32_t)end : n_buckets;
}

/* Prefetches word `word` on of the first slab of bucket b + BUCKET_AHEAD, where that bucket is
 * before b1 (its chunk's end) and, with `dirty_only`, marked for the gc. */
static void prefetch_ahead(const GhmiCpuDynmap *d, uint32_t b, uint32_t b1, int dirty_only,
                           int word)
{
    uint32_t a = b + BUCKET_AHEAD;
    if (a >= b1 || (dirty_only && !d->dirty[a]))
        return;
    uint32_t s = atomic_load_explicit(&d->buckets[a], memory_order_relaxed);
    if (s)
        __builtin_prefetch(ghmi_slab_ptr(&d->alloc, s) + word);
}

/* Erases the items of bucket b's list that test() picks, by the one thread that owns the
 * bucket: head cleared, mask bit dropped, the bucket marked for the gc where a slab empties.
 * Returns how many. */
static size_t erase_if_bucket(GhmiCpuDynmap *d, uint32_t b, GhmDynmapTest test, void *user)
{
    uint32_t item[GHM_DYNMAP_MAX_WORDS];
    size_t gone = 0;
    for (uint32_t s = atomic_load_explicit(&d->buckets[b], memory_order_relaxed); s;
         s = atomic_load_explicit(ghmi_dyn_link(d, s, GHMI_SLAB_NEXT), memory_order_relaxed)) {
        uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
        _Atomic uint32_t *mask = ghmi_dyn_link(d, s, GHMI_SLAB_MASK);
        uint32_t left = atomic_load_explicit(mask, memory_order_relaxed), had = left;
        for (uint32_t m = had; m; m &= m - 1) {
            int slot = __builtin_ctz(m);
            ghmi_dyn_copy_item(d, slab, slot, ghmi_dyn_head_load(d, slab, slot), item);
            if (!test(item, user))
                continue;
            ghmi_dyn_head_store(d, slab, slot, 0);
            left &= ~(1u << slot);
            gone++;
        }
        if (left != had) {
            atomic_store_explicit(mask, left, memory_order_relaxed);
            if (!left)
                d->dirty[b] = 1;
        }
    }
    return gone;
}

/* One pass over the buckets, a bucket's list by one thread: no listing, no key lookups. */
static int cpu_dynmap_erase_if(void *impl, GhmDynmapTest test, void *user, size_t *erased)
{
    GhmiCpuDynmap *d = impl;
    size_t gone = 0;
    uint32_t nb = d->n_buckets, chunks = (nb + BUCKET_CHUNK - 1) / BUCKET_CHUNK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(ghmi_dyn_threads(d)) if (nb > 4096) \
    reduction(+ : gone)
    for (uint32_t c = 0; c < chunks; c++) {
        uint32_t b1 = chunk_end(c, nb);
        for (uint32_t b = c * BUCKET_CHUNK; b < b1; b++) {
            prefetch_ahead(d, b, b1, 0, 0);
            gone += erase_if_bucket(d, b, test, user);
        }
    }
    d->items -= gone;
    *erased = gone;
    return GHM_OK;
}

/* A thread's slabs on their way back to the allocator, returned a batch at a time. */
typedef struct Released {
    uint32_t slab[256];
    size_t held, total;
} Released;

static void release_held(GhmiCpuDynmap *d, Released *r)
{
    ghmi_slab_release_many(&d->alloc, r->slab, r->held);
    r->total += r->held;
    r->held = 0;
}

/* Unlinks bucket b's empty slabs. */
static void unlink_empty(GhmiCpuDynmap *d, uint32_t b, Released *r)
{
    _Atomic uint32_t *link = &d->buckets[b];
    uint32_t s;
    while ((s = atomic_load_explicit(link, memory_order_relaxed)) != 0) {
        if (atomic_load_explicit(ghmi_dyn_link(d, s, GHMI_SLAB_MASK), memory_order_relaxed)) {
            link = ghmi_dyn_link(d, s, GHMI_SLAB_NEXT);
            continue;
        }
        atomic_store_explicit(
            link, atomic_load_explicit(ghmi_dyn_link(d, s, GHMI_SLAB_NEXT), memory_order_relaxed),
            memory_order_relaxed);
        r->slab[r->held++] = s;
        if (r->held == sizeof r->slab / sizeof *r->slab)
            release_held(d, r);
    }
}

/* Per dirty bucket, one thread unlinks the empty slabs (the half line of the next link and mask
 * prefetched ahead); they go back to the allocator a batch at a time. Only an erase leaves an
 * empty slab linked, and it marks the bucket: the others are not walked (on the CUDA backend
 * the same cut a gc 2-6x, 2026-12-01). */
static int cpu_dynmap_gc(void *impl, size_t *released)
{
    GhmiCpuDynmap *d = impl;
    size_t freed = 0;
    uint32_t nb = d->n_buckets, chunks = (nb + BUCKET_CHUNK - 1) / BUCKET_CHUNK;
#pragma omp parallel num_threads(ghmi_dyn_threads(d)) if (nb > 4096) reduction(+ : freed)
    {
        Released r = {.held = 0};
#pragma omp for schedule(dynamic, 1) nowait
        for (uint32_t c = 0; c < chunks; c++) {
            uint32_t b1 = chunk_end(c, nb);
            for (uint32_t b = c * BUCKET_CHUNK; b < b1; b++) {
                prefetch_ahead(d, b, b1, 1, 16);
                if (d->dirty[b]) {
                    d->dirty[b] = 0;
                    unlink_empty(d, b, &r);
                }
            }
        }
        release_held(d, &r);
        freed += r.total;
    }
    *released = freed;
    return GHM_OK;
}

static int cpu_dynmap_stats(const void *impl, GhmDynmapStats *out)
{
    const GhmiCpuDynmap *d = impl;
    size_t total = ghmi_slab_total(&d->alloc);
    size_t used = ghmi_slab_used(&((GhmiCpuDynmap *)d)->alloc);
    memset(out, 0, sizeof *out);
    out->items = d->items;
    out->buckets = d->n_buckets;
    out->slots_per_slab = (size_t)d->slots;
    out->slabs_used = used ? used - 1 : 0; /* slab 0 is the null link */
    out->slabs_free = total - used;
    out->bytes = sizeof *d + ghmi_slab_bytes(&d->alloc) +
                 (size_t)d->n_buckets * (sizeof(uint32_t) + 1); /* heads and dirty flags */
    return GHM_OK;
}

const GhmDynmapOps ghm_cpu_dynmap_ops = {
    .create = cpu_dynmap_create,
    .insert = ghmi_cpu_dynmap_insert,
    .erase = ghmi_cpu_dynmap_erase,
    .find = cpu_dynmap_find,
    .read = cpu_dynmap_read,
    .size = cpu_dynmap_size,
    .gc = cpu_dynmap_gc,
    .stats = cpu_dynmap_stats,
    .destroy = cpu_dynmap_destroy,
    .items = cpu_dynmap_items,
    .erase_if = cpu_dynmap_erase_if,
};
