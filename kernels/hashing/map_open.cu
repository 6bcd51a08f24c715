/*
 * map_open.cu - the CUDA backend's open-addressing GhmMap (linear, quadratic and double hashing;
 * Alcantara's thesis, chapter 3), the same table as hashing/map_open_cpu.c with the probe
 * sequences of hashing/probe_family.h: one thread per pair walks its key's sequence and claims
 * the first empty slot with one 64-bit atomicCAS (key and value together); meeting its own key it
 * lowers the stored value with a 64-bit atomicMin (the key bits are equal, so the minimum word is
 * the one with the smaller value). Nothing moves, so a find walks the sequence to the key, an
 * empty slot, or the longest sequence the build needed. A build waits once per attempt, to read
 * whether a key ran out of probes.
 */
#include <stdlib.h>
#include <string.h>

#include "hash_cuda_internal.cuh"
#include "hashing/probe_family.h"

/* Counters of one attempt on the device. */
typedef struct OpenMeta {
    unsigned int failed;        /* a key found no slot within the bound */
    unsigned int longest;       /* the longest probe sequence */
    unsigned int oob_present;   /* the key 0xFFFFFFFF was among the pairs */
    unsigned int oob_value;     /* its smallest value */
    unsigned long long oob_inputs; /* pairs with that key */
    unsigned long long merges;  /* pairs that met an earlier copy of their key */
} OpenMeta;

typedef struct CudaOpenMap {
    GhmContext *ctx;
    GhmMapOptions opt;
    unsigned long long *slots; /* t.capacity slots */
    size_t alloc;              /* slots allocated, kept from build to build */
    OpenMeta *meta;
    GhmiOpenTable t;
    int built;
    uint32_t oob_value; /* GHM_NOT_FOUND when the key 0xFFFFFFFF is absent */
    size_t size;
    int rebuilds;
} CudaOpenMap;

/* One pair's insert; returns the probes taken, 0 when the bound ran out. */
static __device__ uint32_t open_insert_pair(const GhmiOpenTable &t, unsigned long long *slots,
                                            uint32_t key, uint32_t value, OpenMeta *meta)
{
    uint32_t pos = ghmi_open_home(&t, key), step = ghmi_open_first_step(&t, key);
    unsigned long long mine = ghmi_pack(key, value);
    for (uint32_t probe = 1; probe <= t.max_probes; probe++) {
        /* A plain read first: a slot that holds a key keeps it, so a stale copy of it is right
         * about the key, and only an empty-looking slot needs the atomic. */
        unsigned long long cur = slots[pos];
        if (cur == GHMI_EMPTY_SLOT)
            cur = atomicCAS(&slots[pos], GHMI_EMPTY_SLOT, mine);
        if (cur == GHMI_EMPTY_SLOT)
            return probe;
        if (ghmi_slot_key(cur) == key) {
            atomicMin(&slots[pos], mine);
            atomicAdd(&meta->merges, 1ull);
            return probe;
        }
        ghmi_open_next(&t, &pos, &step);
    }
    return 0;
}

static __global__ __launch_bounds__(256) void open_insert_kernel(
    GhmiOpenTable t, unsigned long long *slots, const uint32_t *__restrict__ keys,
    const uint32_t *__restrict__ values, size_t n, OpenMeta *meta)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t probes = 0;
    if (i < n) {
        uint32_t key = keys[i], value = values[i];
        if (key == GHMI_EMPTY_KEY) {
            meta->oob_present = 1;
            atomicMin(&meta->oob_value, value);
            atomicAdd(&meta->oob_inputs, 1ull);
        } else if (!(probes = open_insert_pair(t, slots, key, value, meta))) {
            meta->failed = 1;
        }
    }
    ghmi_warp_raise(&meta->longest, probes); /* every lane reaches it: no early return above */
}

static __global__ __launch_bounds__(256) void open_find_kernel(
    GhmiOpenTable t, const unsigned long long *__restrict__ slots,
    const uint32_t *__restrict__ keys, size_t n, uint32_t oob_value, uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t key = keys[i];
    uint32_t v = GHM_NOT_FOUND;
    if (key == GHMI_EMPTY_KEY) {
        v = oob_value;
    } else {
        uint32_t pos = ghmi_open_home(&t, key), step = ghmi_open_first_step(&t, key);
        for (uint32_t probe = 0; probe < t.max_probes; probe++) {
            unsigned long long e = __ldg(&slots[pos]);
            if (ghmi_slot_key(e) == key) {
                v = ghmi_slot_value(e);
                break;
            }
            if (e == GHMI_EMPTY_SLOT)
                break;
            ghmi_open_next(&t, &pos, &step);
        }
    }
    out[i] = v;
}

static int reserve(CudaOpenMap *m, size_t cap)
{
    if (m->slots && m->alloc >= cap)
        return GHM_OK;
    GhmContext *ctx = m->ctx;
    ghmi_cuda_release(ctx, m->slots);
    m->slots = NULL;
    m->alloc = 0;
    int ret = ghmi_device_alloc(ctx, cap * 8, (void **)&m->slots);
    if (ret >= 0)
        m->alloc = cap;
    return ret;
}

/* One attempt: clear, insert, read the counters (the wait). */
static int try_build(CudaOpenMap *m, int attempt, const uint32_t *keys, const uint32_t *values,
                     size_t n)
{
    int ret = ghmi_open_table(m->opt.scheme, n, m->opt.load_factor, m->ctx->seed, attempt, &m->t);
    unsigned grid = 1;
    if (ret >= 0)
        ret = ghmi_cuda_grid(n, 256, &grid);
    if (ret >= 0)
        ret = reserve(m, m->t.capacity);
    if (ret < 0)
        return ret;
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    OpenMeta meta;
    memset(&meta, 0, sizeof meta);
    meta.oob_value = GHM_NOT_FOUND;
    ret = GHM_CUDA(cudaMemsetAsync(m->slots, 0xFF, (size_t)m->t.capacity * 8, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(m->meta, &meta, sizeof meta, cudaMemcpyHostToDevice, s));
    if (ret >= 0 && n) {
        open_insert_kernel<<<grid, 256, 0, s>>>(m->t, m->slots, keys, values, n, m->meta);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&meta, m->meta, sizeof meta, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    if (ret < 0)
        return ret;
    if (meta.failed)
        return GHM_ERR_BUILD_FAILED;
    m->t.max_probes = meta.longest;
    m->oob_value = meta.oob_present ? meta.oob_value : GHM_NOT_FOUND;
    m->size = n - (size_t)meta.oob_inputs - (size_t)meta.merges + meta.oob_present;
    return GHM_OK;
}

static int open_build_device(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaOpenMap *m = (CudaOpenMap *)impl;
    m->built = 0;
    m->size = 0;
    int ret = GHM_ERR_BUILD_FAILED;
    int attempt = 0;
    for (; attempt <= m->opt.max_rebuilds && ret == GHM_ERR_BUILD_FAILED; attempt++)
        ret = try_build(m, attempt, keys, values, n);
    m->rebuilds = attempt - 1;
    if (ret < 0) { /* a failed build leaves an empty map, its memory returned */
        ghmi_cuda_release(m->ctx, m->slots);
        m->slots = NULL;
        m->alloc = 0;
        return ret;
    }
    m->built = 1;
    return GHM_OK;
}

static int open_find_device(const void *impl, const uint32_t *keys, size_t n, uint32_t *out,
                            cudaStream_t s)
{
    const CudaOpenMap *m = (const CudaOpenMap *)impl;
    unsigned grid = 1;
    int ret = ghmi_cuda_grid(n, 256, &grid);
    if (ret < 0)
        return ret;
    if (!m->built)
        return GHM_CUDA(cudaMemsetAsync(out, 0xFF, n * 4, s));
    open_find_kernel<<<grid, 256, 0, s>>>(m->t, m->slots, keys, n, m->oob_value, out);
    return GHM_CUDA_LAUNCH();
}

/* ---- the op table ---------------------------------------------------------------------------- */

static void open_destroy(void *impl)
{
    CudaOpenMap *m = (CudaOpenMap *)impl;
    if (!m)
        return;
    ghmi_cuda_release(m->ctx, m->slots);
    ghmi_cuda_release(m->ctx, m->meta);
    ghm_cuda_wait(ghm_cuda_stream(m->ctx));
    free(m);
}

static int open_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    CudaOpenMap *m = (CudaOpenMap *)calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->opt = *opt;
    int ret = ghmi_device_alloc(ctx, sizeof(OpenMeta), (void **)&m->meta);
    if (ret < 0) {
        open_destroy(m);
        return ret;
    }
    *impl = m;
    return GHM_OK;
}

static int open_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaOpenMap *m = (CudaOpenMap *)impl;
    return ghmi_cuda_staged_build(m->ctx, m, open_build_device, keys, values, n);
}

static int open_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const CudaOpenMap *m = (const CudaOpenMap *)impl;
    return ghmi_cuda_staged_find(m->ctx, m, open_find_device, keys, n, out);
}

static int open_stats(const void *impl, GhmMapStats *out)
{
    const CudaOpenMap *m = (const CudaOpenMap *)impl;
    size_t cap = m->built ? m->t.capacity : 0;
    out->size = m->size;
    out->capacity = cap;
    out->rebuilds = m->rebuilds;
    out->bytes = cap * 8;
    out->max_probes = m->built ? m->t.max_probes : 0;
    return GHM_OK;
}

extern "C" const GhmMapOps ghm_cuda_open_map_ops = {
    /* .create = */ open_create,
    /* .build = */ open_build,
    /* .find = */ open_find,
    /* .stats = */ open_stats,
    /* .destroy = */ open_destroy,
};
