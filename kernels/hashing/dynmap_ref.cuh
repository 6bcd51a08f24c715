/*
 * dynmap_ref.cuh - GhmDynmap's device side (dynmap.cu, dynmap_alloc.cu): the table as kernels
 * see it, and the warp-wide operations on one slab list (Molenaar and Eisemann 2024, after
 * SlabHash). The slab layouts are those of hashing/dynmap_internal.h, word for word, and the
 * key hash and bucket are its ghmi_dynmap_hash and ghmi_dynmap_bucket, so both backends place
 * every item in the same bucket.
 *
 * Everything but an allocation is done by a team of 8 lanes per item (below): four lists walked
 * per warp. The store of an item whose list is full is one warp (the paper's way): lane l loads
 * word l of a slab (one 128-byte line, one coalesced load), so the slot heads, the next link
 * (lane 30) and the mask (lane 31) are all in registers, and the allocator below is warp-wide.
 * Lane j < item_words holds word j of the warp's item.
 *
 * The slab allocator (the paper's, section 5.1): memory blocks of 1024 slabs, whose 1024-bit
 * mask of slabs handed out is 32 words, one per lane, and a count of free slabs per block;
 * super blocks of 16 memory blocks are what the host adds (dynmap_alloc.cu). Before a kernel
 * that allocates, the blocks with free slabs are listed; a warp reads 32 listed blocks' counts
 * at once, takes one with free slabs, reads its mask with one load and claims a zero bit with
 * one atomicOr. The host reserves enough free slabs before a kernel
 * that may allocate, so the search always ends; it is bounded anyway, and a warp that finds
 * nothing raises the table's failure flag instead of spinning.
 */
#ifndef GHM_DYNMAP_REF_CUH
#define GHM_DYNMAP_REF_CUH

#include <stdint.h>

#include "hashing/ghm_dynmap.h"

enum {
    DYN_SLAB_WORDS = 32, /* hashing/dynmap_internal.h's GHMI_SLAB_* */
    DYN_NEXT = 30,
    DYN_MASK = 31,
    DYN_SLABS_PER_BLOCK = 1024,
    DYN_BLOCKS_PER_SUPER = 16,
    DYN_SLABS_PER_SUPER = DYN_SLABS_PER_BLOCK * DYN_BLOCKS_PER_SUPER,
};

#define DYN_FULL 0xffffffffu

/* Device counters of a table (one array of these, zeroed at create); the first
 * DYN_PER_CALL are reset at the start of each call that uses them. */
enum {
    DYN_C_NEED = 0,  /* insert: slabs the batch may link (per bucket, ceil(left / slots)) */
    DYN_C_BAD,       /* insert: an item whose first 8 bytes are zero; read: a bad handle */
    DYN_C_FAIL,      /* a warp found no free slab (never, with the reservation) */
    DYN_C_RELEASED,  /* gc: slabs returned */
    DYN_C_LEFT,      /* insert: new items that found no empty slot in their list */
    DYN_PER_CALL,
    DYN_C_USED = DYN_PER_CALL, /* slabs handed out, slab 0 not counted */
    DYN_C_ITEMS,               /* stored items: store and erase keep it */
    DYN_COUNTERS = 8
};

/* The table, by value in every kernel. */
typedef struct DynRef {
    uint32_t *const *dir;   /* super block i's 16384 slabs of 32 words: dir[i] */
    uint32_t *buckets;      /* first slab of each bucket, 0: none */
    uint32_t *bits;         /* 32 words per memory block: bit set = slab handed out */
    int *block_free;        /* free slabs per memory block */
    unsigned long long *counters;
    /* The store kernel's list of the memory blocks that had free slabs when it was launched
     * (NULL elsewhere): a warp searches it instead of every block, most of them full. */
    const uint32_t *free_list;
    const uint32_t *free_count;
    uint32_t n_buckets, n_blocks;
    int w, kw, slots; /* item words, key words, slots per slab */
    int hs;           /* words of a slot's head: 2, or 1 (one-word items, Accel32) */
    int hw;           /* item words held in the head: 2 or 1 (Atomic64), 0 (Accel32) */
    unsigned long long seed;
} DynRef;

static __device__ __forceinline__ uint64_t dyn_mix64(uint64_t x) /* ghmi_mix64 */
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* ghmi_dynmap_hash of a key. */
static __device__ __forceinline__ uint64_t dyn_hash(const DynRef &r, const uint32_t *key)
{
    uint64_t h = r.seed;
    for (int i = 0; i < r.kw; i++)
        h = dyn_mix64(h ^ ((uint64_t)key[i] << 7 | (uint64_t)i << 40));
    return h;
}

static __device__ __forceinline__ uint32_t dyn_bucket(const DynRef &r, uint64_t hash)
{
    return (uint32_t)(((hash >> 32) * (uint64_t)r.n_buckets) >> 32);
}

static __device__ __forceinline__ uint32_t *dyn_slab(const DynRef &r, uint32_t s)
{
    return r.dir[s / DYN_SLABS_PER_SUPER] + (size_t)(s % DYN_SLABS_PER_SUPER) * DYN_SLAB_WORDS;
}

static __device__ __forceinline__ GhmDynmapHandle dyn_handle(uint32_t s, int slot)
{
    return (unsigned long long)s << 32 | (uint32_t)slot;
}

/* The slab word that holds word j of the item in `slot`. */
static __device__ __forceinline__ int dyn_word_of(const DynRef &r, int slot, int j)
{
    if (j < r.hw)
        return r.hs == 2 ? 2 * slot + j : slot;
    return r.hs * r.slots + slot * (r.w - r.hw) + (j - r.hw);
}

/* What a slot's head must hold for the key: the first two words, the first (a one-word key of a
 * table with 8-byte heads: `lo_only`), or the Accel32 tag. */
typedef struct DynWant {
    uint32_t lo, hi;
    int lo_only;
} DynWant;

/* Lanes that hold a non-empty slot head (their slot in *slot). */
static __device__ __forceinline__ bool dyn_head_lane(const DynRef &r, uint32_t sw, uint32_t next,
                                                     int lane, bool *empty)
{
    bool head = r.hs == 2 ? (lane < 2 * r.slots && !(lane & 1)) : lane < r.slots;
    *empty = head && (r.hs == 2 ? (sw | next) == 0 : sw == 0);
    return head;
}

/* The slab word of one lane: through L2 (ldcg) where other warps of the kernel write slabs. */
static __device__ __forceinline__ uint32_t dyn_load(const uint32_t *p, bool shared_writes)
{
    return shared_writes ? __ldcg(p) : __ldg(p);
}

/* --- teams of 8 lanes: searches, claims of empty slots, erases -----------------------------
 * These need only the slab's words, not the warp-wide allocator, so they run four items per
 * warp: a team of 8 lanes reads a slab as one 16-byte word quad per
 * lane (the same single 128-byte line), and a warp keeps four lists walking at once, which is
 * what a latency-bound search needs. Team shuffles name the team's lanes (`tm`), so teams may
 * diverge. */

enum { DYN_TEAM = 8 };

static __device__ __forceinline__ uint32_t dyn_pick(uint4 v, int k)
{
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}

static __device__ __forceinline__ uint32_t dyn_team_or(unsigned tm, uint32_t x)
{
    for (int o = 4; o; o /= 2)
        x |= __shfl_xor_sync(tm, x, o, DYN_TEAM);
    return x;
}

/* Slots (a bit each) of the quad-held slab whose head matches the key, or (`empty`) whose head
 * is empty. */
static __device__ __forceinline__ uint32_t dyn_team_slots(const DynRef &r, uint4 v, int t,
                                                          DynWant want, bool empty)
{
    uint32_t found = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        int g = 4 * t + k;
        uint32_t x = dyn_pick(v, k);
        if (r.hs == 2) {
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

/* Claims an empty slot's head for an item (its first words w0, w1, or its Accel32 tag from
 * hash): whether this call won it. */
static __device__ __forceinline__ bool dyn_claim_head(const DynRef &r, uint32_t *slab, int slot,
                                                      uint32_t w0, uint32_t w1, uint64_t hash)
{
    if (r.hs == 2)
        return atomicCAS((unsigned long long *)(slab + 2 * slot), 0ull,
                         (unsigned long long)w0 | (unsigned long long)w1 << 32) == 0;
    return atomicCAS(slab + slot, 0u, r.hw ? w0 : ((uint32_t)hash | 1u)) == 0;
}


/* A team lane's quad of a slab: through L2 (ldcg) where other teams of the kernel write slabs. */
static __device__ __forceinline__ uint4 dyn_load_quad(const uint32_t *slab, int t,
                                                      bool shared_writes)
{
    const uint4 *p = (const uint4 *)slab + t;
    return shared_writes ? __ldcg(p) : __ldg(p);
}

/* Team lane t (0..7) of the team `tm` looks up key (kw words, global memory) of hash: the
 * handle or NO_HANDLE, the slab's quad of this lane in *v_out and the slot in *slot_out. */
static __device__ GhmDynmapHandle dyn_team_lookup(const DynRef &r, const uint32_t *key,
                                                  uint64_t hash, unsigned tm, int t,
                                                  bool shared_writes, uint4 *v_out,
                                                  int *slot_out)
{
    DynWant want;
    want.lo = r.hw == 0 ? ((uint32_t)hash | 1u) : __ldg(&key[0]);
    want.hi = r.hw == 2 && r.kw > 1 ? __ldg(&key[1]) : 0; /* a one-word key has no word 1 */
    want.lo_only = r.hw != 2 || r.kw == 1;
    uint32_t s = dyn_load(&r.buckets[dyn_bucket(r, hash)], shared_writes);
    while (s) {
        uint4 v = dyn_load_quad(dyn_slab(r, s), t, shared_writes);
        uint32_t cand = dyn_team_or(tm, dyn_team_slots(r, v, t, want, false));
        while (cand) {
            int slot = __ffs(cand) - 1;
            uint32_t bad = 0;
            for (int j = r.hw; j < r.kw; j++) {
                int idx = dyn_word_of(r, slot, j);
                if (idx / 4 == t)
                    bad |= dyn_pick(v, idx % 4) != __ldg(&key[j]);
            }
            if (!dyn_team_or(tm, bad)) {
                *v_out = v;
                *slot_out = slot;
                return dyn_handle(s, slot);
            }
            cand &= cand - 1;
        }
        s = __shfl_sync(tm, v.z, DYN_NEXT / 4, DYN_TEAM); /* word 30: lane 7, third word */
    }
    return GHM_DYNMAP_NO_HANDLE;
}

/* Copies the item of `slot` (the team's quads) to out (w words). */
static __device__ __forceinline__ void dyn_team_copy_out(const DynRef &r, uint4 v, int slot,
                                                         unsigned tm, int t, uint32_t *out)
{
    for (int j = 0; j < r.w; j++) {
        int idx = dyn_word_of(r, slot, j);
        uint32_t x = __shfl_sync(tm, dyn_pick(v, idx % 4), idx / 4, DYN_TEAM);
        if (t == j % DYN_TEAM)
            out[j] = x;
    }
}

/* --- the slab allocator (warp-wide) ------------------------------------------------------- */

/* A zeroed slab (the caller reserved it), or 0 with the failure flag raised. The warp starts at
 * entry `start` of the free list and reads 32 entries' counts at a time; a block that filled up
 * under it sends it to the next entry. */
static __device__ uint32_t dyn_alloc(const DynRef &r, uint32_t start)
{
    int lane = threadIdx.x & 31;
    uint32_t nl = *r.free_count, at = nl ? start % nl : 0;
    for (uint32_t scanned = 0; scanned < 2 * nl + 64 && nl;) {
        uint32_t b = r.free_list[(at + lane) % nl];
        int f = __ldcg(&r.block_free[b]);
        unsigned has = __ballot_sync(DYN_FULL, f > 0);
        if (!has) {
            at = (at + 32) % nl;
            scanned += 32;
            continue;
        }
        uint32_t pos = (at + __ffs(has) - 1) % nl, cand = r.free_list[pos];
        uint32_t *mask = &r.bits[(size_t)cand * 32];
        uint32_t word = __ldcg(&mask[lane]);
        unsigned open;
        while ((open = __ballot_sync(DYN_FULL, word != DYN_FULL)) != 0) {
            /* The first open word from a place of the warp's own (its start): warps that
             * share a block spread over its words instead of all racing for the lowest. */
            int rot = (int)(start & 31);
            unsigned turned = rot ? (open >> rot) | (open << (32 - rot)) : open;
            int l = (__ffs(turned) - 1 + rot) & 31;
            uint32_t got = 0;
            if (lane == l) {
                uint32_t bit = ~word & (word + 1); /* lowest zero bit */
                uint32_t old = atomicOr(&mask[lane], bit);
                if (!(old & bit)) {
                    atomicSub(&r.block_free[cand], 1);
                    atomicAdd(&r.counters[DYN_C_USED], 1ull);
                    got = cand * DYN_SLABS_PER_BLOCK + (uint32_t)lane * 32 + (__ffs(bit) - 1);
                }
                word = old | bit;
            }
            got = __shfl_sync(DYN_FULL, got, l);
            if (got)
                return got;
        }
        at = (pos + 1) % nl;
        scanned++;
    }
    if (lane == 0)
        atomicExch(&r.counters[DYN_C_FAIL], 1ull);
    return 0;
}

/* Returns a slab whose slots are empty (called by one thread). */
static __device__ void dyn_release(const DynRef &r, uint32_t s)
{
    uint32_t *p = dyn_slab(r, s);
    p[DYN_NEXT] = 0;
    p[DYN_MASK] = 0;
    __threadfence();
    uint32_t blk = s / DYN_SLABS_PER_BLOCK, off = s % DYN_SLABS_PER_BLOCK;
    atomicAnd(&r.bits[(size_t)blk * 32 + off / 32], ~(1u << (off % 32)));
    atomicAdd(&r.block_free[blk], 1);
    atomicAdd(&r.counters[DYN_C_USED], ~0ull); /* minus one */
}

#endif /* GHM_DYNMAP_REF_CUH */
