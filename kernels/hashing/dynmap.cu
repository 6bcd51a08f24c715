/*
 * dynmap.cu - GhmDynmap on the CUDA backend: the Atomic64 and 32- and 8-bit acceleration-hash
 * variants of Molenaar and Eisemann 2024 (section 4.2), a thread per item (dynmap_ref.cuh says
 * why not the paper's warp), the same phases and answers as the CPU backend
 * (hashing/dynmap_cpu.c).
 * This file has create and insert; dynmap_leaders.cu its steps 1-2 (erase's too), dynmap_ops.cu
 * the rest.
 *
 * insert   1. hash every item (and flag one whose first 8 bytes are zero: device arrays are
 *             not checked by the API layer);
 *          2. the batch's duplicates: an open-addressing table of batch indices keyed by the
 *             item's key where equal keys keep the smallest index, so each group's "leader"
 *             is its first occurrence (the paper's second table and leader rule); one kernel
 *             does steps 1 and 2;
 *          3. a thread looks each leader up; an absent one is new and, in the same walk, the
 *             thread has seen its list's first slab with an empty slot and its last slab. It
 *             claims the first empty slot from there by a compare-and-swap of the slot's head
 *             (the item's first 8 bytes, or its 32-bit tag), writes the rest and sets the
 *             slot's mask bit. Look-ups beside the claims compare only slots whose bit is set
 *             (dynmap_ref.cuh). An item that reaches the end of its list takes a slab of the
 *             call's pool (handed out before the kernel: as many as the batch fills if all its
 *             items are new, the allocator grown to that where memory allows), links it after
 *             the list's last slab by a compare-and-swap of the link (one that loses claims in
 *             the winner's slab) and claims a slot in it; after the kernel the pool's unused
 *             slabs go back. Once the pool is spent an item is "left" and takes a rank among
 *             its bucket's left items (an atomic count per bucket); the host reads how many;
 *          4. where some are left, the first left item of each bucket turns the count into the
 *             bucket's first entry in the list of slabs to hand out (a scan per block, one
 *             atomic per block); the host reads the total, grows the allocator if needed (the
 *             only step that can run out of memory; a failure undoes the claims) and hands the
 *             slabs out (dynmap_alloc.cu);
 *          5. a thread per left item writes it into new slab rank / slots, slot rank % slots;
 *             the first item of a new slab links it (after the list's end, or after the one
 *             before it in the bucket's new slabs);
 *          6. duplicates and stored items get the leader's or the stored item's handle.
 *          Until 2026-11-27 the look-up and the claims were two walks (a look-up beside the
 *          claims could match a head just claimed over an erased item's stale words: the mask
 *          bit now rules that out), and left items were stored by a warp each that took a
 *          slab from the allocator and linked it by a compare-and-swap: warps searched for
 *          free slabs and raced for links (slow runs of 13-17 ms; 7.2-7.4 ms at best for 2^23
 *          six-word items into a table of 2^25 on the H100). Then, until 2026-12-02, every new
 *          slab came from the host's count (steps 4-5 for every item whose list was full): a
 *          second pass over the batch that took a fifth of the insert's time. The pool keeps
 *          what made that pass fast: no thread searches for a free slab, and a race for a link
 *          costs the loser one slab given back (docs/BENCHMARKS.md).
 * erase    hash, leaders, and a thread per leader clears its slot's head and mask bit; one
 *          that empties its slab marks the bucket dirty.
 * find     a thread per key: bucket, slabs, handle and item.
 * gc       a thread per dirty bucket unlinks the slabs whose mask is 0 and returns them.
 * Inputs and outputs may be host or device memory (staged as in hash_cuda_internal.cuh).
 */
#include <string.h>

#include <cub/block/block_scan.cuh>
#include <cuda/atomic>

#include "dynmap_cuda_internal.cuh"
#include "hash_internal.h"
#include "warp_take.cuh"

/* --- kernels ------------------------------------------------------------------------------- */

/* Fills slot's head if it is empty, by a compare-and-swap: whether this thread did. An Accel8
 * tag shares its word with three others, so a swap that fails on another slot's byte is tried
 * again while this slot's byte is empty (CUDA has no byte-wide compare-and-swap). */
static __device__ bool claim_head(const DynRef &r, uint32_t *slab, int slot,
                                  unsigned long long head)
{
    if (r.hb == 1) {
        uint32_t *word = slab + slot / 4, shift = 8 * (slot % 4), old = __ldcg(word);
        while (!(old >> shift & 0xffu)) {
            uint32_t seen = atomicCAS(word, old, old | (uint32_t)head << shift);
            if (seen == old)
                return true;
            old = seen;
        }
        return false;
    }
    if (r.hb == 8)
        return atomicCAS((unsigned long long *)(slab + 2 * slot), 0ull, head) == 0;
    return atomicCAS(slab + slot, 0u, (uint32_t)head) == 0;
}

/* Claims the first empty slot of a list from slab sp.first on (the look-up's first slab with
 * room, whose empty slots and next link sp holds; `look_first`: a slab not looked at yet), by a
 * compare-and-swap of the slot's head (the item's first 8 bytes, or its 32-bit tag), writes
 * the item's other words, then its mask bit (a release, after the words: a look-up compares
 * only slots whose bit is set). The handle, or NO_HANDLE at the end of the list, whose last
 * slab is then in *last. Never allocates. */
static __device__ GhmDynmapHandle claim_slot(const DynRef &r, const uint32_t *item,
                                             uint64_t hash, DynSpots sp, bool look_first,
                                             uint32_t *last)
{
    unsigned long long head = dyn_head_of(r, item, hash);
    DynWant none = {0, 0, 0};
    DynLook k = {0, sp.empties, sp.first_next, 0};
    for (uint32_t s = sp.first; s;) {
        uint32_t *slab = dyn_slab(r, s);
        if (s != sp.first || look_first)
            k = dyn_look(r, slab, none, true);
        for (; k.empties; k.empties &= k.empties - 1) {
            int slot = __ffs(k.empties) - 1;
            if (!claim_head(r, slab, slot, head))
                continue;
            for (int j = r.hw; j < r.w; j++)
                slab[dyn_word_of(r, slot, j)] = __ldg(&item[j]);
            /* a release: the words before the bit (H200: 4.38 ms against 4.50 with a fence,
             * 2^23 inserts by teams, 2026-11-27) */
            cuda::atomic_ref<uint32_t, cuda::thread_scope_device> mask(slab[DYN_MASK]);
            mask.fetch_or(1u << slot, cuda::memory_order_release);
            return dyn_handle(s, slot);
        }
        *last = s;
        s = k.next;
    }
    return GHM_DYNMAP_NO_HANDLE;
}

/* A slab of the call's pool (dynmap_cuda_internal.cuh's DynPool), one atomic for the lanes of a
 * warp that ask together; 0 once the pool is spent. */
static __device__ uint32_t pool_take(const DynRef &r, const DynPool &pool)
{
    if (!pool.n)
        return 0; /* no pool (an empty table): not one atomic on the counter per item */
    unsigned long long at = ghmi_warp_take(&r.counters[DYN_C_POOL]);
    return at < pool.n ? pool.slabs[at] : 0;
}

/* Past the end of its list (*last; 0: an empty bucket) an item links a slab of the pool there
 * by a compare-and-swap of the link and claims a slot from there on (claim_slot): a thread
 * that loses the link claims in the winner's slab, and links its own further on if that list
 * fills up. A slab taken and never linked goes to the pool's spares, which the host gives
 * back. The handle, or NO_HANDLE once the pool is spent (the item is left for the host's
 * slabs). Tried and slower (2^23 six-word inserts, H200, 2026-12-02): storing the item in the
 * slab before linking it, behind a fence (+0.2-0.3 ms), and claiming in the slab just linked
 * without looking at it (its compare-and-swap then misses in L2: +0.3-0.6 ms). */
static __device__ GhmDynmapHandle append_slot(const DynRef &r, const uint32_t *item,
                                              uint64_t hash, const DynPool &pool,
                                              uint32_t *last)
{
    GhmDynmapHandle hd = GHM_DYNMAP_NO_HANDLE;
    uint32_t mine = 0;
    while (hd == GHM_DYNMAP_NO_HANDLE && (mine || (mine = pool_take(r, pool)))) {
        uint32_t *link = *last ? dyn_slab(r, *last) + DYN_NEXT
                               : &r.buckets[dyn_bucket(r, hash)];
        uint32_t seen = atomicCAS(link, 0u, mine);
        DynSpots from = {seen ? seen : mine, 0, 0, 0};
        if (!seen)
            mine = 0;
        hd = claim_slot(r, item, hash, from, true, last);
    }
    if (mine)
        pool.spares[atomicAdd(&r.counters[DYN_C_SPARES], 1ull)] = mine;
    return hd;
}

/* Insert step 3, a thread per item. h[i]: a stored item's handle, a new item's claimed slot,
 * or NO_HANDLE (a new item left for a new slab); fresh[i]: new. A left item takes rank[i], its
 * rank among its bucket's left items, and tail[i], a slab of its list (the write links after
 * the list's end from there). `empty_table`: no slab was linked anywhere, so no look-up is
 * needed. Stored and left items are tallied per block. */
template <int HB>
static __global__ void plan_kernel(DynRef ref, const uint32_t *items, size_t n,
                                   const uint64_t *hash, const uint32_t *leader,
                                   int empty_table, DynPool pool, GhmDynmapHandle *h,
                                   uint8_t *fresh, uint32_t *counts, uint32_t *rank,
                                   uint32_t *tail)
{
    const DynRef r = dyn_fixed<HB>(ref);
    /* Through L1 (set by the hash kernel before): every thread reading it from one L2 line
     * made that line a queue (10 of 24 ms of a 2^25 fill's claims in ncu, 2026-11-26). */
    if (__ldg(&r.counters[DYN_C_BAD]))
        return; /* the call fails with nothing changed (every thread of the block returns) */
    unsigned stored = 0, left = 0;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        GhmDynmapHandle hd = GHM_DYNMAP_NO_HANDLE;
        uint8_t is_new = 0;
        if (leader[i] == i) {
            const uint32_t *item = items + i * r.w;
            DynSpots sp = {0, 0, 0, 0};
            if (!empty_table)
                hd = dyn_lookup(r, item, hash[i], true, &sp);
            if (hd == GHM_DYNMAP_NO_HANDLE) {
                is_new = 1;
                uint32_t last = sp.tail;
                if (sp.first)
                    hd = claim_slot(r, item, hash[i], sp, false, &last);
                if (hd == GHM_DYNMAP_NO_HANDLE)
                    hd = append_slot(r, item, hash[i], pool, &last);
                if (hd != GHM_DYNMAP_NO_HANDLE) {
                    stored = 1;
                } else {
                    left = 1;
                    rank[i] = atomicAdd(&counts[dyn_bucket(r, hash[i])], 1u);
                    tail[i] = last;
                }
            }
        }
        h[i] = hd;
        fresh[i] = is_new;
    }
    if (unsigned sum = dyn_block_sum(stored))
        atomicAdd(&r.counters[DYN_C_ITEMS], (unsigned long long)sum);
    __syncthreads(); /* the first sum is read (maybe by every thread) before the next reset */
    if (unsigned sum = dyn_block_sum(left))
        atomicAdd(&r.counters[DYN_C_LEFT], (unsigned long long)sum);
}

/* Whether item i is new and left for a new slab. */
static __device__ __forceinline__ bool left_item(const GhmDynmapHandle *h, const uint8_t *fresh,
                                                 size_t i)
{
    return fresh[i] && h[i] == GHM_DYNMAP_NO_HANDLE;
}

/* Insert step 4: the first left item of each bucket turns the bucket's count of left items
 * into its first entry in the list of slabs to hand out (the bucket's new slabs are
 * consecutive there); the block's entries are taken by one atomic on the need counter. */
static __global__ void first_slab_kernel(DynRef r, size_t n, const uint64_t *hash,
                                         const GhmDynmapHandle *h, const uint8_t *fresh,
                                         const uint32_t *rank, uint32_t *counts)
{
    typedef cub::BlockScan<uint32_t, THREADS> Scan;
    __shared__ typename Scan::TempStorage temp;
    __shared__ uint32_t block_first;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    uint32_t slabs = 0, b = 0, before, total;
    if (i < n && left_item(h, fresh, i) && rank[i] == 0) {
        b = dyn_bucket(r, hash[i]);
        slabs = (counts[b] + r.slots - 1) / r.slots;
    }
    Scan(temp).ExclusiveSum(slabs, before, total);
    if (threadIdx.x == 0 && total)
        block_first = (uint32_t)atomicAdd(&r.counters[DYN_C_NEED], (unsigned long long)total);
    __syncthreads();
    if (slabs)
        counts[b] = block_first + before; /* read here by this thread only */
}

/* Insert step 5: a thread per left item writes it into its new slab (the slabs handed out are
 * `taken`, the bucket's first at counts[b]): its head, its other words, its mask bit; the
 * first item of a slab links it (`appended`: the plan linked slabs of its pool, maybe after
 * tail[i]). Nothing else reads these slabs during the kernel. Items stored are tallied per
 * block. */
template <int HB>
static __global__ void write_kernel(DynRef ref, const uint32_t *items, size_t n,
                                    const uint64_t *hash, const uint8_t *fresh,
                                    const uint32_t *rank, const uint32_t *tail,
                                    const uint32_t *counts, const uint32_t *taken,
                                    int appended, GhmDynmapHandle *h)
{
    const DynRef r = dyn_fixed<HB>(ref);
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const bool left = i < n && left_item(h, fresh, i);
    if (left) {
        uint32_t b = dyn_bucket(r, hash[i]), first = counts[b], k = rank[i];
        uint32_t s = taken[first + k / r.slots];
        int slot = (int)(k % r.slots);
        if (slot == 0) {
            uint32_t *link = k ? dyn_slab(r, taken[first + k / r.slots - 1]) + DYN_NEXT
                             : tail[i] ? dyn_slab(r, tail[i]) + DYN_NEXT
                                       : &r.buckets[b];
            while (appended && !k && *link) /* slabs the plan linked after tail[i] */
                link = dyn_slab(r, *link) + DYN_NEXT;
            *link = s;
        }
        h[i] = dyn_handle(s, slot);
        uint32_t *slab = dyn_slab(r, s);
        const uint32_t *item = items + i * r.w;
        dyn_store_head(r, slab, slot, dyn_head_of(r, item, hash[i]));
        for (int j = r.hw; j < r.w; j++)
            slab[dyn_word_of(r, slot, j)] = item[j];
        atomicOr(slab + DYN_MASK, 1u << slot);
    }
    if (unsigned sum = dyn_block_sum(left))
        atomicAdd(&r.counters[DYN_C_ITEMS], (unsigned long long)sum);
}

/* A failed insert's undo after its claims (its slabs could not be had, or a launch failed
 * before the write): the items the claims stored are erased again, so that the table is as
 * before the call. A claimed item is a new one (fresh) with a handle. */
static __global__ void unclaim_kernel(DynRef r, size_t n, const uint64_t *hash,
                                      const uint8_t *fresh, const GhmDynmapHandle *h)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const bool claimed = i < n && fresh[i] && h[i] != GHM_DYNMAP_NO_HANDLE;
    if (claimed) {
        uint32_t *slab = dyn_slab(r, (uint32_t)(h[i] >> 32));
        int slot = (int)(uint32_t)h[i];
        dyn_clear_bit(r, slab, slot, dyn_bucket(r, hash[i]));
        dyn_store_head(r, slab, slot, 0);
    }
    if (unsigned sum = dyn_block_sum(claimed))
        atomicAdd(&r.counters[DYN_C_ITEMS], 0ull - sum);
}

/* Insert step 6. */
static __global__ void finish_kernel(size_t n, const uint32_t *leader, GhmDynmapHandle *h)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n && leader[i] != i)
        h[i] = h[leader[i]];
}

/* --- the host side ------------------------------------------------------------------------ */

int ghmi_dyn_stage_in(GhmContext *ctx, const void *src, size_t bytes, Staged *st)
{
    const void *dev;
    int ret = ghmi_cuda_input(ctx, src, bytes, &dev, &st->owned);
    st->dev = (void *)dev;
    return ret;
}

/* An output: dst itself when it is device memory, else a temporary; dst NULL: a temporary the
 * kernels write anyway. */
int ghmi_dyn_stage_out(GhmContext *ctx, void *dst, size_t bytes, Staged *st)
{
    if (dst)
        return ghmi_cuda_output(ctx, dst, bytes, &st->dev, &st->owned);
    st->dev = NULL;
    int ret = ghmi_device_alloc(ctx, bytes, &st->owned);
    st->dev = st->owned;
    return ret;
}

/* Queues the copy of a staged output back to dst (none when dst is device memory or NULL). */
int ghmi_dyn_queue_back(GhmContext *ctx, void *dst, const Staged *st, size_t bytes)
{
    if (!dst || !st->owned || st->dev == dst || !bytes)
        return GHM_OK;
    return GHM_CUDA(cudaMemcpyAsync(dst, st->owned, bytes, cudaMemcpyDeviceToHost,
                                    ghm_cuda_stream(ctx)));
}

/* Queues the copy of the device counters to d->host_counters and waits for the stream. */
int ghmi_dyn_read_counters(CudaDynmap *d)
{
    cudaStream_t s = ghm_cuda_stream(d->ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(d->host_counters, d->ref.counters,
                                       sizeof d->host_counters, cudaMemcpyDeviceToHost, s));
    int sync = GHM_CUDA(ghm_cuda_wait(s));
    if (ret >= 0 && sync >= 0)
        d->items = (size_t)d->host_counters[DYN_C_ITEMS];
    return ret < 0 ? ret : sync;
}

/* Zeroes the per-call counters (need, new, bad, fail, released). */
int ghmi_dyn_reset_counters(CudaDynmap *d)
{
    size_t bytes = DYN_PER_CALL * sizeof(unsigned long long);
    return GHM_CUDA(cudaMemsetAsync(d->ref.counters, 0, bytes, ghm_cuda_stream(d->ctx)));
}

void ghmi_dyn_destroy(void *impl)
{
    CudaDynmap *d = (CudaDynmap *)impl;
    if (!d)
        return;
    ghmi_dyn_alloc_free(d);
    ghmi_device_free(d->ctx, d->ref.buckets); /* buckets, counts, counters, dirty: a block */
    free(d);
}

int ghmi_dyn_create(GhmContext *ctx, const GhmDynmapOptions *opt, void **impl)
{
    CudaDynmap *d = (CudaDynmap *)calloc(1, sizeof *d);
    if (!d)
        return GHM_ERR_NOMEM;
    d->ctx = ctx;
    DynRef *r = &d->ref;
    GhmiDynLayout l = ghmi_dynmap_layout(opt->item_words, opt->variant);
    r->w = opt->item_words;
    r->kw = opt->key_words;
    r->slots = l.slots;
    r->hw = l.hw;
    r->hb = l.hb;
    r->rest = l.rest;
    r->n_buckets = ghmi_dynmap_buckets(opt->capacity, l.slots);
    r->seed = ghmi_mix64(ctx->seed ^ 0xD1B54A32D192ED03ull);
    int ret = GHM_OK;
    GhmiCarve c = {NULL, 0};
    size_t nb = r->n_buckets;
    for (int phase = 0; phase < 2 && ret >= 0; phase++) {
        r->buckets = (uint32_t *)ghmi_carve(&c, nb * 4);
        d->counts = (uint32_t *)ghmi_carve(&c, nb * 4);
        r->counters = (unsigned long long *)ghmi_carve(&c, DYN_COUNTERS * 8);
        r->dirty = (uint8_t *)ghmi_carve(&c, nb);
        if (phase == 0) {
            void *block = NULL;
            size_t bytes = c.used;
            if ((ret = ghmi_device_alloc(ctx, bytes, &block)) >= 0)
                ret = GHM_CUDA(cudaMemsetAsync(block, 0, bytes, ghm_cuda_stream(ctx)));
            d->block_bytes = bytes;
            c = ghmi_carve_start(block);
            if (ret < 0)
                ghmi_device_free(ctx, block);
        }
    }
    if (ret < 0) {
        r->buckets = NULL;
        ghmi_dyn_destroy(d);
        return ret;
    }
    *impl = d;
    return GHM_OK;
}

/* An insert's scratch beyond the hashes and leaders: ranks and tails of the left items, the
 * pool, the slabs handed out for the left items. */
typedef struct Plan {
    uint32_t *rank, *tail, *taken;
    DynPool pool;
} Plan;

static void plan_layout(GhmiCarve *c, Plan *p, size_t n, size_t pool_n)
{
    p->rank = (uint32_t *)ghmi_carve(c, n * 4);
    p->tail = (uint32_t *)ghmi_carve(c, n * 4);
    p->pool.slabs = (const uint32_t *)ghmi_carve(c, pool_n * 4);
    p->pool.spares = (uint32_t *)ghmi_carve(c, pool_n * 4);
    p->pool.n = pool_n;
}

/* The pool of an insert of n items: the slabs they fill if all are new (n / slots), the
 * allocator grown to that where device memory allows (a failure to grow only makes the pool
 * what is free; the items it leaves get slabs the host counts, which may fail the call). */
static int pool_size(CudaDynmap *d, size_t n, size_t *out)
{
    size_t want = n / (size_t)d->ref.slots + 1, used = (size_t)d->host_counters[DYN_C_USED];
    int ret = ghmi_dyn_reserve(d, want, used, 1);
    if (ret < 0 && ret != GHM_ERR_NOMEM && ret != GHM_ERR_TOO_LARGE)
        return ret;
    size_t free_now = ghmi_dyn_free_slabs(d, used);
    *out = want < free_now ? want : free_now;
    return GHM_OK;
}

/* The plan's scratch, and its pool handed out (queued). A table that holds no slab
 * (`empty`) gets no pool: there every new item goes to a new slab, which the host's count and
 * the write pass store faster than appends in the look-up's kernel (a fill of 2^25 six-word
 * items 21-23 ms against 25-27 with a pool, H200, 2026-12-02). */
static int plan_scratch(CudaDynmap *d, size_t n, int empty, void **block, Plan *p)
{
    size_t pool_n = 0;
    int ret = empty ? GHM_OK : pool_size(d, n, &pool_n);
    GhmiCarve c = ghmi_carve_start(NULL);
    plan_layout(&c, p, n, pool_n);
    if (ret >= 0)
        ret = ghmi_device_alloc(d->ctx, c.used, block);
    if (ret < 0)
        return ret;
    c = ghmi_carve_start(*block);
    plan_layout(&c, p, n, pool_n);
    if (!pool_n)
        return GHM_OK;
    void *take_block = NULL;
    ret = ghmi_dyn_take(d, pool_n, (uint32_t *)p->pool.slabs, &take_block);
    ghmi_device_free(d->ctx, take_block); /* behind the take, on the stream */
    return ret;
}

/* Insert steps 3-4, queued, then the host waits: the number of new slabs the left items need
 * in *need. *claimed once the claims are queued: a failure from then on must undo them
 * (unclaim_kernel). */
static int plan_insert(CudaDynmap *d, const uint32_t *items, size_t n, const Scratch *s,
                       GhmDynmapHandle *h, uint8_t *fresh, void **block, Plan *p, int *claimed,
                       size_t *need)
{
    cudaStream_t st = ghm_cuda_stream(d->ctx);
    int empty = d->host_counters[DYN_C_USED] == 0; /* read after the last call: no slab linked */
    int ret = plan_scratch(d, n, empty, block, p);
    if (ret < 0)
        return ret;
    /* No item is new until the plan says so: the undo reads these flags even where the plan
     * kernel did not run, or returned early (an item starting with 8 zero bytes). */
    if ((ret = GHM_CUDA(cudaMemsetAsync(fresh, 0, n, st))) < 0)
        return ret;
    *claimed = 1;
    DYN_BY_HB(d->ref.hb, plan_kernel)<<<thread_grid(n), THREADS, 0, st>>>(
        d->ref, items, n, s->hash, s->slot, empty, p->pool, h, fresh, d->counts, p->rank,
        p->tail);
    if ((ret = GHM_CUDA_LAUNCH()) < 0 || (ret = ghmi_dyn_give_back(d, &p->pool)) < 0 ||
        (ret = ghmi_dyn_read_counters(d)) < 0)
        return ret;
    if (d->host_counters[DYN_C_BAD])
        return GHM_ERR_INVALID; /* the plan kernel returned at once: nothing claimed */
    if (!d->host_counters[DYN_C_LEFT])
        return GHM_OK;
    first_slab_kernel<<<thread_grid(n), THREADS, 0, st>>>(d->ref, n, s->hash, h, fresh, p->rank,
                                                           d->counts);
    if ((ret = GHM_CUDA_LAUNCH()) < 0 || (ret = ghmi_dyn_read_counters(d)) < 0)
        return ret;
    *need = (size_t)d->host_counters[DYN_C_NEED];
    return GHM_OK;
}

/* Insert step 4's slabs: reserved (the allocator grows if it must) and handed out. */
static int take_slabs(CudaDynmap *d, size_t need, void **block, void **take_block, Plan *p)
{
    if (!need)
        return GHM_OK;
    int ret = ghmi_dyn_reserve(d, need, (size_t)d->host_counters[DYN_C_USED], 0);
    if (ret >= 0)
        ret = ghmi_device_alloc(d->ctx, need * 4, block);
    if (ret < 0)
        return ret;
    p->taken = (uint32_t *)*block;
    return ghmi_dyn_take(d, need, p->taken, take_block);
}

int ghmi_dyn_insert(void *impl, const uint32_t *items, size_t n, GhmDynmapHandle *handles,
                      uint8_t *inserted)
{
    CudaDynmap *d = (CudaDynmap *)impl;
    GhmContext *ctx = d->ctx;
    cudaStream_t st = ghm_cuda_stream(ctx);
    Staged in = {NULL, NULL}, h = {NULL, NULL}, f = {NULL, NULL};
    void *block = NULL, *plan_block = NULL, *taken_block = NULL, *take_block = NULL;
    Scratch s;
    Plan p = {NULL, NULL, NULL, {NULL, NULL, 0}};
    size_t need = 0;
    int claimed = 0, writing = 0;
    int ret = ghmi_dyn_stage_in(ctx, items, n * d->ref.w * 4, &in);
    if (ret >= 0)
        ret = ghmi_dyn_stage_out(ctx, handles, n * 8, &h);
    if (ret >= 0)
        ret = ghmi_dyn_stage_out(ctx, inserted, n, &f);
    const uint32_t *dev_items = (const uint32_t *)in.dev;
    GhmDynmapHandle *dev_h = (GhmDynmapHandle *)h.dev;
    uint8_t *dev_fresh = (uint8_t *)f.dev;
    if (ret >= 0)
        ret = ghmi_dyn_hash_and_leaders(d, dev_items, d->ref.w, n, 1, &block, &s);
    if (ret >= 0) /* a pass of their own: read in the plan kernel, they slowed it (dyn_leader) */
        ret = ghmi_dyn_resolve_leaders(d, n, &s);
    if (ret >= 0)
        ret = plan_insert(d, dev_items, n, &s, dev_h, dev_fresh, &plan_block, &p, &claimed,
                          &need);
    if (ret >= 0)
        ret = take_slabs(d, need, &taken_block, &take_block, &p);
    if (ret >= 0 && need) {
        /* From here the claims stand. A failed launch may leave slabs taken but not linked
         * (the kernel may have run): the table stays valid, the destroy returns them. */
        writing = 1;
        int appended = p.pool.n && d->host_counters[DYN_C_POOL];
        DYN_BY_HB(d->ref.hb, write_kernel)<<<thread_grid(n), THREADS, 0, st>>>(
            d->ref, dev_items, n, s.hash, dev_fresh, p.rank, p.tail, d->counts, p.taken,
            appended, dev_h);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0) {
        finish_kernel<<<thread_grid(n), THREADS, 0, st>>>(n, s.slot, dev_h);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, handles, &h, n * 8);
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, inserted, &f, n);
    if (ret < 0 && claimed && !writing) { /* best effort: the call's error stands */
        unclaim_kernel<<<thread_grid(n), THREADS, 0, st>>>(d->ref, n, s.hash, dev_fresh,
                                                           dev_h);
        (void)GHM_CUDA_LAUNCH();
    }
    /* The counts are zero between calls, whatever this one's result: only left items touch
     * them (none where the pool sufficed: the counters read by the plan say so), or a failure
     * may have (80 MB cleared at 20.1 M buckets). */
    int zero = GHM_OK;
    if (ret < 0 || d->host_counters[DYN_C_LEFT])
        zero = GHM_CUDA(cudaMemsetAsync(d->counts, 0, (size_t)d->ref.n_buckets * 4, st));
    int rc = ghmi_dyn_read_counters(d);
    ghmi_device_free(ctx, block);
    ghmi_device_free(ctx, plan_block);
    ghmi_device_free(ctx, taken_block);
    ghmi_device_free(ctx, take_block);
    ghmi_cuda_release(ctx, in.owned);
    ghmi_cuda_release(ctx, h.owned);
    ghmi_cuda_release(ctx, f.owned);
    return ret < 0 ? ret : zero < 0 ? zero : rc;
}

cudaError_t ghmi_dyn_load_kernels(const GhmContext *ctx, int hb)
{
    const void *const k[] = {(const void *)DYN_BY_HB(hb, plan_kernel),
                             (const void *)first_slab_kernel,
                             (const void *)DYN_BY_HB(hb, write_kernel),
                             (const void *)unclaim_kernel,
                             (const void *)finish_kernel};
    return ghm_cuda_load_kernels(ctx, k, sizeof k / sizeof *k);
}
