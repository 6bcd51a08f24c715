/*
 * dynmap_alloc.cu - GhmDynmap's CUDA slab memory: its growth, and the handing out of the slabs
 * an insert reserved (gc returns slabs one by one: dynmap_ref.cuh). Super blocks of 16 memory
 * blocks of 1024 slabs (2 MiB) are added between kernels, never moved or freed before the
 * table is, so slab addresses and handles are stable. What one growth adds is one allocation
 * of slab memory, zeroed, plus, when the directory is full, larger copies of the directory of
 * super blocks, the block masks and the free counts; everything is allocated before anything
 * is replaced.
 */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cub/device/device_scan.cuh>

#include "dynmap_cuda_internal.cuh"

/* New super blocks [first, first + k): their directory entries into `chunk`, empty masks, 1024
 * free slabs per block; slab 0 (the null link) is taken for good. */
static __global__ void init_supers_kernel(uint32_t **dir, uint32_t *bits, int *block_free,
                                          uint32_t *chunk, size_t first, size_t k)
{
    size_t blocks = k * DYN_BLOCKS_PER_SUPER;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < blocks * 32;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t blk = first * DYN_BLOCKS_PER_SUPER + i / 32;
        bits[blk * 32 + i % 32] = blk == 0 && i % 32 == 0 ? 1u : 0u;
        if (i % 32 == 0)
            block_free[blk] = DYN_SLABS_PER_BLOCK - (blk == 0);
        if (i < k)
            dir[first + i] = chunk + i * (size_t)DYN_SLABS_PER_SUPER * DYN_SLAB_WORDS;
    }
}

size_t ghmi_dyn_total_slabs(const CudaDynmap *d) { return d->n_supers * DYN_SLABS_PER_SUPER; }

size_t ghmi_dyn_free_slabs(const CudaDynmap *d, size_t used)
{
    size_t total = ghmi_dyn_total_slabs(d);
    return total ? total - 1 - used : 0;
}

size_t ghmi_dyn_alloc_bytes(const CudaDynmap *d)
{
    return d->n_supers * ((size_t)DYN_SLABS_PER_SUPER * DYN_SLAB_WORDS * 4) +
           d->cap_supers * (sizeof(uint32_t *) + DYN_BLOCKS_PER_SUPER * (32 * 4 + sizeof(int)));
}

/* Larger directory, masks and counts (cap super blocks), the old contents copied. */
typedef struct Arrays {
    uint32_t **dir;
    uint32_t *bits;
    int *block_free;
} Arrays;

static void arrays_free(GhmContext *ctx, Arrays *a)
{
    ghmi_device_free(ctx, a->dir);
    ghmi_device_free(ctx, a->bits);
    ghmi_device_free(ctx, a->block_free);
}

/* The device allocator a growth uses: memory the call needs, or only would like. */
typedef int (*DeviceAlloc)(GhmContext *ctx, size_t bytes, void **out);

static int arrays_grow(CudaDynmap *d, size_t cap, DeviceAlloc alloc, Arrays *out)
{
    GhmContext *ctx = d->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    size_t blocks = cap * DYN_BLOCKS_PER_SUPER, old = d->n_supers * DYN_BLOCKS_PER_SUPER;
    *out = (Arrays){NULL, NULL, NULL};
    int ret = alloc(ctx, cap * sizeof(uint32_t *), (void **)&out->dir);
    if (ret >= 0)
        ret = alloc(ctx, blocks * 32 * sizeof(uint32_t), (void **)&out->bits);
    if (ret >= 0)
        ret = alloc(ctx, blocks * sizeof(int), (void **)&out->block_free);
    if (ret >= 0 && d->n_supers) {
        ret = GHM_CUDA(cudaMemcpyAsync(out->dir, d->ref.dir, d->n_supers * sizeof(uint32_t *),
                                       cudaMemcpyDeviceToDevice, s));
        if (ret >= 0)
            ret = GHM_CUDA(cudaMemcpyAsync(out->bits, d->ref.bits, old * 32 * sizeof(uint32_t),
                                           cudaMemcpyDeviceToDevice, s));
        if (ret >= 0)
            ret = GHM_CUDA(cudaMemcpyAsync(out->block_free, d->ref.block_free,
                                           old * sizeof(int), cudaMemcpyDeviceToDevice, s));
    }
    if (ret < 0)
        arrays_free(ctx, out);
    return ret;
}

int ghmi_dyn_reserve(CudaDynmap *d, size_t need, size_t used, int spare)
{
    DeviceAlloc alloc = spare ? ghmi_device_alloc_spare : ghmi_device_alloc;
    size_t total = ghmi_dyn_total_slabs(d);
    size_t free_now = ghmi_dyn_free_slabs(d, used);
    if (free_now >= need)
        return GHM_OK;
    size_t missing = need - free_now + (total ? 0 : 1);
    size_t k = (missing + DYN_SLABS_PER_SUPER - 1) / DYN_SLABS_PER_SUPER;
    if (d->n_supers + k > ((size_t)1 << 32) / DYN_SLABS_PER_SUPER)
        return GHM_ERR_TOO_LARGE;
    GhmContext *ctx = d->ctx;
    int ret = GHM_OK;
    if (d->n_chunks == d->cap_chunks) { /* host bookkeeping first: it cannot fail later */
        size_t cap = d->cap_chunks ? 2 * d->cap_chunks : 8;
        void **c = (void **)realloc(d->chunks, cap * sizeof *c);
        if (!c)
            return GHM_ERR_NOMEM;
        d->chunks = c;
        d->cap_chunks = cap;
    }
    Arrays grown = {NULL, NULL, NULL};
    size_t cap = d->cap_supers;
    if (d->n_supers + k > cap) {
        cap = cap ? 2 * cap : 8;
        if (cap < d->n_supers + k)
            cap = d->n_supers + k;
        if ((ret = arrays_grow(d, cap, alloc, &grown)) < 0)
            return ret;
    }
    size_t bytes = k * (size_t)DYN_SLABS_PER_SUPER * DYN_SLAB_WORDS * 4;
    void *chunk = NULL;
    ret = alloc(ctx, bytes, &chunk);
    cudaStream_t s = ghm_cuda_stream(ctx);
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(chunk, 0, bytes, s));
    Arrays use = grown.dir ? grown : (Arrays){(uint32_t **)d->ref.dir, d->ref.bits,
                                              d->ref.block_free};
    if (ret >= 0) {
        size_t threads = k * DYN_BLOCKS_PER_SUPER * 32;
        init_supers_kernel<<<(unsigned)((threads + 255) / 256), 256, 0, s>>>(
            use.dir, use.bits, use.block_free, (uint32_t *)chunk, d->n_supers, k);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret < 0) { /* the new super blocks' entries went only into arrays not yet in use, or
                    * past n_supers, where nothing reads them */
        ghmi_device_free(ctx, chunk);
        arrays_free(ctx, &grown);
        return ret;
    }
    if (grown.dir) {
        Arrays old = {(uint32_t **)d->ref.dir, d->ref.bits, d->ref.block_free};
        arrays_free(ctx, &old);
        d->ref.dir = grown.dir;
        d->ref.bits = grown.bits;
        d->ref.block_free = grown.block_free;
        d->cap_supers = cap;
    }
    d->chunks[d->n_chunks++] = chunk;
    d->n_supers += k;
    d->ref.n_blocks = (uint32_t)(d->n_supers * DYN_BLOCKS_PER_SUPER);
    return GHM_OK;
}

void ghmi_dyn_alloc_free(CudaDynmap *d)
{
    for (size_t i = 0; i < d->n_chunks; i++)
        ghmi_device_free(d->ctx, d->chunks[i]);
    Arrays a = {(uint32_t **)d->ref.dir, d->ref.bits, d->ref.block_free};
    arrays_free(d->ctx, &a);
    free(d->chunks);
    d->chunks = NULL;
    d->n_chunks = d->cap_chunks = d->n_supers = d->cap_supers = 0;
}

/* Warp per memory block: the block's share of the k slabs handed out (its free slabs from
 * start[b], the sum of the free slabs of the blocks before it), lowest free slabs first, each
 * lane taking the zero bits of its mask word from the warp's prefix of them. */
static __global__ void take_kernel(DynRef r, const uint32_t *start, uint32_t k, uint32_t *out)
{
    size_t b = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (b >= r.n_blocks)
        return;
    int free_here = r.block_free[b];
    if (free_here <= 0 || start[b] >= k)
        return; /* the whole warp: one block */
    uint32_t take = k - start[b] < (uint32_t)free_here ? k - start[b] : (uint32_t)free_here;
    uint32_t *word = &r.bits[b * 32 + lane];
    uint32_t bits = *word, zeros = 32 - __popc(bits), before = zeros;
    for (int o = 1; o < 32; o *= 2) { /* inclusive prefix of the zeros over the lanes */
        uint32_t x = __shfl_up_sync(DYN_FULL, before, o);
        if (lane >= o)
            before += x;
    }
    before -= zeros;
    uint32_t mine = take > before ? take - before : 0, open = ~bits;
    mine = mine < zeros ? mine : zeros;
    for (uint32_t c = 0; c < mine; c++) {
        uint32_t bit = open & (0u - open);
        open ^= bit;
        bits |= bit;
        out[start[b] + before + c] =
            (uint32_t)(b * DYN_SLABS_PER_BLOCK) + (uint32_t)lane * 32 + (__ffs(bit) - 1);
    }
    *word = bits;
    if (lane == 0) {
        r.block_free[b] = free_here - (int)take;
        atomicAdd(&r.counters[DYN_C_USED], (unsigned long long)take);
    }
}

int ghmi_dyn_take(CudaDynmap *d, size_t k, uint32_t *out, void **block)
{
    GhmContext *ctx = d->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    size_t nb = d->ref.n_blocks, temp_bytes = 0;
    /* The free counts are never negative: summed as unsigned (2^32 slabs at most). */
    const uint32_t *free_counts = (const uint32_t *)d->ref.block_free;
    int ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, temp_bytes, free_counts,
                                                     (uint32_t *)NULL, nb, s));
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, nb * 4 + temp_bytes, block);
    if (ret < 0)
        return ret;
    uint32_t *start = (uint32_t *)*block;
    ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum((char *)*block + nb * 4, temp_bytes,
                                                 free_counts, start, nb, s));
    if (ret < 0)
        return ret;
    take_kernel<<<(unsigned)((nb * 32 + 255) / 256), 256, 0, s>>>(d->ref, start, (uint32_t)k,
                                                                  out);
    return GHM_CUDA_LAUNCH();
}

/* Gives slab s, empty, back as dyn_unmark does, but one atomic pair for the calling lanes whose
 * slabs share a mask word: the pool's unused slabs are consecutive in slab order, so a warp's
 * mostly do (an atomic pair a slab gave 0.4 M back in 0.09 ms, H200, 2026-12-02). Not for
 * the gc, whose releases are scattered over the blocks: dyn_unmark made to combine like this
 * made it 0-10 % slower (H200, 2026-12-02, bench_raw/h200_2026-12-02_dynmap_giveback). */
static __device__ void unmark_together(const DynRef &r, uint32_t s)
{
    namespace cg = cooperative_groups;
    uint32_t blk = s / DYN_SLABS_PER_BLOCK, off = s % DYN_SLABS_PER_BLOCK;
    uint32_t word = blk * 32 + off / 32; /* below 2^27: 2^32 slabs at most */
    cg::coalesced_group same = cg::labeled_partition(cg::coalesced_threads(), word);
    uint32_t bits = cg::reduce(same, 1u << (off % 32), cg::bit_or<uint32_t>());
    if (same.thread_rank() == 0) {
        atomicAnd(&r.bits[word], ~bits);
        atomicAdd(&r.block_free[blk], (int)same.size());
    }
}

/* A thread per slab of the pool: one past what the plan asked of it (counters[DYN_C_POOL]),
 * or a spare, goes back to its memory block, untouched (still empty). Those returned are
 * taken off counters[DYN_C_USED] once a block. */
static __global__ void give_back_kernel(DynRef r, DynPool pool)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    unsigned long long asked = r.counters[DYN_C_POOL], spares = r.counters[DYN_C_SPARES];
    unsigned back = 0;
    if (i < pool.n && i >= asked) {
        unmark_together(r, pool.slabs[i]);
        back++;
    }
    if (i < spares) { /* spares <= pool.n: each was taken from the pool */
        unmark_together(r, pool.spares[i]);
        back++;
    }
    if (unsigned sum = dyn_block_sum(back))
        atomicAdd(&r.counters[DYN_C_USED], 0ull - sum);
}

int ghmi_dyn_give_back(CudaDynmap *d, const DynPool *pool)
{
    if (!pool->n)
        return GHM_OK;
    give_back_kernel<<<thread_grid(pool->n), THREADS, 0, ghm_cuda_stream(d->ctx)>>>(d->ref,
                                                                                  *pool);
    return GHM_CUDA_LAUNCH();
}

cudaError_t ghmi_dyn_alloc_load_kernels(const GhmContext *ctx)
{
    const void *const k[] = {(const void *)init_supers_kernel, (const void *)take_kernel,
                             (const void *)give_back_kernel};
    return ghm_cuda_load_kernels(ctx, k, sizeof k / sizeof *k);
}
