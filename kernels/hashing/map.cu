/*
 * map.cu - GhmMap on the CUDA backend: table sizing, the build attempts and the op table that
 * hashing/map.c dispatches to. The insert is in map_insert.cu (which describes the layouts), the
 * duplicate passes in map_dedup.cu; both hash with hash_family.h, as the CPU map does.
 *
 * An attempt is queued on the context's stream and waits for nothing: clear the table, insert,
 * settle duplicates (unless the caller promised distinct keys). The outcome (failure, stash use,
 * distinct keys) stays on the device until settle() reads it with the one wait of a build. A
 * build from the API queues attempt 0, settles, and on failure (an eviction chain and its stash
 * slot both exhausted) queues the next attempt with fresh constants, up to max_rebuilds times;
 * then it leaves the map empty and returns GHM_ERR_BUILD_FAILED. A queued build (hash_refs.h)
 * stops after its one attempt: its table is sized from a bound on the pairs, whose number lives
 * on the device, and its reference is valid at once for kernels queued behind it (with the stash
 * probed, since whether a key went there is known on the device only); the pipeline learns of a
 * failure from its own download of the failure word and asks for the next attempt.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "map_cuda_internal.cuh"
#include "hash_internal.h"

static int normalize_options(const GhmMapOptions *in, GhmMapOptions *out)
{
    GhmMapOptions o;
    if (in) {
        o = *in;
    } else {
        memset(&o, 0, sizeof o);
        o.max_rebuilds = 8;
    }
    if (o.load_factor == 0.0)
        o.load_factor = 0.8;
    if (!(o.load_factor > 0.0 && o.load_factor <= 0.99))
        return GHM_ERR_INVALID;
    if (o.layout != GHM_MAP_BUCKETED && o.layout != GHM_MAP_THESIS)
        return GHM_ERR_INVALID;
    if (o.hash_functions == 0)
        o.hash_functions = o.layout == GHM_MAP_THESIS ? 4 : 2;
    int max_h = o.layout == GHM_MAP_THESIS ? 5 : 3;
    if (o.hash_functions < 2 || o.hash_functions > max_h || o.max_rebuilds < 0)
        return GHM_ERR_INVALID;
    *out = o;
    return GHM_OK;
}

int ghmi_cuda_map_create(GhmContext *ctx, const GhmMapOptions *opt, CudaMap **out)
{
    GhmMapOptions o;
    int ret = normalize_options(opt, &o);
    if (ret < 0)
        return ret;
    CudaMap *m = (CudaMap *)calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->layout = o.layout;
    m->load = o.load_factor;
    m->hashes = o.hash_functions;
    m->max_rebuilds = o.max_rebuilds;
    cudaStream_t s = ghm_cuda_stream(ctx);
    ret = ghmi_device_alloc(ctx, (GHMI_STASH_SIZE + 1) * 8, (void **)&m->stash);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, sizeof(MapMeta), (void **)&m->meta);
    if (ret >= 0)
        ret = ghmi_cuda_map_forget(m); /* empty until built, also for the out-of-band key */
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    if (ret < 0) {
        ghmi_cuda_map_destroy(m);
        return ret;
    }
    *out = m;
    return GHM_OK;
}

void ghmi_cuda_map_destroy(CudaMap *m)
{
    if (!m)
        return;
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    if (m->slots)
        ghmi_device_free(m->ctx, m->slots);
    if (m->marks)
        ghmi_device_free(m->ctx, m->marks);
    if (m->stash)
        ghmi_device_free(m->ctx, m->stash);
    if (m->meta)
        ghmi_device_free(m->ctx, m->meta);
    ghm_cuda_wait(s);
    free(m);
}

const GhmMapRef *ghmi_cuda_map_get_ref(const CudaMap *m) { return &m->ref; }

int ghmi_cuda_map_forget(CudaMap *m)
{
    /* No hash functions: every probe misses without reading a slot, whatever the table holds
     * or whether it still exists; the stash (allocated with the map) answers the out-of-band
     * key, so its slot is emptied. */
    memset(&m->ref, 0, sizeof m->ref);
    m->ref.stash = m->stash;
    m->size = 0;
    m->stash_count = 0;
    m->pending = 0;
    return GHM_CUDA(cudaMemsetAsync(m->stash + GHMI_STASH_SIZE, 0xFF, 8, ghm_cuda_stream(m->ctx)));
}

/* Longest eviction chain before the stash: 7 lg N at load 0.8 (thesis 6.1.1); chains grow
 * quickly toward the layout's limit, so tighter tables get more steps. */
static uint32_t max_chain(const CudaMap *m, size_t n)
{
    uint32_t base = 7 * ((uint32_t)ghmi_ceil_log2(n) + 1);
    if (m->layout == GHM_MAP_BUCKETED)
        return base + 32;
    uint32_t factor = m->load <= 0.8 ? 1 : m->load <= 0.9 ? 4 : 16;
    if (m->hashes <= 3)
        factor *= 2;
    return base * factor;
}

/* Table geometry for n pairs: the ref's sizes, before any constants are drawn. */
static int size_table(CudaMap *m, size_t n, GhmMapRef *r)
{
    memset(r, 0, sizeof *r);
    r->layout = (uint32_t)m->layout;
    r->num_hashes = (uint32_t)m->hashes;
    r->full_prefix = 1;
    r->bucket_slots = m->layout == GHM_MAP_THESIS ? 1 : m->load <= 0.9 ? 4 : 8;
    double buckets = ceil((double)n / (m->load * r->bucket_slots));
    if (buckets < 1)
        buckets = 1;
    if (buckets > 4294967295.0)
        return GHM_ERR_TOO_LARGE;
    r->num_buckets = (uint32_t)buckets;
    r->region_shift = ghmi_map_region_shift(r);
    return GHM_OK;
}

/* Makes room for `capacity` slots, keeping a large enough table from an earlier build. */
static int reserve(CudaMap *m, size_t capacity)
{
    if (m->slots && m->slots_alloc >= capacity)
        return GHM_OK;
    if (m->slots)
        ghmi_device_free(m->ctx, m->slots);
    if (m->marks)
        ghmi_device_free(m->ctx, m->marks);
    m->slots = NULL;
    m->marks = NULL;
    m->slots_alloc = 0;
    int ret = ghmi_device_alloc(m->ctx, capacity * 8, (void **)&m->slots);
    if (ret >= 0)
        ret = ghmi_device_alloc(m->ctx, (capacity + 31) / 32 * 4, (void **)&m->marks);
    if (ret < 0) {
        if (m->slots)
            ghmi_device_free(m->ctx, m->slots);
        m->slots = NULL;
        m->marks = NULL;
        return ret;
    }
    m->slots_alloc = capacity;
    return GHM_OK;
}

/* Clears the stash, its out-of-band slot and the counters in one launch. */
static __global__ void reset_kernel(unsigned long long *stash, MapMeta *meta)
{
    for (unsigned i = threadIdx.x; i <= GHMI_STASH_SIZE; i += blockDim.x)
        stash[i] = GHMI_EMPTY_SLOT;
    if (threadIdx.x == 0)
        *meta = MapMeta{};
}

/* Empties the table, and its marks when the insert will set them (keys that may repeat: only
 * the duplicate pass reads them, and a build of distinct keys is given none, so it neither
 * sets nor clears them; ORs into words never cleared were reported by compute-sanitizer's
 * initcheck under a GhmIndex build when the insert marked whatever the keys). */
static int clear_table(CudaMap *m, size_t capacity, int marks)
{
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    int ret = GHM_CUDA(cudaMemsetAsync(m->slots, 0xFF, capacity * 8, s));
    if (ret >= 0 && marks)
        ret = GHM_CUDA(cudaMemsetAsync(m->marks, 0, (capacity + 31) / 32 * 4, s));
    if (ret >= 0) {
        reset_kernel<<<1, 128, 0, s>>>(m->stash, m->meta);
        ret = GHM_CUDA_LAUNCH();
    }
    return ret;
}

/* Pairs that are not all there when an attempt starts (ghmi_map_build_after): those before
 * `ready` are, the others once wait(arg) has queued the stream's wait for them. */
typedef struct LatePairs {
    size_t ready;
    int (*wait)(void *arg);
    void *arg;
} LatePairs;

/* Queues the grouping and the insert of a's pairs. */
static int insert_range(CudaMap *m, GhmiMapAttempt *a, cudaStream_t s)
{
    void *grouping = NULL;
    int ret = ghmi_map_group_launch(m->ctx, a, &grouping);
    if (ret >= 0)
        ret = ghmi_map_insert_launch(a, s);
    ghmi_device_free(m->ctx, grouping);
    return ret;
}

/* Queues the insert of the attempt's pairs; with late pairs, the ready ones, the wait, then the
 * others (their values given, so a pair's value is not its place in the input). */
static int insert_pairs(CudaMap *m, GhmiMapAttempt *a, const LatePairs *late, cudaStream_t s)
{
    if (!late || late->ready == a->n || late->ready == 0) {
        int ret = late ? late->wait(late->arg) : GHM_OK;
        return ret < 0 ? ret : insert_range(m, a, s);
    }
    GhmiMapAttempt first = *a, rest = *a;
    first.n = late->ready;
    first.more_follow = 1;
    rest.keys += late->ready;
    rest.values += late->ready;
    rest.n -= late->ready;
    rest.rng_seed = ghmi_hash_mix(a->rng_seed, 1, 0); /* the rest's places restart at 0 */
    int ret = insert_range(m, &first, s);
    if (ret >= 0)
        ret = late->wait(late->arg);
    if (ret >= 0) /* the grouped insert's warps take pairs from this cursor */
        ret = GHM_CUDA(cudaMemsetAsync(&m->meta->cursor, 0, sizeof m->meta->cursor, s));
    return ret < 0 ? ret : insert_range(m, &rest, s);
}

/* Queues attempt `attempt` for the pairs (their number *count on the device, at most n, or n;
 * late: see LatePairs, or NULL) and publishes its reference. */
static int queue_attempt(CudaMap *m, const uint32_t *keys, const uint32_t *values,
                         const uint32_t *count, size_t n, int unique, int attempt,
                         unsigned int *failed, const LatePairs *late)
{
    GhmiMapAttempt a;
    memset(&a, 0, sizeof a);
    int ret = size_table(m, n, &a.ref);
    size_t capacity = (size_t)a.ref.num_buckets * a.ref.bucket_slots;
    if (ret >= 0)
        ret = reserve(m, capacity);
    if (ret < 0) { /* reserve may have freed the table the reference names: empty, not stale */
        ghmi_cuda_map_forget(m);
        return ret;
    }
    a.ctx = m->ctx;
    a.ref.hc = ghmi_hash_consts(m->ctx->seed, attempt);
    a.ref.slots = m->slots;
    a.ref.stash = m->stash;
    a.ref.stash_used = 1; /* until settle() knows better */
    a.slots = m->slots;
    a.stash = m->stash;
    a.marks = unique ? NULL : m->marks; /* only the duplicate pass reads them */
    a.meta = m->meta;
    a.failed = failed;
    a.keys = keys;
    a.values = values;
    a.count = count;
    a.n = n;
    a.max_iter = max_chain(m, n);
    a.rng_seed = (uint32_t)ghmi_mix64(a.ref.hc.a[0] ^ (uint64_t)a.ref.hc.b[0] << 32);
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    ret = clear_table(m, capacity, !unique);
    if (ret >= 0)
        ret = insert_pairs(m, &a, late, s);
    if (ret >= 0 && !unique)
        ret = ghmi_map_dedup_launch(&a, capacity, s);
    m->ref = a.ref;
    m->size = 0;
    m->stash_count = 0;
    m->pending = ret >= 0;
    m->unique = unique;
    m->attempt = attempt;
    if (ret < 0) /* a half-queued attempt is no content */
        ghmi_cuda_map_forget(m);
    return ret;
}

/* Reads what the pending attempt left in the counters (one wait). GHM_ERR_BUILD_FAILED when it
 * failed, the map then empty (its clearing queued). */
int ghmi_cuda_map_settle(CudaMap *m)
{
    if (!m->pending)
        return GHM_OK;
    MapMeta meta;
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(&meta, m->meta, sizeof meta, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    if (ret < 0)
        return ret;
    m->pending = 0;
    m->rebuilds = m->attempt;
    if (meta.failed) {
        size_t capacity = (size_t)m->ref.num_buckets * m->ref.bucket_slots;
        m->ref.stash_used = 0;
        return (ret = clear_table(m, capacity, 0)) < 0 ? ret : GHM_ERR_BUILD_FAILED;
    }
    /* Pairs stored = pairs seen - out-of-band ones - merged ones; minus the extra copies. The
     * THESIS pass counts the canonical copies directly. */
    size_t distinct = (size_t)meta.inputs - meta.oob_inputs - (size_t)meta.merges -
                      (size_t)meta.copies;
    if (!m->unique && meta.inputs && m->layout == GHM_MAP_THESIS)
        distinct = (size_t)meta.distinct;
    m->ref.stash_used = meta.stash_count > 0;
    m->stash_count = meta.stash_count;
    m->size = distinct + (meta.oob_present ? 1 : 0);
    return GHM_OK;
}

/* Attempts from `from` on, each settled, until one succeeds or max_rebuilds is passed. */
static int build_attempts(CudaMap *m, const uint32_t *keys, const uint32_t *values, size_t n,
                          int unique, int from)
{
    int ret = GHM_ERR_BUILD_FAILED;
    for (int attempt = from; attempt <= m->max_rebuilds && ret == GHM_ERR_BUILD_FAILED; attempt++)
        if ((ret = queue_attempt(m, keys, values, NULL, n, unique, attempt, NULL, NULL)) >= 0)
            ret = ghmi_cuda_map_settle(m);
    return ret;
}

int ghmi_cuda_map_build(CudaMap *m, const uint32_t *keys, const uint32_t *values, size_t n,
                        int unique)
{
    return build_attempts(m, keys, values, n, unique, 0);
}

/* The first attempt takes the pairs as they come; a failed one is rebuilt over all of them. */
static int map_build_after(void *impl, const uint32_t *keys, const uint32_t *values, size_t ready,
                           size_t n, int (*wait)(void *arg), void *arg)
{
    CudaMap *m = (CudaMap *)impl;
    LatePairs late = {ready, wait, arg};
    int ret = queue_attempt(m, keys, values, NULL, n, 0, 0, NULL, &late);
    if (ret >= 0)
        ret = ghmi_cuda_map_settle(m);
    return ret == GHM_ERR_BUILD_FAILED ? build_attempts(m, keys, values, n, 0, 1) : ret;
}

int ghmi_cuda_map_build_queued(CudaMap *m, const uint32_t *keys, const uint32_t *values,
                               const uint32_t *count, size_t n, int unique, int attempt,
                               unsigned int *failed)
{
    if (attempt < 0 || (n && (!keys || !count)))
        return GHM_ERR_INVALID;
    return queue_attempt(m, keys, values, count, n, unique, attempt, failed, NULL);
}

/* ---- the op table ---------------------------------------------------------------------------- */

static int map_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    CudaMap *m = NULL;
    int ret = ghmi_cuda_map_create(ctx, opt, &m);
    if (ret < 0)
        return ret;
    /* An empty map answers GHM_NOT_FOUND before its first build. */
    if ((ret = ghmi_cuda_map_build(m, NULL, NULL, 0, 1)) < 0) {
        ghmi_cuda_map_destroy(m);
        return ret;
    }
    *impl = m;
    return GHM_OK;
}

static int map_build_device(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    return ghmi_cuda_map_build((CudaMap *)impl, keys, values, n, 0);
}

static int map_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaMap *m = (CudaMap *)impl;
    if (n && (!keys || !values))
        return GHM_ERR_INVALID;
    return ghmi_cuda_staged_build(m->ctx, m, map_build_device, keys, values, n);
}

static int map_find_device(const void *impl, const uint32_t *keys, size_t n, uint32_t *out,
                           cudaStream_t s)
{
    GhmiEmitValue emit = {out};
    return ghmi_map_find_launch(&((const CudaMap *)impl)->ref, keys, n, emit, s);
}

static int map_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const CudaMap *m = (const CudaMap *)impl;
    if (n && (!keys || !out))
        return GHM_ERR_INVALID;
    int ret = ghmi_cuda_map_settle((CudaMap *)m); /* a queued build's outcome, read lazily */
    if (ret < 0)
        return ret;
    return ghmi_cuda_staged_find(m->ctx, m, map_find_device, keys, n, out);
}

static int map_find_queued(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const CudaMap *m = (const CudaMap *)impl;
    int ret = ghmi_cuda_map_settle((CudaMap *)m);
    if (ret < 0 || n == 0)
        return ret;
    return map_find_device(m, keys, n, out, ghm_cuda_stream(m->ctx));
}

static int map_stats(const void *impl, GhmMapStats *out)
{
    const CudaMap *m = (const CudaMap *)impl;
    int ret = ghmi_cuda_map_settle((CudaMap *)m);
    if (ret < 0)
        return ret;
    size_t capacity = (size_t)m->ref.num_buckets * m->ref.bucket_slots;
    out->size = m->size;
    out->capacity = capacity;
    out->stash_used = m->stash_count;
    out->rebuilds = m->rebuilds;
    out->bytes = (capacity + GHMI_STASH_SIZE) * 8;
    return GHM_OK;
}

static void map_destroy(void *impl) { ghmi_cuda_map_destroy((CudaMap *)impl); }

extern "C" const GhmMapOps ghm_cuda_map_ops = {
    /* .create = */ map_create,
    /* .build = */ map_build,
    /* .find = */ map_find,
    /* .stats = */ map_stats,
    /* .destroy = */ map_destroy,
    /* .find_queued = */ map_find_queued,
    /* .build_after = */ map_build_after,
};
