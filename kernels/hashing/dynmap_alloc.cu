/*
 * dynmap_alloc.cu - the growth of GhmDynmap's CUDA slab allocator (the device side, a warp
 * taking or returning one slab, is in dynmap_ref.cuh). Super blocks of 16 memory blocks of
 * 1024 slabs (2 MiB) are added between kernels, never moved or freed before the table is, so
 * slab addresses and handles are stable. What one growth adds is one allocation of slab memory,
 * zeroed, plus, when the directory is full, larger copies of the directory of super blocks,
 * the block masks and the free counts; everything is allocated before anything is replaced.
 */
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

static int arrays_grow(CudaDynmap *d, size_t cap, Arrays *out)
{
    GhmContext *ctx = d->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    size_t blocks = cap * DYN_BLOCKS_PER_SUPER, old = d->n_supers * DYN_BLOCKS_PER_SUPER;
    *out = (Arrays){NULL, NULL, NULL};
    int ret = ghmi_device_alloc(ctx, cap * sizeof(uint32_t *), (void **)&out->dir);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, blocks * 32 * sizeof(uint32_t), (void **)&out->bits);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, blocks * sizeof(int), (void **)&out->block_free);
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

int ghmi_dyn_reserve(CudaDynmap *d, size_t need, size_t used)
{
    size_t total = ghmi_dyn_total_slabs(d);
    size_t free_now = total ? total - 1 - used : 0;
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
        if ((ret = arrays_grow(d, cap, &grown)) < 0)
            return ret;
    }
    size_t bytes = k * (size_t)DYN_SLABS_PER_SUPER * DYN_SLAB_WORDS * 4;
    void *chunk = NULL;
    ret = ghmi_device_alloc(ctx, bytes, &chunk);
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

/* Lists the blocks with free slabs (in no particular order). */
static __global__ void list_free_kernel(DynRef r, uint32_t *list, uint32_t *count)
{
    uint32_t b = blockIdx.x * blockDim.x + threadIdx.x;
    bool has = b < r.n_blocks && r.block_free[b] > 0;
    unsigned m = __ballot_sync(DYN_FULL, has);
    uint32_t base = 0;
    int lane = threadIdx.x & 31;
    if (lane == 0 && m)
        base = atomicAdd(count, (uint32_t)__popc(m));
    base = __shfl_sync(DYN_FULL, base, 0);
    if (has)
        list[base + __popc(m & ((1u << lane) - 1))] = b;
}

int ghmi_dyn_free_list(CudaDynmap *d, void **block, DynRef *out)
{
    GhmContext *ctx = d->ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    size_t nb = d->ref.n_blocks;
    *out = d->ref;
    int ret = ghmi_device_alloc(ctx, (nb + 1) * sizeof(uint32_t), block);
    if (ret < 0)
        return ret;
    uint32_t *count = (uint32_t *)*block, *list = count + 1;
    if ((ret = GHM_CUDA(cudaMemsetAsync(count, 0, sizeof *count, s))) < 0)
        return ret;
    list_free_kernel<<<(unsigned)((nb + 255) / 256), 256, 0, s>>>(d->ref, list, count);
    out->free_list = list;
    out->free_count = count;
    return GHM_CUDA_LAUNCH();
}
