/*
 * map_robin.cu - the CUDA backend's Robin Hood GhmMap (Garcia, Lefebvre, Hornus, Lasram: Coherent
 * Parallel Hashing, 2011), the same table as hashing/map_robin_cpu.c (which explains the
 * algorithm and its handling of duplicate keys) with the probe sequences of
 * hashing/probe_family.h. The paper's insert kernel, one thread per pair: each step is one 64-bit
 * atomicMax of age | key | index (the hardware has it since sm_35; the paper emulated it with
 * atomicCAS); then a kernel rewrites every slot in place to key | value and raises the home slot's
 * 4-bit entry of the max-age table, and a last one gives duplicated keys their smallest value.
 * A find reads the max-age entry of its home slot and probes at most that many slots (in a table
 * of the random sequence it also stops at a younger resident: the Robin Hood rule), then, when
 * the stash holds keys that aged past 15 (probe_family.h), looks there.
 *
 * Waits: one per attempt (did the stash overflow, how many duplicates, the stash's words) and one
 * at the end (the largest age, for the stats).
 */
#include <stdlib.h>
#include <string.h>

#include "hashing/probe_family.h"
#include "map_scheme.cuh"

/* Dropped duplicates listed before the settling pass runs over every pair instead (as on the
 * CPU, map_robin_cpu.c). */
#define DUP_LIST 65536

typedef struct RobinMeta {
    unsigned int failed;             /* the stash overflowed */
    unsigned int stashed;            /* keys that aged past GHMI_RH_MAX_AGE, overflow included */
    unsigned long long stash[GHMI_RH_STASH]; /* their words; key | value after the rewrite */
    unsigned int oldest;             /* the largest age (the rewrite pass) */
    unsigned int oob_present;        /* the key 0xFFFFFFFF was among the pairs */
    unsigned int oob_value;          /* its smallest value */
    unsigned long long oob_inputs;   /* pairs with that key */
    unsigned long long dups;         /* copies dropped (listed or not) */
} RobinMeta;

typedef struct CudaRobinMap {
    GhmiSchemeMap base;        /* meta: a RobinMeta */
    unsigned long long *slots; /* t.capacity slots */
    uint32_t *mat;             /* the max-age table, ghmi_mat_words(alloc) words */
    uint32_t *dup_list;        /* DUP_LIST pair indices */
    size_t alloc;              /* slots allocated, kept from build to build */
    uint32_t stash_used;       /* words in meta's stash */
    GhmiRobinTable t;
} CudaRobinMap;

/* Inserts word w and what it evicts; a key that would age past the limit goes to the stash.
 * Returns 0 when the stash is full. */
static __device__ int robin_insert_word(const GhmiRobinTable &t, unsigned long long *slots,
                                        unsigned long long w, RobinMeta *meta, uint32_t *dup_list)
{
    for (;;) {
        uint32_t key = ghmi_rh_key(w);
        uint32_t pos = ghmi_robin_probe(&t, key, ghmi_robin_home(&t, key), ghmi_rh_age(w));
        unsigned long long prev = atomicMax(&slots[pos], w);
        if (prev && ghmi_rh_same_key(prev, w)) {
            unsigned long long at = atomicAdd(&meta->dups, 1ull);
            if (at < DUP_LIST)
                dup_list[at] = ghmi_rh_idx(prev < w ? prev : w);
            return 1;
        }
        if (prev < w) { /* w took the slot */
            if (!prev)
                return 1;
            w = prev; /* the evicted key goes on from its next age */
        }
        if (ghmi_rh_age(w) == GHMI_RH_MAX_AGE) {
            unsigned j = atomicAdd(&meta->stashed, 1u);
            if (j >= GHMI_RH_STASH)
                return 0;
            meta->stash[j] = w;
            return 1;
        }
        w += 1ull << 60;
    }
}

static __global__ __launch_bounds__(256) void robin_insert_kernel(
    GhmiRobinTable t, unsigned long long *slots, const uint32_t *__restrict__ keys,
    const uint32_t *__restrict__ values, size_t n, RobinMeta *meta, uint32_t *dup_list)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t key = keys[i];
    if (key == GHMI_EMPTY_KEY) {
        meta->oob_present = 1;
        atomicMin(&meta->oob_value, values[i]);
        atomicAdd(&meta->oob_inputs, 1ull);
    } else if (!robin_insert_word(t, slots, ghmi_rh_word(1, key, (uint32_t)i), meta, dup_list)) {
        meta->failed = 1;
    }
}

/* Raises home's 4-bit entry of the max-age table to age. */
static __device__ void mat_raise(uint32_t *mat, uint32_t home, uint32_t age)
{
    uint32_t *w = &mat[home >> 3];
    unsigned shift = (home & 7) * 4;
    uint32_t cur = *(volatile uint32_t *)w;
    while ((cur >> shift & 15u) < age) {
        uint32_t prev = atomicCAS(w, cur, (cur & ~(15u << shift)) | age << shift);
        if (prev == cur)
            break;
        cur = prev;
    }
}

/* Slot and stash words -> key | value, and the max-age table. */
static __global__ __launch_bounds__(256) void robin_finish_kernel(
    GhmiRobinTable t, unsigned long long *slots, uint32_t *mat,
    const uint32_t *__restrict__ values, RobinMeta *meta, uint32_t stash_used)
{
    size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < stash_used) {
        unsigned long long w = meta->stash[p];
        meta->stash[p] = ghmi_pack(ghmi_rh_key(w), values[ghmi_rh_idx(w)]);
    }
    uint32_t age = 0;
    if (p < t.capacity) {
        unsigned long long w = slots[p];
        if (!w) {
            slots[p] = GHMI_EMPTY_SLOT;
        } else {
            uint32_t key = ghmi_rh_key(w);
            age = ghmi_rh_age(w);
            slots[p] = ghmi_pack(key, values[ghmi_rh_idx(w)]);
            mat_raise(mat, ghmi_robin_home(&t, key), age);
        }
    }
    ghmi_warp_raise(&meta->oldest, age); /* every lane reaches it */
}

/* The slot index holding key, or capacity when absent. `oldest` > 0: the table's largest age,
 * known once it is built, and a walk also ends by the Robin Hood rule (probe_family.h). */
static __device__ __forceinline__ uint32_t robin_locate(const GhmiRobinTable &t,
                                                        const unsigned long long *slots,
                                                        const uint32_t *mat, uint32_t key,
                                                        uint32_t oldest)
{
    uint32_t home = ghmi_robin_home(&t, key);
    uint32_t last = ghmi_mat_get(mat, home);
    for (uint32_t age = 1; age <= last; age++) {
        uint32_t pos = ghmi_robin_probe(&t, key, home, age);
        unsigned long long e = slots[pos];
        if (ghmi_slot_key(e) == key)
            return pos;
        if (e == GHMI_EMPTY_SLOT) /* a key never passes a slot that was ever empty */
            break;
        if (oldest && age < last &&
            ghmi_robin_passed_over(&t, key, age, ghmi_slot_key(e), pos, oldest))
            break;
    }
    return t.capacity;
}

/* Each listed (or, listed = 0, every) pair lowers its stored key's value to its own. */
static __global__ __launch_bounds__(256) void robin_dups_kernel(
    GhmiRobinTable t, unsigned long long *slots, const uint32_t *mat,
    const uint32_t *__restrict__ keys, const uint32_t *__restrict__ values,
    const uint32_t *__restrict__ dup_list, size_t count, int listed, RobinMeta *meta,
    uint32_t stash_used)
{
    size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count)
        return;
    size_t i = listed ? dup_list[j] : j;
    uint32_t key = keys[i];
    if (key == GHMI_EMPTY_KEY)
        return;
    uint32_t pos = robin_locate(t, slots, mat, key, 0); /* t.max_age is not known yet */
    if (pos < t.capacity) {
        atomicMin(&slots[pos], ghmi_pack(key, values[i]));
        return;
    }
    for (uint32_t s = 0; s < stash_used; s++) /* a find takes the least of the stash's copies */
        if (ghmi_slot_key(meta->stash[s]) == key)
            atomicMin(&meta->stash[s], ghmi_pack(key, values[i]));
}

/* kRule: walks end by the Robin Hood rule too, for tables of the random sequence: on an H200,
 * 2^26 random keys, absent finds 9.9 -> 11.2 G keys/s at load 0.99 and 13.7 -> 15.5 at 0.95,
 * present ones unchanged. Not for the coherent sequence, where recomputing a resident's age (a
 * modulo, then its offsets age by age) made finds 2.4x slower (5.87 -> 2.48 at 0.99) and the
 * coherent image's 9x slower, and its instantiation with the rule compiled in but not taken
 * 3.5 % slower (docs/BENCHMARKS.md, 2026-11-30). */
template <bool kRule>
static __global__ __launch_bounds__(256) void robin_find_kernel(
    GhmiRobinTable t, const unsigned long long *__restrict__ slots,
    const uint32_t *__restrict__ mat, const uint32_t *__restrict__ keys, size_t n,
    uint32_t oob_value, const RobinMeta *__restrict__ meta, uint32_t stash_used,
    uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t key = keys[i];
    uint32_t v = oob_value;
    if (key != GHMI_EMPTY_KEY) {
        uint32_t pos = robin_locate(t, slots, mat, key, kRule ? t.max_age : 0);
        v = pos < t.capacity ? ghmi_slot_value(__ldg(&slots[pos]))
            : stash_used     ? ghmi_rh_stash_value((const uint64_t *)meta->stash, stash_used, key)
                             : GHM_NOT_FOUND;
    }
    out[i] = v;
}

static void robin_release(GhmiSchemeMap *b)
{
    CudaRobinMap *m = (CudaRobinMap *)b;
    ghmi_cuda_release(b->ctx, m->slots);
    ghmi_cuda_release(b->ctx, m->mat);
    ghmi_cuda_release(b->ctx, m->dup_list);
    m->slots = NULL;
    m->mat = NULL;
    m->dup_list = NULL;
    m->alloc = 0;
}

static int reserve(CudaRobinMap *m, size_t cap)
{
    if (m->slots && m->alloc >= cap)
        return GHM_OK;
    robin_release(&m->base);
    GhmContext *ctx = m->base.ctx;
    int ret = ghmi_device_alloc(ctx, cap * 8, (void **)&m->slots);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, (size_t)ghmi_mat_words((uint32_t)cap) * 4, (void **)&m->mat);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, DUP_LIST * sizeof(uint32_t), (void **)&m->dup_list);
    if (ret < 0) {
        robin_release(&m->base);
        return ret;
    }
    m->alloc = cap;
    return GHM_OK;
}

/* Clears the table, inserts, and reads the counters (the attempt's wait). */
static int insert_attempt(CudaRobinMap *m, const uint32_t *keys, const uint32_t *values,
                          size_t n, RobinMeta *meta)
{
    RobinMeta *dmeta = (RobinMeta *)m->base.meta;
    cudaStream_t s = ghm_cuda_stream(m->base.ctx);
    unsigned grid = 1;
    int ret = ghmi_cuda_grid(n, 256, &grid);
    memset(meta, 0, sizeof *meta);
    meta->oob_value = GHM_NOT_FOUND;
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(m->slots, 0, (size_t)m->t.capacity * 8, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(m->mat, 0, (size_t)ghmi_mat_words(m->t.capacity) * 4, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(dmeta, meta, sizeof *meta, cudaMemcpyHostToDevice, s));
    if (ret >= 0 && n) {
        robin_insert_kernel<<<grid, 256, 0, s>>>(m->t, m->slots, keys, values, n, dmeta,
                                                 m->dup_list);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(meta, dmeta, sizeof *meta, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    return ret < 0 ? ret : meta->failed ? GHM_ERR_BUILD_FAILED : GHM_OK;
}

/* Rewrites the slots, settles duplicates and reads the largest age (the second wait). */
static int finish_build(CudaRobinMap *m, const uint32_t *keys, const uint32_t *values, size_t n,
                        const RobinMeta *meta)
{
    RobinMeta *dmeta = (RobinMeta *)m->base.meta;
    cudaStream_t s = ghm_cuda_stream(m->base.ctx);
    unsigned grid = 1;
    int ret = ghmi_cuda_grid(m->t.capacity, 256, &grid);
    if (ret < 0)
        return ret;
    robin_finish_kernel<<<grid, 256, 0, s>>>(m->t, m->slots, m->mat, values, dmeta,
                                             m->stash_used);
    ret = GHM_CUDA_LAUNCH();
    int listed = meta->dups <= DUP_LIST;
    size_t count = listed ? (size_t)meta->dups : n;
    if (ret >= 0 && meta->dups && (ret = ghmi_cuda_grid(count, 256, &grid)) >= 0) {
        robin_dups_kernel<<<grid, 256, 0, s>>>(m->t, m->slots, m->mat, keys, values, m->dup_list,
                                                count, listed, dmeta, m->stash_used);
        ret = GHM_CUDA_LAUNCH();
    }
    unsigned int oldest = 0;
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&oldest, &dmeta->oldest, sizeof oldest,
                                       cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    m->t.max_age = oldest;
    return ret;
}

static int try_build(GhmiSchemeMap *b, int attempt, const uint32_t *keys, const uint32_t *values,
                     size_t n)
{
    CudaRobinMap *m = (CudaRobinMap *)b;
    int coherent = b->opt.scheme == GHM_MAP_ROBIN_HOOD;
    int ret = ghmi_robin_table(coherent, n, b->opt.load_factor, b->ctx->seed, attempt, &m->t);
    if (ret >= 0)
        ret = reserve(m, m->t.capacity);
    RobinMeta meta;
    if (ret >= 0)
        ret = insert_attempt(m, keys, values, n, &meta);
    m->stash_used = ret >= 0 ? meta.stashed : 0;
    /* copies of one key age past 15 together (they follow one sequence): one of them counts */
    size_t stash_dups = m->stash_used - ghmi_rh_stash_distinct((const uint64_t *)meta.stash,
                                                               m->stash_used);
    if (ret >= 0)
        ret = finish_build(m, keys, values, n, &meta);
    if (ret < 0)
        return ret;
    b->oob_value = meta.oob_present ? meta.oob_value : GHM_NOT_FOUND;
    b->size = n - (size_t)meta.oob_inputs - (size_t)meta.dups - stash_dups + meta.oob_present;
    return GHM_OK;
}

static int robin_build(GhmiSchemeMap *b, const uint32_t *keys, const uint32_t *values, size_t n)
{
    return ghmi_scheme_attempts(b, try_build, keys, values, n);
}

static void robin_find(const GhmiSchemeMap *b, const uint32_t *keys, size_t n, uint32_t *out,
                       unsigned grid, cudaStream_t s)
{
    const CudaRobinMap *m = (const CudaRobinMap *)b;
    (m->t.coherent ? robin_find_kernel<false> : robin_find_kernel<true>)<<<grid, 256, 0, s>>>(
        m->t, m->slots, m->mat, keys, n, b->oob_value, (const RobinMeta *)b->meta, m->stash_used,
        out);
}

static void robin_stats(const GhmiSchemeMap *b, GhmMapStats *out)
{
    const CudaRobinMap *m = (const CudaRobinMap *)b;
    out->capacity = m->t.capacity;
    out->bytes = (size_t)m->t.capacity * 8 + (size_t)ghmi_mat_words(m->t.capacity) * 4;
    out->max_probes = m->t.max_age;
    out->stash_used = m->stash_used;
}

static const GhmiSchemeOps robin_scheme = {
    /* .state_bytes = */ sizeof(CudaRobinMap),
    /* .meta_bytes = */ sizeof(RobinMeta),
    /* .max_pairs = */ GHM_MAP_ROBIN_HOOD_MAX_PAIRS,
    /* .build = */ robin_build,
    /* .find = */ robin_find,
    /* .release = */ robin_release,
    /* .stats = */ robin_stats,
};

static int robin_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    return ghmi_scheme_create(ctx, opt, &robin_scheme, impl);
}

extern "C" const GhmMapOps ghm_cuda_robin_map_ops = {
    /* .create = */ robin_create,
    /* .build = */ ghmi_scheme_build,
    /* .find = */ ghmi_scheme_find,
    /* .stats = */ ghmi_scheme_stats,
    /* .destroy = */ ghmi_scheme_destroy,
    /* .find_queued = */ ghmi_scheme_find_queued,
};
