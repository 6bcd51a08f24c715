/*
 * ghm_dist_map.h - GhmDistMap: one key -> value map split by key hash over several contexts
 * (one per GPU, the WarpDrive approach: Juenger et al., "WarpDrive: massively parallel hashing
 * on multi-GPU nodes", IPDPS 2018), for key sets larger than one device's share of the work.
 *
 * Usage:
 *     GhmContext *ctx[2];                          // e.g. CUDA devices 0 and 1
 *     GhmDistMap *dm = NULL;
 *     GhmMapOptions mo = ghm_map_defaults();
 *     if ((ret = ghm_dist_map_create(ctx, 2, &mo, &dm)) < 0) goto fail;
 *     const uint32_t *keys[2] = {k0, k1}, *vals[2] = {v0, v1};   // shard p in ctx[p]'s memory
 *     size_t n[2] = {n0, n1};
 *     if ((ret = ghm_dist_map_build(dm, keys, vals, n)) < 0) goto fail;
 *     uint32_t *out[2] = {o0, o1};
 *     if ((ret = ghm_dist_map_find(dm, keys, n, out)) < 0) goto fail;
 *     ghm_dist_map_free(&dm);
 *
 * How: part p holds the keys whose part hash is p, in a GhmMap of ctx[p] (the map options
 * apply to every part). A bulk call starts from shards, one per context, each in its context's
 * memory: every shard is split by part (a count, then a scatter, on its own device), the pieces
 * are exchanged all to all (device to device copies, each ordered on the sending context's
 * stream; the receiver's stream waits for them, the host does not), and each part works on what
 * it received; a find sends the answers back the same way and puts them in the queries' order.
 * The parts work at once, one host thread per context.
 *
 * Where this departs from WarpDrive: in one process the exchange is CUDA's peer copies (NVLink
 * or PCIe, chosen by the driver), which is what an all-to-all between the GPUs of one process
 * comes down to. Over several processes (ghm_dist_map_create_ranked below) device data goes
 * through NCCL's send and receive where the library was built with it.
 *
 * Contexts: all of one backend (CUDA contexts on any devices, the same device more than once
 * included; or CPU contexts, which give the same answers), distinct, outliving the map. Arrays:
 * as in ghm_map.h for each shard's context (host or device memory on CUDA). Answers are those of
 * one GhmMap holding every pair: for duplicate keys the smallest value, GHM_NOT_FOUND for absent
 * keys, 0xFFFFFFFF a key like any other.
 */
#ifndef GHM_DIST_MAP_H
#define GHM_DIST_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_map.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHM_DIST_MAP_MAX_PARTS 64

typedef struct GhmDistMap GhmDistMap;

/* An empty map over ctx[0 .. parts), 1 <= parts <= GHM_DIST_MAP_MAX_PARTS. GHM_ERR_INVALID for
 * NULL arguments, contexts of different backends or the same context twice, options out of
 * range; GHM_ERR_UNSUPPORTED where a backend has no split; the errors of ghm_map_create. */
GHM_API int ghm_dist_map_create(GhmContext *const *ctx, int parts, const GhmMapOptions *opt,
                                GhmDistMap **out);

/* Replaces the content with the pairs of every shard: shard p is keys[p][0 .. n[p]) and
 * values[p][..], in ctx[p]'s memory (n[p] may be 0, its arrays then NULL). On failure (a part's
 * GHM_ERR_BUILD_FAILED, GHM_ERR_NOMEM, GHM_ERR_CUDA) the map is left empty. */
GHM_API int ghm_dist_map_build(GhmDistMap *m, const uint32_t *const *keys,
                               const uint32_t *const *values, const size_t *n);

/* For shard p's queries keys[p][0 .. n[p]) writes each value, or GHM_NOT_FOUND, to out[p][i]
 * (ctx[p]'s memory). No answer array may overlap a key array (GHM_ERR_INVALID): the parts read
 * every shard's keys where they lie while others write answers. */
GHM_API int ghm_dist_map_find(const GhmDistMap *m, const uint32_t *const *keys, const size_t *n,
                              uint32_t *const *out);

/* Distinct keys stored, over every part. */
GHM_API size_t ghm_dist_map_size(const GhmDistMap *m);

/* The distinct keys part p holds (the spread of the part hash). */
GHM_API size_t ghm_dist_map_part_size(const GhmDistMap *m, int p);

/* Frees the map (not the contexts) and sets *m to NULL; accepts NULL and a pointer to NULL. */
GHM_API void ghm_dist_map_free(GhmDistMap **m);

/* ---------------------------------------------------------------- over several processes
 *
 * A map whose parts live in different processes (the ranks of an MPI job, one context each):
 * rank r holds part r. Every rank creates it with its own context and the same ranks, and every
 * rank makes each call (create, build, find, free) as with MPI's collectives, passing arrays of
 * one entry: its own shard, in its own context's memory (or host memory). An error on one rank
 * is every rank's: all return the lowest rank's error, and a failed build leaves every part
 * empty. ghm_dist_map_size and ghm_dist_map_part_size(m, 0) answer for this rank's part alone.
 *
 * The library links no MPI: the caller gives it the host messages (geohash-match gives MPI's,
 * src/ranks.c). Two CUDA ranks that are processes of one machine map each other's device
 * memory (CUDA IPC: ghm_dist_map_uses_ipc) for builds and finds. Otherwise device data goes
 * through NCCL where the library was built with it (GEOHASH_NCCL) and the contexts are CUDA on
 * distinct GPUs, else through host memory and all_to_all_v; the CPU backend's arrays go through
 * all_to_all_v as they are. */
typedef struct GhmDistRanks {
    int rank, ranks; /* this process, and how many take part (1 .. GHM_DIST_MAP_MAX_PARTS) */
    void *user;      /* given back to each function */
    /* Every rank sends send[q] to rank q and receives rank q's word in recv[q]. 0, or < 0. */
    int (*all_to_all)(void *user, const uint64_t *send, uint64_t *recv);
    /* Every rank sends the words send[send_at[q] .. + send_n[q]) to rank q and receives rank
     * q's at recv[recv_at[q] ..] (recv_n[q] words, as rank q says); host memory. 0, or < 0 on
     * every rank alike. */
    int (*all_to_all_v)(void *user, const uint32_t *send, const size_t *send_n,
                        const size_t *send_at, uint32_t *recv, const size_t *recv_n,
                        const size_t *recv_at);
    /* Rank root's bytes at buf to every rank's buf. 0, or < 0. */
    int (*broadcast)(void *user, void *buf, size_t bytes, int root);
} GhmDistRanks;

/* This rank's part of a map over ranks->ranks processes, in ctx (its own context; on CUDA one
 * GPU per rank lets NCCL carry the data, ranks sharing a GPU go through host memory).
 * GHM_ERR_INVALID for NULL arguments, a rank out of range or a missing function; else as
 * ghm_dist_map_create, agreed by every rank. ranks is copied; its user pointer must outlive the
 * map. */
GHM_API int ghm_dist_map_create_ranked(GhmContext *ctx, const GhmDistRanks *ranks,
                                       const GhmMapOptions *opt, GhmDistMap **out);

/* 1 when a ranked map's device data goes through NCCL, else 0. */
GHM_API int ghm_dist_map_uses_nccl(const GhmDistMap *m);

/* 1 when a ranked map's ranks map each other's device memory (CUDA IPC: two ranks on GPUs of
 * one machine), so that its calls run as one process's: a find probes the other rank's keys where
 * they lie, a build copies the pieces straight into the other rank's memory; else 0. */
GHM_API int ghm_dist_map_uses_ipc(const GhmDistMap *m);

/* An array of `bytes` in part p's context's memory (a ranked map: p = 0, this rank's) for a
 * find's keys or answers, which a map whose ranks map each other's memory (ghm_dist_map_uses_ipc)
 * then reads and writes where it lies: a find's keys, or answers, that lie in such an array are
 * not copied through the map's own staging memory (a tenth of a find of 2^28 keys on two H200s).
 * Other maps give plain context memory (ghm_buffer_alloc), which works as any array. On a ranked
 * map every rank calls both functions together (each its own size, or its own array), as the
 * map's other calls (an error on one rank is every rank's): where the ranks map each other's
 * memory every rank maps every new array, and unmaps it before its owner frees it, and a rank
 * holds at most 16 at once (GHM_ERR_TOO_LARGE). Arrays not freed are freed with the map. */
GHM_API int ghm_dist_map_alloc_array(GhmDistMap *m, int p, size_t bytes, void **out);
GHM_API void ghm_dist_map_free_array(GhmDistMap *m, int p, void **array);

#ifdef __cplusplus
}
#endif

#endif /* GHM_DIST_MAP_H */
