/*
 * map_dedup.cu - the passes that settle duplicate keys after a CUDA GhmMap's insert
 * (map_insert.cu), unless the caller promised distinct keys.
 *
 * Duplicate keys keep their smallest value. The insert merges a pair into a copy of its key that
 * it sees, but races can still leave two copies (a key in flight in an eviction chain is in no
 * slot while another copy looks for it), so a pass over the quiescent table settles them without
 * any sort (as the CPU backend does): the canonical copy of a key is its first in probe order,
 * which is the one every find returns (buckets in hash order, slots in order, the stash last);
 * every other copy atomicMin's its value into it. The other copies stay in place, which keeps
 * the insert's invariant (removing them would open holes in full buckets); they only cost a
 * slot. The THESIS pass looks at every slot; the BUCKETED pass only at the slots the insert
 * marked as possible second copies (dedup_marked_kernel says why that suffices), which makes it
 * a small fraction of the build. The passes also yield the number of distinct keys.
 */
#include "map_cuda_internal.cuh"

/* The slots of one bucket by 16-byte loads served from L2 (__ldcg: other threads wrote them). */
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

/* Position of the first copy of key k in its probe order (buckets h_1.., slots in order, the
 * stash last), looking only before position p (or everywhere for a stash entry); ~0 if none. */
static __device__ __forceinline__ size_t first_copy(const GhmMapRef &ref,
                                                    const unsigned long long *slots, uint32_t k,
                                                    size_t p, int in_stash)
{
    uint32_t nb = ref.bucket_slots;
    for (uint32_t h = 0; h < ref.num_hashes; h++) {
        size_t base = (size_t)ghm_map_ref_bucket(&ref, k, h) * nb;
        for (uint32_t j = 0; j < nb; j++) {
            size_t q = base + j;
            if (!in_stash && q == p)
                return ~(size_t)0;
            if (ghmi_slot_key(__ldcg(slots + q)) == k)
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
            uint32_t k = ghmi_slot_key(e);
            if (k == GHMI_EMPTY_KEY)
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
                    if (ghmi_slot_key(c[j]) != k)
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
        uint32_t k = ghmi_slot_key(e);
        if (k == GHMI_EMPTY_KEY)
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

/* The stash pass only reads the table, so the passes may run in either order. */
int ghmi_map_dedup_launch(const GhmiMapAttempt *a, size_t capacity, cudaStream_t s)
{
    if (a->n == 0)
        return GHM_OK;
    const GhmMapRef &r = a->ref;
    size_t words = (capacity + 31) / 32;
    size_t blocks = (r.bucket_slots == 1 ? capacity : words) / 256 + 1;
    unsigned grid = (unsigned)(blocks < 4096 ? blocks : 4096);
    if (r.bucket_slots == 4)
        dedup_marked_kernel<4><<<grid, 256, 0, s>>>(r, a->slots, a->marks, words, a->meta);
    else if (r.bucket_slots == 8)
        dedup_marked_kernel<8><<<grid, 256, 0, s>>>(r, a->slots, a->marks, words, a->meta);
    else
        dedup_slots_kernel<<<grid, 256, 0, s>>>(r, a->slots, a->slots, capacity, 0, a->meta);
    int ret = GHM_CUDA_LAUNCH();
    if (ret >= 0) {
        dedup_slots_kernel<<<1, 128, 0, s>>>(r, a->slots, a->stash, GHMI_STASH_SIZE, 1, a->meta);
        ret = GHM_CUDA_LAUNCH();
    }
    return ret;
}
