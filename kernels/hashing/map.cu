/*
 * map.cu - GhmMap on the CUDA backend: cuckoo hashing with a stash (Alcantara's thesis, ch. 6)
 * in two layouts, and the op table that hashing/map.c dispatches to.
 *
 * Layouts. Slots are 64-bit key << 32 | value so that one atomic moves a pair; all ones is
 * empty, hence key 0xFFFFFFFF is kept out of band (MapMeta.oob_*).
 *  - GHM_MAP_THESIS: one slot per hash function; a thread per pair swaps it in with atomicExch
 *    at h_1 and re-inserts whatever it evicts at the next function round-robin (listing 6.1),
 *    for at most max_iter swaps (7 lg N at the thesis's load 0.8, longer above), then one CAS
 *    into the 101-slot stash under its own hash; a collision there fails the attempt.
 *  - GHM_MAP_BUCKETED (bucketed cuckoo): buckets of B = 4 slots (one 32-byte sector) up to load
 *    0.9 and B = 8 (64 bytes) above. A thread per pair reads a bucket with 16-byte loads; the
 *    pair goes into the first of its H buckets (in hash order) that has room, by CAS; when all
 *    are full it evicts a random slot of a random bucket and the evicted pair goes on to its other
 *    buckets. Then the stash, as above. Finds: one thread per key (hash_cuda_internal.cuh).
 * Both keep one invariant that find relies on: a slot or bucket never empties during a build,
 * and a key is only ever placed behind buckets that were full (placement in hash order; an
 * eviction fills the bucket it leaves). So a probe stops at the first bucket with room, and
 * nearly every present key costs one sector (most keys sit in their first bucket).
 *
 * Duplicate keys keep their smallest value. A pair whose key is already in the bucket it looks
 * at lowers that slot's value by CAS instead of inserting (and a swap that evicts the same key
 * merges the two), which bounds the copies of a heavily repeated key. Races can still leave two
 * copies (a key in flight in an eviction chain is in no slot while another copy looks for it),
 * so unless the caller promises distinct keys a pass over the quiescent table settles them
 * without any sort (as the CPU backend does): the canonical copy of a key is its first in probe
 * order, which is the one every find returns (buckets in hash order, slots in order, the stash
 * last); every other copy atomicMin's its value into it. The other copies stay in place, which
 * keeps the invariant above (removing them would open holes in full buckets); they only cost a
 * slot. The THESIS pass looks at every slot; the BUCKETED pass only at the slots the insert
 * marked as possible second copies (dedup_marked_kernel says why that suffices), which makes it
 * a small fraction of the build. The passes also yield the number of distinct keys.
 *
 * Failure: a pair that exhausts its chain and collides in the stash sets MapMeta.failed; the
 * other threads see it within 16 steps and stop. The host then retries with constants from
 * ghmi_mix64(seed + attempt), up to max_rebuilds times, and otherwise leaves the map empty and
 * returns GHM_ERR_BUILD_FAILED.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hash_cuda_internal.cuh"

typedef struct MapMeta {
    unsigned int failed;
    unsigned int stash_count;
    unsigned int oob_present;
    unsigned int oob_value;
    unsigned int oob_inputs;     /* input pairs with key 0xFFFFFFFF */
    unsigned long long merges;   /* pairs that merged into a copy already stored */
    unsigned long long distinct; /* canonical copies in table + stash (THESIS dedup pass) */
    unsigned long long copies;   /* non-canonical copies (dedup passes) */
} MapMeta;

struct CudaMap {
    GhmContext *ctx;
    GhmMapLayout layout;
    double load;
    int hashes;
    int max_rebuilds;
    unsigned long long *slots;
    size_t slots_alloc;
    unsigned long long *stash;
    uint32_t *marks; /* BUCKETED: a bit per slot, set where an exchange or a carried pair wrote */
    MapMeta *meta;
    GhmMapRef ref;
    size_t size;
    size_t stash_count;
    int rebuilds;
};

/* ---- device helpers --------------------------------------------------------------------------- */

static __device__ __forceinline__ uint32_t xorshift32(uint32_t x)
{
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* Lowers the value of the slot holding key k (last seen as `seen`) to at most v. Returns 1 when
 * done, 0 when the slot no longer holds k (the key moved on in someone's eviction chain). */
static __device__ __forceinline__ int merge_min(unsigned long long *slot, uint32_t k, uint32_t v,
                                unsigned long long seen)
{
    unsigned long long e = seen;
    while (ghm_slot_key(e) == k) {
        if (ghm_slot_value(e) <= v)
            return 1;
        unsigned long long prev = atomicCAS(slot, e, ghm_slot_pack(k, v));
        if (prev == e)
            return 1;
        e = prev;
    }
    return 0;
}

static __device__ __forceinline__ void oob_insert(MapMeta *meta, uint32_t value)
{
    atomicMin(&meta->oob_value, value);
    atomicExch(&meta->oob_present, 1u);
    atomicAdd(&meta->oob_inputs, 1u);
}

static __device__ __forceinline__ void count_merge(MapMeta *meta)
{
    atomicAdd(&meta->merges, 1ull);
}

/* One CAS into the pair's stash slot; a different key there fails the attempt (thesis 6.1.1). */
static __device__ __forceinline__ void stash_insert(const GhmMapRef &ref, unsigned long long *stash,
                                    unsigned long long e, MapMeta *meta)
{
    uint32_t k = ghm_slot_key(e);
    unsigned long long *slot = stash + ghm_map_ref_stash_slot(&ref, k);
    unsigned long long old = atomicCAS(slot, GHM_EMPTY_SLOT, e);
    if (old == GHM_EMPTY_SLOT)
        atomicAdd(&meta->stash_count, 1u);
    else if (ghm_slot_key(old) == k && merge_min(slot, k, ghm_slot_value(e), old))
        count_merge(meta);
    else
        atomicExch(&meta->failed, 1u);
}

/* ---- GHM_MAP_THESIS insertion: listing 6.1 ----------------------------------------------------- */

static __global__ __launch_bounds__(128) void insert_thesis_kernel(
    GhmMapRef ref, unsigned long long *slots, unsigned long long *stash,
    const uint32_t *__restrict__ keys, const uint32_t *__restrict__ values, size_t n,
    uint32_t max_iter, MapMeta *meta)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t k = keys[i];
    uint32_t v = values ? values[i] : (uint32_t)i;
    if (k == GHM_EMPTY_KEY) {
        oob_insert(meta, v);
        return;
    }
    unsigned long long cur = ghm_slot_pack(k, v);
    uint32_t loc = ghm_map_ref_bucket(&ref, k, 0);
    for (uint32_t it = 0; it < max_iter; it++) {
        if ((it & 15) == 15 && *(volatile unsigned int *)&meta->failed)
            return;
        unsigned long long old = atomicExch(slots + loc, cur);
        uint32_t ko = ghm_slot_key(old);
        if (ko == GHM_EMPTY_KEY)
            return;
        if (ko == k) { /* swapped out another copy of our key: keep the smaller value */
            uint32_t m = min(ghm_slot_value(old), ghm_slot_value(cur));
            if (m == ghm_slot_value(cur) || merge_min(slots + loc, k, m, cur))
                return;
            cur = ghm_slot_pack(k, m); /* our copy moved on meanwhile: insert afresh */
            loc = ghm_map_ref_bucket(&ref, k, 0);
            continue;
        }
        cur = old;
        k = ko;
        /* Round-robin: the next function after the first one that points here. */
        uint32_t next = ghm_map_ref_bucket(&ref, k, 0);
        for (uint32_t h = 0; h < ref.num_hashes; h++)
            if (ghm_map_ref_bucket(&ref, k, h) == loc) {
                next = ghm_map_ref_bucket(&ref, k, (h + 1) % ref.num_hashes);
                break;
            }
        loc = next;
    }
    stash_insert(ref, stash, cur, meta);
}

/* ---- GHM_MAP_BUCKETED insertion --------------------------------------------------------------- */

/* The slots of one bucket by 16-byte loads served from L2 (__ldcg: other threads change them). */
template <int B>
static __device__ __forceinline__ void load_bucket(const unsigned long long *bucket, unsigned long long (&e)[B])
{
#pragma unroll
    for (int j = 0; j < B; j += 2) {
        ulonglong2 v = __ldcg((const ulonglong2 *)(bucket + j));
        e[j] = v.x;
        e[j + 1] = v.y;
    }
}

static __device__ __forceinline__ uint32_t pick3(uint32_t b0, uint32_t b1, uint32_t b2, uint32_t idx)
{
    return idx == 0 ? b0 : idx == 1 ? b1 : b2;
}

/* One step for the pair in *cur: merge into a copy of its key, or CAS into the first bucket with
 * room (skipping *from, the bucket it was just evicted from), or evict. Returns 1 when the pair is
 * placed, 0 when *cur holds a pair still to place (an evicted one, *from its old bucket). */
/* Marks slot p as written by an exchange or with a carried pair (see dedup_marked_kernel). */
static __device__ __forceinline__ void mark(uint32_t *marks, size_t p)
{
    atomicOr(marks + (p >> 5), 1u << (p & 31));
}

template <int B>
static __device__ __forceinline__ int place_step(const GhmMapRef &ref, unsigned long long *slots,
                                                 uint32_t *marks, MapMeta *meta,
                                                 unsigned long long *cur, uint32_t *from,
                                                 int *carried, uint32_t *rng)
{
    uint32_t k = ghm_slot_key(*cur);
    uint32_t nh = ref.num_hashes;
    uint32_t b0 = ghm_map_ref_bucket(&ref, k, 0), b1 = ghm_map_ref_bucket(&ref, k, 1);
    uint32_t b2 = nh > 2 ? ghm_map_ref_bucket(&ref, k, 2) : b1;
    for (uint32_t h = 0; h < nh; h++) {
        uint32_t b = pick3(b0, b1, b2, h);
        if (b == *from)
            continue;
        unsigned long long *bucket = slots + (size_t)b * B;
        int tries = 0;
        for (; tries <= 2 * B; tries++) { /* a lost race: look at the bucket again */
            unsigned long long e[B];
            load_bucket<B>(bucket, e);
            int hit = -1, room = -1;
            unsigned long long seen = 0;
#pragma unroll
            for (int j = B - 1; j >= 0; j--) { /* the first match and the first empty slot */
                if (ghm_slot_key(e[j]) == k) {
                    hit = j;
                    seen = e[j];
                }
                if (ghm_slot_key(e[j]) == GHM_EMPTY_KEY)
                    room = j;
            }
            if (hit >= 0) {
                if (merge_min(bucket + hit, k, ghm_slot_value(*cur), seen)) {
                    count_merge(meta);
                    return 1;
                }
                continue; /* the copy moved on meanwhile */
            }
            if (room < 0)
                break;
            if (atomicCAS(bucket + room, GHM_EMPTY_SLOT, *cur) == GHM_EMPTY_SLOT) {
                if (*carried)
                    mark(marks, (size_t)b * B + room);
                return 1;
            }
        }
        /* Still not settled after so many lost races: start the step over rather than pass a
         * bucket that may have room (which would break the probe order). */
        if (tries > 2 * B)
            return 0;
    }
    /* Every candidate bucket is full: evict a random slot of a random candidate bucket. */
    *rng = xorshift32(*rng);
    uint32_t vb;
    if (*from == 0xFFFFFFFFu) {
        vb = pick3(b0, b1, b2, *rng % nh);
    } else {
        uint32_t nc = (b0 != *from) + (b1 != *from) + (nh > 2 && b2 != *from);
        if (nc == 0) {
            vb = *from; /* all functions agree: the key has one bucket */
        } else {
            uint32_t r = *rng % nc;
            vb = *from;
            for (uint32_t h = 0; h < nh; h++) {
                uint32_t b = pick3(b0, b1, b2, h);
                if (b != *from && r-- == 0) {
                    vb = b;
                    break;
                }
            }
        }
    }
    size_t vp = (size_t)vb * B + (*rng >> 16) % B;
    unsigned long long old = atomicExch(slots + vp, *cur);
    mark(marks, vp);
    if (ghm_slot_key(old) == GHM_EMPTY_KEY)
        return 1;
    if (ghm_slot_key(old) == k) { /* evicted a copy of our own key: keep the smaller value */
        uint32_t m = min(ghm_slot_value(old), ghm_slot_value(*cur));
        if (m == ghm_slot_value(*cur) || merge_min(slots + vp, k, m, *cur)) {
            count_merge(meta);
            return 1;
        }
        *cur = ghm_slot_pack(k, m); /* stands for a copy that was in the table: carried */
        *from = 0xFFFFFFFFu;
        *carried = 1;
        return 0;
    }
    *cur = old;
    *from = vb;
    *carried = 1;
    return 0;
}

/* One thread per pair. A tile per pair (each lane one slot, votes by ballot) was tried first: it
 * keeps too few probes in flight per SM (the same effect as in the bulk find), so each thread
 * reads its bucket with 16-byte loads of one sector instead. */
template <int B>
static __global__ __launch_bounds__(256) void insert_bucketed_kernel(
    GhmMapRef ref, unsigned long long *slots, unsigned long long *stash, uint32_t *marks,
    const uint32_t *__restrict__ keys, const uint32_t *__restrict__ values, size_t n,
    uint32_t max_iter, uint32_t rng_seed, MapMeta *meta)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t k = keys[i];
    uint32_t v = values ? values[i] : (uint32_t)i;
    if (k == GHM_EMPTY_KEY) {
        oob_insert(meta, v);
        return;
    }
    unsigned long long cur = ghm_slot_pack(k, v);
    uint32_t from = 0xFFFFFFFFu;
    int carried = 0;
    uint32_t rng = ghm_hash_mix((uint32_t)i, rng_seed, (uint32_t)(i >> 32)) | 1u;
    for (uint32_t it = 0; it < max_iter; it++) {
        if ((it & 15) == 15 && *(volatile unsigned int *)&meta->failed)
            return;
        if (place_step<B>(ref, slots, marks, meta, &cur, &from, &carried, &rng))
            return;
    }
    stash_insert(ref, stash, cur, meta);
}

/* ---- the duplicate pass ----------------------------------------------------------------------- */

/* Position of the first copy of key k in its probe order (buckets h_1.., slots in order, the
 * stash last), looking only before position p (or everywhere for a stash entry); ~0 if none. */
static __device__ __forceinline__ size_t first_copy(const GhmMapRef &ref, const unsigned long long *slots,
                                    uint32_t k, size_t p, int in_stash)
{
    uint32_t nb = ref.bucket_slots;
    for (uint32_t h = 0; h < ref.num_hashes; h++) {
        size_t base = (size_t)ghm_map_ref_bucket(&ref, k, h) * nb;
        for (uint32_t j = 0; j < nb; j++) {
            size_t q = base + j;
            if (!in_stash && q == p)
                return ~(size_t)0;
            if (ghm_slot_key(__ldcg(slots + q)) == k)
                return q;
        }
    }
    return ~(size_t)0;
}

/* Adds a block's counts to meta with one atomic each (per-slot atomics on two counters would
 * serialise and cost more than the pass). */
static __device__ __forceinline__ void add_counts(MapMeta *meta, unsigned long long canonical,
                                                  unsigned long long copies)
{
    __shared__ unsigned long long block_canonical, block_copies;
    if (threadIdx.x == 0)
        block_canonical = block_copies = 0;
    __syncthreads();
    if (canonical)
        atomicAdd(&block_canonical, canonical);
    if (copies)
        atomicAdd(&block_copies, copies);
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(&meta->distinct, block_canonical);
        if (block_copies)
            atomicAdd(&meta->copies, block_copies);
    }
}

/* The bucketed table. A second copy of a key can only appear through a race with a pair in
 * flight (evicted and not yet placed again) or through two fresh pairs that both found all their
 * buckets full and exchanged themselves in; two fresh pairs placed by CAS always see each other
 * (both take the first slot with room of the first bucket with room, and full buckets never get
 * room again). The insert therefore marks every slot written by an exchange or with a carried
 * pair, and of any two copies of a key at least one is marked or in the stash. Only marked slots
 * are examined here: the thread of a marked copy reads the key's buckets; if it is not the
 * canonical (first) copy it lowers the canonical value to its own and counts itself; if it is,
 * it does that for every later unmarked copy (marked ones and the stash count themselves). So
 * each non-canonical copy is counted once, the distinct keys are the stored pairs minus those,
 * and the pass reads a bit per slot plus the buckets of the few marked keys instead of the
 * whole table. */
template <int B>
static __global__ __launch_bounds__(256) void dedup_marked_kernel(GhmMapRef ref,
                                                                  unsigned long long *slots,
                                                                  const uint32_t *marks,
                                                                  size_t words, MapMeta *meta)
{
    unsigned long long copies = 0;
    for (size_t w = (size_t)blockIdx.x * blockDim.x + threadIdx.x; w < words;
         w += (size_t)gridDim.x * blockDim.x) {
        for (uint32_t bits = marks[w]; bits; bits &= bits - 1) {
            size_t p = w * 32 + (__ffs(bits) - 1);
            unsigned long long e = slots[p];
            uint32_t k = ghm_slot_key(e);
            if (k == GHM_EMPTY_KEY)
                continue;
            size_t first = ~(size_t)0;
            for (uint32_t h = 0; h < ref.num_hashes; h++) {
                uint32_t b = ghm_map_ref_bucket(&ref, k, h);
                int seen_before = 0; /* the same bucket under an earlier function */
                for (uint32_t g = 0; g < h; g++)
                    seen_before |= ghm_map_ref_bucket(&ref, k, g) == b;
                if (seen_before)
                    continue;
                unsigned long long c[B];
                load_bucket<B>(slots + (size_t)b * B, c);
#pragma unroll
                for (int j = 0; j < B; j++) {
                    size_t q = (size_t)b * B + j;
                    if (ghm_slot_key(c[j]) != k)
                        continue;
                    if (first == ~(size_t)0) {
                        first = q;
                    } else if (first == p && !((marks[q >> 5] >> (q & 31)) & 1u)) {
                        atomicMin(slots + p, c[j]); /* a later unmarked copy: ours to settle */
                        copies++;
                    }
                }
            }
            if (first != p && first != ~(size_t)0) {
                atomicMin(slots + first, e); /* same key in the high word: a min of the values */
                copies++;
            }
        }
    }
    add_counts(meta, 0, copies);
}

/* The thesis table (or, with capacity 0 and slots = the stash, the stash of either layout): a
 * thread per slot; the first copy is looked for in the slots of the key's probe order before
 * this one (every table slot of the key, for a stash entry). */
static __global__ __launch_bounds__(256) void dedup_slots_kernel(GhmMapRef ref,
                                                                 unsigned long long *slots,
                                                                 const unsigned long long *entries,
                                                                 size_t count, int in_stash,
                                                                 MapMeta *meta)
{
    unsigned long long canonical = 0, copies = 0;
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < count;
         p += (size_t)gridDim.x * blockDim.x) {
        unsigned long long e = entries[p];
        uint32_t k = ghm_slot_key(e);
        if (k == GHM_EMPTY_KEY)
            continue;
        size_t q = first_copy(ref, slots, k, p, in_stash);
        if (q == ~(size_t)0) {
            canonical++;
        } else {
            atomicMin(slots + q, e);
            copies++;
        }
    }
    add_counts(meta, canonical, copies);
}

/* ---- host side -------------------------------------------------------------------------------- */

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
    ret = GHM_CUDA(cudaMallocAsync((void **)&m->stash, GHM_MAP_STASH_SLOTS * 8, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMallocAsync((void **)&m->meta, sizeof(MapMeta), s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaStreamSynchronize(s));
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
        cudaFreeAsync(m->slots, s);
    if (m->marks)
        cudaFreeAsync(m->marks, s);
    if (m->stash)
        cudaFreeAsync(m->stash, s);
    if (m->meta)
        cudaFreeAsync(m->meta, s);
    cudaStreamSynchronize(s);
    free(m);
}

const GhmMapRef *ghmi_cuda_map_get_ref(const CudaMap *m) { return &m->ref; }

size_t ghmi_cuda_map_size(const CudaMap *m) { return m->size; }

static uint32_t ceil_log2(size_t n)
{
    uint32_t lg = 0;
    while (((size_t)1 << lg) < n)
        lg++;
    return lg;
}

/* Longest eviction chain before the stash: 7 lg N at load 0.8 (thesis 6.1.1); chains grow
 * quickly toward the layout's limit, so tighter tables get more steps. */
static uint32_t max_chain(const CudaMap *m, size_t n)
{
    uint32_t base = 7 * (ceil_log2(n) + 1);
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
    return GHM_OK;
}

/* Constants of one attempt: from ghmi_mix64(seed + attempt), identical for every run. */
static uint32_t draw_constants(const CudaMap *m, int attempt, GhmMapRef *r)
{
    uint64_t s = ghmi_mix64(m->ctx->seed + (uint64_t)attempt);
    for (int h = 0; h < GHM_MAP_MAX_HASHES; h++) {
        r->hash_a[h] = (uint32_t)ghmi_mix64(s + 2 * h + 1) | 1u;
        r->hash_b[h] = (uint32_t)ghmi_mix64(s + 2 * h + 2);
    }
    r->stash_a = (uint32_t)ghmi_mix64(s + 101) | 1u;
    r->stash_b = (uint32_t)ghmi_mix64(s + 102);
    return (uint32_t)ghmi_mix64(s + 103);
}

static int clear_table(CudaMap *m, size_t capacity)
{
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    int ret = GHM_CUDA(cudaMemsetAsync(m->slots, 0xFF, capacity * 8, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(m->marks, 0, (capacity + 31) / 32 * 4, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(m->stash, 0xFF, GHM_MAP_STASH_SLOTS * 8, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(m->meta, 0, sizeof(MapMeta), s));
    if (ret >= 0) /* oob_value starts at the maximum so that atomicMin keeps the smallest */
        ret = GHM_CUDA(cudaMemsetAsync(&m->meta->oob_value, 0xFF, sizeof(unsigned int), s));
    return ret;
}

static int read_meta(CudaMap *m, MapMeta *out)
{
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(out, m->meta, sizeof *out, cudaMemcpyDeviceToHost, s));
    return ret < 0 ? ret : GHM_CUDA(cudaStreamSynchronize(s));
}

static int launch_insert(CudaMap *m, const GhmMapRef *r, const uint32_t *keys,
                         const uint32_t *values, size_t n, uint32_t rng_seed)
{
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    uint32_t max_iter = max_chain(m, n);
    unsigned lanes = r->bucket_slots; /* 1 = THESIS */
    unsigned block = lanes == 1 ? 128 : 256;
    size_t grid = (n + block - 1) / block; /* one thread per pair */
    if (grid > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (lanes == 1)
        insert_thesis_kernel<<<(unsigned)grid, block, 0, s>>>(*r, m->slots, m->stash, keys,
                                                               values, n, max_iter, m->meta);
    else if (lanes == 4)
        insert_bucketed_kernel<4><<<(unsigned)grid, block, 0, s>>>(
            *r, m->slots, m->stash, m->marks, keys, values, n, max_iter, rng_seed, m->meta);
    else
        insert_bucketed_kernel<8><<<(unsigned)grid, block, 0, s>>>(
            *r, m->slots, m->stash, m->marks, keys, values, n, max_iter, rng_seed, m->meta);
    return GHM_CUDA_LAUNCH();
}

/* Queues the passes that settle duplicate copies (see the top comment and dedup_marked_kernel)
 * and count them (and, for THESIS, the distinct keys) into meta. The stash pass only reads the table, so the passes
 * may run in either order. */
static int dedup(CudaMap *m, const GhmMapRef *r, size_t capacity)
{
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    size_t words = (capacity + 31) / 32;
    size_t blocks = (r->bucket_slots == 1 ? capacity : words) / 256 + 1;
    unsigned grid = (unsigned)(blocks < 4096 ? blocks : 4096);
    if (r->bucket_slots == 4)
        dedup_marked_kernel<4><<<grid, 256, 0, s>>>(*r, m->slots, m->marks, words, m->meta);
    else if (r->bucket_slots == 8)
        dedup_marked_kernel<8><<<grid, 256, 0, s>>>(*r, m->slots, m->marks, words, m->meta);
    else
        dedup_slots_kernel<<<grid, 256, 0, s>>>(*r, m->slots, m->slots, capacity, 0, m->meta);
    int ret = GHM_CUDA_LAUNCH();
    if (ret >= 0) {
        dedup_slots_kernel<<<1, 128, 0, s>>>(*r, m->slots, m->stash, GHM_MAP_STASH_SLOTS, 1,
                                            m->meta);
        ret = GHM_CUDA_LAUNCH();
    }
    return ret;
}

/* Makes room for `capacity` slots, keeping a large enough table from an earlier build. */
static int reserve(CudaMap *m, size_t capacity)
{
    if (m->slots && m->slots_alloc >= capacity)
        return GHM_OK;
    cudaStream_t s = ghm_cuda_stream(m->ctx);
    if (m->slots)
        cudaFreeAsync(m->slots, s);
    if (m->marks)
        cudaFreeAsync(m->marks, s);
    m->slots = NULL;
    m->marks = NULL;
    m->slots_alloc = 0;
    int ret = GHM_CUDA(cudaMallocAsync((void **)&m->slots, capacity * 8, s));
    if (ret >= 0)
        ret = GHM_CUDA(cudaMallocAsync((void **)&m->marks, (capacity + 31) / 32 * 4, s));
    if (ret < 0) {
        if (m->slots)
            cudaFreeAsync(m->slots, s);
        m->slots = NULL;
        m->marks = NULL;
        return ret;
    }
    m->slots_alloc = capacity;
    return GHM_OK;
}

static void publish(CudaMap *m, const GhmMapRef *r, const MapMeta *meta, size_t distinct)
{
    m->ref = *r;
    m->ref.slots = m->slots;
    m->ref.stash = m->stash;
    m->ref.stash_used = meta->stash_count > 0;
    m->ref.oob_present = meta->oob_present;
    m->ref.oob_value = meta->oob_value;
    m->stash_count = meta->stash_count;
    m->size = distinct + (meta->oob_present ? 1 : 0);
}

int ghmi_cuda_map_build(CudaMap *m, const uint32_t *keys, const uint32_t *values, size_t n,
                        int unique)
{
    GhmMapRef r;
    MapMeta meta;
    int ret = size_table(m, n, &r);
    size_t capacity = (size_t)r.num_buckets * r.bucket_slots;
    if (ret >= 0)
        ret = reserve(m, capacity);
    if (ret < 0)
        return ret;
    m->size = 0;
    m->rebuilds = 0;
    for (int attempt = 0; attempt <= m->max_rebuilds; attempt++) {
        uint32_t rng_seed = draw_constants(m, attempt, &r);
        r.slots = m->slots;
        r.stash = m->stash;
        if ((ret = clear_table(m, capacity)) < 0)
            return ret;
        if (n && (ret = launch_insert(m, &r, keys, values, n, rng_seed)) < 0)
            return ret;
        /* The duplicate pass is queued right behind the insert (one wait, not two); after a
         * failed insert its result is simply not used. */
        if (!unique && n && (ret = dedup(m, &r, capacity)) < 0)
            return ret;
        if ((ret = read_meta(m, &meta)) < 0)
            return ret;
        if (meta.failed)
            continue;
        /* Pairs stored = input pairs - out-of-band ones - merged ones; minus the extra copies.
         * The THESIS pass counts the canonical copies directly. */
        size_t distinct = n - meta.oob_inputs - (size_t)meta.merges - (size_t)meta.copies;
        if (!unique && n && m->layout == GHM_MAP_THESIS)
            distinct = (size_t)meta.distinct;
        publish(m, &r, &meta, distinct);
        m->rebuilds = attempt;
        return GHM_CUDA(cudaStreamSynchronize(ghm_cuda_stream(m->ctx)));
    }
    /* Every attempt failed: leave a valid, empty map behind. */
    memset(&meta, 0, sizeof meta);
    if ((ret = clear_table(m, capacity)) < 0)
        return ret;
    publish(m, &r, &meta, 0);
    m->rebuilds = m->max_rebuilds;
    ret = GHM_CUDA(cudaStreamSynchronize(ghm_cuda_stream(m->ctx)));
    return ret < 0 ? ret : GHM_ERR_BUILD_FAILED;
}

/* ---- the op table ------------------------------------------------------------------------------ */

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

static int map_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaMap *m = (CudaMap *)impl;
    if (n && (!keys || !values))
        return GHM_ERR_INVALID;
    const void *dk, *dv;
    void *ok = NULL, *ov = NULL;
    int ret = ghmi_cuda_input(m->ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_input(m->ctx, values, n * 4, &dv, &ov);
    if (ret >= 0)
        ret = ghmi_cuda_map_build(m, (const uint32_t *)dk, (const uint32_t *)dv, n, 0);
    ghmi_cuda_release(m->ctx, ok);
    ghmi_cuda_release(m->ctx, ov);
    int sync = GHM_CUDA(cudaStreamSynchronize(ghm_cuda_stream(m->ctx)));
    return ret < 0 ? ret : sync;
}

static int map_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const CudaMap *m = (const CudaMap *)impl;
    if (n && (!keys || !out))
        return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    const void *dk;
    void *ok = NULL, *dout = NULL, *oo = NULL;
    int ret = ghmi_cuda_input(m->ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_output(m->ctx, out, n * 4, &dout, &oo);
    if (ret >= 0) {
        GhmiEmitValue emit = {(uint32_t *)dout};
        ret = ghmi_map_find_launch(&m->ref, (const uint32_t *)dk, n, emit,
                                   ghm_cuda_stream(m->ctx));
    }
    int fin = ghmi_cuda_output_finish(m->ctx, out, ret < 0 ? NULL : oo, n * 4);
    ghmi_cuda_release(m->ctx, ok);
    ghmi_cuda_release(m->ctx, oo);
    return ret < 0 ? ret : fin;
}

static int map_stats(const void *impl, GhmMapStats *out)
{
    const CudaMap *m = (const CudaMap *)impl;
    size_t capacity = (size_t)m->ref.num_buckets * m->ref.bucket_slots;
    out->size = m->size;
    out->capacity = capacity;
    out->stash_used = m->stash_count;
    out->rebuilds = m->rebuilds;
    out->bytes = (capacity + GHM_MAP_STASH_SLOTS) * 8;
    return GHM_OK;
}

static void map_destroy(void *impl) { ghmi_cuda_map_destroy((CudaMap *)impl); }

extern "C" const GhmMapOps ghm_cuda_map_ops = {
    /* .create = */ map_create,
    /* .build = */ map_build,
    /* .find = */ map_find,
    /* .stats = */ map_stats,
    /* .destroy = */ map_destroy,
};
