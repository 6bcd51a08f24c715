/*
 * dist_map_internal.h - what the two halves of GhmDistMap share: the map itself, over contexts
 * of this process (dist_map.c) or one part per process of a ranked map (dist_map_ranks.c).
 */
#ifndef GHM_DIST_MAP_INTERNAL_H
#define GHM_DIST_MAP_INTERNAL_H

#include "ghm_backend_internal.h"
#include "ghm_dist_map.h"

struct GhmDistMap {
    int parts;                          /* the parts in this process */
    GhmContext *ctx[GHM_DIST_MAP_MAX_PARTS];
    GhmMap *map[GHM_DIST_MAP_MAX_PARTS];
    const GhmDistOps *ops;
    GhmiDistConsts c;                   /* c.parts: the parts over every process */
    int ranked;                         /* one part, this rank's (dist_map_ranks.c) */
    GhmDistRanks ranks;
    void *link;                         /* the ranks' device channel (GhmDistOps.rank_link) */
    void *window;                       /* the ranks' mapped windows (GhmDistOps.window_open) */
    void *side[GHM_DIST_MAP_MAX_PARTS]; /* each part's side stream (GhmDistOps.side_open) or
                                           NULL (one part, or a backend without them) */
};

/* A shard array in ctx's backend memory: src itself, or a copy in *owned (freed by the caller
 * with ghm_buffer_free). */
int ghmi_dist_shard_input(GhmContext *ctx, const uint32_t *src, size_t n, const uint32_t **dev,
                          void **owned);

/* 1 when a find's answers out[0 .. n_out) would overlap keys[0 .. n_keys): the parts read a
 * shard's keys where they lie while others write answers (the finds in place), so such a find
 * is refused rather than answered from keys already overwritten. */
int ghmi_dist_overlap(const uint32_t *keys, size_t n_keys, const uint32_t *out, size_t n_out);

/* Backend memory for n words, left as it comes (GhmDistOps.alloc); n = 0: NULL. */
int ghmi_dist_alloc_u32(const GhmDistMap *m, GhmContext *ctx, size_t n, uint32_t **out);

/* A split that keeps every part's run in the shard's own arrays, part q's from start[q]
 * (values NULL: keys alone). */
void ghmi_dist_dest_local(GhmiDistDest *dest, int parts, const size_t *start, uint32_t *keys,
                          uint32_t *values);

/* Tests: 1 makes bulk calls copy the pieces between contexts even where a split could write
 * them straight into the parts' memory (GhmDistOps.reach), so that both ways are exercised. */
void ghmi_dist_map_force_copies(int on);

/* The ranked map's calls (dist_map_ranks.c), reached through the public ones. */
int ghmi_dist_ranked_build(GhmDistMap *m, const uint32_t *keys, const uint32_t *values,
                           size_t n);
int ghmi_dist_ranked_find(const GhmDistMap *m, const uint32_t *keys, size_t n, uint32_t *out);
void ghmi_dist_ranked_free(GhmDistMap *m);

/* A ranked map's arrays (ghm_dist_map_alloc_array; status: this rank's argument check). */
int ghmi_dist_ranked_alloc_array(GhmDistMap *m, int status, size_t bytes, void **out);
void ghmi_dist_ranked_free_array(GhmDistMap *m, void *p);

#endif /* GHM_DIST_MAP_INTERNAL_H */
