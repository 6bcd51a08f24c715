/*
 * dynmap_ops.cu - GhmDynmap on the CUDA backend, the operations after insert (dynmap.cu has the
 * table's creation, its insert and the description of the phases): erase, find, read by
 * handle, garbage collection, the listing of every item, stats, and the op table.
 */
#include <string.h>

#include <cub/device/device_scan.cuh>

#include "dynmap_cuda_internal.cuh"

/* Erases key (global memory) of hash: whether it did. The look-up reads through L2: other
 * threads clear heads. */
static __device__ bool erase_one(const DynRef &r, const uint32_t *key, uint64_t hash)
{
    GhmDynmapHandle hd = dyn_lookup(r, key, hash, true, NULL);
    if (hd == GHM_DYNMAP_NO_HANDLE)
        return false;
    uint32_t *slab = dyn_slab(r, (uint32_t)(hd >> 32));
    int slot = (int)(uint32_t)hd, head = dyn_head_word(r, slot);
    bool hit;
    /* The batch's keys are distinct here, so this cannot lose. */
    if (r.hb == 1) { /* other threads clear and fill the word's other tags */
        uint32_t shift = 8 * (slot % 4);
        hit = atomicAnd(slab + head, ~(0xffu << shift)) >> shift & 0xffu;
    } else if (r.hb == 8) {
        unsigned long long both = __ldcg((const unsigned long long *)(slab + head));
        hit = atomicCAS((unsigned long long *)(slab + head), both, 0ull) == both;
    } else {
        uint32_t lo = __ldcg(slab + head);
        hit = atomicCAS(slab + head, lo, 0u) == lo;
    }
    if (hit)
        dyn_clear_bit(r, slab, slot, dyn_bucket(r, hash));
    return hit;
}

/* A thread per key; the items erased are tallied per block (one atomic per block). */
template <int HB>
static __global__ void erase_kernel(DynRef ref, const uint32_t *keys, size_t n,
                                    const uint64_t *hash, LeaderTab t, const uint32_t *slot,
                                    uint8_t *erased)
{
    const DynRef r = dyn_fixed<HB>(ref);
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    bool hit = false;
    if (i < n) {
        hit = dyn_leader(t, slot, i) == i && erase_one(r, keys + i * r.kw, hash[i]);
        if (erased)
            erased[i] = hit;
    }
    if (unsigned sum = dyn_block_sum(hit))
        atomicAdd(&r.counters[DYN_C_ITEMS], 0ull - sum); /* minus the block's erases */
}

/* A thread per key (dynmap_ref.cuh's dyn_lookup). */
template <int HB>
static __global__ void find_kernel(DynRef ref, const uint32_t *keys, size_t n,
                                   GhmDynmapHandle *handles, uint32_t *items_out)
{
    const DynRef r = dyn_fixed<HB>(ref);
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t *key = keys + i * r.kw;
    GhmDynmapHandle hd = dyn_lookup(r, key, dyn_hash(r, key), false, NULL);
    if (handles)
        handles[i] = hd;
    if (!items_out)
        return;
    uint32_t *out = items_out + i * r.w;
    const uint32_t *slab = hd != GHM_DYNMAP_NO_HANDLE ? dyn_slab(r, (uint32_t)(hd >> 32)) : NULL;
    for (int j = 0; j < r.w; j++)
        out[j] = slab ? __ldg(&slab[dyn_word_of(r, (int)(uint32_t)hd, j)]) : 0;
}

static __global__ void read_kernel(DynRef r, const GhmDynmapHandle *handles, size_t n,
                                   uint32_t *out)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t s = (uint32_t)(handles[i] >> 32), slot = (uint32_t)handles[i];
    uint32_t *o = out + i * r.w;
    bool ok = s != 0 && s / DYN_SLABS_PER_BLOCK < r.n_blocks && slot < (uint32_t)r.slots;
    if (ok) {
        uint32_t off = s % DYN_SLABS_PER_BLOCK;
        ok = r.bits[(size_t)(s / DYN_SLABS_PER_BLOCK) * 32 + off / 32] >> (off % 32) & 1;
    }
    const uint32_t *slab = ok ? dyn_slab(r, s) : NULL;
    if (ok)
        ok = dyn_head_filled(r, slab, (int)slot);
    for (int j = 0; j < r.w; j++)
        o[j] = ok ? slab[dyn_word_of(r, (int)slot, j)] : 0;
    if (!ok)
        atomicExch(&r.counters[DYN_C_BAD], 1ull);
}

/* A thread per bucket that erases left dirty unlinks its empty slabs (mask 0) and returns them
 * (the others have none: no slab reads there); the slabs returned are tallied per block (one
 * atomic per block on each of the two counters). */
static __global__ void gc_kernel(DynRef r)
{
    size_t b = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    unsigned freed = 0;
    uint32_t *link = b < r.n_buckets && r.dirty[b] ? &r.buckets[b] : NULL, s;
    if (link)
        r.dirty[b] = 0;
    while (link && (s = *link) != 0) {
        uint32_t *slab = dyn_slab(r, s);
        if (slab[DYN_MASK]) {
            link = slab + DYN_NEXT;
            continue;
        }
        *link = slab[DYN_NEXT];
        dyn_release(r, s);
        freed++;
    }
    if (unsigned sum = dyn_block_sum(freed)) {
        atomicAdd(&r.counters[DYN_C_RELEASED], (unsigned long long)sum);
        atomicAdd(&r.counters[DYN_C_USED], 0ull - sum); /* minus the block's slabs */
    }
}

/* Items in bucket b's list (a thread per bucket); counts[n_buckets] is the scan's tail. */
static __global__ void count_items_kernel(DynRef r, unsigned long long *counts)
{
    size_t b = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (b > r.n_buckets)
        return;
    unsigned long long c = 0;
    for (uint32_t s = b < r.n_buckets ? __ldg(&r.buckets[b]) : 0; s;) {
        uint4 end = dyn_end_quad(r, s);
        c += __popc(end.w);
        s = end.z;
    }
    counts[b] = c;
}

/* Bucket b's items from position start[b], in list and slot order (as the CPU lists them). */
static __global__ void list_items_kernel(DynRef r, const unsigned long long *start, size_t cap,
                                         uint32_t *items, GhmDynmapHandle *handles)
{
    size_t b = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (b >= r.n_buckets)
        return;
    unsigned long long o = start[b];
    for (uint32_t s = __ldg(&r.buckets[b]); s;) {
        const uint32_t *slab = dyn_slab(r, s);
        uint4 end = dyn_end_quad(r, s);
        for (uint32_t m = end.w; m; m &= m - 1) { /* filled slots in slot order */
            int i = __ffs(m) - 1;
            if (o < cap) { /* the count said otherwise only if the table is corrupt */
                for (int j = 0; j < r.w; j++)
                    items[o * r.w + j] = __ldg(&slab[dyn_word_of(r, i, j)]);
                if (handles)
                    handles[o] = (GhmDynmapHandle)s << 32 | (uint32_t)i;
            }
            o++;
        }
        s = end.z;
    }
}

static int dyn_erase(void *impl, const uint32_t *keys, size_t n, uint8_t *erased)
{
    CudaDynmap *d = (CudaDynmap *)impl;
    GhmContext *ctx = d->ctx;
    Staged in = {NULL, NULL}, e = {NULL, NULL};
    void *block = NULL;
    Scratch s;
    int ret = ghmi_dyn_stage_in(ctx, keys, n * d->ref.kw * 4, &in);
    if (ret >= 0 && erased)
        ret = ghmi_dyn_stage_out(ctx, erased, n, &e);
    if (ret >= 0)
        ret = ghmi_dyn_hash_and_leaders(d, (const uint32_t *)in.dev, d->ref.kw, n, 0, &block, &s);
    if (ret >= 0) {
        DYN_BY_HB(d->ref.hb, erase_kernel)<<<thread_grid(n), THREADS, 0, ghm_cuda_stream(ctx)>>>(
            d->ref, (const uint32_t *)in.dev, n, s.hash, s.t, s.slot, (uint8_t *)e.dev);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, erased, &e, n);
    int rc = ghmi_dyn_read_counters(d);
    ghmi_device_free(ctx, block);
    ghmi_cuda_release(ctx, in.owned);
    ghmi_cuda_release(ctx, e.owned);
    return ret < 0 ? ret : rc;
}

static int dyn_find(const void *impl, const uint32_t *keys, size_t n, GhmDynmapHandle *handles,
                    uint32_t *items_out)
{
    const CudaDynmap *d = (const CudaDynmap *)impl;
    GhmContext *ctx = d->ctx;
    Staged in = {NULL, NULL}, h = {NULL, NULL}, it = {NULL, NULL};
    size_t item_bytes = n * d->ref.w * 4;
    int ret = ghmi_dyn_stage_in(ctx, keys, n * d->ref.kw * 4, &in);
    if (ret >= 0 && handles)
        ret = ghmi_dyn_stage_out(ctx, handles, n * 8, &h);
    if (ret >= 0 && items_out)
        ret = ghmi_dyn_stage_out(ctx, items_out, item_bytes, &it);
    if (ret >= 0) {
        DYN_BY_HB(d->ref.hb, find_kernel)<<<thread_grid(n), THREADS, 0, ghm_cuda_stream(ctx)>>>(
            d->ref, (const uint32_t *)in.dev, n, (GhmDynmapHandle *)h.dev, (uint32_t *)it.dev);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, handles, &h, n * 8);
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, items_out, &it, item_bytes);
    int sync = GHM_CUDA(ghm_cuda_wait(ghm_cuda_stream(ctx)));
    ghmi_cuda_release(ctx, in.owned);
    ghmi_cuda_release(ctx, h.owned);
    ghmi_cuda_release(ctx, it.owned);
    return ret < 0 ? ret : sync;
}

static int dyn_read(const void *impl, const GhmDynmapHandle *handles, size_t n,
                    uint32_t *items_out)
{
    CudaDynmap *d = (CudaDynmap *)impl;
    GhmContext *ctx = d->ctx;
    Staged in = {NULL, NULL}, out = {NULL, NULL};
    size_t bytes = n * d->ref.w * 4;
    int ret = ghmi_dyn_stage_in(ctx, handles, n * 8, &in);
    if (ret >= 0)
        ret = ghmi_dyn_stage_out(ctx, items_out, bytes, &out);
    if (ret >= 0)
        ret = ghmi_dyn_reset_counters(d);
    if (ret >= 0) {
        read_kernel<<<thread_grid(n), THREADS, 0, ghm_cuda_stream(ctx)>>>(
            d->ref, (const GhmDynmapHandle *)in.dev, n, (uint32_t *)out.dev);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, items_out, &out, bytes);
    int rc = ghmi_dyn_read_counters(d);
    ghmi_cuda_release(ctx, in.owned);
    ghmi_cuda_release(ctx, out.owned);
    if (ret >= 0 && rc >= 0 && d->host_counters[DYN_C_BAD])
        return GHM_ERR_INVALID;
    return ret < 0 ? ret : rc;
}

static size_t dyn_size(const void *impl) { return ((const CudaDynmap *)impl)->items; }

static int dyn_gc(void *impl, size_t *released)
{
    CudaDynmap *d = (CudaDynmap *)impl;
    int ret = ghmi_dyn_reset_counters(d);
    if (ret >= 0) {
        gc_kernel<<<thread_grid(d->ref.n_buckets), THREADS, 0, ghm_cuda_stream(d->ctx)>>>(d->ref);
        ret = GHM_CUDA_LAUNCH();
    }
    int rc = ghmi_dyn_read_counters(d);
    *released = rc >= 0 ? (size_t)d->host_counters[DYN_C_RELEASED] : 0;
    return ret < 0 ? ret : rc;
}

typedef struct ListScratch {
    unsigned long long *count, *start;
    void *temp;
    size_t temp_bytes;
} ListScratch;

static void list_layout(GhmiCarve *c, size_t buckets, ListScratch *sc)
{
    sc->count = (unsigned long long *)ghmi_carve(c, (buckets + 1) * 8);
    sc->start = (unsigned long long *)ghmi_carve(c, (buckets + 1) * 8);
    sc->temp = ghmi_carve(c, sc->temp_bytes ? sc->temp_bytes : 16); /* NULL: CUB would size */
}

/* Queues the per-bucket counts and their exclusive sum (start[buckets] the total) in scratch
 * that *block owns (free it whatever the result). */
static int list_starts(const CudaDynmap *d, void **block, ListScratch *sc)
{
    GhmContext *ctx = d->ctx;
    cudaStream_t st = ghm_cuda_stream(ctx);
    size_t nb = d->ref.n_buckets;
    sc->temp_bytes = 0;
    int ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, sc->temp_bytes, sc->count, sc->start,
                                                     nb + 1, st));
    GhmiCarve c = ghmi_carve_start(NULL);
    list_layout(&c, nb, sc);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, c.used, block);
    if (ret < 0)
        return ret;
    c = ghmi_carve_start(*block);
    list_layout(&c, nb, sc);
    count_items_kernel<<<thread_grid(nb + 1), THREADS, 0, st>>>(d->ref, sc->count);
    ret = GHM_CUDA_LAUNCH();
    size_t bytes = sc->temp_bytes;
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(sc->temp, bytes, sc->count, sc->start,
                                                     nb + 1, st));
    return ret;
}

/* Bucket by bucket: counts, their scan, then each bucket's thread writes its items from its
 * start, so the order is the CPU backend's (bucket, list, slot) and needs no atomics. */
static int dyn_items(const void *impl, uint32_t *items_out, GhmDynmapHandle *handles_out,
                     size_t cap, size_t *count)
{
    const CudaDynmap *d = (const CudaDynmap *)impl;
    GhmContext *ctx = d->ctx;
    cudaStream_t st = ghm_cuda_stream(ctx);
    size_t n = d->items, item_bytes = n * d->ref.w * 4;
    Staged it = {NULL, NULL}, h = {NULL, NULL};
    void *block = NULL;
    ListScratch sc = {NULL, NULL, NULL, 0};
    unsigned long long total = 0;
    int ret = ghmi_dyn_stage_out(ctx, items_out, item_bytes, &it);
    if (ret >= 0 && handles_out)
        ret = ghmi_dyn_stage_out(ctx, handles_out, n * 8, &h);
    if (ret >= 0)
        ret = list_starts(d, &block, &sc);
    if (ret >= 0) {
        list_items_kernel<<<thread_grid(d->ref.n_buckets), THREADS, 0, st>>>(
            d->ref, sc.start, n, (uint32_t *)it.dev, (GhmDynmapHandle *)h.dev);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&total, sc.start + d->ref.n_buckets, 8,
                                       cudaMemcpyDeviceToHost, st));
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, items_out, &it, item_bytes);
    if (ret >= 0)
        ret = ghmi_dyn_queue_back(ctx, handles_out, &h, n * 8);
    int sync = GHM_CUDA(ghm_cuda_wait(st));
    ghmi_device_free(ctx, block);
    ghmi_cuda_release(ctx, it.owned);
    ghmi_cuda_release(ctx, h.owned);
    if (ret >= 0 && sync >= 0 && total != n) /* the count said otherwise: the table is corrupt */
        return GHM_ERR_INVALID;
    (void)cap; /* ghm_dynmap_items checked cap >= the count */
    *count = n;
    return ret < 0 ? ret : sync;
}

static int dyn_stats(const void *impl, GhmDynmapStats *out)
{
    CudaDynmap *d = (CudaDynmap *)impl;
    int ret = ghmi_dyn_read_counters(d);
    if (ret < 0)
        return ret;
    size_t used = (size_t)d->host_counters[DYN_C_USED];
    memset(out, 0, sizeof *out);
    out->items = d->items;
    out->buckets = d->ref.n_buckets;
    out->slots_per_slab = (size_t)d->ref.slots;
    out->slabs_used = used;
    out->slabs_free = ghmi_dyn_free_slabs(d, used);
    out->bytes = sizeof *d + ghmi_dyn_alloc_bytes(d) + d->block_bytes;
    return GHM_OK;
}

/* Every kernel of the table's calls (ghm_dynmap_preload). */
static int dyn_preload(const void *impl)
{
    const CudaDynmap *d = (const CudaDynmap *)impl;
    const GhmContext *ctx = d->ctx;
    const void *const k[] = {(const void *)DYN_BY_HB(d->ref.hb, erase_kernel),
                             (const void *)DYN_BY_HB(d->ref.hb, find_kernel),
                             (const void *)read_kernel,
                             (const void *)gc_kernel,
                             (const void *)count_items_kernel,
                             (const void *)list_items_kernel};
    cudaError_t err = ghm_cuda_load_kernels(ctx, k, sizeof k / sizeof *k);
    if (err == cudaSuccess)
        err = ghmi_dyn_load_kernels(ctx, d->ref.hb);
    if (err == cudaSuccess)
        err = ghmi_dyn_alloc_load_kernels(ctx);
    if (err == cudaSuccess)
        err = ghmi_dyn_leaders_load_kernels(ctx);
    return GHM_CUDA(err);
}

extern "C" const GhmDynmapOps ghm_cuda_dynmap_ops = {
    ghmi_dyn_create, ghmi_dyn_insert, dyn_erase, dyn_find,  dyn_read,    dyn_size,
    dyn_gc,          dyn_stats,       ghmi_dyn_destroy,     dyn_items,   dyn_preload,
};
