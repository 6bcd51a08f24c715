/*
 * hash_cuda_internal.cuh - what the CUDA hash structures (map.cu, set.cu, multimap.cu, index.cu,
 * sorted.cu) share: staging of caller arrays that may be host or device memory, the device map
 * every structure builds on (defined in map.cu), and the bulk find kernels, templated on what
 * each structure writes per key.
 *
 * Staging: an input array that is device memory is used in place; host memory is copied into a
 * stream-ordered temporary (device_memory.h, like every device allocation). An output
 * array in host memory is computed into such a temporary and copied back before the call
 * returns. Every public call ends with a stream synchronisation, so it is synchronous with
 * respect to the host as the API promises.
 */
#ifndef GHM_HASH_CUDA_INTERNAL_CUH
#define GHM_HASH_CUDA_INTERNAL_CUH

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels/hashing/cuda_check.cuh"
#include "backend_cuda.h"
#include "device_memory.h"
#include "map_ref.cuh"

/* ---- staging -------------------------------------------------------------------------------- */

/* *dev = src when src is device memory, else a device copy of its bytes in *owned (free with
 * ghmi_cuda_release). bytes == 0 gives *dev = src and no copy. */
static inline int ghmi_cuda_input(GhmContext *ctx, const void *src, size_t bytes,
                                  const void **dev, void **owned)
{
    *owned = NULL;
    *dev = src;
    if (bytes == 0 || ghm_cuda_is_device_pointer(src))
        return GHM_OK;
    int ret = ghmi_device_alloc(ctx, bytes, owned);
    if (ret < 0)
        return ret;
    ret = GHM_CUDA(cudaMemcpyAsync(*owned, src, bytes, cudaMemcpyHostToDevice,
                                   ghm_cuda_stream(ctx)));
    *dev = *owned;
    return ret;
}

/* A clone's input: n words of src_ctx's device memory at src, read in place where ctx is on
 * the same device, else copied to the host in *owned (free() it; ctx's build uploads them):
 * another device reaches this pool memory only where peer access was granted. The source's
 * build has finished (a build waits, a queued one is settled first). */
static inline int ghmi_cuda_clone_input(GhmContext *ctx, GhmContext *src_ctx, const uint32_t *src,
                                        size_t n, const uint32_t **in, uint32_t **owned)
{
    *owned = NULL;
    *in = src;
    if (n == 0 || ghm_cuda_device(ctx) == ghm_cuda_device(src_ctx))
        return GHM_OK;
    if (!(*owned = (uint32_t *)malloc(n * 4)))
        return GHM_ERR_NOMEM;
    *in = *owned;
    return ghm_buffer_download(src_ctx, *owned, src, n * 4);
}

/* *dev = dst when dst is device memory, else a device temporary in *owned that
 * ghmi_cuda_output_finish copies back to dst. */
static inline int ghmi_cuda_output(GhmContext *ctx, void *dst, size_t bytes, void **dev,
                                   void **owned)
{
    *owned = NULL;
    *dev = dst;
    if (bytes == 0 || ghm_cuda_is_device_pointer(dst))
        return GHM_OK;
    int ret = ghmi_device_alloc(ctx, bytes, owned);
    *dev = *owned;
    return ret;
}

/* Copies a staged output back (when there is one) and waits for the stream. */
static inline int ghmi_cuda_output_finish(GhmContext *ctx, void *dst, const void *owned,
                                          size_t bytes)
{
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_OK;
    if (owned && bytes)
        ret = GHM_CUDA(cudaMemcpyAsync(dst, owned, bytes, cudaMemcpyDeviceToHost, s));
    int sync = GHM_CUDA(ghm_cuda_wait(s));
    return ret < 0 ? ret : sync;
}

/* Frees a staged temporary (NULL is fine); stream-ordered, so it may follow queued kernels. */
static inline void ghmi_cuda_release(GhmContext *ctx, void *owned)
{
    ghmi_device_free(ctx, owned);
}

/* A bulk build or find on device arrays, queued on s (the schemes' own functions). */
typedef int (*GhmiDeviceBuild)(void *impl, const uint32_t *keys, const uint32_t *values,
                               size_t n);
typedef int (*GhmiDeviceFind)(const void *impl, const uint32_t *keys, size_t n, uint32_t *out,
                              cudaStream_t s);

/* A map's build op on caller arrays that may be host or device memory: stages them, calls
 * build on device arrays, releases the copies and waits, so the call is synchronous. */
static inline int ghmi_cuda_staged_build(GhmContext *ctx, void *impl, GhmiDeviceBuild build,
                                         const uint32_t *keys, const uint32_t *values, size_t n)
{
    const void *dk, *dv;
    void *ok = NULL, *ov = NULL;
    int ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_input(ctx, values, n * 4, &dv, &ov);
    if (ret >= 0)
        ret = build(impl, (const uint32_t *)dk, (const uint32_t *)dv, n);
    ghmi_cuda_release(ctx, ok);
    ghmi_cuda_release(ctx, ov);
    int sync = GHM_CUDA(ghm_cuda_wait(ghm_cuda_stream(ctx)));
    return ret < 0 ? ret : sync;
}

/* A map's find op on caller arrays: stages the keys, queues find into device memory, copies the
 * answers back where out is host memory, and waits. */
static inline int ghmi_cuda_staged_find(GhmContext *ctx, const void *impl, GhmiDeviceFind find,
                                        const uint32_t *keys, size_t n, uint32_t *out)
{
    if (n == 0)
        return GHM_OK;
    const void *dk;
    void *ok = NULL, *dout = NULL, *oo = NULL;
    int ret = ghmi_cuda_input(ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_output(ctx, out, n * 4, &dout, &oo);
    if (ret >= 0)
        ret = find(impl, (const uint32_t *)dk, n, (uint32_t *)dout, ghm_cuda_stream(ctx));
    int fin = ghmi_cuda_output_finish(ctx, out, ret < 0 ? NULL : oo, n * 4);
    ghmi_cuda_release(ctx, ok);
    ghmi_cuda_release(ctx, oo);
    return ret < 0 ? ret : fin;
}

/* Blocks of `block` threads for n items, or GHM_ERR_TOO_LARGE past a grid's reach. */
static inline int ghmi_cuda_grid(size_t n, unsigned block, unsigned *grid)
{
    size_t g = (n + block - 1) / block;
    if (g > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    *grid = g ? (unsigned)g : 1;
    return GHM_OK;
}

/* The largest of a warp's values (every lane active), by shuffles: __reduce_max_sync needs
 * sm_80 and the build also targets sm_75. */
static __device__ __forceinline__ uint32_t ghmi_warp_max(uint32_t v)
{
    for (int d = 16; d > 0; d /= 2) {
        uint32_t o = __shfl_xor_sync(0xFFFFFFFFu, v, d);
        v = o > v ? o : v;
    }
    return v;
}

/* Raises *word to at least v once per warp (every lane active), skipping the atomic when the
 * word is already as high: a per-thread atomic on one address would serialise the whole grid. */
static __device__ __forceinline__ void ghmi_warp_raise(unsigned int *word, uint32_t v)
{
    v = ghmi_warp_max(v);
    if ((threadIdx.x & 31) == 0 && v > *(volatile unsigned int *)word)
        atomicMax(word, v);
}

/* ---- the device map (map.cu) ---------------------------------------------------------------- */

typedef struct CudaMap CudaMap;

/* opt as in ghm_map.h (load 0 = default). */
int ghmi_cuda_map_create(GhmContext *ctx, const GhmMapOptions *opt, CudaMap **out);

/* Builds from device arrays, attempt after attempt until one succeeds (one wait each). values
 * == NULL stores value i for keys[i] (ranks, run numbers). unique != 0 promises distinct keys,
 * which skips the duplicate pass. */
int ghmi_cuda_map_build(CudaMap *m, const uint32_t *keys, const uint32_t *values, size_t n,
                        int unique);

/* Queues one attempt of a build of the pairs whose number is *count (device memory, at most n),
 * sized for n, and waits for nothing (map.cu's top comment); *failed (device, or NULL) is set to
 * 1 if the attempt fails. The reference is valid for work queued behind it. */
int ghmi_cuda_map_build_queued(CudaMap *m, const uint32_t *keys, const uint32_t *values,
                               const uint32_t *count, size_t n, int unique, int attempt,
                               unsigned int *failed);

/* Waits for a queued attempt and takes over its outcome (size, stash use); GHM_ERR_BUILD_FAILED,
 * with the map left empty, when it failed. Does nothing when no attempt is pending. */
int ghmi_cuda_map_settle(CudaMap *m);

/* The map as a device reference (valid until the next build or destroy). */
const GhmMapRef *ghmi_cuda_map_get_ref(const CudaMap *m);
/* Makes the map empty (finds miss, the reference reads no table) without freeing anything:
 * what a failed build leaves, so that no reference names memory a failure released. */
int ghmi_cuda_map_forget(CudaMap *m);

void ghmi_cuda_map_destroy(CudaMap *m);

/* ---- bulk find: one thread per key --------------------------------------------------------- */

/* Emit functors receive (index, key, value-or-GHM_NOT_FOUND) once per key. */
struct GhmiEmitValue {
    uint32_t *out;
    __device__ void operator()(size_t i, uint32_t key, uint32_t v) const { out[i] = v; }
};

/* One thread per key, reading a bucket with 16-byte loads (ghm_map_ref_find): a 4-slot bucket
 * is one 32-byte sector, so a key in its first bucket costs one memory transaction. Cooperative
 * probes (a tile of B lanes, a lane per slot, ballots for hit / room) were measured and lost on
 * the H100 (2^26 keys, find present / absent, G keys/s): one key per tile 7.7 / 6.5 at load 0.8;
 * B keys per tile with their B loads in flight together 24.5 / 19.1 at 0.8 (B = 4) and
 * 17.5 / 13.4 at 0.95 (B = 8); one thread per key 24.6 / 19.2 and 23.2 / 16.7. A random 32-byte
 * gather on the same table runs at 30.2 G/s, the ceiling. */
template <class Emit>
static __global__ __launch_bounds__(256) void ghmi_find_kernel(GhmMapRef ref,
                                                               const uint32_t *__restrict__ keys,
                                                               size_t n, Emit emit)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t key = keys[i];
    emit(i, key, ghm_map_ref_find(&ref, key));
}

/* Launches the find kernel on stream s; keys are device memory. */
template <class Emit>
static int ghmi_map_find_launch(const GhmMapRef *ref, const uint32_t *keys, size_t n, Emit emit,
                                cudaStream_t s)
{
    if (n == 0)
        return GHM_OK;
    size_t grid = (n + 255) / 256;
    if (grid > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    ghmi_find_kernel<Emit><<<(unsigned)grid, 256, 0, s>>>(*ref, keys, n, emit);
    return GHM_CUDA_LAUNCH();
}

/* ---- the CUDA backend's op tables (map.cu, set.cu, multimap.cu, index.cu, sorted.cu) --------- */

extern "C" const GhmMapOps ghm_cuda_map_ops;       /* cuckoo */
extern "C" const GhmMapOps ghm_cuda_open_map_ops;  /* linear, quadratic, double: map_open.cu */
extern "C" const GhmMapOps ghm_cuda_robin_map_ops; /* Robin Hood: map_robin.cu */
extern "C" const GhmMapOps ghm_cuda_chain_map_ops; /* chaining by radix sort: map_chain.cu */
extern "C" const GhmMapOps ghm_cuda_two_level_map_ops; /* two-level cuckoo: map_two_level.cu */
extern "C" const GhmSetOps ghm_cuda_set_ops;
extern "C" const GhmMultimapOps ghm_cuda_multimap_ops;
extern "C" const GhmIndexOps ghm_cuda_index_ops;
extern "C" const GhmSortedOps ghm_cuda_sorted_ops;
extern "C" const GhmDynmapOps ghm_cuda_dynmap_ops; /* slab lists: dynmap.cu */
extern "C" const GhmDistOps ghm_cuda_dist_ops;       /* split, copies between devices: dist_map.cu */

/* GhmDistOps.in_place_ok, find_in_place and reach of the CUDA backend (dist_map_in_place.cu). */
int ghmi_cuda_dist_reach(GhmContext *const *ctx, int parts);
int ghmi_cuda_dist_in_place_ok(GhmContext *const *ctx, GhmMap *const *map, int parts,
                               const uint32_t *const *keys, uint32_t *const *out,
                               const size_t *n);
int ghmi_cuda_dist_find_in_place(GhmContext *part_ctx, const GhmMap *map, GhmiDistConsts c,
                                 uint32_t part, int shards, const uint32_t *const *keys,
                                 const size_t *n, uint32_t *const *out);

/* GhmDistOps' window ops of the CUDA backend (dist_map_window.cu). */
int ghmi_cuda_window_open(GhmContext *ctx, const GhmDistRanks *ranks, void **window);
void ghmi_cuda_window_close(GhmContext *ctx, void *window);
int ghmi_cuda_window_reserve(GhmContext *ctx, void *window, const GhmDistRanks *ranks, size_t n,
                             const uint32_t *keys_in, const uint32_t *out_in, uint32_t **keys,
                             uint32_t **second);
int ghmi_cuda_window_fill(GhmContext *ctx, void *window, const uint32_t *keys);
int ghmi_cuda_window_probe(GhmContext *ctx, void *window, const GhmMap *map,
                                      GhmiDistConsts c);
int ghmi_cuda_window_answers(GhmContext *ctx, void *window, uint32_t *out);
int ghmi_cuda_window_send(GhmContext *ctx, void *window, const uint32_t *keys,
                          const uint32_t *values, const size_t *n, const size_t *from,
                          const uint64_t *to);
int ghmi_cuda_window_join(GhmContext *ctx, void *window);
int ghmi_cuda_window_alloc_array(GhmContext *ctx, void *window, const GhmDistRanks *ranks,
                                 int status, size_t bytes, void **out);
int ghmi_cuda_window_free_array(GhmContext *ctx, void *window, const GhmDistRanks *ranks,
                                void *p);

/* A multimap's device reference (multimap.cu); after a queued build, the pending one. */
void ghmi_cuda_multimap_get_ref(const void *impl, GhmMultimapRef *out);

/* ghm_cuda_multimap_build_queued and ghm_cuda_multimap_input on the backend's state
 * (multimap.cu): key_bits 1..32 (0 = 32); keys = values = NULL: the staged pairs. */
int ghmi_cuda_multimap_input(void *impl, size_t n, uint32_t **keys, uint32_t **values);
int ghmi_cuda_multimap_build_queued(void *impl, const uint32_t *keys, const uint32_t *values,
                                    size_t n, int key_bits, int attempt, unsigned int *failed);

/* ---- the unique-key index that GhmIndex and GhmSet share (index.cu) -------------------------- */

typedef struct CudaIndex CudaIndex;

int ghmi_cuda_index_create(GhmContext *ctx, double load_factor, CudaIndex **out);
/* Builds from n keys in device memory: the sorted distinct keys and a map key -> rank. */
int ghmi_cuda_index_build(CudaIndex *ix, const uint32_t *keys, size_t n);
size_t ghmi_cuda_index_size(const CudaIndex *ix);
GhmContext *ghmi_cuda_index_context(const CudaIndex *ix);
const uint32_t *ghmi_cuda_index_keys(const CudaIndex *ix); /* device, ascending */
const GhmMapRef *ghmi_cuda_index_map_ref(const CudaIndex *ix);
void ghmi_cuda_index_destroy(CudaIndex *ix);

#endif /* GHM_HASH_CUDA_INTERNAL_CUH */
