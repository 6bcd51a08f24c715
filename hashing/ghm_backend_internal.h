/*
 * ghm_backend_internal.h - what a backend provides, and the context that holds one.
 * Included by hashing/, kernels/ and the layers' bridges to their device modules
 * (vision_backend.c, voxel_backend.c); pipelines use the public headers.
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
#include "ghm_dist_map.h"
#include "ghm_dynmap.h"
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
    /* find on backend arrays, queued on the context's stream without waiting (the answers are
     * there for the context's later work); NULL: find, which waits (ghmi_map_find_queued). */
    int (*find_queued)(const void *impl, const uint32_t *keys, size_t n, uint32_t *out);
    /* ghmi_map_build_after on backend arrays; NULL: the wait, then build. */
    int (*build_after)(void *impl, const uint32_t *keys, const uint32_t *values, size_t ready,
                       size_t n, int (*wait)(void *arg), void *arg);
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
    /* A copy of the built content of src in ctx (the same backend; on CUDA maybe another
     * device): the same answers as src's, without the work of a build (ghm_multimap_clone). */
    int (*clone)(GhmContext *ctx, const void *src, void **impl);
} GhmMultimapOps;

typedef struct GhmIndexOps {
    int (*create)(GhmContext *ctx, double load_factor, void **impl);
    int (*build)(void *impl, const uint32_t *keys, size_t n);
    size_t (*size)(const void *impl);
    int (*ids)(const void *impl, const uint32_t *keys, size_t n, uint32_t *ids);
    int (*keys)(const void *impl, const uint32_t *ids, size_t n, uint32_t *keys);
    int (*key_array)(const void *impl, const uint32_t **keys);
    void (*destroy)(void *impl);
    int (*clone)(GhmContext *ctx, const void *src, void **impl); /* as the multimap's */
} GhmIndexOps;

typedef struct GhmSortedOps {
    int (*create)(GhmContext *ctx, void **impl);
    int (*build)(void *impl, const uint32_t *keys, const uint32_t *values, size_t n);
    int (*find)(const void *impl, const uint32_t *keys, size_t n, uint32_t *out);
    void (*destroy)(void *impl);
} GhmSortedOps;

/* GhmDynmap (ghm_dynmap.h): called after the API layer's argument checks (item validity
 * included), so an op sees well-formed input. */
typedef struct GhmDynmapOps {
    int (*create)(GhmContext *ctx, const GhmDynmapOptions *opt, void **impl);
    int (*insert)(void *impl, const uint32_t *items, size_t n, GhmDynmapHandle *handles,
                  uint8_t *inserted);
    int (*erase)(void *impl, const uint32_t *keys, size_t n, uint8_t *erased);
    int (*find)(const void *impl, const uint32_t *keys, size_t n, GhmDynmapHandle *handles,
                uint32_t *items_out);
    int (*read)(const void *impl, const GhmDynmapHandle *handles, size_t n, uint32_t *items_out);
    size_t (*size)(const void *impl);
    int (*gc)(void *impl, size_t *released);
    int (*stats)(const void *impl, GhmDynmapStats *out);
    void (*destroy)(void *impl);
    /* every stored item (ghm_dynmap_items); NULL: GHM_ERR_UNSUPPORTED */
    int (*items)(const void *impl, uint32_t *items_out, GhmDynmapHandle *handles_out, size_t cap,
                 size_t *count);
    /* loads the device code of every call (ghm_dynmap_preload); NULL: none to load */
    int (*preload)(const void *impl);
    /* erases the items test() picks (ghm_dynmap_erase_if); NULL: the API layer lists them,
     * tests them on the host and erases them by key */
    int (*erase_if)(void *impl, GhmDynmapTest test, void *user, size_t *erased);
} GhmDynmapOps;

/* A GhmDistMap's part hash: part(key) = ghmi_dist_part (hash_family.h). */
typedef struct GhmiDistConsts {
    uint32_t a, b; /* the hash pair (a odd) */
    uint32_t parts;
} GhmiDistConsts;

/* Where a split puts part q's keys: from keys[q] (and values[q], for a build), the first of them
 * at position start[q] of the shard's split order (an answer array in that order, as unsplit
 * reads, holds part q's answers from start[q]). */
typedef struct GhmiDistDest {
    uint32_t *keys[GHM_DIST_MAP_MAX_PARTS], *values[GHM_DIST_MAP_MAX_PARTS];
    size_t start[GHM_DIST_MAP_MAX_PARTS];
} GhmiDistDest;

/* A GhmDistMap's steps on one shard (hashing/dist_map.c). Arrays are ctx's backend memory;
 * counts, starts and the constants are host values. */
typedef struct GhmDistOps {
    /* counts[q] = how many of keys[0..n) have part q (ghmi_dist_part), q < parts. */
    int (*count)(GhmContext *ctx, const uint32_t *keys, size_t n, GhmiDistConsts c,
                 size_t *counts);
    /* Groups keys (and values, when not NULL) by part into dest (which may be other
     * contexts' memory where reach allows), and writes to way_back (way_back_words(n, c.parts)
     * words; NULL: a build needs no way back) what unsplit needs to put each key's answer back
     * in its place. */
    int (*split)(GhmContext *ctx, const uint32_t *keys, const uint32_t *values, size_t n,
                 GhmiDistConsts c, const GhmiDistDest *dest, uint32_t *way_back);
    size_t (*way_back_words)(size_t n, uint32_t parts);
    /* out[i] = the answer in `in` (split's order) of keys[i], i < n: the answers back in the
     * queries' order (keys and c as given to split). */
    int (*unsplit)(GhmContext *ctx, const uint32_t *keys, const uint32_t *in,
                   const uint32_t *way_back, size_t n, GhmiDistConsts c, uint32_t *out);
    /* Copies bytes from src (src_ctx's memory) to dst (dst_ctx's), after src_ctx's earlier work
     * and before dst_ctx's later work; the host need not wait for it. */
    int (*copy)(GhmContext *dst_ctx, void *dst, GhmContext *src_ctx, const void *src,
                size_t bytes);
    /* Backend memory for a call's temporaries, left as it comes (every word is written before it
     * is read): ghm_buffer_alloc's zeroing would be a pass over gigabytes. Freed with
     * ghm_buffer_free. */
    int (*alloc)(GhmContext *ctx, size_t bytes, void **out);
    /* Prepares the contexts of one map to copy between one another (CUDA: peer access), before
     * any bulk call, on one thread; NULL: nothing to prepare. */
    void (*connect)(GhmContext *const *ctx, int parts);
    /* A ranked map's device channel between processes (CUDA with NCCL: a communicator of the
     * ranks, its id sent by ranks->broadcast); every rank calls it. *link is freed by
     * rank_unlink. NULL ops: the data goes through host memory (dist_map_ranks.c). */
    int (*rank_link)(GhmContext *ctx, const GhmDistRanks *ranks, void **link);
    void (*rank_unlink)(GhmContext *ctx, void *link);
    /* The all-to-all of GhmDistRanks.all_to_all_v on ctx's memory, after ctx's work so far
     * and beside its later work (the link's own stream), until rank_join. */
    int (*rank_exchange)(GhmContext *ctx, void *link, int ranks, const uint32_t *send,
                         const size_t *send_n, const size_t *send_at, uint32_t *recv,
                         const size_t *recv_n, const size_t *recv_at);
    /* ctx's later work waits for every exchange queued so far (on the device, not the host). */
    int (*rank_join)(GhmContext *ctx, void *link);
    /* A part's side stream in one process (CUDA), where the copies into the part's memory run
     * beside its own work (the probes of its own keys) until side_join, as a rank's exchanges
     * run on its link's stream; freed by side_close. NULL ops: copies use `copy`. */
    int (*side_open)(GhmContext *ctx, void **side);
    void (*side_close)(GhmContext *ctx, void *side);
    /* Marks ctx's work so far: a later side_copy from this part's memory waits for it (and for
     * nothing queued on ctx after the mark). */
    int (*side_mark)(GhmContext *ctx, void *side);
    /* Copies bytes from src (src_ctx's memory) to dst (dst_ctx's) on dst_side's stream, after
     * the work of both contexts up to their last side_mark; the host need not wait for it. */
    int (*side_copy)(GhmContext *dst_ctx, void *dst_side, void *dst, GhmContext *src_ctx,
                     void *src_side, const void *src, size_t bytes);
    /* ctx's later work waits for every copy queued so far on its side stream. */
    int (*side_join)(GhmContext *ctx, void *side);
    /* ctx's later work waits for other's work up to other's last side_mark (other_side). */
    int (*side_wait)(GhmContext *ctx, void *other_side);
    /* A find in one process that moves neither keys nor answers (CUDA; devices that reach each
     * other's memory, which the caller has checked with reach, so the call's own copies are
     * reachable): 1 when every part's map can probe on its device the keys of every shard in
     * place and write their answers there (keys[p], out[p]: n[p] words of ctx[p]'s memory, or
     * NULL where the call makes its own copy), else 0. NULL: never. */
    int (*in_place_ok)(GhmContext *const *ctx, GhmMap *const *map, int parts,
                       const uint32_t *const *keys, uint32_t *const *out, const size_t *n);
    /* Part `part`'s map probed on part_ctx's stream, in one pass, for the keys of `shards`
     * shards (1 or 2; keys[s], n[s] words, in any context's memory: the caller orders their
     * work before it, side_wait): out[s][i] is written for the keys whose part is `part` alone
     * (the others' answers are theirs). */
    int (*find_in_place)(GhmContext *part_ctx, const GhmMap *map, GhmiDistConsts c,
                         uint32_t part, int shards, const uint32_t *const *keys,
                         const size_t *n, uint32_t *const *out);
    /* 1 when the work of every context may write the temporaries (alloc) of every other one:
     * host memory, or devices whose pools grant each other access (NVLink or PCIe peer to
     * peer). Then a split writes each piece straight into its part's memory and a part writes
     * a find's answers straight into the shard's memory, with no copies between them. NULL:
     * never. */
    int (*reach)(GhmContext *const *ctx, int parts);
    /* A ranked map's windows (CUDA IPC between processes of one machine): every rank maps the
     * others' windows, so a find probes their keys in place and a build's pieces are copied
     * straight into them (dist_map_window.cu). Every rank calls window_open, which swaps
     * records through ranks and fails alike on every rank where they cannot map each other's
     * memory; *window is freed by window_close. window_reserve (every rank, with its own n)
     * makes room for n keys and n other words (a find's answers, a build's values), gives this
     * rank's two arrays and maps every other window as it now is; a find passes its keys and
     * answer arrays (keys_in, out_in; a build NULL), which are used where they lie when they are
     * in arrays of window_alloc_array. A find: window_fill (this
     * rank's keys in: host or ctx memory), a vote, window_probe (this rank's part's keys of
     * every window answered), a vote, window_answers (this rank's answers out: host or ctx
     * memory). A build: window_send (the pieces in ctx's send arrays, n[q] pairs from from[q],
     * copied into rank q's window at to[q], beside ctx's later work), a vote, then window_join
     * (ctx's later work waits for every rank's copies; every call ends with it).
     * window_alloc_array and window_free_array (every rank together, each its own array or
     * NULL) make and free ctx memory every rank maps (ghm_dist_map_alloc_array). NULL: none. */
    int (*window_open)(GhmContext *ctx, const GhmDistRanks *ranks, void **window);
    void (*window_close)(GhmContext *ctx, void *window);
    int (*window_reserve)(GhmContext *ctx, void *window, const GhmDistRanks *ranks, size_t n,
                          const uint32_t *keys_in, const uint32_t *out_in, uint32_t **keys,
                          uint32_t **second);
    int (*window_fill)(GhmContext *ctx, void *window, const uint32_t *keys);
    int (*window_probe)(GhmContext *ctx, void *window, const GhmMap *map, GhmiDistConsts c);
    int (*window_answers)(GhmContext *ctx, void *window, uint32_t *out);
    int (*window_send)(GhmContext *ctx, void *window, const uint32_t *keys,
                       const uint32_t *values, const size_t *n, const size_t *from,
                       const uint64_t *to);
    int (*window_join)(GhmContext *ctx, void *window);
    int (*window_alloc_array)(GhmContext *ctx, void *window, const GhmDistRanks *ranks,
                              int status, size_t bytes, void **out);
    int (*window_free_array)(GhmContext *ctx, void *window, const GhmDistRanks *ranks, void *p);
} GhmDistOps;

/* ghm_map_find on backend arrays (keys and out in ctx's memory), queued on the map's context
 * without waiting where the backend can (CUDA): the answers are there for the context's later
 * work; the CPU's find is done on return. */
int ghmi_map_find_queued(const GhmMap *map, const uint32_t *keys, size_t n, uint32_t *out);

/* ghm_map_build on backend arrays of which only the first `ready` pairs are there yet: where
 * the backend can (the CUDA cuckoo map) those are inserted first, then wait(arg) queues the
 * context's wait for the rest (it may also have to wait on the host), then the rest go in; so a
 * part of GhmDistMap inserts its own piece while the others cross the link. Elsewhere wait(arg),
 * then the build. The same map as ghm_map_build of all n pairs gives. */
int ghmi_map_build_after(GhmMap *map, const uint32_t *keys, const uint32_t *values, size_t ready,
                         size_t n, int (*wait)(void *arg), void *arg);

/* Every rank's word in all[rank] (the same word sent to every rank: what the ranked map's votes
 * and checks need); GHM_ERR_IO when the exchange failed (hashing/dist_map_ranks.c). */
int ghmi_dist_gather_word(const GhmDistRanks *r, uint64_t word, uint64_t *all);

typedef struct GhmBackend {
    const char *name;
    GhmBackendKind kind;
    /* GHM_OK when the backend can run here, else a GHM_ERR_* and one line in why saying why not.
     * Called once per process by the registry; cheap (no CUDA context is created). */
    int (*probe)(char *why, size_t why_size);
    /* Devices of the backend a context may name (GhmContextOptions.device); NULL: one. */
    int (*devices)(void);
    /* Per-context state (CUDA: device, stream); may be NULL for backends that need none. */
    int (*init)(GhmContext *ctx, void **state);
    /* Starts what every context of the backend shares (CUDA: the driver, the device's primary
     * context, this build's kernels) so that init() finds it ready; errors are left for init()
     * to meet and report, on device `device` modulo the backend's devices. Runs on a thread of
     * its own (ghm_context_prestart_on); may be NULL. */
    void (*warm)(int device);
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
    /* ghm_context_wait_stream; NULL: the backend has no streams (GHM_ERR_UNSUPPORTED). */
    int (*wait_stream)(GhmContext *ctx, uintptr_t stream);
    const GhmMapOps *maps[GHM_MAP_SCHEMES]; /* by GhmMapScheme; NULL: not on this backend */
    const GhmSetOps *set;
    const GhmMultimapOps *multimap;
    const GhmIndexOps *index;
    const GhmSortedOps *sorted;
    const GhmDynmapOps *dynmap; /* NULL: ghm_dynmap_create gives GHM_ERR_UNSUPPORTED */
    const GhmDistOps *dist;     /* NULL: ghm_dist_map_create gives GHM_ERR_UNSUPPORTED */
} GhmBackend;

struct GhmContext {
    const GhmBackend *backend;
    int device; /* the CUDA device ordinal; 0 on the CPU backend */
    int threads;
    uint64_t seed;
    int verbose;
    void *state; /* owned by the backend: init() creates it, shutdown() frees it */
};

/* Every public handle (GhmMap, GhmSet, GhmMultimap, GhmIndex, GhmSorted, GhmDynmap in
 * hashing/<x>.c) begins with these three members in this order, so that a backend can reach its
 * own state behind a handle: the CUDA backend's device references (kernels/hashing/hash_refs.h)
 * do, after checking that ops is their own table. */
typedef struct GhmiHandle {
    GhmContext *ctx;
    const void *ops;
    void *impl;
} GhmiHandle;

/* The two backends. ghm_cuda_backend exists only in builds with CUDA (kernels/hashing/). */
extern const GhmBackend ghm_cpu_backend;
extern const GhmBackend ghm_cuda_backend;
/* Host waits of the CUDA code so far (kernels/hashing/cuda_check.cuh counts them). */
extern unsigned long long ghmi_cuda_waits;

/* A layer's operations on one backend's device. A layer above hashing/ (vision's features and
 * matching, the voxel pipeline) defines its op table with its kernels and one GhmDeviceModule
 * naming it (`extern "C" const GhmDeviceModule ghm_<backend>_module_<name> = {...}` in its
 * kernels/.../ops.cu); the layer's host code asks for it by name through ghmi_backend_module()
 * and runs its CPU path when there is none. So the hashing layer never names a vision type.
 *
 * How the registry learns of the modules: CMake finds every such definition in kernels/ and
 * generates ghm_device_modules.c into the build tree (the list below). Generated rather than
 * self-registering (constructors, linker sections), because an object file nothing refers to
 * is dropped from a static archive; the list refers to each module, and the registry to the
 * list, so the modules are linked whatever the kind of library (GStreamer's static plugins are
 * registered the same way). A build without CUDA gets an empty list. */
typedef struct GhmDeviceModule {
    const char *name;       /* the layer's name: "vision", "voxel" */
    GhmBackendKind backend; /* the backend whose device runs it */
    const void *ops;        /* the layer's op table (a type only the layer knows) */
} GhmDeviceModule;

/* The modules of this build, NULL-terminated (generated: ghm_device_modules.c). */
extern const GhmDeviceModule *const ghm_device_modules[];

/* The op table of module `name` on ctx's backend, or NULL when that backend has none (the CPU
 * backend, or a build without the module). hashing/backend.c. */
const void *ghmi_backend_module(const GhmContext *ctx, const char *name);

/* Op tables of the CPU backend, defined next to each structure's public API in hashing/. */
extern const GhmMapOps ghm_cpu_map_ops;       /* cuckoo */
/* A copy of a built CPU cuckoo map (src, a ghm_cpu_map_ops impl) in ctx: the inner map of the
 * multimap's and the index's clones (map_cpu.c). */
int ghmi_cpu_map_clone(GhmContext *ctx, const void *src, void **impl);
extern const GhmMapOps ghm_cpu_open_map_ops;  /* linear, quadratic, double: map_open_cpu.c */
extern const GhmMapOps ghm_cpu_robin_map_ops; /* both Robin Hood sequences: map_robin_cpu.c */
extern const GhmMapOps ghm_cpu_chain_map_ops; /* chaining by radix sort: map_chain_cpu.c */
extern const GhmMapOps ghm_cpu_two_level_map_ops; /* two-level cuckoo: map_two_level_cpu.c */
extern const GhmSetOps ghm_cpu_set_ops;
extern const GhmMultimapOps ghm_cpu_multimap_ops;
extern const GhmIndexOps ghm_cpu_index_ops;
extern const GhmSortedOps ghm_cpu_sorted_ops;
extern const GhmDynmapOps ghm_cpu_dynmap_ops; /* Atomic64 slab lists: dynmap_cpu.c */
extern const GhmDistOps ghm_cpu_dist_ops;     /* dist_map_cpu.c */

/* A 64-bit mixer (splitmix64) used to derive hash constants from the context seed, so that both
 * backends draw identical constants for the same seed and attempt number; on the device too
 * under nvcc (GhmDynmap's key hash, dynmap_layout.h). */
#ifdef __CUDACC__
__host__ __device__
#endif
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
