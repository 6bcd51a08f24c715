/*
 * dynmap_ref.cuh - GhmDynmap's device side (dynmap.cu, dynmap_alloc.cu): the table as kernels
 * see it, and the team-wide operations on one slab list (Molenaar and Eisemann 2024, after
 * SlabHash). The slab layouts are those of hashing/dynmap_internal.h, word for word, and the
 * key hash and bucket are its ghmi_dynmap_hash and ghmi_dynmap_bucket, so both backends place
 * every item in the same bucket.
 *
 * Everything is done by a team of 8 lanes per item (below): four lists walked per warp. A team
 * lane reads a slab as one 16-byte word quad (the team reads one 128-byte line), so the slot
 * heads, the next link (word 30) and the mask (word 31) are all in registers.
 *
 * The slab memory (the paper's, section 5.1): memory blocks of 1024 slabs, whose 1024-bit mask
 * of slabs handed out is 32 words, and a count of free slabs per block; super blocks of 16
 * memory blocks are what the host adds (dynmap_alloc.cu). We depart from the paper's warp-level
 * allocation: an insert (dynmap.cu) knows every slab its batch will link before it writes
 * anything, so the host reserves them and one kernel hands them all out (dynmap_alloc.cu's
 * ghmi_dyn_take): no warp searches for a free slab, none races another for a link, and no
 * kernel can run out.
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
    DYN_C_NEED = 0,  /* insert: new slabs the batch links */
    DYN_C_BAD,       /* insert: an item whose first 8 bytes are zero; read: a bad handle */
    DYN_C_RELEASED,  /* gc: slabs returned */
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

/* What a slot's head holds for an item (hashing/dynmap_cpu_internal.h's ghmi_dyn_head_of): its
 * first 8 bytes (heads of 2 words), its one word, or its 32-bit tag, never 0 (the empty slot). */
static __device__ __forceinline__ unsigned long long dyn_head_of(const DynRef &r,
                                                                 const uint32_t *item,
                                                                 uint64_t hash)
{
    if (r.hw == 0)
        return (uint32_t)hash | 1u;
    return r.hw == 2 ? (unsigned long long)item[0] | (unsigned long long)item[1] << 32 : item[0];
}

/* What a slot's head must hold for the key: the first two words, the first (a one-word key of a
 * table with 8-byte heads: `lo_only`), or the Accel32 tag. */
typedef struct DynWant {
    uint32_t lo, hi;
    int lo_only;
} DynWant;

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

/* A team lane's quad of a slab: through L2 (ldcg) where other teams of the kernel write slabs. */
static __device__ __forceinline__ uint4 dyn_load_quad(const uint32_t *slab, int t,
                                                      bool shared_writes)
{
    const uint4 *p = (const uint4 *)slab + t;
    return shared_writes ? __ldcg(p) : __ldg(p);
}

/* What an insert's look-up of an absent key saw of its list: the first slab with an empty
 * slot (0: none) and the last slab (0: the list is empty). */
typedef struct DynSpots {
    uint32_t first, tail;
} DynSpots;

/* Whether the team's quads of a slab hold, in `slot`, key words hw..kw-1 other than key's. */
static __device__ __forceinline__ bool dyn_team_differs(const DynRef &r, uint4 v, int slot,
                                                        const uint32_t *key, unsigned tm, int t)
{
    uint32_t bad = 0;
    for (int j = r.hw; j < r.kw; j++) {
        int idx = dyn_word_of(r, slot, j);
        if (idx / 4 == t)
            bad |= dyn_pick(v, idx % 4) != __ldg(&key[j]);
    }
    return dyn_team_or(tm, bad) != 0;
}

/* Team lane t (0..7) of the team `tm` looks up key (kw words, global memory) of hash: the
 * handle or NO_HANDLE, the slab's quad of this lane in *v_out and the slot in *slot_out.
 * With `spots` (not NULL: an insert, whose claims run beside) an absent key's list is
 * described there, and only slots whose mask bit is set are compared: a claimer sets the bit
 * after its words, so a slot just claimed by another key that shares the first 8 bytes is not
 * compared over the stale words of an erased item. A slot that matches is read again after a
 * fence, which makes the words seen at least as new as the bit. */
static __device__ GhmDynmapHandle dyn_team_lookup(const DynRef &r, const uint32_t *key,
                                                  uint64_t hash, unsigned tm, int t,
                                                  bool shared_writes, uint4 *v_out,
                                                  int *slot_out, DynSpots *spots)
{
    DynWant want;
    want.lo = r.hw == 0 ? ((uint32_t)hash | 1u) : __ldg(&key[0]);
    want.hi = r.hw == 2 && r.kw > 1 ? __ldg(&key[1]) : 0; /* a one-word key has no word 1 */
    want.lo_only = r.hw != 2 || r.kw == 1;
    uint32_t s = dyn_load(&r.buckets[dyn_bucket(r, hash)], shared_writes);
    while (s) {
        const uint32_t *slab = dyn_slab(r, s);
        uint4 v = dyn_load_quad(slab, t, shared_writes);
        uint32_t cand = dyn_team_or(tm, dyn_team_slots(r, v, t, want, false));
        if (spots)
            cand &= __shfl_sync(tm, v.w, DYN_MASK / 4, DYN_TEAM); /* word 31: lane 7 */
        while (cand) {
            int slot = __ffs(cand) - 1;
            bool same = !dyn_team_differs(r, v, slot, key, tm, t);
            if (same && spots) {
                __threadfence();
                v = dyn_load_quad(slab, t, true);
                uint32_t again = dyn_team_or(tm, dyn_team_slots(r, v, t, want, false));
                same = (again >> slot & 1) && !dyn_team_differs(r, v, slot, key, tm, t);
            }
            if (same) {
                *v_out = v;
                *slot_out = slot;
                return dyn_handle(s, slot);
            }
            cand &= cand - 1;
        }
        if (spots) {
            DynWant none = {0, 0, 0};
            if (!spots->first && dyn_team_or(tm, dyn_team_slots(r, v, t, none, true)))
                spots->first = s;
            spots->tail = s;
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

/* --- the slab memory ----------------------------------------------------------------------- */

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
