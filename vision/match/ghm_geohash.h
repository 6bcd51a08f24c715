/*
 * ghm_geohash.h - geometric hashing (Lamdan and Wolfson; on hash tables as in Alcantara et al.
 * 2009, section 6): reference tables built once, then votes for every query.
 *
 * Usage:
 *     GhmGeoParams gp = ghm_geo_defaults();
 *     GhmGeoRef *ref = NULL;
 *     ghm_geo_ref_build(ctx, ref_basis_pts, nb, ref_coded_pts, nc, ref_diag, &gp, &ref);
 *     GhmGeoVoter *v = NULL;
 *     ghm_geo_voter_create(ref, &v);                  // scratch, reused query after query
 *     ghm_geo_vote(v, q_basis_pts, nqb, q_coded_pts, nqc, &gp, seed, cand, max, &ncand, &st);
 *     // cand[0..ncand): (reference basis, query basis) pairs with the most votes, best first
 *     ghm_geo_voter_free(&v);
 *     ghm_geo_ref_free(&ref);
 *
 * Bases are ordered pairs (i, j) of basis points whose distance lies in the configured band.
 * The reference keeps each pair with probability basis_prob, decided by a hash of (seed, i, j),
 * so the tables depend on the seed and nothing else. The chosen bases go into a GhmIndex
 * (key i << 16 | j, dense ids both ways). Every coded point q in a basis frame (p1, p2),
 * d = p2 - p1, gets u = ((q - p1) . d) / |d|^2 and v = ((q - p1) x d) / |d|^2, which a similarity
 * leaves unchanged; (u, v) quantised to quant, inside a window of +-window basis lengths around
 * the basis midpoint, is the signature, and a GhmMultimap maps signature -> basis id.
 *
 * Departure from the paper: the signature also holds the coded point's edge direction relative
 * to the basis direction, quantised to angle_bins (0 turns it off). A similarity rotates the
 * edge direction and the basis direction alike, so the relative angle is invariant too; it
 * makes a signature about angle_bins times more selective, which cuts the random votes that
 * dense texture casts for every basis (the failure the paper notes at the end of section 6).
 *
 * Voting: every query basis looks up the signatures of the query points in its frame and adds
 * one vote per (reference basis, query basis) cell of the n x m vote array T, addressed through
 * the reference's two-way index and the query bases' ranks (their sorted distinct pairs). On
 * the CPU a row of T (one query basis) is owned by one thread, so the adds need no atomics and
 * the row stays in cache; it is reduced to its best cells at once.
 */
#ifndef GHM_GEOHASH_H
#define GHM_GEOHASH_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmGeoParams {
    double basis_prob;   /* reference: keep each basis with this probability (1.0) */
    double min_dist;     /* reference basis length band, fractions of the reference diagonal */
    double max_dist;     /* (defaults 0 and 0.35) */
    double min_scale;    /* the query-to-reference scales searched for (0.25 .. 4.0): they set */
    double max_scale;    /* the query's basis length band from the reference's */
    double quant;        /* (u, v) bin size in basis lengths (0.05) */
    double window;       /* coded window: |u - 0.5| and |v| below this many basis lengths (1.5) */
    int angle_bins;      /* relative edge direction bins in the signature; 0 = none (32) */
    size_t query_bases;  /* query bases per query, at most (600) */
    int neighbours;      /* reference bases: each basis point with its this many nearest (8) */
    int query_neighbours; /* query bases: each basis point with its this many nearest (4) */
    double min_len;      /* neighbours nearer than this many level pixels do not count (0) */
} GhmGeoParams;

/* A basis point (corner) and a coded point (edge point with its gradient direction). */
typedef struct GhmGeoPoint {
    float x, y;
    float angle; /* radians; ignored for basis points */
} GhmGeoPoint;

/* One scale level of an image's features (a pyramid level): its basis points are
 * basis_pts[basis_first .. + nbasis), its coded points coded_pts[coded_first .. + ncoded), all
 * in the pixels of the full image. Bases pair basis points of one level only, and their
 * signatures code that level's points. */
typedef struct GhmGeoLevel {
    uint32_t basis_first, nbasis;
    uint32_t coded_first, ncoded;
    float scale; /* the size of one of the level's pixels in full-image pixels (2^level) */
} GhmGeoLevel;

typedef struct GhmGeoCandidate {
    uint32_t votes;
    uint32_t ref_i, ref_j; /* reference basis points (indices into the reference's array) */
    uint32_t q_k, q_l;     /* query basis points */
} GhmGeoCandidate;

typedef struct GhmGeoStats {
    size_t query_bases;     /* m */
    size_t lookups;         /* signatures looked up */
    uint64_t votes;         /* votes cast */
    size_t ref_entries;     /* the reference's (basis, signature) pairs, and their */
    size_t ref_keys;        /* distinct signatures (ghm_geo_ref_sizes' entries and keys) */
    int scanned;            /* 1: the reference had no table, its bases were scanned (the
                             * time in voting_ms) */
    double bases_ms, signatures_ms, voting_ms;
} GhmGeoStats;

typedef struct GhmGeoRef GhmGeoRef;
typedef struct GhmGeoVoter GhmGeoVoter;

GHM_API GhmGeoParams ghm_geo_defaults(void);

/* GHM_OK when the parameters are usable, GHM_ERR_INVALID otherwise. */
GHM_API int ghm_geo_check_params(const GhmGeoParams *p);

/* Builds the reference tables. Basis points and coded points are copied. diag is the
 * reference image diagonal (for the length band). At most 65535 basis points. The seed is the
 * context's. GHM_ERR_INVALID, GHM_ERR_TOO_LARGE (more than 2^31 signatures), GHM_ERR_NOMEM or
 * the hashing layer's errors. The caller frees *out with ghm_geo_ref_free(). */
GHM_API int ghm_geo_ref_build(GhmContext *ctx, const GhmGeoPoint *basis_pts, size_t nb,
                              const GhmGeoPoint *coded_pts, size_t nc, double diag,
                              const GhmGeoParams *p, GhmGeoRef **out);

/* As ghm_geo_ref_build over nlevels levels (levels NULL: one level holding every point). */
GHM_API int ghm_geo_ref_build_levels(GhmContext *ctx, const GhmGeoPoint *basis_pts, size_t nb,
                                     const GhmGeoPoint *coded_pts, size_t nc,
                                     const GhmGeoLevel *levels, size_t nlevels, double diag,
                                     const GhmGeoParams *p, GhmGeoRef **out);

/* A copy of ref in ctx (a context of ref's backend): the same tables and answers, without the
 * work of a build (ghm_multimap_clone). ref is only read. The caller frees *out with
 * ghm_geo_ref_free(). */
GHM_API int ghm_geo_ref_clone(GhmContext *ctx, const GhmGeoRef *ref, GhmGeoRef **out);

GHM_API void ghm_geo_ref_free(GhmGeoRef **ref);

/* Table sizes: bases n, signatures stored, distinct signature keys (0 and 0 for a reference
 * built without its table for one query, whose votes count them: GhmGeoStats). */
GHM_API void ghm_geo_ref_sizes(const GhmGeoRef *ref, size_t *bases, size_t *entries, size_t *keys);

/* The keys of the signature table's entries, one per (reference basis, signature) pair, in
 * basis order (by key within a basis): the look-ups that voting would make for a query equal to
 * the reference, in about the order it makes them. For measuring table families on the
 * matcher's own key sets (`geohash-match bench tables`). *keys is malloc'ed (at least one word),
 * *n = the table's entries; the caller frees *keys. GHM_ERR_INVALID, GHM_ERR_NOMEM or the hashing
 * layer's errors. */
GHM_API int ghm_geo_ref_signatures(const GhmGeoRef *ref, uint32_t **keys, size_t *n);

/* Scratch for voting against ref (which must outlive it); one per concurrent query. */
GHM_API int ghm_geo_voter_create(const GhmGeoRef *ref, GhmGeoVoter **out);
GHM_API void ghm_geo_voter_free(GhmGeoVoter **v);

/* Votes for one query. Query bases are ordered pairs of basis points whose length, times a
 * scale in [min_scale, max_scale], falls in the reference band; at most query_bases of them
 * are sampled by a hash of (seed, k, l). Writes up to max_cand candidates, most votes first
 * (ties by query basis id, then reference basis id), and the per-stage timings to stats (may be
 * NULL). Deterministic for a seed. basis_pts are host memory; coded_pts are host memory, or
 * backend memory where the backend votes on its device (GhmVisionOps: CUDA), which then reads
 * them in place. */
GHM_API int ghm_geo_vote(GhmGeoVoter *v, const GhmGeoPoint *basis_pts, size_t nb,
                         const GhmGeoPoint *coded_pts, size_t nc, const GhmGeoParams *p,
                         uint64_t seed, GhmGeoCandidate *cand, size_t max_cand, size_t *ncand,
                         GhmGeoStats *stats);

/* As ghm_geo_vote over the query's nlevels levels (levels NULL: one level holding every
 * point). Level ranges index basis_pts and coded_pts as in ghm_geo_ref_build_levels. */
GHM_API int ghm_geo_vote_levels(GhmGeoVoter *v, const GhmGeoPoint *basis_pts, size_t nb,
                                const GhmGeoPoint *coded_pts, size_t nc,
                                const GhmGeoLevel *levels, size_t nlevels, const GhmGeoParams *p,
                                uint64_t seed, GhmGeoCandidate *cand, size_t max_cand,
                                size_t *ncand, GhmGeoStats *stats);

#ifdef __cplusplus
}
#endif

#endif /* GHM_GEOHASH_H */
