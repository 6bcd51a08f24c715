/*
 * ghm_dynmap.h - GhmDynmap: a dynamic hash table of fixed-size items (1 to 10 32-bit words) that
 * grows and shrinks while it is used and never moves a stored item (Molenaar and Eisemann 2024,
 * "Editing Compact Voxel Representations on the GPU", after SlabHash: buckets of linked slabs).
 *
 * Usage:
 *     GhmDynmapOptions opt = ghm_dynmap_defaults();
 *     opt.item_words = 6;                 // 24-byte items
 *     opt.capacity = 1 << 20;             // a hint: the bucket count is fixed from it
 *     GhmDynmap *dm = NULL;
 *     if ((ret = ghm_dynmap_create(ctx, &opt, &dm)) < 0) goto fail;
 *     if ((ret = ghm_dynmap_insert(dm, items, n, handles, NULL)) < 0) goto fail;
 *     if ((ret = ghm_dynmap_find(dm, keys, m, found, NULL)) < 0) goto fail;
 *     if ((ret = ghm_dynmap_erase(dm, keys, k, NULL)) < 0) goto fail;
 *     if ((ret = ghm_dynmap_erase_if(dm, too_old, &now, NULL)) < 0) goto fail;  // by a test
 *     if ((ret = ghm_dynmap_items(dm, all, NULL, cap, &n)) < 0) goto fail;  // every item
 *     ghm_dynmap_gc(dm, NULL);            // empty slabs back to the allocator
 *     ghm_dynmap_free(&dm);
 *
 * Items. An item is item_words 32-bit words; its first 8 bytes (words 0 and 1; word 0 alone for
 * one-word items) are never all zero, because an all-zero first 8 bytes marks an empty slot (the
 * paper's rule: SVDAG nodes and leaves start with a non-zero mask). Insert rejects such items
 * with GHM_ERR_INVALID before changing anything.
 *
 * Key. What identifies an item is its first key_words words (option; 0 means all of them).
 * The default, the whole item, is what the paper does: its table deduplicates SVDAG nodes, two
 * nodes are the same node exactly when all their bytes are equal, and a search confirms a match
 * of the first 8 bytes (or of the acceleration hash) by comparing the rest of the item. A
 * shorter key (say the first 2 words = 8 bytes, a voxel's coordinates, with the rest a payload:
 * counts, normal sums, a label) makes the table a map; the payload is written once, by the
 * insert that stored the item, and is not changed by later inserts of the same key.
 * find and erase take keys of key_words words each.
 *
 * Handles. insert returns one GhmDynmapHandle per item: the 32-bit index of the slab that holds
 * it and the slot in that slab. The item stays at that address, unmoved and with the same
 * handle, through later inserts, erases of other items and garbage collection, until it is
 * erased; ghm_dynmap_read copies items out by handle.
 *
 * Duplicates. Items with equal keys in one insert batch: exactly one, the first of them in the
 * batch (the paper's "leader"), is stored; all of them get its handle. An item whose key is
 * already stored is not stored again; it gets the stored item's handle.
 *
 * Memory. Every call is synchronous and bulk; the arrays are host memory, or on the CUDA backend
 * host or device memory (backend buffers: a device array is used in place). Slabs are 128 bytes
 * (one cache line) and come from a slab allocator of memory blocks of 1024 slabs with a bitmask,
 * obtained 16 blocks (a super block) at a time; an insert first reserves enough slabs for the
 * worst case of its batch, so the parallel insert never runs out. Memory is returned to the
 * system only by ghm_dynmap_free; ghm_dynmap_gc returns empty slabs to the allocator.
 *
 * Backends. Both implement the Atomic64 variant (a slot is claimed by one 64-bit
 * compare-and-swap of its first 8 bytes, then the rest of the item is written) and the 32- and
 * 8-bit acceleration hashes (a slot claimed by a 32-bit compare-and-swap of its tag, or of the
 * word that holds its 8-bit tag, then the whole item written; a search compares tags first, so
 * an 8-bit tag sends one absent key in 255 on to compare an item's words): the CUDA backend
 * with a thread per item, which reads a slab's heads first and its other words only where a
 * head matches, and an item whose list is full placed by its rank in its bucket into the new
 * slabs;
 * the CPU backend on OpenMP threads, one key per thread for finds and erases, and for inserts
 * one thread per bucket (the batch put in bucket order first, so a slot needs no
 * compare-and-swap). Handles depend on which thread claims a slot first, so
 * they can differ between runs and backends; every other answer (inserted and erased flags,
 * found or not, the items, sizes) is the same for any thread count and on both backends.
 *
 * Concurrency: calls on one GhmDynmap must not overlap; each call is parallel inside.
 */
#ifndef GHM_DYNMAP_H
#define GHM_DYNMAP_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmDynmap GhmDynmap;

enum { GHM_DYNMAP_MAX_WORDS = 10 };
/* Most items or keys one insert or erase takes (GHM_ERR_TOO_LARGE beyond). */
#define GHM_DYNMAP_MAX_BATCH (((size_t)1 << 31) - 1)

/* The paper's slab layouts (section 4.2). */
typedef enum GhmDynmapVariant {
    GHM_DYNMAP_ATOMIC64 = 0, /* the first 8 bytes of every slot first, then the rest (AoS) */
    GHM_DYNMAP_ACCEL32 = 1,  /* a 32-bit tag (acceleration hash) per slot, then whole items */
    GHM_DYNMAP_ACCEL8 = 2,   /* an 8-bit tag (acceleration hash) per slot, then whole items */
    GHM_DYNMAP_VARIANTS = 3  /* the number of variants, not a variant */
} GhmDynmapVariant;

/* A variant's name ("atomic64", "accel32", "accel8"; NULL out of range), and the variant of a
 * name (-1 for none), as ghm_map_scheme_name and ghm_map_scheme_from_name. */
GHM_API const char *ghm_dynmap_variant_name(GhmDynmapVariant variant);
GHM_API int ghm_dynmap_variant_from_name(const char *name);

typedef struct GhmDynmapOptions {
    int item_words;     /* 1 .. GHM_DYNMAP_MAX_WORDS */
    int key_words;      /* 1 .. item_words, or 0 (default): the whole item is the key */
    size_t capacity;    /* expected number of items; sets the bucket count (0: 1024 buckets) */
    GhmDynmapVariant variant;
} GhmDynmapOptions;

/* A stored item's place: slab index in the high 32 bits, slot in the low 32 bits. */
typedef uint64_t GhmDynmapHandle;
#define GHM_DYNMAP_NO_HANDLE UINT64_MAX /* find: the key is not stored */

static inline uint32_t ghm_dynmap_handle_slab(GhmDynmapHandle h) { return (uint32_t)(h >> 32); }
static inline uint32_t ghm_dynmap_handle_slot(GhmDynmapHandle h) { return (uint32_t)h; }

typedef struct GhmDynmapStats {
    size_t items;          /* stored items */
    size_t buckets;        /* fixed at create */
    size_t slots_per_slab; /* Atomic64: 30 / item_words; Accel32: 30 / (item_words + 1);
                            * Accel8: 120 / (4 * item_words + 1) */
    size_t slabs_used;     /* slabs linked into buckets */
    size_t slabs_free;     /* slabs held by the allocator and not in use */
    size_t bytes;          /* all memory the table holds: slabs, bitmasks, buckets */
} GhmDynmapStats;

/* item_words 6, key_words 0 (whole item), capacity 0, variant GHM_DYNMAP_ATOMIC64. */
GHM_API GhmDynmapOptions ghm_dynmap_defaults(void);

/* Creates an empty table on ctx's backend (keeps a pointer to ctx). GHM_ERR_INVALID for options
 * out of range or NULL ctx/out; GHM_ERR_UNSUPPORTED for a backend without dynamic tables;
 * GHM_ERR_NOMEM (GHM_ERR_CUDA on a failing device). On
 * failure *out is NULL. */
GHM_API int ghm_dynmap_create(GhmContext *ctx, const GhmDynmapOptions *opt, GhmDynmap **out);

/* Inserts n items (n * item_words words). handles (n entries) receives each item's handle, the
 * stored one for duplicates; inserted (n entries) is 1 where this call stored that item, else 0.
 * Either may be NULL; items may be NULL when n is 0. n <= GHM_DYNMAP_MAX_BATCH.
 * GHM_ERR_INVALID: an item's first 8 bytes are zero (nothing is changed); GHM_ERR_NOMEM or
 * GHM_ERR_TOO_LARGE (more than 2^32 slabs): the slabs the batch might need could not be
 * obtained; the table holds the items it held, at their handles (super blocks obtained before
 * the failure stay with the allocator as free slabs; on CUDA slabs the call linked may stay
 * linked, empty, until ghm_dynmap_gc) and the outputs are unspecified. */
GHM_API int ghm_dynmap_insert(GhmDynmap *dm, const uint32_t *items, size_t n,
                              GhmDynmapHandle *handles, uint8_t *inserted);

/* Erases the items of n keys (key_words words each). Absent keys are ignored; erased (n
 * entries, may be NULL) is 1 for the key occurrence that erased an item, else 0 (a key repeated
 * in the batch erases once). The slots become free for later inserts; their slabs stay linked
 * until ghm_dynmap_gc. */
GHM_API int ghm_dynmap_erase(GhmDynmap *dm, const uint32_t *keys, size_t n, uint8_t *erased);

/* erase_if's test of a stored item (item_words words): non-zero to erase it. It is called once
 * for each stored item, from several threads at once and in no set order, and must not call
 * the table. */
typedef int (*GhmDynmapTest)(const uint32_t *item, void *user);

/* Erases every stored item for which test(item, user) is non-zero; how many in *erased (may be
 * NULL). The items kept stay where they are, their handles valid; the slots freed are as
 * ghm_dynmap_erase leaves them. The CPU backend makes one pass over the buckets on the context's
 * threads; the CUDA backend lists the items to the host, tests them there and erases them by
 * key (kernels test items in place through the device reference, hash_refs.h).
 * GHM_ERR_INVALID for NULL dm or test; GHM_ERR_NOMEM (the table unchanged). */
GHM_API int ghm_dynmap_erase_if(GhmDynmap *dm, GhmDynmapTest test, void *user, size_t *erased);

/* Looks up n keys. handles (n entries) receives the handle or GHM_DYNMAP_NO_HANDLE; items_out
 * (n * item_words words) the stored item, or zeros for an absent key. Either may be NULL. */
GHM_API int ghm_dynmap_find(const GhmDynmap *dm, const uint32_t *keys, size_t n,
                            GhmDynmapHandle *handles, uint32_t *items_out);

/* Copies the items at n handles (returned by insert or find, not erased since) to items_out
 * (n * item_words words). GHM_ERR_INVALID for a handle outside the table or on an empty slot. */
GHM_API int ghm_dynmap_read(const GhmDynmap *dm, const GhmDynmapHandle *handles, size_t n,
                            uint32_t *items_out);

/* Copies every stored item, in no particular order (it depends on where inserts placed them),
 * to items_out (cap * item_words words), and its handle to handles_out (cap entries, may be
 * NULL). *count receives the number of stored items. GHM_ERR_TOO_LARGE, with nothing copied,
 * when more than cap are stored (call with cap = ghm_dynmap_size()); GHM_ERR_UNSUPPORTED on a
 * backend without it. items_out may be NULL when cap is 0. */
GHM_API int ghm_dynmap_items(const GhmDynmap *dm, uint32_t *items_out,
                             GhmDynmapHandle *handles_out, size_t cap, size_t *count);

/* Loads the backend's device code for every call on the table now. CUDA loads a kernel at its
 * first launch (lazy loading, its default), so the first erase, find or listing of a process
 * takes longer than the next; a caller whose later calls are timed may call this ahead, from
 * another thread while it works on this table (it reads nothing of the table). GHM_OK at once
 * on a backend without device code. */
GHM_API int ghm_dynmap_preload(const GhmDynmap *dm);

/* Number of stored items (0 for NULL). */
GHM_API size_t ghm_dynmap_size(const GhmDynmap *dm);

/* Garbage collection: unlinks every slab with no stored item from its bucket and returns it to
 * the allocator. Handles of stored items are unchanged. released (may be NULL) receives the
 * number of slabs returned. */
GHM_API int ghm_dynmap_gc(GhmDynmap *dm, size_t *released);

GHM_API int ghm_dynmap_stats(const GhmDynmap *dm, GhmDynmapStats *out);

/* Frees the table and all its memory; accepts NULL and *dm == NULL, and sets *dm to NULL. */
GHM_API void ghm_dynmap_free(GhmDynmap **dm);

#ifdef __cplusplus
}
#endif

#endif /* GHM_DYNMAP_H */
