/*
 * ghm_match.h - find a query image inside a reference image: the similarity transform (scale,
 * rotation, translation) that maps query pixels to reference pixels, by geometric hashing on
 * edge features, verified and refined on the reference's edges.
 *
 * Usage:
 *     GhmMatchParams mp = ghm_match_defaults();
 *     GhmMatcher *m = NULL;
 *     if ((ret = ghm_matcher_create(ctx, ref_img, &mp, &m)) < 0) goto fail;   // tables, once
 *     GhmMatchResult res;
 *     for (each query or video frame) {
 *         if ((ret = ghm_matcher_match(m, query_img, &res)) < 0) goto fail;
 *         if (res.found) use(res.matrix);        // query pixel -> reference pixel
 *     }
 *     ghm_matcher_free(&m);
 *
 * Pipeline per query: edges and corners of the query -> query bases (pairs of corners) and
 * their signatures (quantised positions and relative edge directions of the query's edge
 * points, see ghm_geohash.h) -> votes against the reference tables -> the best
 * (reference basis, query basis) cells give candidate transforms -> each is scored by the share
 * of query edge points that land on reference edges with the same direction (a distance
 * transform of the reference edges gives the nearest edge in O(1)) and the share of reference
 * edge points inside the footprint that land on query edges (the same, backwards) -> the best
 * few are refined by iterated point-to-line least squares on their inliers -> the best is
 * reported, with confidence = the geometric mean of the two shares. The matcher keeps its scratch between queries and never
 * rebuilds the reference side. One matcher serves one thread at a time.
 *
 * Reference files (ghm_matcher_save / ghm_matcher_load) hold the reference's edge points,
 * corners, size, parameters and seed, so loading rebuilds exactly the same tables quickly.
 */
#ifndef GHM_MATCH_H
#define GHM_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_edges.h"
#include "ghm_geohash.h"
#include "ghm_image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmMatchParams {
    GhmEdgeParams edges;
    GhmCornerParams corners;  /* reference corners (basis points) */
    size_t query_corners;     /* basis points of a query per pyramid level, at most (1000) */
    size_t max_points;        /* coded edge points per pyramid level, at most (default 12000) */
    double point_cell;        /* smallest grid cell for coded points, pixels (default 3) */
    int levels;               /* pyramid levels of both images, halving the size each (3) */
    GhmGeoParams geo;
    size_t top_candidates;    /* voted candidates that are verified (default 96) */
    size_t refine_candidates; /* of those, the best few refined by least squares (default 6) */
    size_t verify_points;     /* query edge points that score a candidate (default 1000) */
    double inlier_px;         /* an inlier lies this close to a reference edge (default 2) */
    double inlier_angle_deg;  /* ... with an edge direction this close (default 25) */
    double min_confidence;    /* below this inlier share: no match (default 0.25) */
    size_t min_support;       /* point correspondences of the voted bases that agree with a
                                 match, at least (default 3) ... */
    double min_corner_signif; /* ... or its corners coincide with a chance of 10^-this at
                                 most (default 3) ... */
    double sure_confidence;   /* ... or its confidence reaches this (default 0.7) */
    double max_rival;         /* no match when another placement reaches this share of the
                                 best one's confidence (default 0.9) */
} GhmMatchParams;

typedef struct GhmMatchTimings {
    double edges_ms, bases_ms, signatures_ms, voting_ms, verification_ms, total_ms;
} GhmMatchTimings;

typedef struct GhmMatchResult {
    int found;             /* 1 when the best transform's confidence >= min_confidence */
    uint32_t votes;        /* votes of the (reference basis, query basis) cell it came from */
    double confidence;     /* in [0, 1]: geometric mean of the two shares below */
    double forward_share;  /* query edge points that land on reference edges */
    double backward_share; /* reference edge points in the footprint that land on query edges */
    double scale, rotation_deg, tx, ty;
    double matrix[2][3];   /* query pixel -> reference pixel */
    size_t inliers;        /* query edge points on reference edges under the final transform */
    size_t support;        /* distinct reference points of the voted bases that agree */
    double corner_signif;  /* -log10 of the chance of its corner coincidences; NAN where the
                            * decision did not need it (support or confidence decided) */
    size_t query_edges;    /* query edge points scored */
    GhmMatchTimings time;
    /* table sizes */
    size_t ref_edge_points, ref_basis_points, ref_coded_points, ref_bases, ref_entries,
        ref_keys;
    size_t query_edge_points, query_basis_points, query_coded_points, query_bases, lookups,
        candidates;
    uint64_t votes_cast;
    int ref_scanned; /* 1: a reference for one query without its table was scanned instead
                      * (ghm_matcher_create_for_one_query): voting_ms holds its signatures */
} GhmMatchResult;

typedef struct GhmMatcher GhmMatcher;

GHM_API GhmMatchParams ghm_match_defaults(void);

/* GHM_OK when every parameter is in range, else GHM_ERR_INVALID. */
GHM_API int ghm_match_check_params(const GhmMatchParams *p);

/* Builds the reference side (edges, distance transform, bases, signature tables) from ref.
 * ctx must outlive the matcher. GHM_ERR_INVALID (NULL or bad params), GHM_ERR_TOO_LARGE,
 * GHM_ERR_NOMEM and the hashing layer's errors. A blank reference is valid: it matches
 * nothing. Images above 16 megapixels give GHM_ERR_TOO_LARGE. The caller frees *out with
 * ghm_matcher_free(). */
GHM_API int ghm_matcher_create(GhmContext *ctx, const GhmImage *ref, const GhmMatchParams *p,
                               GhmMatcher **out);

/* As ghm_matcher_create, for a reference that answers one query (a one-shot pair; each
 * reference of a search): where the backend votes on the host (the CPU), the signature table is
 * not built, and a query's votes are counted instead by computing every reference basis's
 * signatures against the query's. The same votes, so the same results, every query; the
 * table's sort and hash are saved once (a one-shot pair on 2 cores about 13 % sooner), but each
 * query computes the reference's signatures again, about the table's build: for several queries
 * use ghm_matcher_create. Its clones vote as it does; a reference file saved from it loads as
 * the loading function makes it (ghm_matcher_load, ghm_matcher_load_for_one_query);
 * ghm_matcher_signatures computes them again. On a backend that votes on its device this is
 * ghm_matcher_create. */
GHM_API int ghm_matcher_create_for_one_query(GhmContext *ctx, const GhmImage *ref,
                                             const GhmMatchParams *p, GhmMatcher **out);

/* Matches one query. res->found says whether a match was found; not finding one is GHM_OK.
 * Reuses the matcher's scratch; deterministic for the context's seed. */
GHM_API int ghm_matcher_match(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res);

/* The last match's inliers, mapped into the reference (x, y pairs), owned by the matcher and
 * valid until the next match or free. */
GHM_API void ghm_matcher_inliers(const GhmMatcher *m, const float (**xy)[2], size_t *n);

/* The reference's edge points (for drawing), owned by the matcher. */
GHM_API void ghm_matcher_reference_edges(const GhmMatcher *m, const GhmEdgePoint **pts, size_t *n);

GHM_API void ghm_matcher_size(const GhmMatcher *m, int *width, int *height);

/* The keys of the reference's signature table entries in basis order (ghm_geo_ref_signatures):
 * the matcher's own key set, for measuring table families on it. The caller frees *keys. */
GHM_API int ghm_matcher_signatures(const GhmMatcher *m, uint32_t **keys, size_t *n);

/* The parameters in effect (a loaded reference brings its own reference-side parameters). */
GHM_API const GhmMatchParams *ghm_matcher_params(const GhmMatcher *m);

/* Sets the query-side parameters (candidates, confidence, query bases...) of a matcher; the
 * reference-side ones in p are ignored. GHM_ERR_INVALID for values out of range. */
GHM_API int ghm_matcher_set_query_params(GhmMatcher *m, const GhmMatchParams *p);

/* Writes the reference to path atomically (ghm_file_io.h: temporary file + rename): magic,
 * version, payload size, FNV-1a 64 checksum of the payload, then the payload. GHM_ERR_IO with
 * why filled. */
GHM_API int ghm_matcher_save(const GhmMatcher *m, const char *path, char *why, size_t why_size);

/* Reads a reference file and rebuilds the matcher. GHM_ERR_IO (cannot read), GHM_ERR_FORMAT
 * (not a reference file, wrong version, damaged: checksum or sizes), with why filled. Query-side
 * parameters come from p (may be NULL for the defaults). */
GHM_API int ghm_matcher_load(GhmContext *ctx, const char *path, const GhmMatchParams *p,
                             GhmMatcher **out, char *why, size_t why_size);

/* As ghm_matcher_load, for a reference that answers one query: as
 * ghm_matcher_create_for_one_query makes it. */
GHM_API int ghm_matcher_load_for_one_query(GhmContext *ctx, const char *path,
                                           const GhmMatchParams *p, GhmMatcher **out, char *why,
                                           size_t why_size);

/* A second matcher for the same reference in ctx (which must outlive it; a context of m's
 * backend, on CUDA maybe another device): m's features, parameters (query-side ones included)
 * and tables, copied rather than built again (ghm_geo_ref_clone), so it costs a fraction of a
 * build and, in a context with m's seed, gives exactly m's answers; that is how several threads
 * match at once (one matcher serves one thread at a time), each with its own context and clone.
 * m is only read: cloning it from several threads at once is safe while no thread changes it
 * (ghm_matcher_set_query_params) or matches with it. GHM_ERR_INVALID on a NULL argument or a
 * context of another backend, GHM_ERR_NOMEM and the hashing layer's errors. The caller frees
 * *out with ghm_matcher_free(). */
GHM_API int ghm_matcher_clone(GhmContext *ctx, const GhmMatcher *m, GhmMatcher **out);

GHM_API void ghm_matcher_free(GhmMatcher **m);

#ifdef __cplusplus
}
#endif

#endif /* GHM_MATCH_H */
