/*
 * dynmap_cuda_internal.cuh - what GhmDynmap's CUDA files share on the host: the table's state
 * (dynmap.cu owns it) and the slab allocator's growth (dynmap_alloc.cu).
 */
#ifndef GHM_DYNMAP_CUDA_INTERNAL_CUH
#define GHM_DYNMAP_CUDA_INTERNAL_CUH

#include "dynmap_ref.cuh"
#include "hash_cuda_internal.cuh"

typedef struct CudaDynmap {
    GhmContext *ctx;
    DynRef ref;       /* device pointers and the layout; dir, bits, block_free grow */
    void **chunks;    /* the slab memory, one allocation per growth (super blocks in a row) */
    size_t n_chunks, cap_chunks;
    size_t n_supers;  /* super blocks in use */
    size_t cap_supers; /* super blocks dir, bits and block_free have room for */
    uint32_t *counts;  /* per bucket, an insert's new items, then its first new slab (zero
                        * between calls) */
    size_t block_bytes; /* buckets, counts, counters and dirty flags: one allocation */
    size_t items;
    unsigned long long host_counters[DYN_COUNTERS]; /* ref.counters, copied after a sync */
} CudaDynmap;

/* Makes sure at least `need` slabs are free, `used` being handed out now (slab 0 apart): adds
 * super blocks, all allocated before anything changes, so a failure (GHM_ERR_NOMEM, or
 * GHM_ERR_TOO_LARGE beyond 2^32 slabs) leaves the allocator as it was. `spare`: memory that
 * only speeds the call up (running out is logged nowhere: ghmi_device_alloc_spare). Queued on
 * the stream. */
int ghmi_dyn_reserve(CudaDynmap *d, size_t need, size_t used, int spare);

/* Queues the handing out of k slabs, reserved before (ghmi_dyn_reserve), into out[0..k): the
 * free slabs of the lowest memory blocks, marked taken, zeroed but for their item words. Its
 * scratch is *block's (free it whatever the result). */
int ghmi_dyn_take(CudaDynmap *d, size_t k, uint32_t *out, void **block);

/* An insert's pool: n slabs handed out before its look-up, for the items that reach the end
 * of their list (dynmap.cu's append_slot); spares (room for n) receives those taken and not
 * linked. counters[DYN_C_POOL] and [DYN_C_SPARES] count them. */
typedef struct DynPool {
    const uint32_t *slabs;
    uint32_t *spares;
    size_t n;
} DynPool;

/* Queues the return of the slabs of an insert's pool that it did not link (those past
 * counters[DYN_C_POOL], and the spares) to the allocator. */
int ghmi_dyn_give_back(CudaDynmap *d, const DynPool *pool);

/* Slabs the allocator holds (slab 0 included), those free while `used` are handed out, and the
 * bytes of all its memory. */
size_t ghmi_dyn_total_slabs(const CudaDynmap *d);
size_t ghmi_dyn_free_slabs(const CudaDynmap *d, size_t used);
size_t ghmi_dyn_alloc_bytes(const CudaDynmap *d);

void ghmi_dyn_alloc_free(CudaDynmap *d);

/* --- launch shapes and what dynmap.cu and dynmap_ops.cu share -------------------------------- */

/* kernel<HB> (dyn_fixed) for a table of hb head bytes, to launch or to load. */
#define DYN_BY_HB(hb, kernel) ((hb) == 1 ? kernel<1> : kernel<0>)

/* Element-wise kernels 256 threads a block. */
enum { THREADS = 256 };

static inline unsigned thread_grid(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

/* A caller array on the device: itself (device memory) or a staged copy in `owned`. */
typedef struct Staged {
    void *dev, *owned;
} Staged;

/* An input, copied to the device unless it is device memory. */
int ghmi_dyn_stage_in(GhmContext *ctx, const void *src, size_t bytes, Staged *st);
/* An output: dst itself when it is device memory, else a temporary; dst NULL: a temporary the
 * kernels write anyway. */
int ghmi_dyn_stage_out(GhmContext *ctx, void *dst, size_t bytes, Staged *st);
/* Queues the copy of a staged output back to dst (none when dst is device memory or NULL). */
int ghmi_dyn_queue_back(GhmContext *ctx, void *dst, const Staged *st, size_t bytes);
/* Copies the device counters to d->host_counters, waits for the stream, updates d->items. */
int ghmi_dyn_read_counters(CudaDynmap *d);
/* Zeroes the per-call counters (need, new, bad, fail, released). */
int ghmi_dyn_reset_counters(CudaDynmap *d);

/* The batch's duplicate table (dynmap_leaders.cu; hashing/dynmap_cpu.c's find_leaders) holds
 * entries fp << idx_bits | i + 1 (0: empty), fp being the top bits of record i's hash that the
 * index leaves room for: a probe passes over another key's entry without reading that record
 * but for one in 2^fp_bits (the index alone made every occupied slot on the way a random read
 * of the other record's hash). idx_bits <= 31: a batch has fewer than 2^31 records
 * (GHM_DYNMAP_MAX_BATCH). */
typedef struct LeaderTab {
    uint32_t *tab;
    size_t slots;
    int idx_bits;
} LeaderTab;

/* Scratch of an insert or erase: hashes, the duplicate table, and per record its key's slot
 * there (the hash kernel's), where its leader is read (dyn_leader), or, once the insert has
 * resolved them (ghmi_dyn_resolve_leaders), its leader. */
typedef struct Scratch {
    uint64_t *hash;
    uint32_t *slot;
    LeaderTab t;
} Scratch;

static __device__ __forceinline__ uint32_t leader_index_mask(const LeaderTab &t)
{
    return (1u << t.idx_bits) - 1;
}

/* Record i's leader, the first record of the batch with its key: the entry its key's slot ends
 * with once the hash kernel is done. The erase reads it in its own kernel (2^23 erases 2-3 %
 * faster than after a pass of its own); the insert resolves every record's first
 * (ghmi_dyn_resolve_leaders): read in the plan kernel, before each look-up, it made 2^23
 * inserts 4-10 % slower (H200, 2026-12-02). */
static __device__ __forceinline__ uint32_t dyn_leader(const LeaderTab &t, const uint32_t *slot,
                                                      size_t i)
{
    return (__ldcg(&t.tab[slot[i]]) & leader_index_mask(t)) - 1;
}

/* Queues (dynmap_leaders.cu) the hashes of n records (their keys the first key_words words of
 * each, stride words apart; `check`: flag records whose first 8 bytes are zero) and their keys'
 * slots in the duplicate table (dyn_leader), in scratch that *block owns (free it whatever the
 * result). */
int ghmi_dyn_hash_and_leaders(CudaDynmap *d, const uint32_t *rec, int stride, size_t n,
                              int check, void **block, Scratch *s);
/* Queues the replacement of each record's slot in s->slot by its leader (dyn_leader). */
int ghmi_dyn_resolve_leaders(CudaDynmap *d, size_t n, Scratch *s);

/* Load the kernels of dynmap.cu (those of a table of hb head bytes), dynmap_alloc.cu and
 * dynmap_leaders.cu now (the op table's preload, in dynmap_ops.cu). */
cudaError_t ghmi_dyn_load_kernels(const GhmContext *ctx, int hb);
cudaError_t ghmi_dyn_alloc_load_kernels(const GhmContext *ctx);
cudaError_t ghmi_dyn_leaders_load_kernels(const GhmContext *ctx);

/* The op table's create, destroy and insert (dynmap.cu); the rest is in dynmap_ops.cu. */
int ghmi_dyn_create(GhmContext *ctx, const GhmDynmapOptions *opt, void **impl);
void ghmi_dyn_destroy(void *impl);
int ghmi_dyn_insert(void *impl, const uint32_t *items, size_t n, GhmDynmapHandle *handles,
                    uint8_t *inserted);

#endif /* GHM_DYNMAP_CUDA_INTERNAL_CUH */
