/*
 * map_insert.cu - the insert of a CUDA GhmMap (cuckoo hashing with a stash, Alcantara's thesis,
 * ch. 6), in two layouts; map.cu sizes the table and runs the attempts, map_dedup.cu settles
 * duplicate keys afterwards.
 *
 * Slots are 64-bit in hash_family.h's encoding so that one atomic moves a pair; the key
 * 0xFFFFFFFF (the empty marker) goes to the slot after the stash (hash_refs.h).
 *  - GHM_MAP_THESIS: one slot per hash function; a thread per pair swaps it in with atomicExch
 *    at h_1 and re-inserts whatever it evicts at the next function round-robin (listing 6.1),
 *    for at most max_iter swaps (7 lg N at the thesis's load 0.8, longer above), then one CAS
 *    into the 101-slot stash under its own hash; a collision there fails the attempt.
 *  - GHM_MAP_BUCKETED (bucketed cuckoo): buckets of B = 4 slots (one 32-byte sector) up to load
 *    0.9 and B = 8 (64 bytes) above. A thread per pair reads a bucket with 16-byte loads; the
 *    pair goes into the first of its H buckets (in hash order) that has room, by CAS; when all
 *    are full it evicts a random slot of a random bucket and the evicted pair goes on to its other
 *    buckets. Then the stash, as above. On a grouped table (larger than a few L2s) a warp's lane
 *    takes a new pair as soon as its own is placed (insert_refill_kernel). Finds: one thread per
 *    key (hash_cuda_internal.cuh).
 * Both keep one invariant that find relies on: a slot or bucket never empties during a build,
 * and a key is only ever placed behind buckets that were full (placement in hash order; an
 * eviction fills the bucket it leaves). So a probe stops at the first bucket with room, and
 * nearly every present key costs one sector (most keys sit in their first bucket).
 *
 * A pair whose key is already in the bucket it looks at lowers that slot's value by CAS instead
 * of inserting (and a swap that evicts the same key merges the two), which bounds the copies of
 * a heavily repeated key; map_dedup.cu settles the rest.
 *
 * Failure: a pair that exhausts its chain and collides in the stash sets MapMeta.failed (and the
 * caller's word of a queued build); the other threads see it within 16 steps and stop.
 */
#include "map_cuda_internal.cuh"

/* ---- device helpers -------------------------------------------------------------------------- */

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
    while (ghmi_slot_key(e) == k) {
        if (ghmi_slot_value(e) <= v)
            return 1;
        unsigned long long prev = atomicCAS(slot, e, ghmi_pack(k, v));
        if (prev == e)
            return 1;
        e = prev;
    }
    return 0;
}

/* The key 0xFFFFFFFF (the empty marker): its smallest value in the slot after the stash (same
 * key bits in every pair, so the 64-bit minimum is the minimum of the values). */
static __device__ __forceinline__ void oob_insert(unsigned long long *stash, MapMeta *meta,
                                                  uint32_t value)
{
    atomicMin(stash + GHMI_STASH_SIZE, ghmi_pack(GHMI_EMPTY_KEY, value));
    atomicExch(&meta->oob_present, 1u);
    atomicAdd(&meta->oob_inputs, 1u);
}

static __device__ __forceinline__ void count_merge(MapMeta *meta)
{
    atomicAdd(&meta->merges, 1ull);
}

static __device__ __forceinline__ void fail(MapMeta *meta, unsigned int *failed)
{
    atomicExch(&meta->failed, 1u);
    if (failed)
        atomicExch(failed, 1u);
}

/* Other threads of a failed attempt stop within 16 steps. */
static __device__ __forceinline__ int failed_yet(uint32_t it, const MapMeta *meta)
{
    return (it & 15) == 15 && *(const volatile unsigned int *)&meta->failed;
}

/* The pairs to insert: the device count of a queued build (at most n), else n. Thread 0 adds
 * it to the host's count of distinct keys (an attempt may insert its pairs in two launches). */
static __device__ __forceinline__ size_t pairs_of(const uint32_t *count, size_t n, MapMeta *meta)
{
    size_t m = ghmi_attempt_pairs(count, n);
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(&meta->inputs, (unsigned int)m);
    return m;
}

/* One CAS into the pair's stash slot; a different key there fails the attempt (thesis 6.1.1). */
static __device__ __forceinline__ void stash_insert(const GhmMapRef &ref,
                                                    unsigned long long *stash,
                                                    unsigned long long e, MapMeta *meta,
                                                    unsigned int *failed)
{
    uint32_t k = ghmi_slot_key(e);
    unsigned long long *slot = stash + ghm_map_ref_stash_slot(&ref, k);
    unsigned long long old = atomicCAS(slot, GHMI_EMPTY_SLOT, e);
    if (old == GHMI_EMPTY_SLOT)
        atomicAdd(&meta->stash_count, 1u);
    else if (ghmi_slot_key(old) == k && merge_min(slot, k, ghmi_slot_value(e), old))
        count_merge(meta);
    else
        fail(meta, failed);
}

/* ---- GHM_MAP_THESIS insertion: listing 6.1 --------------------------------------------------- */

static __device__ __forceinline__ void insert_thesis_one(const GhmMapRef &ref,
                                                         unsigned long long *slots,
                                                         unsigned long long *stash, uint32_t k,
                                                         uint32_t v, uint32_t max_iter,
                                                         MapMeta *meta, unsigned int *failed)
{
    if (k == GHMI_EMPTY_KEY) {
        oob_insert(stash, meta, v);
        return;
    }
    unsigned long long cur = ghmi_pack(k, v);
    uint32_t loc = ghm_map_ref_bucket(&ref, k, 0);
    for (uint32_t it = 0; it < max_iter; it++) {
        if (failed_yet(it, meta))
            return;
        unsigned long long old = atomicExch(slots + loc, cur);
        uint32_t ko = ghmi_slot_key(old);
        if (ko == GHMI_EMPTY_KEY)
            return;
        if (ko == k) { /* swapped out another copy of our key: keep the smaller value */
            uint32_t m = min(ghmi_slot_value(old), ghmi_slot_value(cur));
            if (m == ghmi_slot_value(cur) || merge_min(slots + loc, k, m, cur))
                return;
            cur = ghmi_pack(k, m); /* our copy moved on meanwhile: insert afresh */
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
    stash_insert(ref, stash, cur, meta, failed);
}

/* One thread per pair (a grid-stride loop when the count is on the device). */
static __global__ __launch_bounds__(128) void insert_thesis_kernel(
    GhmMapRef ref, unsigned long long *slots, unsigned long long *stash,
    const uint32_t *__restrict__ keys, const uint32_t *__restrict__ values,
    const uint32_t *count, size_t n, uint32_t max_iter, MapMeta *meta, unsigned int *failed)
{
    n = pairs_of(count, n, meta);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        insert_thesis_one(ref, slots, stash, keys[i], values ? values[i] : (uint32_t)i, max_iter,
                          meta, failed);
}

/* ---- GHM_MAP_BUCKETED insertion -------------------------------------------------------------- */

/* The slots of one bucket by 16-byte loads served from L2 (__ldcg: other threads change them). */
template <int B>
static __device__ __forceinline__ void load_bucket(const unsigned long long *bucket,
                                                   unsigned long long (&e)[B])
{
#pragma unroll
    for (int j = 0; j < B; j += 2) {
        ulonglong2 v = __ldcg((const ulonglong2 *)(bucket + j));
        e[j] = v.x;
        e[j + 1] = v.y;
    }
}

static __device__ __forceinline__ uint32_t pick3(uint32_t b0, uint32_t b1, uint32_t b2,
                                                 uint32_t idx)
{
    return idx == 0 ? b0 : idx == 1 ? b1 : b2;
}

/* Marks slot p as written by an exchange or with a carried pair (see map_dedup.cu); no marks
 * (NULL) where the keys are distinct and no duplicate pass reads them. */
static __device__ __forceinline__ void mark(uint32_t *marks, size_t p)
{
    if (marks)
        atomicOr(marks + (p >> 5), 1u << (p & 31));
}

/* One step for the pair in *cur: merge into a copy of its key, or CAS into the first bucket with
 * room (skipping *from, the bucket it was just evicted from), or evict. Returns 1 when the pair is
 * placed, 0 when *cur holds a pair still to place (an evicted one, *from its old bucket). */

template <int B>
static __device__ __forceinline__ int place_step(const GhmMapRef &ref, unsigned long long *slots,
                                                 uint32_t *marks, MapMeta *meta,
                                                 unsigned long long *cur, uint32_t *from,
                                                 int *carried, uint32_t *rng)
{
    uint32_t k = ghmi_slot_key(*cur);
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
                if (ghmi_slot_key(e[j]) == k) {
                    hit = j;
                    seen = e[j];
                }
                if (ghmi_slot_key(e[j]) == GHMI_EMPTY_KEY)
                    room = j;
            }
            if (hit >= 0) {
                if (merge_min(bucket + hit, k, ghmi_slot_value(*cur), seen)) {
                    count_merge(meta);
                    return 1;
                }
                continue; /* the copy moved on meanwhile */
            }
            if (room < 0)
                break;
            if (atomicCAS(bucket + room, GHMI_EMPTY_SLOT, *cur) == GHMI_EMPTY_SLOT) {
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
    if (ghmi_slot_key(old) == GHMI_EMPTY_KEY)
        return 1;
    if (ghmi_slot_key(old) == k) { /* evicted a copy of our own key: keep the smaller value */
        uint32_t m = min(ghmi_slot_value(old), ghmi_slot_value(*cur));
        if (m == ghmi_slot_value(*cur) || merge_min(slots + vp, k, m, *cur)) {
            count_merge(meta);
            return 1;
        }
        *cur = ghmi_pack(k, m); /* stands for a copy that was in the table: carried */
        *from = 0xFFFFFFFFu;
        *carried = 1;
        return 0;
    }
    *cur = old;
    *from = vb;
    *carried = 1;
    return 0;
}

/* After the insert, with the table quiescent: a stash entry with a bucket that has room moves
 * into the first such bucket (in hash order), marked as a possible second copy of its key (the
 * duplicate pass then settles it). Such entries exist because a pair goes to the stash when its
 * chain runs out, whether or not its other buckets still had room. Afterwards a key in the stash
 * has all its buckets full, for ever (buckets never empty), so a probe that meets a bucket with
 * room need not look at the stash (map_ref.cuh): the stash costs nothing to absent keys even
 * when, as after a queued build, the prober cannot know whether it is empty. */
template <int B>
static __global__ void stash_fixup_kernel(GhmMapRef ref, unsigned long long *slots,
                                          unsigned long long *stash, uint32_t *marks,
                                          MapMeta *meta)
{
    for (uint32_t s = threadIdx.x; s < GHMI_STASH_SIZE; s += blockDim.x) {
        unsigned long long e = stash[s];
        if (e == GHMI_EMPTY_SLOT)
            continue;
        uint32_t k = ghmi_slot_key(e);
        for (uint32_t h = 0; h < ref.num_hashes; h++) {
            size_t b = (size_t)ghm_map_ref_bucket(&ref, k, h) * B;
            int j = 0;
            while (j < B && atomicCAS(slots + b + j, GHMI_EMPTY_SLOT, e) != GHMI_EMPTY_SLOT)
                j++;
            if (j < B) {
                mark(marks, b + j);
                stash[s] = GHMI_EMPTY_SLOT;
                atomicSub(&meta->stash_count, 1u);
                break;
            }
        }
    }
}

/* Pairs a warp of the refilling insert takes from the attempt's cursor at a time: up to 4 a lane,
 * so the one counter sees an atomic per 128 pairs and the warps in flight stay within a few of
 * the grouping's regions (~8000 warps of an H100 span ~1M consecutive grouped pairs); fewer
 * where a batch gives each warp fewer than 8 chunks, so that its last chunks even out. */
#define INSERT_CHUNK_MAX 128
#define INSERT_CHUNKS_PER_WARP 8

/* A lane's pair in flight. */
typedef struct PairState {
    unsigned long long cur; /* the pair to place (an evicted one after an exchange) */
    uint32_t from;          /* the bucket it was evicted from, or ~0 */
    uint32_t rng;
    uint32_t it;            /* steps taken */
    int carried;
} PairState;

/* Starts pair i in *ps; returns 0 when it needed no step (the out-of-band key). */
static __device__ __forceinline__ int start_pair(const uint32_t *__restrict__ keys,
                                                 const uint32_t *__restrict__ values,
                                                 const unsigned long long *__restrict__ grouped,
                                                 size_t i, uint32_t rng_seed,
                                                 unsigned long long *stash, MapMeta *meta,
                                                 PairState *ps)
{
    uint32_t k, v;
    if (grouped) {
        unsigned long long e = grouped[i];
        k = ghmi_slot_key(e);
        v = ghmi_slot_value(e);
    } else {
        k = keys[i];
        v = values ? values[i] : (uint32_t)i;
    }
    if (k == GHMI_EMPTY_KEY) {
        oob_insert(stash, meta, v);
        return 0;
    }
    ps->cur = ghmi_pack(k, v);
    ps->from = 0xFFFFFFFFu;
    ps->rng = ghmi_hash_mix((uint32_t)i, rng_seed, (uint32_t)(i >> 32)) | 1u;
    ps->it = 0;
    ps->carried = 0;
    return 1;
}

/* One thread per pair (a grid-stride loop when the count is on the device): the insert of a
 * table that is not grouped (one that L2 holds, or one without room for the grouped copy). */
template <int B>
static __global__ __launch_bounds__(256) void insert_bucketed_kernel(
    GhmMapRef ref, unsigned long long *slots, unsigned long long *stash, uint32_t *marks,
    const uint32_t *__restrict__ keys, const uint32_t *__restrict__ values, const uint32_t *count,
    size_t n, uint32_t max_iter, uint32_t rng_seed, MapMeta *meta, unsigned int *failed)
{
    n = pairs_of(count, n, meta);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        PairState ps;
        if (!start_pair(keys, values, NULL, i, rng_seed, stash, meta, &ps))
            continue;
        int placed = 0;
        for (; ps.it < max_iter && !placed; ps.it++) {
            if (failed_yet(ps.it, meta))
                return;
            placed = place_step<B>(ref, slots, marks, meta, &ps.cur, &ps.from, &ps.carried,
                                   &ps.rng);
        }
        if (!placed)
            stash_insert(ref, stash, ps.cur, meta, failed);
    }
}

/* The insert of a grouped table (map_group.cu: larger than a few L2s), its pairs read from the
 * grouped copy. A warp keeps all its lanes on pairs: a lane whose pair is placed takes the next
 * one at once from a chunk of consecutive pairs that the warp takes from the cursor. With a
 * thread per pair a warp (and its block) stayed resident until its longest eviction chain
 * ended, each step of which waits on L2 or DRAM: at load 0.95 ncu found half the warps the SMs
 * could hold resident (47.7 % achieved occupancy of 100 %) and 44.6 % of issue slots busy,
 * and 2^26 pairs went in at 7.7 G/s (9.0 here, 9.8 with 6 blocks an SM; docs/BENCHMARKS.md).
 * On a table that L2 holds the refills cost more than the chains they even out (2^22 pairs at
 * load 0.8: 13.7 against 11.4 G/s), hence the thread per pair there. A tile per pair (each lane
 * one slot, votes by ballot) was tried first: it keeps too few probes in flight per SM (the
 * same effect as in the bulk find), so each thread reads its bucket with 16-byte loads of one
 * sector instead. The grid is the device's resident blocks. */
template <int B>
static __global__ __launch_bounds__(256, 6) void insert_refill_kernel(
    GhmMapRef ref, unsigned long long *slots, unsigned long long *stash, uint32_t *marks,
    const unsigned long long *__restrict__ grouped, const uint32_t *count, size_t n,
    uint32_t max_iter, uint32_t rng_seed, uint32_t chunk, MapMeta *meta, unsigned int *failed)
{
    const unsigned all = 0xFFFFFFFFu, lane = threadIdx.x & 31;
    n = pairs_of(count, n, meta);
    size_t next = 0, end = 0; /* the warp's chunk, the same in every lane */
    bool busy = false, spent = false;
    PairState ps;
    for (;;) {
        unsigned need = __ballot_sync(all, !busy);
        while (need && !spent) {
            if (next == end) {
                unsigned long long c = 0;
                if (lane == 0)
                    c = atomicAdd(&meta->cursor, (unsigned long long)chunk);
                c = __shfl_sync(all, c, 0);
                spent = c >= n;
                next = c;
                end = c + chunk < n ? c + chunk : n;
                continue;
            }
            unsigned take = (unsigned)min((size_t)__popc(need), end - next);
            unsigned rank = __popc(need & ((1u << lane) - 1));
            if (!busy && rank < take)
                busy = start_pair(NULL, NULL, grouped, next + rank, rng_seed, stash, meta, &ps);
            next += take;
            need = __ballot_sync(all, !busy);
        }
        if (!__any_sync(all, busy))
            return;
        bool stop = false;
        if (busy) {
            if (failed_yet(ps.it, meta)) {
                stop = true;
            } else if (place_step<B>(ref, slots, marks, meta, &ps.cur, &ps.from, &ps.carried,
                                     &ps.rng)) {
                busy = false;
            } else if (++ps.it >= max_iter) {
                stash_insert(ref, stash, ps.cur, meta, failed);
                busy = false;
            }
        }
        if (__any_sync(all, stop))
            return; /* the attempt failed: every warp stops within 16 steps */
    }
}

/* ---- the launcher: the insert, then (bucketed) the stash's fix-up --------------------------- */

/* Blocks of `block` threads for a thread per pair; a queued build's grid loops over its device
 * count, so it needs no more than fill the device (2048 threads an SM). GHM_ERR_TOO_LARGE past
 * a grid's reach. */
static int pair_grid(const GhmiMapAttempt *a, unsigned block, unsigned *out)
{
    size_t grid = (a->n + block - 1) / block;
    if (a->count) {
        int sms = 1;
        int ret = GHM_CUDA(ghm_cuda_sm_count(a->ctx, &sms));
        if (ret < 0)
            return ret;
        size_t most = (size_t)sms * (2048 / block);
        grid = grid < most ? grid : most;
    }
    if (grid > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    *out = (unsigned)grid;
    return GHM_OK;
}

/* The bucketed insert: a grouped table's on the resident blocks, whose warps take pairs until
 * they run out; another a thread per pair. Then the stash's fix-up. */
template <int B>
static int insert_bucketed(const GhmiMapAttempt *a, cudaStream_t s)
{
    int ret = GHM_OK;
    if (a->grouped) {
        size_t grid = (a->n + 255) / 256, full = 1;
        ret = GHM_CUDA(ghm_cuda_resident_blocks(a->ctx, (const void *)insert_refill_kernel<B>,
                                                256, &full));
        if (ret < 0)
            return ret;
        grid = grid < full ? grid : full;
        size_t chunk = a->n / (grid * 8 * INSERT_CHUNKS_PER_WARP) / 32 * 32;
        chunk = chunk < 32 ? 32 : chunk > INSERT_CHUNK_MAX ? INSERT_CHUNK_MAX : chunk;
        insert_refill_kernel<B><<<(unsigned)grid, 256, 0, s>>>(
            a->ref, a->slots, a->stash, a->marks, a->grouped, a->count, a->n, a->max_iter,
            a->rng_seed, (uint32_t)chunk, a->meta, a->failed);
    } else {
        unsigned grid = 1;
        if ((ret = pair_grid(a, 256, &grid)) < 0)
            return ret;
        insert_bucketed_kernel<B><<<grid, 256, 0, s>>>(
            a->ref, a->slots, a->stash, a->marks, a->keys, a->values, a->count, a->n,
            a->max_iter, a->rng_seed, a->meta, a->failed);
    }
    if ((ret = GHM_CUDA_LAUNCH()) < 0 || a->more_follow)
        return ret;
    stash_fixup_kernel<B><<<1, 128, 0, s>>>(a->ref, a->slots, a->stash, a->marks, a->meta);
    return GHM_CUDA_LAUNCH();
}

int ghmi_map_insert_launch(const GhmiMapAttempt *a, cudaStream_t s)
{
    if (a->n == 0)
        return GHM_OK;
    if (a->ref.bucket_slots == 4)
        return insert_bucketed<4>(a, s);
    if (a->ref.bucket_slots == 8)
        return insert_bucketed<8>(a, s);
    unsigned grid = 1; /* THESIS: one thread per pair */
    int ret = pair_grid(a, 128, &grid);
    if (ret < 0)
        return ret;
    insert_thesis_kernel<<<grid, 128, 0, s>>>(a->ref, a->slots, a->stash, a->keys, a->values,
                                              a->count, a->n, a->max_iter, a->meta, a->failed);
    return GHM_CUDA_LAUNCH();
}
