/*
 * map_group.cu - a large bucketed insert's pairs grouped by the region of the table that holds
 * their first bucket, before map_insert.cu places them.
 *
 * Why: with the pairs in input order, a thread per pair reads a random bucket and CASes a random
 * slot, both in DRAM, and a random 64-bit atomic runs at 13.7 G/s on the H100 (BENCHMARKS,
 * "Against BGHT and cuCollections"): no insert in that order can pass it. With the pairs grouped
 * by region, the threads resident at any moment (a few hundred thousand, in grid order) work on
 * one or two neighbouring regions of a few MB, which stay in L2: the first-choice reads and
 * CASes, those of most pairs, hit L2, and each sector of the table travels to and from DRAM about
 * once. Grouping costs one counting pass over the keys, a scan of the region counts and one
 * scatter of the packed pairs (n * 8 bytes of scratch): 0.8 ms for 2^26 pairs on the H100, where
 * the insert kernel went from 6.8 to 4.1 ms at load 0.8.
 *
 * Its regions are the table's hash regions where it has them (map_ref.cuh: a key's other buckets
 * lie in the region of its first), so an eviction moves a pair within the region too.
 *
 * Departure from the papers (the thesis and BGHT insert in input order): the order of the
 * pairs within a region is whatever the atomics hand out, which changes where keys land but
 * not what a find returns (duplicates keep their smallest value in any order; map_dedup.cu's
 * argument does not depend on the order). A table that is not much larger than L2 is inserted
 * ungrouped: most of its atomics stay there anyway. Without the scratch memory the insert runs
 * ungrouped as well.
 */
#include <cub/block/block_scan.cuh>

#include "map_cuda_internal.cuh"
#include "map_group.h"

enum {
    GROUP_THREADS = 256,
    GROUP_ITEMS = 16,
    GROUP_TILE = GROUP_THREADS * GROUP_ITEMS, /* 4096 pairs: 32 KB staged in shared memory */
    GROUP_MAX_REGIONS = 1024, /* bins fit in shared memory; places pack in 12 + 10 bits */
    CURSOR_STRIDE = 32,       /* a region's cursor per 128-byte line: its atomics in parallel */
};

/* Regions of about this many bytes: a few of them fit in L2 beside what else it holds. */
static const size_t DEFAULT_REGION_BYTES = (size_t)4 << 20;

static size_t tuned_min_table_bytes = 0, tuned_region_bytes = 0;

void ghmi_map_group_tune(size_t min_table_bytes, size_t region_bytes)
{
    tuned_min_table_bytes = min_table_bytes;
    tuned_region_bytes = region_bytes;
}

/* A pair's region: its first bucket's index shifted (regions are runs of 2^shift buckets). */
static __device__ __forceinline__ uint32_t region_of(const GhmMapRef &ref, uint32_t k,
                                                     uint32_t shift)
{
    return ghm_map_ref_bucket(&ref, k, 0) >> shift;
}

static __device__ __forceinline__ void clear_bins(uint32_t *bins, uint32_t regions)
{
    for (uint32_t r = threadIdx.x; r < regions; r += GROUP_THREADS)
        bins[r] = 0;
    __syncthreads();
}

/* Pass 1: the pairs whose first bucket is in region r, at cursors[r * CURSOR_STRIDE] (a tile per
 * block, counted in shared memory, one global atomic per region and block). */
static __global__ __launch_bounds__(GROUP_THREADS) void count_kernel(
    GhmMapRef ref, uint32_t shift, uint32_t regions, const uint32_t *__restrict__ keys,
    const uint32_t *count, size_t n, uint32_t *cursors)
{
    __shared__ uint32_t bins[GROUP_MAX_REGIONS];
    size_t m = ghmi_attempt_pairs(count, n), tile = (size_t)blockIdx.x * GROUP_TILE;
    if (tile >= m) /* past a queued build's count */
        return;
    clear_bins(bins, regions);
#pragma unroll
    for (int j = 0; j < GROUP_ITEMS; j++) {
        size_t i = tile + (size_t)j * GROUP_THREADS + threadIdx.x;
        if (i < m)
            atomicAdd(&bins[region_of(ref, keys[i], shift)], 1u);
    }
    __syncthreads();
    for (uint32_t r = threadIdx.x; r < regions; r += GROUP_THREADS)
        if (bins[r])
            atomicAdd(cursors + (size_t)r * CURSOR_STRIDE, bins[r]);
}

/* Pass 2: the counts become each region's first free place (an exclusive scan, one block). */
static __global__ __launch_bounds__(GROUP_MAX_REGIONS) void scan_kernel(uint32_t *cursors,
                                                                        uint32_t regions)
{
    typedef cub::BlockScan<uint32_t, GROUP_MAX_REGIONS> Scan;
    __shared__ typename Scan::TempStorage temp;
    uint32_t r = threadIdx.x, start;
    uint32_t total = r < regions ? cursors[(size_t)r * CURSOR_STRIDE] : 0;
    Scan(temp).ExclusiveSum(total, start);
    if (r < regions)
        cursors[(size_t)r * CURSOR_STRIDE] = start;
}

/* Where each region's run starts in the tile's staging (an exclusive scan of the bins, four bins
 * a thread). */
static __device__ __forceinline__ void scan_bins(const uint32_t *bins, uint32_t *starts)
{
    typedef cub::BlockScan<uint32_t, GROUP_THREADS> Scan;
    __shared__ typename Scan::TempStorage temp;
    const int per = GROUP_MAX_REGIONS / GROUP_THREADS;
    uint32_t own[per], sum = 0, start;
#pragma unroll
    for (int q = 0; q < per; q++) {
        own[q] = bins[threadIdx.x * per + q];
        sum += own[q];
    }
    Scan(temp).ExclusiveSum(sum, start);
#pragma unroll
    for (int q = 0; q < per; q++) {
        starts[threadIdx.x * per + q] = start;
        start += own[q];
    }
}

/* Pass 3, the scatter: a tile's pairs are ordered by region in shared memory, each region's run
 * is reserved in the output (one global atomic per region and tile), and the staging is written
 * out in order, so that a warp's stores fall in a few runs (coalesced) rather than one region
 * each. The packed pairs are the table's slots. */
static __global__ __launch_bounds__(GROUP_THREADS) void scatter_kernel(
    GhmMapRef ref, uint32_t shift, uint32_t regions, const uint32_t *__restrict__ keys,
    const uint32_t *__restrict__ values, const uint32_t *count, size_t n, uint32_t *cursors,
    unsigned long long *__restrict__ grouped)
{
    __shared__ unsigned long long staged[GROUP_TILE];
    __shared__ uint32_t bins[GROUP_MAX_REGIONS], starts[GROUP_MAX_REGIONS],
        runs[GROUP_MAX_REGIONS];
    size_t m = ghmi_attempt_pairs(count, n), tile = (size_t)blockIdx.x * GROUP_TILE;
    if (tile >= m)
        return;
    clear_bins(bins, GROUP_MAX_REGIONS); /* all of them: scan_bins reads every bin */
    uint32_t key[GROUP_ITEMS], value[GROUP_ITEMS], slot[GROUP_ITEMS]; /* region << 12 | place */
#pragma unroll
    for (int j = 0; j < GROUP_ITEMS; j++) {
        size_t i = tile + (size_t)j * GROUP_THREADS + threadIdx.x;
        if (i < m) {
            key[j] = keys[i];
            value[j] = values ? values[i] : (uint32_t)i;
            uint32_t r = region_of(ref, key[j], shift);
            slot[j] = r << 12 | atomicAdd(&bins[r], 1u);
        }
    }
    __syncthreads();
    scan_bins(bins, starts);
    for (uint32_t r = threadIdx.x; r < regions; r += GROUP_THREADS)
        if (bins[r]) /* the run's first place in the output */
            runs[r] = atomicAdd(cursors + (size_t)r * CURSOR_STRIDE, bins[r]);
    __syncthreads();
#pragma unroll
    for (int j = 0; j < GROUP_ITEMS; j++)
        if (tile + (size_t)j * GROUP_THREADS + threadIdx.x < m)
            staged[starts[slot[j] >> 12] + (slot[j] & 4095)] = ghmi_pack(key[j], value[j]);
    __syncthreads();
    /* Each staged pair's region is hashed again rather than staged beside it: the pairs fill
     * the shared memory a block may take without opting in. */
    uint32_t here = (uint32_t)(m - tile < GROUP_TILE ? m - tile : GROUP_TILE);
    for (uint32_t t = threadIdx.x; t < here; t += GROUP_THREADS) {
        unsigned long long e = staged[t];
        uint32_t r = region_of(ref, ghmi_slot_key(e), shift);
        grouped[(size_t)runs[r] + (t - starts[r])] = e;
    }
}

/* The shift that makes regions of at most region_bytes. */
static uint32_t shift_for(const GhmMapRef *ref, size_t region_bytes)
{
    size_t bucket_bytes = (size_t)ref->bucket_slots * 8;
    uint32_t shift = 0;
    while (((size_t)bucket_bytes << (shift + 1)) <= region_bytes)
        shift++;
    return shift;
}

/* Not tuned by the test hook: a region must hold enough keys that its load stays close to the
 * table's (a 4 MB region of 8-slot buckets holds ~500k keys at load 0.95, +-0.14 %). */
uint32_t ghmi_map_region_shift(const GhmMapRef *r)
{
    if (r->bucket_slots == 1)
        return 0;
    uint32_t shift = shift_for(r, DEFAULT_REGION_BYTES);
    return (r->num_buckets >> shift) >= 4 ? shift : 0;
}

/* The grouping's shift: the table's hash regions, or regions of about region_bytes, widened
 * until they are few enough (a grouping region then holds whole hash regions). */
static uint32_t region_shift(const GhmMapRef *ref, size_t region_bytes)
{
    uint32_t shift = ref->region_shift ? ref->region_shift : shift_for(ref, region_bytes);
    while (((ref->num_buckets - 1) >> shift) + 1 > GROUP_MAX_REGIONS)
        shift++;
    return shift;
}

/* Whether the attempt's table is worth grouping for: bucketed, and a few times larger than L2
 * (below that much of an ungrouped table is in L2 anyway). */
static int worth_grouping(GhmContext *ctx, const GhmiMapAttempt *a, int *out)
{
    *out = 0;
    if (a->n == 0 || a->ref.bucket_slots == 1 || a->ref.num_buckets == 0)
        return GHM_OK;
    size_t table = (size_t)a->ref.num_buckets * a->ref.bucket_slots * 8;
    size_t least = tuned_min_table_bytes;
    if (least == 0) {
        int l2 = 0;
        int ret = GHM_CUDA(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize,
                                                  ghm_cuda_device(ctx)));
        if (ret < 0)
            return ret;
        /* Measured on the H100: 4-slot buckets gain from 2.7 times L2 on and not at 1.3-1.7;
         * 8-slot ones (load 0.95) lose 6 % at 2.8 times and gain from 5.6 on. */
        least = l2 > 0 ? (a->ref.bucket_slots > 4 ? 4 : 2) * (size_t)l2 : 0;
    }
    *out = table > least && a->n <= 0xFFFFFFFFu; /* places in a region are 32-bit */
    return GHM_OK;
}

/* The scratch block: the grouped pairs, then a cursor per region. */
typedef struct GroupParts {
    unsigned long long *grouped;
    uint32_t *cursors;
} GroupParts;

static void layout(GhmiCarve *c, GroupParts *p, size_t n, uint32_t regions)
{
    p->grouped = (unsigned long long *)ghmi_carve(c, n * 8);
    p->cursors = (uint32_t *)ghmi_carve(c, (size_t)regions * CURSOR_STRIDE * 4);
}

static int launch_passes(const GhmiMapAttempt *a, uint32_t shift, uint32_t regions,
                         const GroupParts *p, cudaStream_t s)
{
    size_t tiles = (a->n + GROUP_TILE - 1) / GROUP_TILE;
    if (tiles > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    int ret = GHM_CUDA(cudaMemsetAsync(p->cursors, 0, (size_t)regions * CURSOR_STRIDE * 4, s));
    if (ret < 0)
        return ret;
    count_kernel<<<(unsigned)tiles, GROUP_THREADS, 0, s>>>(a->ref, shift, regions, a->keys,
                                                          a->count, a->n, p->cursors);
    if ((ret = GHM_CUDA_LAUNCH()) < 0)
        return ret;
    scan_kernel<<<1, GROUP_MAX_REGIONS, 0, s>>>(p->cursors, regions);
    if ((ret = GHM_CUDA_LAUNCH()) < 0)
        return ret;
    scatter_kernel<<<(unsigned)tiles, GROUP_THREADS, 0, s>>>(
        a->ref, shift, regions, a->keys, a->values, a->count, a->n, p->cursors, p->grouped);
    return GHM_CUDA_LAUNCH();
}

int ghmi_map_group_launch(GhmContext *ctx, GhmiMapAttempt *a, void **scratch)
{
    *scratch = NULL;
    a->grouped = NULL;
    int worth = 0;
    int ret = worth_grouping(ctx, a, &worth);
    if (ret < 0 || !worth)
        return ret;
    uint32_t shift = region_shift(&a->ref, tuned_region_bytes ? tuned_region_bytes
                                                               : DEFAULT_REGION_BYTES);
    uint32_t regions = ((a->ref.num_buckets - 1) >> shift) + 1;
    GroupParts p;
    GhmiCarve c = {NULL, 0};
    layout(&c, &p, a->n, regions);
    ret = ghmi_device_alloc_spare(ctx, c.used, scratch);
    if (ret == GHM_ERR_NOMEM) /* no room to group: the insert runs ungrouped */
        return GHM_OK;
    if (ret < 0)
        return ret;
    c = ghmi_carve_start(*scratch);
    layout(&c, &p, a->n, regions);
    ret = launch_passes(a, shift, regions, &p, ghm_cuda_stream(ctx));
    if (ret >= 0)
        a->grouped = p.grouped;
    return ret;
}
