/*
 * map_chain.cu - the CUDA backend's chaining GhmMap, built by radix sort (Alcantara's thesis,
 * chapter 4), the same table as hashing/map_chain_cpu.c with probe_family.h's numbering:
 *
 *   1. code_kernel: each pair's code, a bijective hash of its key (one thread per pair);
 *   2. CUB DeviceRadixSort::SortPairs of (code, value) over 32 bits: the order of the buckets,
 *      and within a bucket of the codes, so copies of a key are neighbours;
 *   3. CUB DeviceReduce::ReduceByKey with a minimum: one pair per key with its smallest value
 *      (as every scheme keeps), and their number, which the host reads (the build's one wait
 *      before the end) to size the grids that follow;
 *   4. pack_kernel: code << 32 | value, so that a probe is one 8-byte load;
 *   5. boundary_kernel: starts[] by the thesis's listing 4.1 (one thread per pair; the first pair
 *      of a bucket starts every bucket after the previous pair's up to its own; the last closes
 *      the rest), buckets + 1 entries;
 *   6. longest_kernel: the longest run, by one warp maximum and one atomicMax per warp.
 *
 * A find is one thread per key: its bucket's two starts, then the run scanned up to the first
 * code not below the key's. The memory of the sort and the reduction is one stream-ordered
 * scratch block per build; the table's two arrays are kept from build to build while they are
 * large enough. Any failure leaves the map empty with those arrays released.
 */
#include <cub/cub.cuh>
#include <stdlib.h>

#include "hashing/probe_family.h"
#include "map_scheme.cuh"

typedef struct CudaChainMap {
    GhmiSchemeMap base;        /* meta: the longest run of the last build (an unsigned int) */
    unsigned long long *pairs; /* size entries (room for t.pairs), code << 32 | value, sorted */
    uint32_t *starts;          /* t.buckets + 1 */
    size_t pairs_alloc;        /* entries allocated, kept from build to build */
    size_t starts_alloc;
    GhmiChainTable t;
} CudaChainMap;

struct ChainMinOp {
    __device__ uint32_t operator()(uint32_t a, uint32_t b) const { return a < b ? a : b; }
};

static __global__ __launch_bounds__(256) void code_kernel(GhmiChainTable t,
                                                          const uint32_t *__restrict__ keys,
                                                          size_t n, uint32_t *__restrict__ codes)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        codes[i] = ghmi_chain_code(&t, keys[i]);
}

static __global__ __launch_bounds__(256) void pack_kernel(const uint32_t *__restrict__ codes,
                                                          const uint32_t *__restrict__ values,
                                                          size_t m,
                                                          unsigned long long *__restrict__ pairs)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m)
        pairs[j] = ghmi_pack(codes[j], values[j]);
}

static __global__ __launch_bounds__(256) void boundary_kernel(
    GhmiChainTable t, const unsigned long long *__restrict__ pairs, size_t m,
    uint32_t *__restrict__ starts)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    uint32_t mine = ghmi_chain_bucket(&t, ghmi_slot_key(pairs[j]));
    uint32_t from = j ? ghmi_chain_bucket(&t, ghmi_slot_key(pairs[j - 1])) + 1 : 0;
    for (uint32_t b = from; b <= mine; b++)
        starts[b] = (uint32_t)j;
    if (j == m - 1)
        for (uint32_t b = mine + 1; b <= t.buckets; b++)
            starts[b] = (uint32_t)m;
}

static __global__ __launch_bounds__(256) void longest_kernel(const uint32_t *__restrict__ starts,
                                                             uint32_t buckets,
                                                             unsigned int *longest)
{
    size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t len = b < buckets ? starts[b + 1] - starts[b] : 0;
    ghmi_warp_raise(longest, len); /* every lane reaches it */
}

static __global__ __launch_bounds__(256) void chain_find_kernel(
    GhmiChainTable t, const unsigned long long *__restrict__ pairs,
    const uint32_t *__restrict__ starts, const uint32_t *__restrict__ keys, size_t n,
    uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t code = ghmi_chain_code(&t, keys[i]);
    uint32_t b = ghmi_chain_bucket(&t, code);
    uint32_t lo = __ldg(&starts[b]), hi = __ldg(&starts[b + 1]);
    uint32_t v = GHM_NOT_FOUND;
    for (uint32_t j = lo; j < hi; j++) {
        unsigned long long e = __ldg(&pairs[j]);
        uint32_t c = ghmi_slot_key(e);
        if (c >= code) {
            if (c == code)
                v = ghmi_slot_value(e);
            break;
        }
    }
    out[i] = v;
}

static void chain_release(GhmiSchemeMap *b)
{
    CudaChainMap *m = (CudaChainMap *)b;
    ghmi_cuda_release(b->ctx, m->pairs);
    ghmi_cuda_release(b->ctx, m->starts);
    m->pairs = NULL;
    m->starts = NULL;
    m->pairs_alloc = 0;
    m->starts_alloc = 0;
}

/* Grows *p to at least `want` elements of `size` bytes (at least one), keeping a larger one. */
static int reserve(GhmContext *ctx, void **p, size_t *alloc, size_t want, size_t size)
{
    if (want == 0)
        want = 1;
    if (*p && *alloc >= want)
        return GHM_OK;
    ghmi_cuda_release(ctx, *p);
    *p = NULL;
    *alloc = 0;
    int ret = ghmi_device_alloc(ctx, want * size, p);
    if (ret >= 0)
        *alloc = want;
    return ret;
}

static size_t align16(size_t b) { return (b + 15) & ~(size_t)15; }

/* Steps 1-3 into the scratch block: the distinct codes (into codes) and their smallest values,
 * *distinct their number (read back: a wait). */
static int sort_reduce(CudaChainMap *m, const GhmiChainTable *t, const uint32_t *keys,
                       const uint32_t *values, size_t n, void **scratch, uint32_t **ucodes,
                       uint32_t **uvalues, size_t *distinct)
{
    GhmContext *ctx = m->base.ctx;
    cudaStream_t s = ghm_cuda_stream(ctx);
    unsigned grid = 1;
    int ret = ghmi_cuda_grid(n, 256, &grid);
    size_t b_sort = 0, b_red = 0;
    uint32_t *codes = NULL, *sorted_codes = NULL, *sorted_values = NULL, *min_values = NULL;
    unsigned long long *dnum = NULL, num = 0;
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b_sort, codes, sorted_codes, values,
                                                       sorted_values, n, 0, 32, s));
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceReduce::ReduceByKey(NULL, b_red, sorted_codes, codes,
                                                      sorted_values, min_values, dnum,
                                                      ChainMinOp(), n, s));
    size_t arr = align16(n * 4), temp_bytes = align16(b_sort > b_red ? b_sort : b_red);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, 4 * arr + temp_bytes + sizeof num, scratch);
    if (ret < 0)
        return ret;
    char *base = (char *)*scratch;
    codes = (uint32_t *)base;
    sorted_codes = (uint32_t *)(base + arr);
    sorted_values = (uint32_t *)(base + 2 * arr);
    min_values = (uint32_t *)(base + 3 * arr);
    void *temp = base + 4 * arr;
    dnum = (unsigned long long *)(base + 4 * arr + temp_bytes);
    code_kernel<<<grid, 256, 0, s>>>(*t, keys, n, codes);
    ret = GHM_CUDA_LAUNCH();
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(temp, b_sort, codes, sorted_codes, values,
                                                       sorted_values, n, 0, 32, s));
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceReduce::ReduceByKey(temp, b_red, sorted_codes, codes,
                                                      sorted_values, min_values, dnum,
                                                      ChainMinOp(), n, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&num, dnum, sizeof num, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    *ucodes = codes;
    *uvalues = min_values;
    *distinct = (size_t)num;
    return ret;
}

static int chain_build(GhmiSchemeMap *b, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaChainMap *m = (CudaChainMap *)b;
    GhmContext *ctx = b->ctx;
    unsigned int *dlongest = (unsigned int *)b->meta;
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = ghmi_chain_table(n, b->opt.load_factor, ctx->seed, &m->t);
    void *scratch = NULL;
    uint32_t *ucodes = NULL, *uvalues = NULL;
    size_t size = 0;
    if (ret >= 0)
        ret = reserve(ctx, (void **)&m->pairs, &m->pairs_alloc, n, 8);
    if (ret >= 0)
        ret = reserve(ctx, (void **)&m->starts, &m->starts_alloc, (size_t)m->t.buckets + 1, 4);
    if (ret >= 0 && n)
        ret = sort_reduce(m, &m->t, keys, values, n, &scratch, &ucodes, &uvalues, &size);
    unsigned grid_pairs = 1, grid_buckets = 1;
    if (ret >= 0)
        ret = ghmi_cuda_grid(size, 256, &grid_pairs);
    if (ret >= 0)
        ret = ghmi_cuda_grid(m->t.buckets, 256, &grid_buckets);
    if (ret >= 0 && size) {
        pack_kernel<<<grid_pairs, 256, 0, s>>>(ucodes, uvalues, size, m->pairs);
        ret = GHM_CUDA_LAUNCH();
        if (ret >= 0) {
            boundary_kernel<<<grid_pairs, 256, 0, s>>>(m->t, m->pairs, size, m->starts);
            ret = GHM_CUDA_LAUNCH();
        }
    } else if (ret >= 0) {
        ret = GHM_CUDA(cudaMemsetAsync(m->starts, 0, ((size_t)m->t.buckets + 1) * 4, s));
    }
    unsigned int longest = 0;
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(dlongest, 0, sizeof longest, s));
    if (ret >= 0) {
        longest_kernel<<<grid_buckets, 256, 0, s>>>(m->starts, m->t.buckets, dlongest);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&longest, dlongest, sizeof longest,
                                       cudaMemcpyDeviceToHost, s));
    ghmi_cuda_release(ctx, scratch);
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    if (ret < 0)
        return ret;
    m->t.max_chain = longest;
    b->size = size;
    return GHM_OK;
}

static void chain_find(const GhmiSchemeMap *b, const uint32_t *keys, size_t n, uint32_t *out,
                       unsigned grid, cudaStream_t s)
{
    const CudaChainMap *m = (const CudaChainMap *)b;
    chain_find_kernel<<<grid, 256, 0, s>>>(m->t, m->pairs, m->starts, keys, n, out);
}

static void chain_stats(const GhmiSchemeMap *b, GhmMapStats *out)
{
    const CudaChainMap *m = (const CudaChainMap *)b;
    out->capacity = ghmi_chain_capacity(&m->t);
    out->bytes = ghmi_chain_bytes(&m->t);
    out->max_probes = m->t.max_chain;
}

static const GhmiSchemeOps chain_scheme = {
    /* .state_bytes = */ sizeof(CudaChainMap),
    /* .meta_bytes = */ sizeof(unsigned int),
    /* .max_pairs = */ SIZE_MAX,
    /* .build = */ chain_build,
    /* .find = */ chain_find,
    /* .release = */ chain_release,
    /* .stats = */ chain_stats,
};

static int chain_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    return ghmi_scheme_create(ctx, opt, &chain_scheme, impl);
}

extern "C" const GhmMapOps ghm_cuda_chain_map_ops = {
    /* .create = */ chain_create,
    /* .build = */ ghmi_scheme_build,
    /* .find = */ ghmi_scheme_find,
    /* .stats = */ ghmi_scheme_stats,
    /* .destroy = */ ghmi_scheme_destroy,
    /* .find_queued = */ ghmi_scheme_find_queued,
};
