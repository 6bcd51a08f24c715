/*
 * match_internal.h - the matcher's state, shared by match.c (building, the entry points),
 * match_stages.c (the stages both paths share), match_host.c (the query on the CPU),
 * match_device.c (the query on a device) and match_file.c (reference files). Not a public
 * header.
 */
#ifndef GHM_MATCH_INTERNAL_H
#define GHM_MATCH_INTERNAL_H

#include <math.h>

#include "ghm_match.h"
#include "ghm_similarity.h"

/* Radii (pixels) of the refinement iterations: wide first to pull in, then tight to settle. */
static const double GHMI_REFINE_RADII[] = {6.0, 4.0, 3.0, 2.5, 2.0, 2.0, 1.5, 1.5, 1.5, 1.5};
#define GHMI_REFINE_STEPS (sizeof GHMI_REFINE_RADII / sizeof GHMI_REFINE_RADII[0])
/* The final polish uses up to this many query edge points (all of them in practice). */
#define GHMI_MAX_POLISH_POINTS 40000
/* Reference edge points used for the backward check, at most. */
#define GHMI_CHECK_POINTS 2500
/* Voted candidates that are scored in both directions after the forward screening. */
#define GHMI_BACKWARD_CANDIDATES 16

/* A transform's score. */
typedef struct Score {
    size_t inliers, inside;     /* query edge points on reference edges / inside the reference */
    size_t back_inliers, back_inside; /* reference edge points in the footprint / explained */
    double forward, backward;   /* the two shares */
    double confidence;
} Score;

typedef struct Hypothesis {
    GhmSimilarity s;
    Score sc;
    uint32_t votes;
} Hypothesis;

/* The device side of a matcher (match_device.c). */
typedef struct GhmMatchDevice GhmMatchDevice;

struct GhmMatcher {
    GhmContext *ctx;
    GhmMatchParams p;
    uint64_t seed;
    int width, height;
    /* reference features: what a reference file stores */
    GhmEdgePoint *edges;  /* all edge points */
    uint32_t *edge_pixel; /* the pixel (y * width + x) each edge point was found at */
    size_t nedges;
    GhmCorner *corners;
    size_t ncorners;
    /* derived, rebuilt on load */
    float (*edge_dir)[2]; /* unit gradient direction of each edge point */
    int32_t *nearest;     /* per pixel: index of the nearest edge point, or -1 */
    GhmGeoPoint *coded;
    size_t ncoded;
    GhmGeoRef *geo;
    GhmGeoVoter *voter;
    uint32_t *rcheck;     /* reference edge points that check a transform backwards */
    size_t nrcheck;
    /* per-query scratch, reused */
    GhmGeoCandidate *cand;
    float (*inliers)[2];
    size_t ninliers, cap_inliers;
    int32_t *qnearest;    /* the query's nearest-edge map (distance transform) */
    const GhmEdges *qedges; /* the query being matched (valid during a match only) */
    size_t cap_qnearest;
    float (*qdir)[2];     /* the query's unit edge directions */
    size_t cap_qdir;
    GhmMatchDevice *dev;  /* the device path, NULL on backends without vision kernels */
};

/* The cosine of the inlier angle tolerance. */
static inline double ghmi_cos_tol(const GhmMatchParams *p)
{
    return cos(p->inlier_angle_deg * 0.017453292519943295);
}

/* --- match_stages.c: the stages both query paths share ------------------------------------ */

/* The coded points of a query or reference: edge points thinned by a grid (strongest per
 * cell, capped at p->max_points), with directions. The caller frees *out. */
int ghmi_select_coded(const GhmEdgePoint *pts, size_t n, int w, int h, const GhmMatchParams *p,
                      GhmGeoPoint **out, size_t *nout);
/* Corners as basis points. The caller frees *out. */
int ghmi_corners_to_points(const GhmCorner *c, size_t n, GhmGeoPoint **out);
/* Votes with the query's coded and basis points: m->cand[0 .. *ncand), stats into res. */
int ghmi_vote(GhmMatcher *m, const GhmGeoPoint *coded, size_t ncoded, const GhmGeoPoint *qb,
              size_t nqb, GhmMatchResult *res, size_t *ncand);
/* The transforms of the first ncand candidates (degenerate ones skipped); returns how many. */
size_t ghmi_hypotheses(const GhmMatcher *m, const GhmGeoPoint *qb, size_t ncand, Hypothesis *hyp);
/* The shares and confidence from the counts of r (n query points scored). */
void ghmi_score_shares(Score *r, size_t n, int backward);
/* qsort order of hypotheses: confidence, then inliers, then votes, all falling. */
int ghmi_cmp_hyp(const void *a, const void *b);
void ghmi_fill_result(const GhmMatcher *m, const Hypothesis *h, GhmMatchResult *res);

/* --- the two query paths ----------------------------------------------------------------- */

/* ghm_matcher_match on the host (match_host.c): features, voting and verification on the CPU. */
int ghmi_match_host_query(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res);


/* Sets m->dev up when m's backend has vision kernels (uploads the reference side), else leaves
 * it NULL. */
int ghmi_match_device_create(GhmMatcher *m);
void ghmi_match_device_free(GhmMatcher *m);
/* ghm_matcher_match on the device: features, voting and verification. */
int ghmi_match_device_query(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res);

/* Builds a matcher from reference features (copied): the path shared by ghm_matcher_create
 * and ghm_matcher_load. edge_pixel[i] must be < width * height. */
int ghmi_matcher_build(GhmContext *ctx, int width, int height, const GhmEdgePoint *edges,
                       const uint32_t *edge_pixel, size_t nedges, const GhmCorner *corners,
                       size_t ncorners, const GhmMatchParams *p, GhmMatcher **out);

#endif /* GHM_MATCH_INTERNAL_H */
