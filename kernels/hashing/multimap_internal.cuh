/*
 * multimap_internal.cuh - the CUDA GhmMultimap's state, shared by multimap.cu (building, the op
 * table) and multimap_query.cu (find, retrieve).
 */
#ifndef GHM_MULTIMAP_INTERNAL_CUH
#define GHM_MULTIMAP_INTERNAL_CUH

#include "hash_cuda_internal.cuh"

struct CudaMultimap {
    GhmContext *ctx;
    double load_factor; /* as created: a clone is created alike */
    CudaMap *map;
    /* The sorted keys and their values in two pairs of buffers: the built content is in pair
     * cur (kbuf[cur], vbuf[cur]); the other pair, allocated by the first staging call, takes
     * the next staged input (ghmi_cuda_multimap_input) and the sort runs between the two. */
    uint32_t *kbuf[2], *vbuf[2];
    uint32_t *offsets;   /* num_keys + 1: run r's values are values[offsets[r] .. offsets[r + 1]) */
    uint32_t *keys;      /* num_keys distinct keys, ascending (run r's key) */
    void *block[2];      /* block 0: pair 0, offsets, keys; block 1: pair 1 (multimap.cu) */
    uint32_t *key_count; /* device: num_keys */
    void *temp;          /* CUB scratch */
    size_t temp_bytes;
    size_t cap;          /* pairs that pair 0, offsets and keys hold */
    size_t cap2;         /* pairs that pair 1 holds (0 until staging) */
    int cur;             /* the pair holding the content */
    int staged;          /* the pair handed out by staging, or -1 */
    size_t staged_n;
    size_t n;
    size_t num_keys;     /* after a queued build, until settled: the bound n */
    int pending;         /* a queued build whose key count the host has not read */
};

/* Waits for a queued build and reads its key count and its map's outcome; on failure
 * (GHM_ERR_BUILD_FAILED) the multimap is left empty. Nothing when no build is pending. */
int ghmi_cuda_multimap_settle(CudaMultimap *mm);

/* The op table's queries (multimap_query.cu). */
/* The builds (multimap.cu), for the op table (multimap_ops.cu). */
int ghmi_cuda_multimap_create(GhmContext *ctx, double load_factor, void **impl);
int ghmi_cuda_multimap_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n);
void ghmi_cuda_multimap_destroy(void *impl);
int ghmi_cuda_multimap_clone(GhmContext *ctx, const void *src, void **impl);

int ghmi_cuda_multimap_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *first,
                            uint32_t *count);
int ghmi_cuda_multimap_retrieve(const void *impl, const uint32_t *keys, size_t n,
                                uint32_t *offsets, uint32_t *values_out, size_t capacity,
                                size_t *total);
int ghmi_cuda_multimap_values(const void *impl, const uint32_t **values, size_t *n);
size_t ghmi_cuda_multimap_num_keys(const void *impl);

#endif /* GHM_MULTIMAP_INTERNAL_CUH */
