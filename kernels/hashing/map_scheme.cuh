/*
 * map_scheme.cuh - what the CUDA map schemes other than cuckoo share (open addressing, Robin
 * Hood, chaining, two-level cuckoo): a state that begins with GhmiSchemeMap, and one create,
 * build, find, stats and destroy for them all (map_scheme.cu). A scheme supplies only what makes
 * it itself (GhmiSchemeOps): its build from device arrays, its find kernel, what its table holds.
 * The generic part keeps the promises every scheme makes alike: arrays in host or device memory,
 * a failed build leaves an empty map with its memory returned, a map never built answers
 * "not found", the device counters live as long as the map.
 */
#ifndef GHM_MAP_SCHEME_CUH
#define GHM_MAP_SCHEME_CUH

#include "hash_cuda_internal.cuh"

typedef struct GhmiSchemeMap GhmiSchemeMap;

typedef struct GhmiSchemeOps {
    size_t state_bytes; /* the scheme's state, whose first member is its GhmiSchemeMap */
    size_t meta_bytes;  /* its device counters (GhmiSchemeMap.meta) */
    size_t max_pairs;   /* a larger build is GHM_ERR_TOO_LARGE before its arrays are staged */
    /* Builds from device arrays (queued and waited for), setting size and oob_value; on an
     * error the generic part releases the table. */
    int (*build)(GhmiSchemeMap *m, const uint32_t *keys, const uint32_t *values, size_t n);
    /* Queues the find kernel of a built table, `grid` blocks of 256 threads. */
    void (*find)(const GhmiSchemeMap *m, const uint32_t *keys, size_t n, uint32_t *out,
                 unsigned grid, cudaStream_t s);
    void (*release)(GhmiSchemeMap *m); /* frees the table and what comes with it, not meta */
    void (*stats)(const GhmiSchemeMap *m, GhmMapStats *out); /* a built table's capacity, bytes
                                                                and longest probe */
} GhmiSchemeOps;

struct GhmiSchemeMap {
    const GhmiSchemeOps *ops;
    GhmContext *ctx;
    GhmMapOptions opt;
    void *meta;         /* ops->meta_bytes of device counters */
    int built;
    uint32_t oob_value; /* GHM_NOT_FOUND when the key 0xFFFFFFFF is absent */
    size_t size;
    int rebuilds;
};

/* One build attempt (a fresh hash function per attempt number): GHM_ERR_BUILD_FAILED asks for
 * the next one. */
typedef int (*GhmiSchemeAttempt)(GhmiSchemeMap *m, int attempt, const uint32_t *keys,
                                 const uint32_t *values, size_t n);

/* Attempts 0, 1, ... up to opt.max_rebuilds until one does not fail; sets m->rebuilds. */
static inline int ghmi_scheme_attempts(GhmiSchemeMap *m, GhmiSchemeAttempt attempt,
                                       const uint32_t *keys, const uint32_t *values, size_t n)
{
    int ret = GHM_ERR_BUILD_FAILED;
    int a = 0;
    for (; a <= m->opt.max_rebuilds && ret == GHM_ERR_BUILD_FAILED; a++)
        ret = attempt(m, a, keys, values, n);
    m->rebuilds = a > 0 ? a - 1 : 0;
    return ret;
}

/* The create op of a scheme: its state (zeroed) and device counters. */
int ghmi_scheme_create(GhmContext *ctx, const GhmMapOptions *opt, const GhmiSchemeOps *ops,
                       void **impl);

/* The rest of every scheme's GhmMapOps. */
int ghmi_scheme_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n);
int ghmi_scheme_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out);
int ghmi_scheme_find_queued(const void *impl, const uint32_t *keys, size_t n, uint32_t *out);
int ghmi_scheme_stats(const void *impl, GhmMapStats *out);
void ghmi_scheme_destroy(void *impl);

#endif /* GHM_MAP_SCHEME_CUH */
