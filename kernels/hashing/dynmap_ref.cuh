/*
 * dynmap_ref.cuh - GhmDynmap's device side (dynmap.cu, dynmap_alloc.cu): the table as kernels
 * see it, and the operations of one thread on one slab list (Molenaar and Eisemann 2024, after
 * SlabHash). The slab layouts are those of hashing/dynmap_internal.h, their numbers, the key
 * hash and the bucket hashing/dynmap_layout.h's, which the CPU backend uses too, so both
 * backends place every item in the same bucket and slot layout.
 *
 * Every operation on a list is done by one thread (below): it reads the slots' heads, the next
 * link (word 30) and the mask (word 31) as 16-byte quads of the slab's one 128-byte line.
 *
 * The slab memory (the paper's, section 5.1): memory blocks of 1024 slabs, whose 1024-bit mask
 * of slabs handed out is 32 words, and a count of free slabs per block; super blocks of 16
 * memory blocks are what the host adds (dynmap_alloc.cu). We depart from the paper's warp-level
 * allocation, where warps search the masks for free slabs: before an insert's look-up the host
 * hands out a pool of free slabs in one kernel (dynmap_alloc.cu's ghmi_dyn_take), as many as
 * the batch fills if all its items are new (growing the allocator to that first where it can:
 * the paper's conservative estimate before an edit); a thread at its list's end takes the
 * pool's next slab (one atomic a warp) and links it by a compare-and-swap, and what the pool
 * has left goes back after the kernel. Items left once it is spent get slabs that the host
 * counts and reserves (dynmap.cu), so no kernel runs out.
 */
#ifndef GHM_DYNMAP_REF_CUH
#define GHM_DYNMAP_REF_CUH

#include <stdint.h>

#include "hashing/dynmap_layout.h"
#include "hashing/ghm_dynmap.h"
#include "kernels/hashing/hash_refs.h"

enum { /* dynmap_layout.h's, by the names the kernels use */
    DYN_SLAB_WORDS = GHMI_SLAB_WORDS,
    DYN_NEXT = GHMI_SLAB_NEXT,
    DYN_MASK = GHMI_SLAB_MASK,
    DYN_SLABS_PER_BLOCK = GHMI_SLABS_PER_BLOCK,
    DYN_BLOCKS_PER_SUPER = GHMI_BLOCKS_PER_SUPER,
    DYN_SLABS_PER_SUPER = GHMI_SLABS_PER_SUPER,
};

#define DYN_FULL 0xffffffffu

/* Device counters of a table (one array of these, zeroed at create); the first
 * DYN_PER_CALL are reset at the start of each call that uses them. */
enum {
    DYN_C_NEED = 0,  /* insert: new slabs the host hands out for the left items */
    DYN_C_BAD,       /* insert: an item whose first 8 bytes are zero; read: a bad handle */
    DYN_C_RELEASED,  /* gc: slabs returned */
    DYN_C_LEFT,      /* insert: new items left for the host's slabs (the pool was spent) */
    DYN_C_POOL,      /* insert: slabs asked of the call's pool (past its size once spent) */
    DYN_C_SPARES,    /* insert: slabs of the pool taken and not linked */
    DYN_PER_CALL,
    DYN_C_USED = DYN_PER_CALL, /* slabs handed out, slab 0 not counted */
    DYN_C_ITEMS,               /* stored items: store and erase keep it */
    DYN_COUNTERS = 8
};

/* The table, by value in every kernel: hash_refs.h's reference. */
typedef GhmDynmapRef DynRef;

/* A key's hash and bucket in the table (dynmap_layout.h). */
static __device__ __forceinline__ uint64_t dyn_hash(const DynRef &r, const uint32_t *key)
{
    return ghmi_dynmap_hash(key, r.kw, r.seed);
}

static __device__ __forceinline__ uint32_t dyn_bucket(const DynRef &r, uint64_t hash)
{
    return ghmi_dynmap_bucket(hash, r.n_buckets);
}

static __device__ __forceinline__ uint32_t *dyn_slab(const DynRef &r, uint32_t s)
{
    return r.dir[s / DYN_SLABS_PER_SUPER] + (size_t)(s % DYN_SLABS_PER_SUPER) * DYN_SLAB_WORDS;
}

static __device__ __forceinline__ GhmDynmapHandle dyn_handle(uint32_t s, int slot)
{
    return (unsigned long long)s << 32 | (uint32_t)slot;
}

/* The reference as the kernels that walk lists see it: they are compiled twice (DYN_BY_HB,
 * dynmap_cuda_internal.cuh), for Accel8's 1-byte heads (HB 1) and for the 8- and 4-byte heads
 * of the others (HB 0, told that hb is not 1), so that Accel8's branches cost the others
 * nothing (every branch on the head size tests hb == 1 first). Read at run time, they made
 * 2^23 inserts of one-word Atomic64 items 12 % slower; compiled once per head size, the Accel32
 * inserts into long lists 6-11 % slower (a different schedule of the walk; H200, 2026-12-01). */
template <int HB> static __device__ __forceinline__ DynRef dyn_fixed(DynRef r)
{
    if (HB == 1)
        r.hb = 1;
    else
        __builtin_assume(r.hb != 1);
    return r;
}

/* The slab word that holds slot's head (an Accel8 word holds four). */
static __device__ __forceinline__ int dyn_head_word(const DynRef &r, int slot)
{
    return r.hb == 1 ? slot / 4 : r.hb == 8 ? 2 * slot : slot;
}

/* The slab word that holds word j of the item in `slot`. */
static __device__ __forceinline__ int dyn_word_of(const DynRef &r, int slot, int j)
{
    if (j < r.hw)
        return dyn_head_word(r, slot) + j;
    return r.rest + slot * (r.w - r.hw) + (j - r.hw);
}

/* What a slot's head holds for an item (hashing/dynmap_cpu_internal.h's ghmi_dyn_head_of): its
 * first 8 bytes (heads of 2 words), its one word, or its key's tag (32 or 8 bits), never 0 (the
 * empty slot). */
static __device__ __forceinline__ unsigned long long dyn_head_of(const DynRef &r,
                                                                 const uint32_t *item,
                                                                 uint64_t hash)
{
    if (r.hw == 0)
        return ghmi_dynmap_tag(hash, r.hb);
    return r.hw == 2 ? (unsigned long long)item[0] | (unsigned long long)item[1] << 32 : item[0];
}

/* Whether slot's head is filled (plain loads: for a kernel that runs alone on the table). */
static __device__ __forceinline__ bool dyn_head_filled(const DynRef &r, const uint32_t *slab,
                                                       int slot)
{
    int w = dyn_head_word(r, slot);
    if (r.hb == 1)
        return (slab[w] >> 8 * (slot % 4) & 0xffu) != 0;
    return slab[w] != 0 || (r.hb == 8 && slab[w + 1] != 0);
}

/* Sets slot's head (0: empties it) by a plain store, where no other thread claims that slot:
 * a new slab's writer, an undo, the bucket's one thread. An Accel8 tag is a byte store, which
 * leaves the word's other tags to their own writers. */
static __device__ __forceinline__ void dyn_store_head(const DynRef &r, uint32_t *slab, int slot,
                                                      unsigned long long head)
{
    int w = dyn_head_word(r, slot);
    if (r.hb == 1)
        ((uint8_t *)slab)[slot] = (uint8_t)head;
    else if (r.hb == 8)
        *(unsigned long long *)(slab + w) = head;
    else
        slab[w] = (uint32_t)head;
}

/* What a slot's head must hold for the key: the first two words, the first (a one-word key of a
 * table with 8-byte heads: `lo_only`), the Accel32 tag, or the Accel8 tag in every byte. */
typedef struct DynWant {
    uint32_t lo, hi;
    int lo_only;
} DynWant;

/* What a slot's head must hold for key of hash. */
static __device__ __forceinline__ DynWant dyn_want(const DynRef &r, const uint32_t *key,
                                                   uint64_t hash)
{
    DynWant want;
    if (r.hw == 0)
        want.lo = ghmi_dynmap_tag(hash, r.hb) * (r.hb == 1 ? 0x01010101u : 1u);
    else
        want.lo = __ldg(&key[0]);
    want.hi = r.hw == 2 && r.kw > 1 ? __ldg(&key[1]) : 0; /* a one-word key has no word 1 */
    want.lo_only = r.hw != 2 || r.kw == 1;
    return want;
}

/* A slab word: through L2 (ldcg) where other threads of the kernel write slabs. */
static __device__ __forceinline__ uint32_t dyn_load(const uint32_t *p, bool shared_writes)
{
    return shared_writes ? __ldcg(p) : __ldg(p);
}

/* What an insert's look-up of an absent key saw of its list: the first slab with an empty
 * slot (0: none), its empty slots and next link, and the last slab (0: the list is empty).
 * The claims start from there without reading that slab again: slots are only filled while
 * they run, so the empties seen are a superset of those left. */
typedef struct DynSpots {
    uint32_t first, empties, first_next, tail;
} DynSpots;

/* --- a thread per item: searches, claims of empty slots, erases -----------------------------
 * One thread walks one list: it reads the slots' heads as 16-byte quads, and the words beyond
 * them only where a head matches. We depart here from the paper and SlabHash, where a warp
 * (after stop 26, a team of 8 lanes) reads each slab as one 128-byte line: that find was bound
 * by issuing instructions (ncu, H100: 460 a warp of 4 keys, the ALU pipe 72 % busy, DRAM 33 %),
 * since a team spends its instructions on one key; a thread per key issues each once for 32 keys
 * and keeps 32 lists walking a warp instead of 4 (BENCHMARKS, 2026-11-27). */

static __device__ __forceinline__ uint32_t dyn_pick(uint4 v, int k)
{
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}

/* Slots (a bit each) of slab quad q (words 4q..4q+3) whose head matches the key, or (`empty`)
 * whose head is empty. */
static __device__ __forceinline__ uint32_t dyn_quad_slots(const DynRef &r, uint4 v, int q,
                                                          DynWant want, bool empty)
{
    uint32_t found = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        int g = 4 * q + k;
        uint32_t x = dyn_pick(v, k);
        if (r.hb == 1) { /* four tags: 0xff in each byte that matches, gathered to bit 4g + b */
            uint32_t m = __vcmpeq4(x, empty ? 0u : want.lo) & 0x01010101u;
            m = (m | m >> 7 | m >> 14 | m >> 21) & 0xfu;
            int lo = 4 * g;
            if (lo < r.slots)
                found |= (m & ((1u << min(4, r.slots - lo)) - 1)) << lo;
        } else if (r.hb == 8) {
            uint32_t y = dyn_pick(v, k | 1);
            bool hit = empty ? (x | y) == 0
                             : (x | y) && x == want.lo && (want.lo_only || y == want.hi);
            if (!(k & 1) && g / 2 < r.slots && hit)
                found |= 1u << (g / 2);
        } else if (g < r.slots && (empty ? x == 0 : x && x == want.lo)) {
            found |= 1u << g;
        }
    }
    return found;
}

/* What one look at a slab saw: slots whose head matches the key, slots whose head is empty,
 * the next link and the mask. */
typedef struct DynLook {
    uint32_t hits, empties, next, mask;
} DynLook;

/* Quad q of a slab: through L2 (ldcg) where other threads of the kernel write slabs. */
static __device__ __forceinline__ uint4 dyn_load_quad(const uint32_t *slab, int q,
                                                      bool shared_writes)
{
    const uint4 *p = (const uint4 *)slab + q;
    return shared_writes ? __ldcg(p) : __ldg(p);
}

/* Quad q of a slab whose first `quads` quads hold heads; zeros (no slot matches) past them. */
static __device__ __forceinline__ uint4 dyn_head_quad(const uint32_t *slab, int q, int quads,
                                                      bool shared_writes)
{
    return q < quads ? dyn_load_quad(slab, q, shared_writes) : make_uint4(0, 0, 0, 0);
}

/* Looks at a slab's heads, next link and mask. The first four head quads and the last quad are
 * loaded before any is compared, so their misses overlap (a 6-word item's five heads fill
 * three quads; Accel8's tags fill at most two). */
static __device__ __forceinline__ DynLook dyn_look(const DynRef &r, const uint32_t *slab,
                                                   DynWant want, bool shared_writes)
{
    DynWant none = {0, 0, 0};
    int quads = (r.rest + 3) / 4; /* the heads end where the items' other words begin */
    uint4 end = dyn_load_quad(slab, DYN_NEXT / 4, shared_writes); /* words 28..31 */
    uint4 v[4];
#pragma unroll
    for (int q = 0; q < 4; q++)
        v[q] = dyn_head_quad(slab, q, quads, shared_writes);
    DynLook k = {0, 0, end.z, end.w};
#pragma unroll
    for (int q = 0; q < 4; q++) {
        k.hits |= dyn_quad_slots(r, v[q], q, want, false);
        k.empties |= dyn_quad_slots(r, v[q], q, none, true);
    }
    for (int q = 4; q < quads; q++) {
        uint4 x = dyn_load_quad(slab, q, shared_writes);
        k.hits |= dyn_quad_slots(r, x, q, want, false);
        k.empties |= dyn_quad_slots(r, x, q, none, true);
    }
    return k;
}

/* Whether the item in `slot` holds, in words from..kw-1, other than key's. */
static __device__ __forceinline__ bool dyn_differs(const DynRef &r, const uint32_t *slab,
                                                   int slot, const uint32_t *key, int from,
                                                   bool shared_writes)
{
    for (int j = from; j < r.kw; j++)
        if (dyn_load(&slab[dyn_word_of(r, slot, j)], shared_writes) != __ldg(&key[j]))
            return true;
    return false;
}

/* Whether `slot` holds key, read again after a fence: the mask bit seen set was released
 * after the claimer's words, so the words read now are at least as new as the bit (the head's
 * quad is compared again too: for Accel32 the head is only the tag). */
static __device__ bool dyn_holds_after_fence(const DynRef &r, const uint32_t *slab, int slot,
                                             const uint32_t *key, DynWant want)
{
    __threadfence();
    int q = dyn_head_word(r, slot) / 4; /* the quad of the slot's head */
    uint32_t hits = dyn_quad_slots(r, dyn_load_quad(slab, q, true), q, want, false);
    return (hits >> slot & 1) && !dyn_differs(r, slab, slot, key, r.hw, true);
}

/* Looks key (kw words, global memory) of hash up: the handle or NO_HANDLE. With `spots` (not
 * NULL: an insert, whose claims run beside) an absent key's list is described there, and only
 * slots whose mask bit is set are compared: a claimer sets the bit after its words, so a slot
 * just claimed by another key that shares the first 8 bytes is not compared over the stale
 * words of an erased item; a match is confirmed after a fence (dyn_holds_after_fence). */
static __device__ GhmDynmapHandle dyn_lookup(const DynRef &r, const uint32_t *key,
                                             uint64_t hash, bool shared_writes,
                                             DynSpots *spots)
{
    DynWant want = dyn_want(r, key, hash);
    uint32_t s = dyn_load(&r.buckets[dyn_bucket(r, hash)], shared_writes);
    while (s) {
        const uint32_t *slab = dyn_slab(r, s);
        DynLook k = dyn_look(r, slab, want, shared_writes);
        if (spots)
            k.hits &= k.mask;
        for (; k.hits; k.hits &= k.hits - 1) {
            int slot = __ffs(k.hits) - 1;
            bool same = !dyn_differs(r, slab, slot, key, r.hw, shared_writes);
            if (same && spots)
                same = dyn_holds_after_fence(r, slab, slot, key, want);
            if (same)
                return dyn_handle(s, slot);
        }
        if (spots) {
            if (!spots->first && k.empties) {
                spots->first = s;
                spots->empties = k.empties;
                spots->first_next = k.next;
            }
            spots->tail = s;
        }
        s = k.next;
    }
    return GHM_DYNMAP_NO_HANDLE;
}

/* --- the slab memory ----------------------------------------------------------------------- */

/* The sum of `mine` over the threads of this block, for thread 0 (0 for the others): what a
 * kernel changes in the table's counters goes there one atomic a block, not one a thread
 * (every thread of a kernel on one word queues them all: 10 of a fill's 24 ms, 2026-11-26).
 * Every thread of the block calls it, after its work; a second call only after a
 * __syncthreads (the second resets the word the first returns from). */
static __device__ __forceinline__ unsigned dyn_block_sum(unsigned mine)
{
    __shared__ unsigned sum;
    if (threadIdx.x == 0)
        sum = 0;
    __syncthreads();
    if (mine)
        atomicAdd(&sum, mine);
    __syncthreads();
    return threadIdx.x == 0 ? sum : 0;
}

/* Clears `slot`'s mask bit; where that empties its slab, notes its bucket for the gc: only an
 * erase (or an insert's undo) leaves an empty slab linked. A byte store per emptied slab, not a
 * list on one counter (its contention made erases 8-75 % slower, 2026-12-01). */
static __device__ __forceinline__ void dyn_clear_bit(const DynRef &r, uint32_t *slab, int slot,
                                                     uint32_t bucket)
{
    if (atomicAnd(slab + DYN_MASK, ~(1u << slot)) == 1u << slot)
        r.dirty[bucket] = 1;
}

/* --- visiting the items (hash_refs.h's GhmDynmapRef) ---------------------------------------- */

/* Slab s's last quad (words 28..31): its next link (.z) and mask (.w). Between calls a slot's
 * mask bit is set exactly where its head is filled (a store sets the bit after the head, an
 * erase clears both), so a visit reads the mask, not the heads. */
static __device__ __forceinline__ uint4 dyn_end_quad(const DynRef &r, uint32_t s)
{
    return __ldg((const uint4 *)dyn_slab(r, s) + DYN_NEXT / 4);
}

/* Erases the item in `slot` of a slab of `bucket`, by the one thread that visits that bucket
 * (nothing else runs on the table): its head cleared, then its mask bit. The caller subtracts
 * what it erased from counters[DYN_C_ITEMS] (dyn_block_sum's total, once a block). */
static __device__ __forceinline__ void dyn_erase_owned(const DynRef &r, uint32_t *slab, int slot,
                                                       uint32_t bucket)
{
    dyn_store_head(r, slab, slot, 0);
    dyn_clear_bit(r, slab, slot, bucket);
}

/* Gives slab s, empty, back to its memory block: its mask bit cleared, the block's free count
 * raised. The caller takes the slabs it gives back off counters[DYN_C_USED], a block at a time:
 * an atomic a slab on that one word queued every thread of a gc behind it. */
static __device__ __forceinline__ void dyn_unmark(const DynRef &r, uint32_t s)
{
    uint32_t blk = s / DYN_SLABS_PER_BLOCK, off = s % DYN_SLABS_PER_BLOCK;
    atomicAnd(&r.bits[(size_t)blk * 32 + off / 32], ~(1u << (off % 32)));
    atomicAdd(&r.block_free[blk], 1);
}

/* Returns a slab whose slots are empty and that was linked (called by one thread; gc_kernel):
 * its link and mask cleared first (dyn_unmark). */
static __device__ void dyn_release(const DynRef &r, uint32_t s)
{
    uint32_t *p = dyn_slab(r, s);
    p[DYN_NEXT] = 0;
    p[DYN_MASK] = 0;
    __threadfence();
    dyn_unmark(r, s);
}

#endif /* GHM_DYNMAP_REF_CUH */
