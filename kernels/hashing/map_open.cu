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

#include "hashing/probe_family.h"
#include "map_scheme.cuh"

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
    GhmiSchemeMap base;        /* meta: an OpenMeta */
    unsigned long long *slots; /* t.capacity slots */
    size_t alloc;              /* slots allocated, kept from build to build */
    GhmiOpenTable t;
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

/* Slots in a window of linear probing's find (open_find_linear): 64 aligned bytes, the windows
 * whose first slots are the homes (probe_family.h). */
enum { OPEN_WINDOW = GHMI_OPEN_WINDOW };

/* Linear probing's find, a window at a time: the aligned 64 bytes (half a line) that hold the
 * probe are read by four 16-byte loads issued together and compared in registers from the
 * probe on. Slot by slot, each probe waited for the load before it (L1 hits after the first):
 * about 13 dependent loads for an absent key at load 0.8. On the H100 (2026-11-27) windows of
 * 8 beat windows of 4 (one sector) on absent keys, and windows that start at the probe's
 * sector (they may cross a line) lost on present ones. The slots array is allocated to whole
 * windows (reserve); slots past the capacity are never compared. */
static __device__ uint32_t open_find_linear(const GhmiOpenTable &t,
                                            const unsigned long long *__restrict__ slots,
                                            uint32_t key)
{
    uint32_t pos = ghmi_open_home(&t, key), left = t.max_probes;
    for (;;) {
        uint32_t w = pos & ~(OPEN_WINDOW - 1u);
        unsigned long long e[OPEN_WINDOW];
#pragma unroll
        for (int k = 0; k < OPEN_WINDOW; k += 2) {
            ulonglong2 two = __ldg((const ulonglong2 *)(slots + w + k));
            e[k] = two.x;
            e[k + 1] = two.y;
        }
#pragma unroll
        for (uint32_t k = 0; k < OPEN_WINDOW; k++) {
            if (k < pos - w || w + k >= t.capacity)
                continue;
            if (left-- == 0 || e[k] == GHMI_EMPTY_SLOT)
                return GHM_NOT_FOUND;
            if (ghmi_slot_key(e[k]) == key)
                return ghmi_slot_value(e[k]);
        }
        pos = w + OPEN_WINDOW < t.capacity ? w + OPEN_WINDOW : 0;
    }
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
    } else if (t.scheme == GHM_MAP_LINEAR) {
        v = open_find_linear(t, slots, key);
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

static void open_release(GhmiSchemeMap *b)
{
    CudaOpenMap *m = (CudaOpenMap *)b;
    ghmi_cuda_release(b->ctx, m->slots);
    m->slots = NULL;
    m->alloc = 0;
}

/* Room for cap slots in whole windows (open_find_linear). */
static size_t windows_slots(size_t cap)
{
    return (cap + OPEN_WINDOW - 1) / OPEN_WINDOW * OPEN_WINDOW;
}

static int reserve(CudaOpenMap *m, size_t cap)
{
    cap = windows_slots(cap);
    if (m->slots && m->alloc >= cap)
        return GHM_OK;
    open_release(&m->base);
    int ret = ghmi_device_alloc(m->base.ctx, cap * 8, (void **)&m->slots);
    if (ret >= 0)
        m->alloc = cap;
    return ret;
}

/* One attempt: clear, insert, read the counters (the wait). */
static int try_build(GhmiSchemeMap *b, int attempt, const uint32_t *keys, const uint32_t *values,
                     size_t n)
{
    CudaOpenMap *m = (CudaOpenMap *)b;
    OpenMeta *dmeta = (OpenMeta *)b->meta;
    int ret = ghmi_open_table(b->opt.scheme, n, b->opt.load_factor, b->ctx->seed, attempt, &m->t);
    unsigned grid = 1;
    if (ret >= 0)
        ret = ghmi_cuda_grid(n, 256, &grid);
    if (ret >= 0)
        ret = reserve(m, m->t.capacity);
    if (ret < 0)
        return ret;
    cudaStream_t s = ghm_cuda_stream(b->ctx);
    OpenMeta meta;
    memset(&meta, 0, sizeof meta);
    meta.oob_value = GHM_NOT_FOUND;
    /* the windows' padding too: read, never compared */
    ret = GHM_CUDA(cudaMemsetAsync(m->slots, 0xFF, windows_slots(m->t.capacity) * 8, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(dmeta, &meta, sizeof meta, cudaMemcpyHostToDevice, s));
    if (ret >= 0 && n) {
        open_insert_kernel<<<grid, 256, 0, s>>>(m->t, m->slots, keys, values, n, dmeta);
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
    m->t.max_probes = meta.longest;
    b->oob_value = meta.oob_present ? meta.oob_value : GHM_NOT_FOUND;
    b->size = n - (size_t)meta.oob_inputs - (size_t)meta.merges + meta.oob_present;
    return GHM_OK;
}

static int open_build(GhmiSchemeMap *b, const uint32_t *keys, const uint32_t *values, size_t n)
{
    return ghmi_scheme_attempts(b, try_build, keys, values, n);
}

static void open_find(const GhmiSchemeMap *b, const uint32_t *keys, size_t n, uint32_t *out,
                      unsigned grid, cudaStream_t s)
{
    const CudaOpenMap *m = (const CudaOpenMap *)b;
    open_find_kernel<<<grid, 256, 0, s>>>(m->t, m->slots, keys, n, b->oob_value, out);
}

static void open_stats(const GhmiSchemeMap *b, GhmMapStats *out)
{
    const CudaOpenMap *m = (const CudaOpenMap *)b;
    out->capacity = m->t.capacity;
    out->bytes = (size_t)m->t.capacity * 8;
    out->max_probes = m->t.max_probes;
}

static const GhmiSchemeOps open_scheme = {
    /* .state_bytes = */ sizeof(CudaOpenMap),
    /* .meta_bytes = */ sizeof(OpenMeta),
    /* .max_pairs = */ SIZE_MAX,
    /* .build = */ open_build,
    /* .find = */ open_find,
    /* .release = */ open_release,
    /* .stats = */ open_stats,
};

static int open_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    return ghmi_scheme_create(ctx, opt, &open_scheme, impl);
}

extern "C" const GhmMapOps ghm_cuda_open_map_ops = {
    /* .create = */ open_create,
    /* .build = */ ghmi_scheme_build,
    /* .find = */ ghmi_scheme_find,
    /* .stats = */ ghmi_scheme_stats,
    /* .destroy = */ ghmi_scheme_destroy,
    /* .find_queued = */ ghmi_scheme_find_queued,
};
