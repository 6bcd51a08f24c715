/*
 * dynmap.cu - GhmDynmap on the CUDA backend: the Atomic64 and 32-bit acceleration-hash variants
 * of Molenaar and Eisemann 2024 (section 4.2), a warp or a team of 8 lanes per item
 * (dynmap_ref.cuh), the same phases and answers as the CPU backend (hashing/dynmap_cpu.c).
 * This file has create and insert; dynmap_ops.cu the rest.
 *
 * insert   1. hash every item (and flag one whose first 8 bytes are zero: device arrays are
 *             not checked by the API layer);
 *          2. the batch's duplicates: an open-addressing table of batch indices keyed by the
 *             item's key where equal keys keep the smallest index, so each group's "leader"
 *             is its first occurrence (the paper's second table and leader rule);
 *          3. a team looks each leader up; the absent ones are new;
 *          4. a team claims for each new item the first empty slot of its bucket's list, by a
 *             compare-and-swap of the slot's head (64-bit: the item's first 8 bytes; or its
 *             32-bit tag), writes the rest and sets the slot's mask bit. Items that reach the
 *             end of their list are "left" (new, no handle yet), counted per bucket, which
 *             gives the slabs they may link (per bucket, ceil(left / slots)). A separate kernel
 *             from step 3, not the same walk: a look-up that ran beside claims could match a head
 *             just claimed by another key sharing its first 8 bytes, over the stale words of
 *             an erased item, before the claimer's words land;
 *          5. the host reads how many slabs the left items may link, adds one per warp the
 *             device runs at once (a warp may hold a slab it then loses to another warp's
 *             link), and grows the allocator BEFORE the next kernel: the only step that can
 *             run out of memory, and it changes nothing; the memory blocks with free slabs are
 *             listed for the allocating warps;
 *          6. a warp stores each left item as step 4 does, and at the end of the list takes a
 *             slab from the allocator (warp-wide) and links it by a compare-and-swap. The
 *             warps stride over the batch 32 items at a time and take the left ones of each
 *             32 in turn: no list of them to build;
 *          7. duplicates and stored items get the leader's or the stored item's handle.
 *          Steps 4 and 6 were one warp per item (the paper's way) until 2026-11-26: teams of 8
 *          for the claims took the insert of 2^23 six-word items into a table of 2^25 from 8.1
 *          to 7.4 ms on the H100 and made its slow runs (13-65 ms) rarer (docs/BENCHMARKS.md),
 *          most items finding room in the slabs already linked.
 * erase    hash, leaders, and a team per leader clears its slot's head and mask bit.
 * find     a team per key: bucket, slabs, handle and item.
 * gc       a thread per bucket unlinks the slabs whose mask is 0 and returns them.
 * Inputs and outputs may be host or device memory (staged as in hash_cuda_internal.cuh).
 */
#include <string.h>

#include "dynmap_cuda_internal.cuh"

/* --- kernels ------------------------------------------------------------------------------- */

static __global__ void hash_kernel(DynRef r, const uint32_t *rec, int stride, size_t n,
                                   uint64_t *hash, int check)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t *x = rec + i * stride;
    hash[i] = dyn_hash(r, x);
    if (check && x[0] == 0 && (r.w == 1 || x[1] == 0))
        atomicExch(&r.counters[DYN_C_BAD], 1ull);
}

/* The batch's duplicate table (hashing/dynmap_cpu.c's find_leaders): pos[i] = the entry of
 * record i's key, which ends holding the smallest index with that key, plus one. */
static __global__ void leader_kernel(DynRef r, const uint32_t *rec, int stride, size_t n,
                                     const uint64_t *hash, uint32_t *tab, size_t mask,
                                     uint32_t *pos)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    size_t p = (size_t)hash[i] & mask;
    for (;;) {
        uint32_t cur = __ldcg(&tab[p]);
        if (cur == 0) {
            if (atomicCAS(&tab[p], 0u, (uint32_t)i + 1) == 0)
                break;
            continue; /* someone won the slot: look at it again */
        }
        size_t j = cur - 1;
        bool same = hash[j] == hash[i];
        for (int k = 0; same && k < r.kw; k++)
            same = rec[j * stride + k] == rec[i * stride + k];
        if (same) {
            if (i < j && atomicCAS(&tab[p], cur, (uint32_t)i + 1) != cur)
                continue;
            break;
        }
        p = (p + 1) & mask;
    }
    pos[i] = (uint32_t)p;
}

static __global__ void leader_final_kernel(const uint32_t *tab, size_t n, uint32_t *pos)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        pos[i] = tab[pos[i]] - 1;
}

/* Insert step 3: leaders looked up (a team of 8 lanes each); absent ones marked fresh. */
static __global__ void insert_lookup_kernel(DynRef r, const uint32_t *items, size_t n,
                                            const uint64_t *hash, const uint32_t *leader,
                                            GhmDynmapHandle *h, uint8_t *fresh)
{
    size_t i = team_id();
    int t = threadIdx.x % DYN_TEAM;
    if (i < n) {
        uint8_t isnew = 0;
        if (leader[i] == i) {
            uint4 v;
            int slot;
            GhmDynmapHandle hd = dyn_team_lookup(r, items + i * r.w, hash[i], team_mask(), t,
                                                 false, &v, &slot);
            if (t == 0) {
                h[i] = hd;
                isnew = hd == GHM_DYNMAP_NO_HANDLE;
            }
        }
        if (t == 0)
            fresh[i] = isnew;
    }
}

/* Team lane t of team `tm` claims the first empty slot of the list of item's bucket and
 * stores the item there: its handle, or NO_HANDLE at the end of the list. Never allocates. */
static __device__ GhmDynmapHandle team_claim(const DynRef &r, const uint32_t *item,
                                             uint64_t hash, unsigned tm, int t)
{
    uint32_t w0 = __ldg(&item[0]);
    uint32_t w1 = r.hs == 2 ? __ldg(&item[1]) : 0; /* 8-byte heads: items of 2 words or more */
    uint32_t s = __ldcg(&r.buckets[dyn_bucket(r, hash)]);
    while (s) {
        uint32_t *slab = dyn_slab(r, s);
        uint4 v = dyn_load_quad(slab, t, true);
        DynWant none = {0, 0, 0};
        uint32_t em = dyn_team_or(tm, dyn_team_slots(r, v, t, none, true));
        while (em) {
            int slot = __ffs(em) - 1, won = 0;
            if (t == 0)
                won = dyn_claim_head(r, slab, slot, w0, w1, hash);
            if (__shfl_sync(tm, won, 0, DYN_TEAM)) {
                for (int j = r.hw + t; j < r.w; j += DYN_TEAM)
                    slab[dyn_word_of(r, slot, j)] = __ldg(&item[j]);
                __syncwarp(tm);
                if (t == 0)
                    atomicOr(slab + DYN_MASK, 1u << slot);
                return dyn_handle(s, slot);
            }
            em &= em - 1;
        }
        s = __shfl_sync(tm, v.z, DYN_NEXT / 4, DYN_TEAM); /* word 30: lane 7, third word */
    }
    return GHM_DYNMAP_NO_HANDLE;
}

/* Insert step 4: a team per new item; the left ones counted per bucket. Block tallies keep
 * the table's counters to one atomic each per block. No atomic here returns a value: with
 * every item of a 2^25 fill left, counting with atomics that return (to see a bucket's count
 * cross a multiple of the slots) made this kernel take 14 ms in ncu; need_kernel's pass over
 * the counts does that instead. */
static __global__ void claim_kernel(DynRef r, const uint32_t *items, size_t n,
                                    const uint64_t *hash, const uint8_t *fresh,
                                    GhmDynmapHandle *h, uint32_t *counts)
{
    __shared__ unsigned stored, n_left;
    /* Through L1 (the flag was set by an earlier kernel): every thread reading it from its one
     * L2 line made that line a queue: about 10 of the 24 ms ncu gave this kernel in a 2^25 fill. */
    if (__ldg(&r.counters[DYN_C_BAD]))
        return; /* the call fails with nothing changed (every thread of the block returns) */
    if (threadIdx.x == 0)
        stored = n_left = 0;
    __syncthreads();
    size_t i = team_id();
    int t = threadIdx.x % DYN_TEAM;
    if (i < n && fresh[i]) {
        GhmDynmapHandle hd = team_claim(r, items + i * r.w, hash[i], team_mask(), t);
        if (t == 0 && hd != GHM_DYNMAP_NO_HANDLE) {
            h[i] = hd;
            atomicAdd(&stored, 1u);
        } else if (t == 0) {
            atomicAdd(&counts[dyn_bucket(r, hash[i])], 1u);
            atomicAdd(&n_left, 1u);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (stored)
            atomicAdd(&r.counters[DYN_C_ITEMS], (unsigned long long)stored);
        if (n_left)
            atomicAdd(&r.counters[DYN_C_LEFT], (unsigned long long)n_left);
    }
}

/* Insert steps 3-4 in a table that holds no slab (a first fill; everything erased and
 * collected): every list is empty, so every leader is new and left, without a walk. */
static __global__ void all_left_kernel(DynRef r, size_t n, const uint64_t *hash,
                                       const uint32_t *leader, GhmDynmapHandle *h,
                                       uint8_t *fresh, uint32_t *counts)
{
    __shared__ unsigned n_left;
    if (threadIdx.x == 0)
        n_left = 0;
    __syncthreads();
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        bool lead = leader[i] == i;
        h[i] = GHM_DYNMAP_NO_HANDLE;
        fresh[i] = lead;
        if (lead) {
            atomicAdd(&counts[dyn_bucket(r, hash[i])], 1u);
            atomicAdd(&n_left, 1u);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && n_left)
        atomicAdd(&r.counters[DYN_C_LEFT], (unsigned long long)n_left);
}

/* Insert step 4, second part: the slabs the left items may link (per bucket, ceil(left /
 * slots)), the counts zeroed for the next batch; one atomic per block. */
static __global__ void need_kernel(DynRef r, uint32_t *counts)
{
    __shared__ unsigned long long block_need;
    if (threadIdx.x == 0)
        block_need = 0;
    __syncthreads();
    size_t b = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    unsigned long long need = 0;
    if (b < r.n_buckets && counts[b]) {
        need = (counts[b] + r.slots - 1) / r.slots;
        counts[b] = 0;
    }
    for (int o = 16; o; o /= 2)
        need += __shfl_down_sync(DYN_FULL, need, o);
    if ((threadIdx.x & 31) == 0 && need)
        atomicAdd(&block_need, need);
    __syncthreads();
    if (threadIdx.x == 0 && block_need)
        atomicAdd(&r.counters[DYN_C_NEED], block_need);
}

/* Claims an empty slot of the slab (words in sw) for the item (word j in lane j); -1 when the
 * slab has none left. */
static __device__ int claim_slot(const DynRef &r, uint32_t *slab, uint32_t sw, uint32_t my,
                                 uint64_t hash, int lane)
{
    uint32_t next = __shfl_down_sync(DYN_FULL, sw, 1);
    bool empty;
    dyn_head_lane(r, sw, next, lane, &empty);
    unsigned em = __ballot_sync(DYN_FULL, empty);
    uint32_t w0 = __shfl_sync(DYN_FULL, my, 0), w1 = __shfl_sync(DYN_FULL, my, 1);
    while (em) {
        int l = __ffs(em) - 1, slot = r.hs == 2 ? l / 2 : l;
        int won = lane == 0 && dyn_claim_head(r, slab, slot, w0, w1, hash);
        if (__shfl_sync(DYN_FULL, won, 0)) {
            if (lane >= r.hw && lane < r.w)
                slab[dyn_word_of(r, slot, lane)] = my;
            __syncwarp();
            if (lane == 0)
                atomicOr(slab + DYN_MASK, 1u << slot);
            return slot;
        }
        em &= em - 1;
    }
    return -1;
}

/* Stores item i (a warp); false when no slab could be had (the failure flag is up). */
static __device__ bool store_one(const DynRef &r, const uint32_t *items, size_t i,
                                 const uint64_t *hash, GhmDynmapHandle *h)
{
    int lane = threadIdx.x & 31;
    uint32_t my = lane_word(items, i, r.w, r.w, lane);
    uint32_t *link = &r.buckets[dyn_bucket(r, hash[i])];
    uint32_t s = __ldcg(link);
    for (;;) {
        if (!s) {
            uint32_t fresh_slab = dyn_alloc(r, (uint32_t)(hash[i] >> 7));
            if (!fresh_slab)
                return false;
            uint32_t old = 0;
            if (lane == 0)
                old = atomicCAS(link, 0u, fresh_slab);
            old = __shfl_sync(DYN_FULL, old, 0);
            if (old) {
                if (lane == 0)
                    dyn_release(r, fresh_slab);
                s = old;
            } else {
                s = fresh_slab;
            }
        }
        uint32_t *slab = dyn_slab(r, s);
        uint32_t sw = __ldcg(slab + lane);
        int slot = claim_slot(r, slab, sw, my, hash[i], lane);
        if (slot >= 0) {
            if (lane == 0)
                h[i] = dyn_handle(s, slot);
            return true;
        }
        link = slab + DYN_NEXT;
        s = __shfl_sync(DYN_FULL, sw, DYN_NEXT);
        if (!s)
            s = __ldcg(link); /* linked since the load? */
    }
}

/* Insert step 6: the warps stride over the batch, 32 items at a time, and store its left items
 * (new, no handle) one by one; the items stored
 * are tallied per block (one atomic on the table's item count per block, not per item: 2^23
 * same-address atomics cost milliseconds). */
static __global__ void store_kernel(DynRef r, const uint32_t *items, size_t n,
                                    const uint64_t *hash, const uint8_t *fresh,
                                    GhmDynmapHandle *h)
{
    __shared__ unsigned tally;
    if (threadIdx.x == 0)
        tally = 0;
    __syncthreads();
    int lane = threadIdx.x & 31;
    size_t stride = (size_t)gridDim.x * blockDim.x; /* 32 items per warp and round */
    for (size_t base = warp_id() * 32; base < n; base += stride) {
        size_t i = base + lane;
        bool left = i < n && fresh[i] && h[i] == GHM_DYNMAP_NO_HANDLE;
        unsigned pending = __ballot_sync(DYN_FULL, left); /* this round's left items */
        for (; pending; pending &= pending - 1) {
            size_t j = base + (size_t)(__ffs(pending) - 1);
            if (store_one(r, items, j, hash, h) && lane == 0)
                atomicAdd(&tally, 1u);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0 && tally)
        atomicAdd(&r.counters[DYN_C_ITEMS], (unsigned long long)tally);
}

/* A failed insert's undo after its claims (the slabs for the left items could not be had, or
 * a launch failed): the items the claims stored are erased again, so that the table is as
 * before the call. A claimed item is a new one (fresh) with a handle. */
static __global__ void unclaim_kernel(DynRef r, size_t n, const uint8_t *fresh,
                                      const GhmDynmapHandle *h)
{
    __shared__ unsigned tally;
    if (threadIdx.x == 0)
        tally = 0;
    __syncthreads();
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n && fresh[i] && h[i] != GHM_DYNMAP_NO_HANDLE) {
        uint32_t *slab = dyn_slab(r, (uint32_t)(h[i] >> 32));
        int slot = (int)(uint32_t)h[i], head = r.hs == 2 ? 2 * slot : slot;
        atomicAnd(slab + DYN_MASK, ~(1u << slot));
        slab[head] = 0;
        if (r.hs == 2)
            slab[head + 1] = 0;
        atomicAdd(&tally, 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0 && tally)
        atomicAdd(&r.counters[DYN_C_ITEMS], 0ull - tally);
}

/* Insert step 7. */
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
    ghmi_device_free(d->ctx, d->ref.buckets); /* buckets, counts and counters: one block */
    free(d);
}

int ghmi_dyn_create(GhmContext *ctx, const GhmDynmapOptions *opt, void **impl)
{
    if (opt->variant == GHM_DYNMAP_ACCEL8)
        return GHM_ERR_UNSUPPORTED;
    CudaDynmap *d = (CudaDynmap *)calloc(1, sizeof *d);
    if (!d)
        return GHM_ERR_NOMEM;
    d->ctx = ctx;
    DynRef *r = &d->ref;
    int accel = opt->variant == GHM_DYNMAP_ACCEL32;
    r->w = opt->item_words;
    r->kw = opt->key_words;
    r->hw = accel ? 0 : r->w >= 2 ? 2 : 1;
    r->hs = r->hw == 2 ? 2 : 1;
    r->slots = accel ? 30 / (r->w + 1) : 30 / r->w;
    /* The CPU backend's bucket count (dynmap_cpu.c): a slab holds 1.5 buckets' worth. */
    size_t per = (size_t)r->slots, cap = opt->capacity;
    size_t want = cap ? cap / per + cap / (2 * per) + 1 : 1024;
    r->n_buckets = (uint32_t)(want > ((size_t)1 << 31) ? (size_t)1 << 31 : want);
    r->seed = ghmi_mix64(ctx->seed ^ 0xD1B54A32D192ED03ull);
    int sms = 0, per_sm = 0;
    int dev = ghm_cuda_device(ctx);
    int ret = GHM_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (ret >= 0)
        ret = GHM_CUDA(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor,
                                              dev));
    d->resident_warps = (size_t)sms * (size_t)(per_sm / 32);
    GhmiCarve c = {NULL, 0};
    size_t nb = r->n_buckets;
    for (int phase = 0; phase < 2 && ret >= 0; phase++) {
        r->buckets = (uint32_t *)ghmi_carve(&c, nb * 4);
        d->counts = (uint32_t *)ghmi_carve(&c, nb * 4);
        r->counters = (unsigned long long *)ghmi_carve(&c, DYN_COUNTERS * 8);
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

static void scratch_layout(GhmiCarve *c, Scratch *s, size_t n)
{
    s->tab_cap = 16;
    while (s->tab_cap < 2 * n)
        s->tab_cap *= 2;
    s->hash = (uint64_t *)ghmi_carve(c, n * 8);
    s->leader = (uint32_t *)ghmi_carve(c, n * 4);
    s->tab = (uint32_t *)ghmi_carve(c, s->tab_cap * 4);
}

/* Hashes n records and finds their leaders (insert and erase steps 1-2), queued. */
int ghmi_dyn_hash_and_leaders(CudaDynmap *d, const uint32_t *rec, int stride, size_t n,
                            int check, void **block, Scratch *s)
{
    GhmContext *ctx = d->ctx;
    cudaStream_t st = ghm_cuda_stream(ctx);
    GhmiCarve c = {NULL, 0};
    scratch_layout(&c, s, n);
    int ret = ghmi_device_alloc(ctx, c.used, block);
    if (ret < 0)
        return ret;
    c = ghmi_carve_start(*block);
    scratch_layout(&c, s, n);
    if ((ret = GHM_CUDA(cudaMemsetAsync(s->tab, 0, s->tab_cap * 4, st))) < 0)
        return ret;
    if ((ret = ghmi_dyn_reset_counters(d)) < 0)
        return ret;
    hash_kernel<<<thread_grid(n), THREADS, 0, st>>>(d->ref, rec, stride, n, s->hash, check);
    if ((ret = GHM_CUDA_LAUNCH()) < 0)
        return ret;
    leader_kernel<<<thread_grid(n), THREADS, 0, st>>>(d->ref, rec, stride, n, s->hash, s->tab,
                                                       s->tab_cap - 1, s->leader);
    if ((ret = GHM_CUDA_LAUNCH()) < 0)
        return ret;
    leader_final_kernel<<<thread_grid(n), THREADS, 0, st>>>(s->tab, n, s->leader);
    return GHM_CUDA_LAUNCH();
}

/* Insert steps 3-4, queued: the new items found and stored where their lists have room;
 * *claimed once the claims are queued (a failure from then on must undo them). */
static int lookup_and_claim(CudaDynmap *d, const uint32_t *items, size_t n, const Scratch *s,
                            GhmDynmapHandle *h, uint8_t *fresh, int empty, int *claimed)
{
    cudaStream_t st = ghm_cuda_stream(d->ctx);
    int ret;
    if (empty) {
        all_left_kernel<<<thread_grid(n), THREADS, 0, st>>>(d->ref, n, s->hash, s->leader, h,
                                                             fresh, d->counts);
        if ((ret = GHM_CUDA_LAUNCH()) < 0)
            return ret;
    } else {
        insert_lookup_kernel<<<team_grid(n), THREADS, 0, st>>>(d->ref, items, n, s->hash,
                                                                s->leader, h, fresh);
        if ((ret = GHM_CUDA_LAUNCH()) < 0)
            return ret;
        *claimed = 1;
        claim_kernel<<<team_grid(n), THREADS, 0, st>>>(d->ref, items, n, s->hash, fresh, h,
                                                        d->counts);
        if ((ret = GHM_CUDA_LAUNCH()) < 0)
            return ret;
    }
    need_kernel<<<thread_grid(d->ref.n_buckets), THREADS, 0, st>>>(d->ref, d->counts);
    return GHM_CUDA_LAUNCH();
}

/* Insert step 5: the slabs the left items may link reserved; their number in *n_left. */
static int reserve_for_left(CudaDynmap *d, int empty, size_t *n_left)
{
    int ret = ghmi_dyn_read_counters(d);
    if (ret < 0)
        return ret;
    const unsigned long long *k = d->host_counters;
    if (k[DYN_C_BAD])
        return GHM_ERR_INVALID;
    *n_left = (size_t)k[DYN_C_LEFT];
    if (!*n_left)
        return GHM_OK;
    /* Twice the slabs the left items may link where the table holds slabs: after a gc the
     * free slabs lie scattered over the memory blocks, and with just enough the last
     * allocating warps searched and fought over almost full blocks (an insert of 2^23 took
     * 0.2-0.5 s on the H100). A table without slabs has whole free blocks: just enough (twice
     * would double a first fill's memory). */
    size_t racing = *n_left < d->resident_warps ? *n_left : d->resident_warps;
    size_t need = (size_t)k[DYN_C_NEED] * (empty ? 1 : 2);
    return ghmi_dyn_reserve(d, need + racing, (size_t)k[DYN_C_USED]);
}

/* After a failed insert: the claims undone where the store had not begun (`undo`), the counts
 * zeroed (they may hold a half-counted batch). Best effort: the call's error stands. */
static void undo_insert(CudaDynmap *d, size_t n, const uint8_t *fresh, const GhmDynmapHandle *h,
                        int undo)
{
    cudaStream_t st = ghm_cuda_stream(d->ctx);
    if (undo) {
        unclaim_kernel<<<thread_grid(n), THREADS, 0, st>>>(d->ref, n, fresh, h);
        (void)GHM_CUDA_LAUNCH();
    }
    (void)cudaMemsetAsync(d->counts, 0, (size_t)d->ref.n_buckets * 4, st);
}

int ghmi_dyn_insert(void *impl, const uint32_t *items, size_t n, GhmDynmapHandle *handles,
                      uint8_t *inserted)
{
    CudaDynmap *d = (CudaDynmap *)impl;
    GhmContext *ctx = d->ctx;
    cudaStream_t st = ghm_cuda_stream(ctx);
    Staged in = {NULL, NULL}, h = {NULL, NULL}, f = {NULL, NULL};
    void *block = NULL, *list = NULL;
    Scratch s;
    size_t n_left = 0;
    int ret = ghmi_dyn_stage_in(ctx, items, n * d->ref.w * 4, &in);
    if (ret >= 0)
        ret = ghmi_dyn_stage_out(ctx, handles, n * 8, &h);
    if (ret >= 0)
        ret = ghmi_dyn_stage_out(ctx, inserted, n, &f);
    if (ret >= 0)
        ret = ghmi_dyn_hash_and_leaders(d, (const uint32_t *)in.dev, d->ref.w, n, 1, &block, &s);
    int claimed = 0, storing = 0;
    int empty = d->host_counters[DYN_C_USED] == 0; /* read after the last call: no slab linked */
    if (ret >= 0)
        ret = lookup_and_claim(d, (const uint32_t *)in.dev, n, &s, (GhmDynmapHandle *)h.dev,
                               (uint8_t *)f.dev, empty, &claimed);
    if (ret >= 0)
        ret = reserve_for_left(d, empty, &n_left);
    DynRef with_list;
    if (ret >= 0 && n_left)
        ret = ghmi_dyn_free_list(d, &list, &with_list);
    if (ret >= 0 && n_left) {
        storing = 1; /* from here the claims stand: the store may have begun */
        size_t rounds = (n + 31) / 32, most = d->resident_warps;
        store_kernel<<<warp_grid(rounds < most ? rounds : most), THREADS, 0, st>>>(
            with_list, (const uint32_t *)in.dev, n, s.hash, (const uint8_t *)f.dev,
            (GhmDynmapHandle *)h.dev);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0) {
        finish_kernel<<<thread_grid(n), THREADS, 0, st>>>(n, s.leader, (GhmDynmapHandle *)h.dev);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, handles, &h, n * 8);
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, inserted, &f, n);
    if (ret < 0)
        undo_insert(d, n, (const uint8_t *)f.dev, (const GhmDynmapHandle *)h.dev,
                    claimed && !storing);
    int rc = ghmi_dyn_read_counters(d);
    if (ret >= 0 && rc >= 0 && d->host_counters[DYN_C_FAIL]) {
        ghmi_log(GHM_LOG_ERROR, "dynmap: a warp found no free slab despite the reservation");
        ret = GHM_ERR_NOMEM;
    }
    ghmi_device_free(ctx, block);
    ghmi_device_free(ctx, list);
    ghmi_cuda_release(ctx, in.owned);
    ghmi_cuda_release(ctx, h.owned);
    ghmi_cuda_release(ctx, f.owned);
    return ret < 0 ? ret : rc;
}

