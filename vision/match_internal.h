/*
 * match_internal.h - the matcher's state, shared by match.c (building, matching) and
 * match_file.c (reference files). Not a public header.
 */
#ifndef GHM_MATCH_INTERNAL_H
#define GHM_MATCH_INTERNAL_H

#include "ghm_match.h"

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
};

/* Builds a matcher from reference features (copied): the path shared by ghm_matcher_create
 * and ghm_matcher_load. edge_pixel[i] must be < width * height. */
int ghmi_matcher_build(GhmContext *ctx, int width, int height, const GhmEdgePoint *edges,
                       const uint32_t *edge_pixel, size_t nedges, const GhmCorner *corners,
                       size_t ncorners, const GhmMatchParams *p, GhmMatcher **out);

#endif /* GHM_MATCH_INTERNAL_H */
