/*
 * ghm_backend_internal.h - what a backend provides, and the context that holds one.
 * Included by hashing/, kernels/ and vision/match/vision_backend.c only; pipelines use the public
 * headers.
 *
 * A backend is one const GhmBackend with designated initializers pointing at static functions
 * (FFmpeg's HWContextType, ggml's backend interface). backend.c, the registry, is the only file
 * that knows whether CUDA was compiled in. Each hash structure dispatches through its op table,
 * so the public functions in hashing/<structure>.c are the same for both backends.
 */
#ifndef GHM_BACKEND_INTERNAL_H
#define GHM_BACKEND_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_map.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Backend-specific state of one structure; each backend defines its own struct. */
typedef struct GhmMapOps {
    int (*create)(GhmContext *ctx, const GhmMapOptions *opt, void **impl);
    int (*build)(void *impl, const uint32_t *keys, const uint32_t *values, size_t n);
    int (*find)(const void *impl, const uint32_t *keys, size_t n, uint32_t *out);
    int (*stats)(const void *impl, GhmMapStats *out);
    void (*destroy)(void *impl);
} GhmMapOps;

typedef struct GhmSetOps {
    int (*create)(GhmContext *ctx, double load_factor, void **impl);
    int (*build)(void *impl, const uint32_t *keys, size_t n);
    size_t (*size)(const void *impl);
    int (*contains)(const void *impl, const uint32_t *keys, size_t n, uint8_t *out);
    int (*keys)(const void *impl, uint32_t *out);
    void (*destroy)(void *impl);
} GhmSetOps;

typedef struct GhmMultimapOps {
    int (*create)(GhmContext *ctx, double load_factor, void **impl);
    int (*build)(void *impl, const uint32_t *keys, const uint32_t *values, size_t n);
    int (*find)(const void *impl, const uint32_t *keys, size_t n, uint32_t *first,
                uint32_t *count);
    /* ghm_multimap_retrieve after the argument checks of the API layer. */
    int (*retrieve)(const void *impl, const uint32_t *keys, size_t n, uint32_t *offsets,
                    uint32_t *values_out, size_t capacity, size_t *total);
    int (*values)(const void *impl, const uint32_t **values, size_t *n);
    size_t (*num_keys)(const void *impl);
    void (*destroy)(void *impl);
} GhmMultimapOps;

typedef struct GhmIndexOps {
    int (*create)(GhmContext *ctx, double load_factor, void **impl);
    int (*build)(void *impl, const uint32_t *keys, size_t n);
    size_t (*size)(const void *impl);
    int (*ids)(const void *impl, const uint32_t *keys, size_t n, uint32_t *ids);
    int (*keys)(const void *impl, const uint32_t *ids, size_t n, uint32_t *keys);
    int (*key_array)(const void *impl, const uint32_t **keys);
    void (*destroy)(void *impl);
} GhmIndexOps;

typedef struct GhmSortedOps {
    int (*create)(GhmContext *ctx, void **impl);
    int (*build)(void *impl, const uint32_t *keys, const uint32_t *values, size_t n);
    int (*find)(const void *impl, const uint32_t *keys, size_t n, uint32_t *out);
    void (*destroy)(void *impl);
} GhmSortedOps;

/* The device kernels of vision/ (vision/match/vision_backend_internal.h): only the pointer is known
 * here, so the hashing layer does not depend on vision/. */
struct GhmVisionOps;
/* The device stages of the voxel pipeline (vision/voxel/voxel_backend_internal.h), likewise. */
struct GhmVoxelOps;

typedef struct GhmBackend {
    const char *name;
    GhmBackendKind kind;
    /* GHM_OK when the backend can run here. Called once per process by the registry. */
    int (*probe)(void);
    /* Per-context state (CUDA: device, stream); may be NULL for backends that need none. */
    int (*init)(GhmContext *ctx, void **state);
    void (*shutdown)(void *state);
    void (*describe)(const GhmContext *ctx, char *buf, size_t size);
    int (*alloc)(GhmContext *ctx, size_t bytes, void **out); /* zeroed */
    void (*free)(GhmContext *ctx, void *p);
    int (*upload)(GhmContext *ctx, void *dst, const void *host_src, size_t bytes);
    int (*download)(GhmContext *ctx, void *host_dst, const void *src, size_t bytes);
    int (*copy)(GhmContext *ctx, void *dst, const void *src, size_t bytes);
    int (*zero)(GhmContext *ctx, void *dst, size_t bytes);
    int (*sync)(GhmContext *ctx);
    int (*in_place)(const void *p); /* ghm_buffer_in_place */
    const GhmMapOps *map;
    const GhmSetOps *set;
    const GhmMultimapOps *multimap;
    const GhmIndexOps *index;
    const GhmSortedOps *sorted;
    /* Vision stages on this backend's device; NULL (the CPU backend): the host modules of
     * vision/ run them. Vision code reads it through ghmi_vision_ops(ctx), never by testing
     * for CUDA. */
    const struct GhmVisionOps *vision;
    /* Voxel stages on this backend's device, read through ghmi_voxel_ops(ctx); NULL: the CPU
     * path of vision/voxel/voxel.c. */
    const struct GhmVoxelOps *voxel;
} GhmBackend;

struct GhmContext {
    const GhmBackend *backend;
    int threads;
    uint64_t seed;
    int verbose;
    void *state; /* owned by the backend: init() creates it, shutdown() frees it */
};

/* Every public handle (GhmMap, GhmSet, GhmMultimap, GhmIndex, GhmSorted in hashing/<x>.c) begins
 * with these three members in this order, so that a backend can reach its own state behind a
 * handle: the CUDA backend's device references (kernels/hashing/hash_refs.h) do, after checking
 * that ops is their own table. */
typedef struct GhmiHandle {
    GhmContext *ctx;
    const void *ops;
    void *impl;
} GhmiHandle;

/* The two backends. ghm_cuda_backend exists only in builds with CUDA (kernels/hashing/). */
extern const GhmBackend ghm_cpu_backend;
extern const GhmBackend ghm_cuda_backend;
/* The CUDA backend's vision op table (kernels/vision/ops.cu). */
extern const struct GhmVisionOps ghm_cuda_vision_ops;
/* The CUDA backend's voxel op table (kernels/voxel/ops.cu). */
extern const struct GhmVoxelOps ghm_cuda_voxel_ops;

/* Op tables of the CPU backend, defined next to each structure's public API in hashing/. */
extern const GhmMapOps ghm_cpu_map_ops;
extern const GhmSetOps ghm_cpu_set_ops;
extern const GhmMultimapOps ghm_cpu_multimap_ops;
extern const GhmIndexOps ghm_cpu_index_ops;
extern const GhmSortedOps ghm_cpu_sorted_ops;

/* A 64-bit mixer (splitmix64) used to derive hash constants from the context seed, so that both
 * backends draw identical constants for the same seed and attempt number. */
static inline uint64_t ghmi_mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_BACKEND_INTERNAL_H */
