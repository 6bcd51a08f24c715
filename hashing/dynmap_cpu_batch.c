/*
 * dynmap_cpu_batch.c - GhmDynmap's CPU insert and erase, a departure from the paper's (and the
 * CUDA backend's) warp per item. There every item walks its bucket's list, claims a slot with a
 * compare-and-swap and finds the batch's duplicates through a second table; on CPU threads that
 * cost each new item two walks of its list (a look-up, then the claim), a random access into the
 * duplicate table and contended atomics (docs/BENCHMARKS.md, 2026-11-26: 72 and 98 ms of a
 * 2^20-item insert's 180 on 2 cores). Here the batch is put in bucket order first
 * (dynmap_cpu_order.c), and every bucket belongs to one thread:
 *   1. plan, bucket by bucket: the batch's duplicates are found among the bucket's own items
 *      (the first occurrence leads, whatever the thread count); one walk of the list finds the
 *      leaders already stored and gives each new one the next free slot in list order, or
 *      marks it waiting for a new slab; the bucket's need is ceil(waiting / slots per slab);
 *   2. the needed slabs are reserved: the only step that can fail, before the table changes;
 *   3. write, bucket by bucket: the planned slots, then the new slabs (taken for a whole task
 *      at once, so they mostly lie side by side), filled and linked at the end of the list.
 *      Nothing is contended, so nothing needs a compare-and-swap;
 *   4. every item gets its handle (a duplicate its leader's) and its inserted flag.
 * Erase is one pass in the same order: a walk of each list finds the bucket's keys and clears
 * their slots. The bucket heads are read in order, and the entries ahead are prefetched (bucket
 * head, item, hash, then the slab the pass will touch).
 */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dynmap_cpu_internal.h"

/* The batch in bucket order, and what the plan keeps per entry (position in that order): the
 * entry of its key's leader, the leaders of each bucket listed from the bucket's first entry,
 * the handle and state of each leader, and its bucket's last slab. */
enum { STORED = 0, PLANNED = 1, WAITING = 2 }; /* found stored / a free slot / a new slab's */
enum { PLAN, WRITE, ERASE };                   /* the passes over the buckets */

typedef struct Batch {
    const uint32_t *items; /* the items (insert) or keys (erase), stride words each */
    size_t stride;
    uint64_t *hash;
    GhmiBucketOrder order;
    uint32_t *lead;      /* entry -> its leader's entry */
    uint32_t *leaders;   /* a bucket's leaders' entries, from its first entry on */
    uint32_t *tail;      /* per entry: its list's last slab where a leader waits, 0: empty list */
    GhmDynmapHandle *hd; /* per leader entry */
    uint8_t *state;      /* per leader entry */
    size_t *task_need;   /* new slabs per task of run_pass */
    size_t *task_first;  /* each task's first in slabs */
    uint32_t *slabs;     /* the new slabs, task after task */
} Batch;

static uint32_t index_at(const Batch *B, size_t p)
{
    return (uint32_t)B->order.entries[p];
}
/* The bucket of entry p (the entries are in bucket order: bucket << 32 | index). */
static uint32_t bucket_at(const Batch *B, size_t p)
{
    return (uint32_t)(B->order.entries[p] >> 32);
}
static const uint32_t *item_at(const Batch *B, size_t p)
{
    return B->items + (size_t)index_at(B, p) * B->stride;
}

static void prefetch_slab(const GhmiCpuDynmap *d, uint32_t s)
{
    const uint32_t *q = ghmi_slab_ptr(&d->alloc, s);
    __builtin_prefetch(q, 1);
    __builtin_prefetch(q + 16, 1);
}

/* Far ahead: an entry's item, hash and bucket head on their way into the cache. */
static void prefetch_far(const GhmiCpuDynmap *d, const Batch *B, size_t p)
{
    uint64_t e = B->order.entries[p];
    __builtin_prefetch(B->items + (size_t)(uint32_t)e * B->stride);
    __builtin_prefetch(B->hash + (uint32_t)e);
    __builtin_prefetch(&d->buckets[e >> 32]);
}

/* Nearer: the slab the pass will touch (the list's first to plan; the planned slot's to
 * write), its head read from the cache by now. */
static void prefetch_near(const GhmiCpuDynmap *d, const Batch *B, size_t p, int pass)
{
    if (pass == WRITE) { /* a planned slot's slab, or the last slab whose link a new one takes */
        if (B->lead[p] == p && B->state[p] == PLANNED)
            prefetch_slab(d, ghm_dynmap_handle_slab(B->hd[p]));
        else if (B->lead[p] == p && B->state[p] == WAITING && B->tail[p])
            prefetch_slab(d, B->tail[p]);
        return;
    }
    uint32_t s = atomic_load_explicit(&d->buckets[bucket_at(B, p)], memory_order_relaxed);
    if (s)
        prefetch_slab(d, s);
}

/* The bucket's entries [p, q): each one's leader (the first entry with its key; entries are in
 * batch order), compared with the leaders so far only. Returns the number of leaders. */
static size_t find_bucket_leaders(const GhmiCpuDynmap *d, Batch *B, size_t p, size_t q)
{
    size_t nl = 0;
    for (size_t j = p; j < q; j++) {
        uint64_t hj = B->hash[index_at(B, j)];
        B->lead[j] = (uint32_t)j;
        for (size_t m = 0; m < nl; m++) {
            size_t l = B->leaders[p + m];
            if (B->hash[index_at(B, l)] == hj &&
                !memcmp(item_at(B, l), item_at(B, j), (size_t)d->kw * 4u)) {
                B->lead[j] = (uint32_t)l;
                break;
            }
        }
        if (B->lead[j] == j) {
            B->leaders[p + nl++] = (uint32_t)j;
            B->hd[j] = GHM_DYNMAP_NO_HANDLE;
        }
    }
    return nl;
}

/* One walk of the list (until every leader is found): the leaders already stored get their
 * handle (state STORED); returns how many were not found. */
static size_t walk_list(const GhmiCpuDynmap *d, Batch *B, uint32_t s, const uint32_t *ldr,
                        size_t nl)
{
    size_t open = nl;
    for (; s && open;
         s = atomic_load_explicit(ghmi_dyn_link(d, s, GHMI_SLAB_NEXT), memory_order_relaxed)) {
        uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
        for (int i = 0; i < d->slots && open; i++) {
            uint64_t h = ghmi_dyn_head_load(d, slab, i);
            for (size_t m = 0; h && m < nl; m++) {
                size_t l = ldr[m];
                if (B->hd[l] != GHM_DYNMAP_NO_HANDLE)
                    continue;
                const uint32_t *key = item_at(B, l);
                if (ghmi_dyn_matches(d, slab, i, h, ghmi_dyn_want(d, key, B->hash[index_at(B, l)]),
                                     key)) {
                    B->hd[l] = ghmi_dyn_handle(s, i);
                    B->state[l] = STORED;
                    open--;
                    break;
                }
            }
        }
    }
    return open;
}

/* Plans the bucket of entries [p, q): leaders, the stored ones, a free slot of the list (in
 * list order) for each new one while they last, WAITING for the rest. Returns the new slabs
 * the bucket needs; counts its new items in *n_new. */
static size_t plan_bucket(const GhmiCpuDynmap *d, Batch *B, size_t p, size_t q, size_t *n_new)
{
    size_t nl = find_bucket_leaders(d, B, p, q);
    const uint32_t *ldr = B->leaders + p;
    uint32_t first = atomic_load_explicit(&d->buckets[bucket_at(B, p)], memory_order_relaxed);
    size_t open = walk_list(d, B, first, ldr, nl);
    *n_new += open;
    size_t m = 0;
    uint32_t last = 0; /* where the free slots ran out: the end of the list if a leader waits */
    for (uint32_t s = open ? first : 0; s && m < nl;
         s = atomic_load_explicit(ghmi_dyn_link(d, s, GHMI_SLAB_NEXT), memory_order_relaxed)) {
        uint32_t *slab = ghmi_slab_ptr(&d->alloc, s); /* in the cache since the walk */
        last = s;
        for (int i = 0; i < d->slots; i++) {
            while (m < nl && B->hd[ldr[m]] != GHM_DYNMAP_NO_HANDLE)
                m++;
            if (m == nl)
                break;
            if (ghmi_dyn_head_load(d, slab, i) == 0) {
                B->hd[ldr[m]] = ghmi_dyn_handle(s, i);
                B->state[ldr[m]] = PLANNED;
                open--;
            }
        }
    }
    for (; m < nl; m++)
        if (B->hd[ldr[m]] == GHM_DYNMAP_NO_HANDLE)
            B->state[ldr[m]] = WAITING;
    for (size_t j = p; j < q; j++)
        B->tail[j] = last; /* every entry's, for the write pass's prefetch */
    return (open + (size_t)d->slots - 1) / (size_t)d->slots;
}

/* Writes an item into a slot that no other thread touches during this insert (its bucket is
 * this thread's). */
static void write_slot(const GhmiCpuDynmap *d, uint32_t s, int slot, const uint32_t *item,
                       uint64_t head)
{
    uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
    uint32_t *rest = ghmi_dyn_rest(d, slab, slot);
    for (int j = d->hw; j < d->w; j++)
        rest[j - d->hw] = item[j];
    ghmi_dyn_head_store(d, slab, slot, head);
    _Atomic uint32_t *mask = ghmi_dyn_link(d, s, GHMI_SLAB_MASK);
    atomic_store_explicit(mask, atomic_load_explicit(mask, memory_order_relaxed) | 1u << slot,
                          memory_order_relaxed);
}

/* Writes the bucket of entries [p, q): its planned slots, then its waiting leaders into new
 * slabs linked at the end of its list. */
static void write_bucket(GhmiCpuDynmap *d, Batch *B, size_t p, size_t q, const uint32_t **slabs)
{
    uint32_t fresh = 0, prev = B->tail[p];
    int slot = d->slots;
    for (size_t j = p; j < q; j++) {
        if (B->lead[j] != j || B->state[j] == STORED)
            continue;
        if (B->state[j] == WAITING) {
            if (slot == d->slots) { /* a new slab, linked at the end of the list */
                fresh = *(*slabs)++;
                atomic_store_explicit(prev ? ghmi_dyn_link(d, prev, GHMI_SLAB_NEXT)
                                           : &d->buckets[bucket_at(B, p)],
                                      fresh, memory_order_relaxed);
                prev = fresh;
                slot = 0;
            }
            B->hd[j] = ghmi_dyn_handle(fresh, slot++);
        }
        write_slot(d, ghm_dynmap_handle_slab(B->hd[j]), (int)ghm_dynmap_handle_slot(B->hd[j]),
                   item_at(B, j), ghmi_dyn_head_of(d, item_at(B, j), B->hash[index_at(B, j)]));
    }
}

/* Erases the bucket of entries [p, q) (keys): its leaders found in one walk of the list have
 * their slot's head cleared and mask bit dropped; a slab emptied marks the bucket for the gc.
 * Returns how many. */
static size_t erase_bucket(const GhmiCpuDynmap *d, Batch *B, size_t p, size_t q)
{
    size_t nl = find_bucket_leaders(d, B, p, q), gone = 0;
    const uint32_t *ldr = B->leaders + p;
    const uint32_t b = bucket_at(B, p);
    uint32_t first = atomic_load_explicit(&d->buckets[b], memory_order_relaxed);
    walk_list(d, B, first, ldr, nl);
    for (size_t m = 0; m < nl; m++) {
        GhmDynmapHandle h = B->hd[ldr[m]];
        if (h == GHM_DYNMAP_NO_HANDLE)
            continue;
        uint32_t s = ghm_dynmap_handle_slab(h), slot = ghm_dynmap_handle_slot(h);
        uint32_t *slab = ghmi_slab_ptr(&d->alloc, s);
        ghmi_dyn_head_store(d, slab, (int)slot, 0);
        _Atomic uint32_t *mask = ghmi_dyn_link(d, s, GHMI_SLAB_MASK);
        uint32_t left = atomic_load_explicit(mask, memory_order_relaxed) & ~(1u << slot);
        atomic_store_explicit(mask, left, memory_order_relaxed);
        if (!left)
            d->dirty[b] = 1;
        gone++;
    }
    return gone;
}

/* Calls plan_bucket (PLAN), write_bucket (WRITE, taking new slabs from *slabs in turn) or
 * erase_bucket (ERASE, counting in *n_new) on every bucket of bins [b0, b1), with the entries
 * ahead prefetched. Returns the slabs planned. */
static size_t over_bins(GhmiCpuDynmap *d, Batch *B, size_t b0, size_t b1, int pass,
                        const uint32_t **slabs, size_t *n_new)
{
    enum { NEAR = 8, FAR = 16 };
    size_t lo = B->order.bin_start[b0], hi = B->order.bin_start[b1], near = lo, far = lo;
    size_t need = 0;
    for (size_t p = lo; p < hi;) {
        size_t q = p + 1;
        while (q < hi && bucket_at(B, q) == bucket_at(B, p))
            q++;
        for (; far < hi && far < q + FAR; far++)
            prefetch_far(d, B, far);
        for (; near < hi && near < q + NEAR; near++)
            prefetch_near(d, B, near, pass);
        if (pass == PLAN)
            need += plan_bucket(d, B, p, q, n_new);
        else if (pass == WRITE)
            write_bucket(d, B, p, q, slabs);
        else
            *n_new += erase_bucket(d, B, p, q);
        p = q;
    }
    return need;
}

static void batch_free(Batch *B)
{
    free(B->hash);

    ghmi_dynmap_bucket_order_free(&B->order);
    free(B->lead);
    free(B->leaders);
    free(B->tail);
    free(B->hd);
    free(B->state);
    free(B->task_need);
    free(B->task_first);
    free(B->slabs);
}

static int batch_alloc(Batch *B, size_t n)
{
    B->lead = malloc((n + 1) * sizeof *B->lead);
    B->leaders = malloc((n + 1) * sizeof *B->leaders);
    B->tail = malloc((n + 1) * sizeof *B->tail);
    B->hd = malloc((n + 1) * sizeof *B->hd);
    B->state = malloc(n + 1);
    return B->lead && B->leaders && B->tail && B->hd && B->state ? GHM_OK : GHM_ERR_NOMEM;
}

/* The passes' tasks: runs of *per bins, about 4096 entries each. */
static size_t tasks_of(const Batch *B, size_t *per)
{
    size_t n = B->order.bin_start[B->order.bins];
    *per = n > 4096 ? 4096 * B->order.bins / n : B->order.bins;
    *per = *per ? *per : 1;
    return (B->order.bins + *per - 1) / *per;
}

/* Runs a pass over the bins, a task of bins (about 4096 entries) at a time. PLAN keeps each
 * task's slab need and counts the new items in *count; WRITE takes each task's new slabs at once
 * (an atomic for up to 64 side by side) into its share of B->slabs and writes; ERASE counts the
 * erased items. Returns the slabs planned (SIZE_MAX: no memory for the per-task needs). */
static size_t run_pass(GhmiCpuDynmap *d, Batch *B, int pass, size_t *count)
{
    size_t n = B->order.bin_start[B->order.bins], need = 0, counted = 0, per;
    size_t tasks = tasks_of(B, &per);
    if (pass == PLAN && !(B->task_need = calloc(tasks + 1, sizeof *B->task_need)))
        return SIZE_MAX;
#pragma omp parallel num_threads(ghmi_dyn_threads(d)) if (n > 4096) reduction(+ : need, counted)
    {
        uint64_t rng = d->seed + (uint64_t)omp_get_thread_num() * 0x9E3779B97F4A7C15ull;
#pragma omp for schedule(dynamic, 1)
        for (size_t t = 0; t < tasks; t++) {
            size_t b1 = (t + 1) * per < B->order.bins ? (t + 1) * per : B->order.bins;
            const uint32_t *next = NULL;
            if (pass == WRITE) {
                uint32_t *mine = B->slabs + B->task_first[t];
                ghmi_slab_alloc_many(&d->alloc, &rng, mine,
                                     B->task_first[t + 1] - B->task_first[t]);
                next = mine;
            }
            size_t task_need = over_bins(d, B, t * per, b1, pass, &next, &counted);
            if (pass == PLAN) {
                B->task_need[t] = task_need;
                need += task_need;
            }
        }
    }
    *count = counted;
    return need;
}

/* Each task's first new slab in B->slabs (a prefix of the needs), and room for them all. */
static int share_slabs(Batch *B, size_t need)
{
    size_t per, tasks = tasks_of(B, &per), at = 0;
    B->task_first = malloc((tasks + 1) * sizeof *B->task_first);
    B->slabs = malloc((need + 1) * sizeof *B->slabs);
    if (!B->task_first || !B->slabs)
        return GHM_ERR_NOMEM;
    for (size_t t = 0; t < tasks; t++) {
        B->task_first[t] = at;
        at += B->task_need[t];
    }
    B->task_first[tasks] = at;
    return GHM_OK;
}

/* The batch in bucket order; each bucket planned by one thread (one walk of its list finds its
 * stored leaders and free slots); the new slabs reserved (the only failure, before any
 * change); each bucket written by one thread, so no slot is contended and none needs a
 * compare-and-swap. The paper's warps race for a bucket's slots and dedup the batch through a
 * second table; on CPU threads that cost an insert two walks of every list, one contended
 * atomic per item and a random access per item into the duplicate table (docs/BENCHMARKS.md). */
/* The batch hashed and put in bucket order. */
static int batch_make(const GhmiCpuDynmap *d, const uint32_t *rec, size_t stride, size_t n,
                      Batch *B)
{
    uint64_t *hash = malloc((n + 1) * sizeof *hash);
    *B = (Batch){.items = rec, .stride = stride, .hash = hash};
    if (!hash || batch_alloc(B, n) < 0)
        return GHM_ERR_NOMEM;
    ghmi_dyn_hash_all(d, rec, stride, n, hash);
    return ghmi_dynmap_bucket_order(hash, n, d->n_buckets, ghmi_dyn_threads(d), &B->order);
}

int ghmi_cpu_dynmap_insert(void *impl, const uint32_t *items, size_t n, GhmDynmapHandle *handles,
                           uint8_t *inserted)
{
    GhmiCpuDynmap *d = impl;
    Batch B;
    int ret = batch_make(d, items, (size_t)d->w, n, &B);
    size_t n_new = 0, none = 0, need = ret == GHM_OK ? run_pass(d, &B, PLAN, &n_new) : 0;
    if (ret == GHM_OK)
        ret = need == SIZE_MAX ? GHM_ERR_NOMEM : share_slabs(&B, need);
    if (ret == GHM_OK && (ret = ghmi_slab_reserve(&d->alloc, need)) == GHM_OK) {
        run_pass(d, &B, WRITE, &none);
        d->items += n_new;
#pragma omp parallel for schedule(static) num_threads(ghmi_dyn_threads(d)) if (n > 4096)
        for (size_t p = 0; p < n; p++) {
            uint32_t i = index_at(&B, p);
            if (handles)
                handles[i] = B.hd[B.lead[p]];
            if (inserted)
                inserted[i] = B.lead[p] == p && B.state[p] != STORED;
        }
    }
    batch_free(&B);
    return ret;
}

/* Erase in the same bucket order: one walk of each list finds the bucket's keys (a repeated key
 * erases once, its first occurrence flagged) and clears their slots, with no compare-and-swap. */
int ghmi_cpu_dynmap_erase(void *impl, const uint32_t *keys, size_t n, uint8_t *erased)
{
    GhmiCpuDynmap *d = impl;
    Batch B;
    size_t gone = 0;
    int ret = batch_make(d, keys, (size_t)d->kw, n, &B);
    if (ret == GHM_OK) {
        run_pass(d, &B, ERASE, &gone);
        d->items -= gone;
#pragma omp parallel for schedule(static) num_threads(ghmi_dyn_threads(d)) if (n > 4096)
        for (size_t p = 0; p < n; p++)
            if (erased)
                erased[index_at(&B, p)] = B.lead[p] == p && B.hd[p] != GHM_DYNMAP_NO_HANDLE;
    }
    batch_free(&B);
    return ret;
}
