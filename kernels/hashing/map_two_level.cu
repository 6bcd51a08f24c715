/*
 * map_two_level.cu - the CUDA backend's two-level cuckoo GhmMap (Alcantara et al., Real-Time
 * Parallel Hashing on the GPU, 2009, section 4 and Algorithm 1; Alcantara's thesis, chapter 5),
 * the same table as hashing/map_two_level_cpu.c with the sizing, hashes and layout of
 * hashing/two_level_family.h.
 *
 * Phase 1 (three launches and a scan): count_kernel, a thread per pair, hashes the key to its
 * bucket and takes its offset there with an atomicAdd on the bucket's counter; CUB's exclusive
 * sum of the counters gives every bucket's start; scatter_kernel copies each pair, key and value
 * interleaved in one 64-bit word, to start[bucket] + offset. The key 0xFFFFFFFF stays out of the
 * buckets (count_kernel keeps its smallest value out of band).
 *
 * Phase 2: bucket_kernel, one block of 512 threads per bucket, builds the bucket's three
 * sub-tables of 192 keys in shared memory by the paper's parallel cuckoo hashing: in round r
 * every thread whose key is in none of its three slots writes it into its slot of sub-table
 * r mod 3, regardless of what is there (the key it overwrites is then missing and writes itself
 * into the next sub-table in the next round); the build ends after the first round in which no
 * thread wrote - every key then sat in one of its slots while nothing moved - or fails after
 * GHMI_TL_ROUNDS rounds, when the block starts the bucket again alone with its next seed (at most
 * GHMI_TL_SEEDS). Copies of one key hash alike and write the same word, so they are placed
 * together; then each pair lowers its key's value with a shared-memory atomicMin, and the block
 * writes its sub-tables, keys and values interleaved, to global memory with its seed. A bucket
 * holds any number of pairs (each thread takes every 512th), so duplicated keys never overflow
 * it; a bucket out of seeds (more distinct keys than its 576 slots take) fails the attempt, and
 * phase 1 starts again with new constants, at most max_rebuilds times. A build waits once per
 * attempt, to read whether a bucket failed.
 *
 * Find: a thread per key hashes it to its bucket, reads the bucket's seed and probes at most its
 * three sub-tables (four reads).
 */
#include <cub/cub.cuh>
#include <stdlib.h>
#include <string.h>

#include "hashing/two_level_family.h"
#include "map_scheme.cuh"

#define TL_BLOCK 512 /* the paper's block per bucket: a thread per key of a full bucket */

/* Counters of one attempt on the device. */
typedef struct TwoLevelMeta {
    unsigned int failed;         /* a bucket ran out of seeds */
    unsigned int deepest;        /* the last sub-table (1 .. 3) that holds a key */
    unsigned int oob_present;    /* the key 0xFFFFFFFF was among the pairs */
    unsigned int oob_value;      /* its smallest value */
    unsigned long long distinct; /* keys stored in the buckets */
} TwoLevelMeta;

/* Phase 1's working memory, for one build (every attempt has the same number of buckets). */
typedef struct Work {
    uint32_t *count;  /* buckets + 1, the last 0: pairs per bucket */
    uint32_t *start;  /* buckets + 1: exclusive sum of count */
    uint32_t *offset; /* n */
    unsigned long long *buf; /* n: the pairs, bucket after bucket */
    void *scan_temp;
    size_t scan_bytes;
} Work;

typedef struct CudaTwoLevelMap {
    GhmiSchemeMap base;        /* meta: a TwoLevelMeta */
    unsigned long long *slots; /* ghmi_tl_slots(&t) */
    uint32_t *seeds;           /* t.buckets */
    size_t alloc_buckets;      /* kept from build to build */
    GhmiTwoLevelTable t;
    unsigned deepest;
    Work work;                 /* during a build */
} CudaTwoLevelMap;

/* ---- phase 1 --------------------------------------------------------------------------------- */

static __global__ __launch_bounds__(256) void count_kernel(GhmiTwoLevelTable t,
                                                           const uint32_t *__restrict__ keys,
                                                           const uint32_t *__restrict__ values,
                                                           size_t n, uint32_t *count,
                                                           uint32_t *__restrict__ offset,
                                                           TwoLevelMeta *meta)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t key = keys[i];
    if (key == GHMI_EMPTY_KEY) {
        meta->oob_present = 1;
        atomicMin(&meta->oob_value, values[i]);
        return;
    }
    offset[i] = atomicAdd(&count[ghmi_tl_bucket(&t, key)], 1u);
}

static __global__ __launch_bounds__(256) void scatter_kernel(
    GhmiTwoLevelTable t, const uint32_t *__restrict__ keys, const uint32_t *__restrict__ values,
    size_t n, const uint32_t *__restrict__ start, const uint32_t *__restrict__ offset,
    unsigned long long *__restrict__ buf)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t key = keys[i];
    if (key != GHMI_EMPTY_KEY)
        buf[start[ghmi_tl_bucket(&t, key)] + offset[i]] = ghmi_pack(key, values[i]);
}

/* ---- phase 2 --------------------------------------------------------------------------------- */

/* The key's three slots in the bucket's shared sub-tables (sub-table i at i * GHMI_TL_SUB). */
struct TlSlots {
    uint32_t p[GHMI_TL_TABLES];
};

static __device__ __forceinline__ TlSlots tl_slots(const GhmiTwoLevelTable &t, uint32_t s,
                                                   uint32_t key)
{
    TlSlots q;
#pragma unroll
    for (int i = 0; i < GHMI_TL_TABLES; i++)
        q.p[i] = i * GHMI_TL_SUB + ghmi_tl_pos(&t, i, s, key);
    return q;
}

/* One key's part of a round: when it sits in none of its slots it writes itself into its slot
 * of sub-table `sub`. Returns 1 when it wrote. */
static __device__ __forceinline__ int tl_place(uint32_t *tab, uint32_t key, const TlSlots &q,
                                               int sub)
{
    volatile uint32_t *v = tab; /* other threads write meanwhile: read the shared word itself */
    if (v[q.p[0]] == key || v[q.p[1]] == key || v[q.p[2]] == key)
        return 0;
    v[sub == 0 ? q.p[0] : sub == 1 ? q.p[1] : q.p[2]] = key;
    return 1;
}

static __device__ __forceinline__ uint32_t tl_where(const uint32_t *tab, uint32_t key,
                                                    const TlSlots &q)
{
    return tab[q.p[0]] == key ? q.p[0] : tab[q.p[1]] == key ? q.p[1] : q.p[2];
}

static __global__ __launch_bounds__(TL_BLOCK) void bucket_kernel(
    GhmiTwoLevelTable t, const unsigned long long *__restrict__ buf,
    const uint32_t *__restrict__ start, unsigned long long *__restrict__ slots,
    uint32_t *__restrict__ seeds, TwoLevelMeta *meta)
{
    __shared__ uint32_t tab[GHMI_TL_BUCKET_SLOTS];
    __shared__ uint32_t val[GHMI_TL_BUCKET_SLOTS];
    __shared__ unsigned int stored, deepest;
    const uint32_t b = blockIdx.x, tid = threadIdx.x;
    const uint32_t lo = start[b], cnt = start[b + 1] - lo;
    const unsigned long long *items = buf + lo;
    /* The first of this thread's pairs (all of them in a bucket of at most 512) stays in
     * registers; the others are read again each round. */
    const int mine = tid < cnt;
    const uint32_t k0 = mine ? ghmi_slot_key(items[tid]) : GHMI_EMPTY_KEY;
    for (uint32_t s = 0; s < GHMI_TL_SEEDS; s++) {
        for (uint32_t p = tid; p < GHMI_TL_BUCKET_SLOTS; p += TL_BLOCK)
            tab[p] = GHMI_EMPTY_KEY;
        const TlSlots q0 = tl_slots(t, s, k0);
        __syncthreads();
        int done = 0;
        for (int r = 0, sub = 0; r < GHMI_TL_ROUNDS; r++, sub = sub == 2 ? 0 : sub + 1) {
            int wrote = mine ? tl_place(tab, k0, q0, sub) : 0;
            for (uint32_t j = tid + TL_BLOCK; j < cnt; j += TL_BLOCK) {
                uint32_t k = ghmi_slot_key(items[j]);
                wrote |= tl_place(tab, k, tl_slots(t, s, k), sub);
            }
            if (!__syncthreads_or(wrote)) { /* uniform: every thread leaves together */
                done = 1;
                break;
            }
        }
        if (!done)
            continue;
        /* Every key sits in one of its slots and nothing moves: the values, smallest first. */
        for (uint32_t p = tid; p < GHMI_TL_BUCKET_SLOTS; p += TL_BLOCK)
            val[p] = GHM_NOT_FOUND;
        if (tid == 0)
            stored = deepest = 0;
        __syncthreads();
        if (mine)
            atomicMin(&val[tl_where(tab, k0, q0)], ghmi_slot_value(items[tid]));
        for (uint32_t j = tid + TL_BLOCK; j < cnt; j += TL_BLOCK) {
            unsigned long long e = items[j];
            uint32_t k = ghmi_slot_key(e);
            atomicMin(&val[tl_where(tab, k, tl_slots(t, s, k))], ghmi_slot_value(e));
        }
        __syncthreads();
        unsigned int here = 0, deep = 0;
        for (uint32_t p = tid; p < GHMI_TL_BUCKET_SLOTS; p += TL_BLOCK) {
            uint32_t k = tab[p], i = p / GHMI_TL_SUB;
            int full = k != GHMI_EMPTY_KEY;
            slots[ghmi_tl_slot(&t, (int)i, b, p - i * GHMI_TL_SUB)] =
                full ? ghmi_pack(k, val[p]) : GHMI_EMPTY_SLOT;
            here += full;
            deep = full && i + 1 > deep ? i + 1 : deep;
        }
        if (here)
            atomicAdd(&stored, here);
        if (deep)
            atomicMax(&deepest, deep);
        __syncthreads();
        if (tid == 0) {
            seeds[b] = s;
            if (stored)
                atomicAdd(&meta->distinct, (unsigned long long)stored);
            if (deepest > *(volatile unsigned int *)&meta->deepest)
                atomicMax(&meta->deepest, deepest);
        }
        return;
    }
    if (tid == 0)
        meta->failed = 1;
}

/* ---- find ------------------------------------------------------------------------------------ */

static __global__ __launch_bounds__(256) void two_level_find_kernel(
    GhmiTwoLevelTable t, const unsigned long long *__restrict__ slots,
    const uint32_t *__restrict__ seeds, const uint32_t *__restrict__ keys, size_t n,
    uint32_t oob_value, uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t key = keys[i];
    uint32_t v = GHM_NOT_FOUND;
    if (key == GHMI_EMPTY_KEY) {
        v = oob_value;
    } else {
        uint32_t b = ghmi_tl_bucket(&t, key);
        uint32_t s = __ldg(&seeds[b]);
#pragma unroll
        for (int sub = 0; sub < GHMI_TL_TABLES; sub++) {
            uint32_t pos = ghmi_tl_pos(&t, sub, s, key);
            unsigned long long e = __ldg(&slots[ghmi_tl_slot(&t, sub, b, pos)]);
            if (ghmi_slot_key(e) == key) {
                v = ghmi_slot_value(e);
                break;
            }
        }
    }
    out[i] = v;
}

/* ---- the build ------------------------------------------------------------------------------- */

static void two_level_release(GhmiSchemeMap *b)
{
    CudaTwoLevelMap *m = (CudaTwoLevelMap *)b;
    ghmi_cuda_release(b->ctx, m->slots);
    ghmi_cuda_release(b->ctx, m->seeds);
    m->slots = NULL;
    m->seeds = NULL;
    m->alloc_buckets = 0;
}

static int reserve(CudaTwoLevelMap *m, size_t buckets)
{
    if (m->slots && m->alloc_buckets >= buckets)
        return GHM_OK;
    two_level_release(&m->base);
    GhmContext *ctx = m->base.ctx;
    int ret = ghmi_device_alloc(ctx, buckets * GHMI_TL_BUCKET_SLOTS * 8, (void **)&m->slots);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, buckets * 4, (void **)&m->seeds);
    if (ret < 0) {
        two_level_release(&m->base);
        return ret;
    }
    m->alloc_buckets = buckets;
    return GHM_OK;
}

static void work_free(GhmContext *ctx, Work *w)
{
    ghmi_cuda_release(ctx, w->count);
    ghmi_cuda_release(ctx, w->start);
    ghmi_cuda_release(ctx, w->offset);
    ghmi_cuda_release(ctx, w->buf);
    ghmi_cuda_release(ctx, w->scan_temp);
    memset(w, 0, sizeof *w);
}

/* Phase 1's memory for n pairs in nb buckets, the scan's scratch included (CUB's two calls). */
static int work_alloc(GhmContext *ctx, size_t n, uint32_t nb, Work *w)
{
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = ghmi_device_alloc(ctx, ((size_t)nb + 1) * 4, (void **)&w->count);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, ((size_t)nb + 1) * 4, (void **)&w->start);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, n * 4, (void **)&w->offset);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, n * 8, (void **)&w->buf);
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(NULL, w->scan_bytes, w->count, w->start,
                                                     (int)nb + 1, s));
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, w->scan_bytes, &w->scan_temp);
    return ret;
}

/* One attempt: split (phase 1), build every bucket (phase 2), read the counters (the wait). */
static int try_build(GhmiSchemeMap *b, int attempt, const uint32_t *keys, const uint32_t *values,
                     size_t n)
{
    CudaTwoLevelMap *m = (CudaTwoLevelMap *)b;
    Work *w = &m->work;
    TwoLevelMeta *dmeta = (TwoLevelMeta *)b->meta;
    int ret = ghmi_two_level_table(n, b->opt.load_factor, b->ctx->seed, attempt, &m->t);
    unsigned grid = 1;
    if (ret >= 0)
        ret = ghmi_cuda_grid(n, 256, &grid);
    if (ret < 0)
        return ret;
    const uint32_t nb = m->t.buckets;
    cudaStream_t s = ghm_cuda_stream(b->ctx);
    TwoLevelMeta meta;
    memset(&meta, 0, sizeof meta);
    meta.oob_value = GHM_NOT_FOUND;
    ret = GHM_CUDA(cudaMemcpyAsync(dmeta, &meta, sizeof meta, cudaMemcpyHostToDevice, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(w->count, 0, ((size_t)nb + 1) * 4, s));
    if (ret >= 0 && n) {
        count_kernel<<<grid, 256, 0, s>>>(m->t, keys, values, n, w->count, w->offset, dmeta);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = GHM_CUDA(cub::DeviceScan::ExclusiveSum(w->scan_temp, w->scan_bytes, w->count,
                                                     w->start, (int)nb + 1, s));
    if (ret >= 0 && n) {
        scatter_kernel<<<grid, 256, 0, s>>>(m->t, keys, values, n, w->start, w->offset, w->buf);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0) {
        bucket_kernel<<<nb, TL_BLOCK, 0, s>>>(m->t, w->buf, w->start, m->slots, m->seeds, dmeta);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&meta, dmeta, sizeof meta, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    if (ret < 0)
        return ret;
    if (meta.failed)
        return GHM_ERR_BUILD_FAILED;
    m->deepest = meta.deepest;
    b->oob_value = meta.oob_present ? meta.oob_value : GHM_NOT_FOUND;
    b->size = (size_t)meta.distinct + meta.oob_present;
    return GHM_OK;
}

/* The table and phase 1's memory are sized once from attempt 0's bucket count (the same for
 * every attempt); the memory lives for this build only. */
static int two_level_build(GhmiSchemeMap *b, const uint32_t *keys, const uint32_t *values,
                           size_t n)
{
    CudaTwoLevelMap *m = (CudaTwoLevelMap *)b;
    GhmiTwoLevelTable first;
    b->rebuilds = 0;
    int ret = ghmi_two_level_table(n, b->opt.load_factor, b->ctx->seed, 0, &first);
    if (ret >= 0)
        ret = reserve(m, first.buckets);
    if (ret >= 0)
        ret = work_alloc(b->ctx, n, first.buckets, &m->work);
    if (ret >= 0)
        ret = ghmi_scheme_attempts(b, try_build, keys, values, n);
    work_free(b->ctx, &m->work);
    return ret;
}

static void two_level_find(const GhmiSchemeMap *b, const uint32_t *keys, size_t n, uint32_t *out,
                           unsigned grid, cudaStream_t s)
{
    const CudaTwoLevelMap *m = (const CudaTwoLevelMap *)b;
    two_level_find_kernel<<<grid, 256, 0, s>>>(m->t, m->slots, m->seeds, keys, n, b->oob_value,
                                               out);
}

static void two_level_stats(const GhmiSchemeMap *b, GhmMapStats *out)
{
    const CudaTwoLevelMap *m = (const CudaTwoLevelMap *)b;
    out->capacity = (size_t)m->t.buckets * GHMI_TL_BUCKET_SLOTS;
    out->bytes = out->capacity * 8 + (size_t)m->t.buckets * 4;
    out->max_probes = m->deepest;
}

static const GhmiSchemeOps two_level_scheme = {
    /* .state_bytes = */ sizeof(CudaTwoLevelMap),
    /* .meta_bytes = */ sizeof(TwoLevelMeta),
    /* .max_pairs = */ SIZE_MAX,
    /* .build = */ two_level_build,
    /* .find = */ two_level_find,
    /* .release = */ two_level_release,
    /* .stats = */ two_level_stats,
};

static int two_level_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    return ghmi_scheme_create(ctx, opt, &two_level_scheme, impl);
}

extern "C" const GhmMapOps ghm_cuda_two_level_map_ops = {
    /* .create = */ two_level_create,
    /* .build = */ ghmi_scheme_build,
    /* .find = */ ghmi_scheme_find,
    /* .stats = */ ghmi_scheme_stats,
    /* .destroy = */ ghmi_scheme_destroy,
    /* .find_queued = */ ghmi_scheme_find_queued,
};
