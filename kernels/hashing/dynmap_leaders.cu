/*
 * dynmap_leaders.cu - the batch's duplicates for GhmDynmap's CUDA insert and erase (steps 1-2
 * of dynmap.cu): every record's hash, and its key's slot in the duplicate table, where its
 * leader ends, the first record of the batch with its key (the paper's second table and leader
 * rule), so that only a leader looks its key up (dyn_leader, dynmap_cuda_internal.cuh).
 */
#include "dynmap_cuda_internal.cuh"
#include "hash_internal.h"

static __device__ __forceinline__ uint32_t leader_entry(const LeaderTab &t, uint64_t hash,
                                                        size_t i)
{
    return (uint32_t)(hash >> (32 + t.idx_bits)) << t.idx_bits | (uint32_t)(i + 1);
}

/* Steps 1 and 2 in one pass: hash[i] = record i's hash (`check`: flag one whose first 8 bytes
 * are zero: device arrays are not checked by the API layer), and slot[i] = the duplicate
 * table's slot of its key, which ends holding the smallest index with that key (dyn_leader).
 * Keys are compared on the records themselves (read-only), not on hash[], which other threads
 * are still writing. */
static __global__ void hash_leader_kernel(DynRef r, const uint32_t *rec, int stride, size_t n,
                                          int check, LeaderTab t, uint64_t *hash, uint32_t *slot)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const uint32_t *x = rec + i * stride;
    uint64_t h = dyn_hash(r, x);
    __stcs(&hash[i], (unsigned long long)h); /* read by the next kernels, not by this one */
    if (check && x[0] == 0 && (r.w == 1 || x[1] == 0))
        atomicExch(&r.counters[DYN_C_BAD], 1ull);
    const uint32_t mine = leader_entry(t, h, i), idx_mask = leader_index_mask(t);
    size_t p = (size_t)(((h & 0xffffffffu) * t.slots) >> 32); /* multiply-shift to [0, slots) */
    for (;;) {
        uint32_t cur = __ldcg(&t.tab[p]);
        if (cur == 0) {
            if (atomicCAS(&t.tab[p], 0u, mine) == 0)
                break;
            continue; /* someone won the slot: look at it again */
        }
        if ((cur ^ mine) & ~idx_mask) { /* another key's fingerprint */
            p = p + 1 == t.slots ? 0 : p + 1;
            continue;
        }
        size_t j = (cur & idx_mask) - 1;
        bool same = true;
        for (int k = 0; same && k < r.kw; k++)
            same = __ldg(&rec[j * stride + k]) == __ldg(&x[k]);
        if (same) {
            if (i < j && atomicCAS(&t.tab[p], cur, mine) != cur)
                continue;
            break;
        }
        p = p + 1 == t.slots ? 0 : p + 1;
    }
    slot[i] = (uint32_t)p;
}

/* The duplicate table at a load of at most one half (n + n / 4 slots, a table a third the size,
 * made the pass slower on an H200, 2026-11-30). */
static void scratch_layout(GhmiCarve *c, Scratch *s, size_t n)
{
    s->t.slots = 16;
    while (s->t.slots < 2 * n)
        s->t.slots *= 2;
    s->hash = (uint64_t *)ghmi_carve(c, n * 8);
    s->slot = (uint32_t *)ghmi_carve(c, n * 4);
    s->t.tab = (uint32_t *)ghmi_carve(c, s->t.slots * 4);
    /* bits that hold the indices plus one; n >= 1 (the API layer returns before an empty
     * batch) */
    s->t.idx_bits = ghmi_ceil_log2(n + 1);
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
    if ((ret = GHM_CUDA(cudaMemsetAsync(s->t.tab, 0, s->t.slots * 4, st))) < 0)
        return ret;
    if ((ret = ghmi_dyn_reset_counters(d)) < 0)
        return ret;
    hash_leader_kernel<<<thread_grid(n), THREADS, 0, st>>>(d->ref, rec, stride, n, check, s->t,
                                                           s->hash, s->slot);
    return GHM_CUDA_LAUNCH();
}

static __global__ void resolve_leaders_kernel(LeaderTab t, size_t n, uint32_t *slot)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        slot[i] = dyn_leader(t, slot, i);
}

int ghmi_dyn_resolve_leaders(CudaDynmap *d, size_t n, Scratch *s)
{
    resolve_leaders_kernel<<<thread_grid(n), THREADS, 0, ghm_cuda_stream(d->ctx)>>>(s->t, n,
                                                                                   s->slot);
    return GHM_CUDA_LAUNCH();
}

cudaError_t ghmi_dyn_leaders_load_kernels(const GhmContext *ctx)
{
    const void *const k[] = {(const void *)hash_leader_kernel,
                             (const void *)resolve_leaders_kernel};
    return ghm_cuda_load_kernels(ctx, k, sizeof k / sizeof *k);
}
