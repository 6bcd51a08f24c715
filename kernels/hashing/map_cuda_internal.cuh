/*
 * map_cuda_internal.cuh - the pieces of the CUDA GhmMap: its state and device counters, shared by
 * map.cu (sizing, build attempts, settling, the op table), map_insert.cu (the insert kernels) and
 * map_dedup.cu (the passes that settle duplicate keys).
 */
#ifndef GHM_MAP_CUDA_INTERNAL_CUH
#define GHM_MAP_CUDA_INTERNAL_CUH

#include "hash_cuda_internal.cuh"

/* Counters of one build attempt on the device (cleared by the attempt). */
typedef struct MapMeta {
    unsigned int failed;         /* an eviction chain and its stash slot both ran out */
    unsigned int stash_count;    /* pairs placed in the stash */
    unsigned int oob_present;    /* the key 0xFFFFFFFF was among the pairs */
    unsigned int oob_inputs;     /* input pairs with key 0xFFFFFFFF */
    unsigned int inputs;         /* pairs the insert saw (the device count of a queued build) */
    unsigned int pad;
    unsigned long long merges;   /* pairs that merged into a copy already stored */
    unsigned long long distinct; /* canonical copies in table + stash (THESIS dedup pass) */
    unsigned long long copies;   /* non-canonical copies (dedup passes) */
    unsigned long long cursor;   /* BUCKETED insert: pairs handed to warps so far */
} MapMeta;

struct CudaMap {
    GhmContext *ctx;
    GhmMapLayout layout;
    double load;
    int hashes;
    int max_rebuilds;
    unsigned long long *slots;
    size_t slots_alloc;
    unsigned long long *stash; /* GHMI_STASH_SIZE slots and the out-of-band slot */
    uint32_t *marks; /* BUCKETED: a bit per slot, set where an exchange or a carried pair wrote */
    MapMeta *meta;
    GhmMapRef ref;
    int pending;     /* an attempt is queued whose outcome the host has not read (settle) */
    int unique;      /* the pending attempt was promised distinct keys */
    int attempt;     /* the pending (or last) attempt */
    size_t size;
    size_t stash_count;
    int rebuilds;
};

/* One attempt as the insert and duplicate kernels see it. */
typedef struct GhmiMapAttempt {
    GhmMapRef ref;                 /* geometry and constants; ref.slots / ref.stash as below */
    unsigned long long *slots;     /* writable: the table, cleared */
    unsigned long long *stash;     /* writable: the stash and the out-of-band slot, cleared */
    uint32_t *marks;               /* BUCKETED, duplicates possible: cleared; else NULL */
    MapMeta *meta;                 /* cleared, oob slot at all ones */
    unsigned int *failed;          /* set to 1 as well when the attempt fails, or NULL */
    const uint32_t *keys;          /* device */
    const uint32_t *values;        /* device, or NULL: the value of keys[i] is i */
    const uint32_t *count;         /* device: the pairs to insert (at most n), or NULL: n */
    const unsigned long long *grouped; /* the same pairs packed and grouped (map_group.cu), read
                                        * instead of keys/values, or NULL */
    size_t n;
    uint32_t max_iter;             /* eviction steps before the stash */
    uint32_t rng_seed;             /* BUCKETED: eviction choices */
    int more_follow;               /* BUCKETED: another insert of this attempt follows, so the
                                    * stash's fix-up waits for the last (map.cu insert_pairs) */
    const GhmContext *ctx;         /* its device sizes the grids that loop */
} GhmiMapAttempt;

/* The pairs an attempt inserts: the device count of a queued build (at most n), else n. */
static __device__ __forceinline__ size_t ghmi_attempt_pairs(const uint32_t *count, size_t n)
{
    return count && *count < n ? *count : n;
}

/* The region_shift of a table sized in r (map_group.cu): regions of about 4 MB (the grouping's)
 * when the bucketed table holds at least four of them, else 0. Host only. */
uint32_t ghmi_map_region_shift(const GhmMapRef *r);

/* Queues the grouping of a large bucketed attempt's pairs by table region (map_group.cu) and sets
 * a->grouped, or leaves it NULL where grouping does not pay or finds no memory; *scratch is what
 * to free (ghmi_device_free) once the insert is queued. */
int ghmi_map_group_launch(GhmContext *ctx, GhmiMapAttempt *a, void **scratch);

/* Queues the insert of an attempt's pairs on s (map_insert.cu). */
int ghmi_map_insert_launch(const GhmiMapAttempt *a, cudaStream_t s);

/* Queues the passes that settle duplicate copies of a key and count them into meta
 * (map_dedup.cu); capacity = the table's slots. */
int ghmi_map_dedup_launch(const GhmiMapAttempt *a, size_t capacity, cudaStream_t s);

#endif /* GHM_MAP_CUDA_INTERNAL_CUH */
