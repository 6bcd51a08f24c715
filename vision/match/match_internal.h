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
#include "vision_backend_internal.h"

/* Radii (pixels) of the refinement iterations: wide first to pull in, then tight to settle. */
static const double GHMI_REFINE_RADII[] = {6.0, 4.0, 3.0, 2.5, 2.0, 2.0, 1.5, 1.5, 1.5, 1.5};
#define GHMI_REFINE_STEPS (sizeof GHMI_REFINE_RADII / sizeof GHMI_REFINE_RADII[0])
/* The final polish uses up to this many query edge points (all of them in practice). */
#define GHMI_MAX_POLISH_POINTS 40000
/* The backward check's reference edge points: the strongest of every cell of 2, 4, 8, ...
 * pixels (GHMI_CHECK_LEVELS grids); a transform is checked on the coarsest grid that puts at
 * least GHMI_CHECK_TARGET of them into its footprint (the finest when none does), so a small
 * footprint is checked on its own edges as densely as a whole image is. */
#define GHMI_CHECK_LEVELS 6
#define GHMI_CHECK_TARGET 600
/* Voted candidates that are scored in both directions after the forward screening. */
#define GHMI_BACKWARD_CANDIDATES 16

/* Pyramid levels at most, and the shorter side a level needs (fewer pixels give no corners
 * worth pairing). */
#define GHMI_MAX_LEVELS 4
#define GHMI_MIN_LEVEL_SIDE 32

/* The full-image coordinate of coordinate x of pyramid level `level` (its pixel x covers the
 * full image's pixels 2^level x .. 2^level (x + 1) - 1). The scale is a power of two, so the
 * product is exact and only the sum rounds, the same on every backend. */
static inline float ghmi_level_to_full(float x, int level)
{
    float s = (float)(1 << level), t = x * s;
    return t + 0.5f * (s - 1.0f);
}

/* An image's features over its pyramid (match_stages.c): level 0's edges, which verify, and
 * for every level its corners (basis points) and coded points, in the pixels of level 0, the
 * level ranges in levels[]. */
typedef struct GhmiPyramid {
    GhmEdges *edges; /* level 0 */
    GhmCorner *corners;
    size_t ncorners;
    GhmGeoPoint *coded;
    size_t ncoded;
    GhmGeoLevel levels[GHMI_MAX_LEVELS];
    size_t nlevels;
} GhmiPyramid;

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
    GhmCorner *corners;   /* every level's corners, in full-image pixels */
    size_t ncorners;
    /* derived, rebuilt on load */
    float (*edge_dir)[2]; /* unit gradient direction of each edge point */
    int32_t *nearest;     /* per pixel: index of the nearest edge point, or -1 */
    GhmGeoPoint *coded;   /* every level's coded points, in full-image pixels */
    size_t ncoded;
    GhmGeoLevel levels[GHMI_MAX_LEVELS]; /* ranges of corners and coded points per level */
    size_t nlevels;
    GhmGeoRef *geo;
    GhmGeoVoter *voter;
    uint32_t *corner_sat; /* (width + 1) x (height + 1) summed-area table of corner counts */
    uint32_t *rcheck;     /* reference edge points that check a transform backwards: */
    size_t nrcheck;       /* grid g holds rcheck[check_first[g] .. check_first[g + 1]) */
    size_t check_first[GHMI_CHECK_LEVELS + 1];
    /* per-query scratch, reused */
    GhmGeoCandidate *cand; /* every voted cell, most votes first (cap_cand room) */
    size_t cap_cand, ncand_all;
    float (*inliers)[2];
    size_t ninliers, cap_inliers;
    int32_t *qnearest;    /* the query's nearest-edge map (distance transform) */
    const GhmEdges *qedges; /* the query being matched (valid during a match only) */
    size_t cap_qnearest;
    float (*qdir)[2];     /* the query's unit edge directions */
    size_t cap_qdir;
    GhmMatchDevice *dev;  /* the device path, NULL on backends without vision kernels */
};

/* Room for every cell the voting can return: the best GHM_GEO_ROW_BEST of each query basis. */
static inline size_t ghmi_cand_capacity(const GhmMatchParams *p)
{
    size_t n = p->geo.query_bases * GHM_GEO_ROW_BEST;
    return n > p->top_candidates ? n : p->top_candidates;
}

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
/* How many pyramid levels a w x h image gets. */
size_t ghmi_pyramid_levels(int w, int h, const GhmMatchParams *p);
/* The features of img over its pyramid, up to max_corners corners per level (host). */
int ghmi_pyramid_build(const GhmImage *img, const GhmMatchParams *p, size_t max_corners,
                       GhmiPyramid *out);
void ghmi_pyramid_free(GhmiPyramid *py);
/* Corners as basis points. The caller frees *out. */
int ghmi_corners_to_points(const GhmCorner *c, size_t n, GhmGeoPoint **out);
/* The nearest-edge map of a w x h picture: nearest[i] = seeds[] of the seed pixel nearest to
 * pixel i (ghm_distance_transform), -1 where there is none; seeds: -1 or a point's index per
 * pixel. Both sides' backward checks read such a map. */
int ghmi_nearest_points(int w, int h, const int32_t *seeds, int32_t *nearest);
/* dir[i] = the unit vector of pts[i].angle: scoring compares directions millions of times. */
void ghmi_unit_directions(const GhmEdgePoint *pts, size_t n, float (*dir)[2]);
/* Votes with the query's coded and basis points: every voted cell into m->cand[0 ..
 * m->ncand_all), of which the first *ncand (at most top_candidates) become hypotheses; stats
 * into res. */
int ghmi_vote(GhmMatcher *m, const GhmGeoPoint *coded, size_t ncoded, const GhmGeoPoint *qb,
              size_t nqb, const GhmGeoLevel *levels, size_t nlevels, GhmMatchResult *res,
              size_t *ncand);
/* The transforms of the first ncand candidates (degenerate ones skipped); returns how many. */
size_t ghmi_hypotheses(const GhmMatcher *m, const GhmGeoPoint *qb, size_t ncand, Hypothesis *hyp);
/* The check grid for transform s of a qw x qh query (see GHMI_CHECK_LEVELS): its points are
 * m->rcheck[*first .. *first + *count). */
/* The matcher's check grids as ghm_check_range (verify_math.h) and the device read them. */
void ghmi_check_grids(const GhmMatcher *m, GhmCheckGrids *c);
void ghmi_check_range(const GhmMatcher *m, const GhmSimilarity *s, int qw, int qh, size_t *first,
                      size_t *count);
/* The shares and confidence from the counts of r (n query points scored). */
void ghmi_score_shares(Score *r, size_t n, int backward);
/* qsort order of hypotheses: confidence, then inliers, then votes, all falling. */
int ghmi_cmp_hyp(const void *a, const void *b);
/* The evidence that s is a match, besides its shares (ghmi_support, ghmi_corner_evidence). */
typedef struct Evidence {
    size_t support;       /* distinct reference points of agreeing voted cells */
    double corner_signif; /* -log10 of the chance of as many corner coincidences */
    double rival;         /* the best other placement's confidence, as a share of this one's */
    double spread;        /* how well the inliers pin the placement down (ghmi_inlier_spread) */
} Evidence;
/* The smaller over the larger eigenvalue of the covariance of the n inlier positions xy: 0 when
 * they lie on one line (a straight edge fits any straight edge, sliding along it at any scale:
 * it places nothing), 1 for a spread alike in every direction. */
double ghmi_inlier_spread(const float (*xy)[2], size_t n);
/* Below this spread only voted bases can make a match (ghmi_fill_result): the minor axis of
 * the inliers under a third of the major one. True matches seen below it (a query half in hard
 * shadow, its inliers in a strip) had 4 to 15 agreeing bases; a query's one straight edge laid
 * on a reference's (0.07) had none. */
#define GHMI_MIN_SPREAD 0.1
/* Ambiguity. A query that fits two places equally well (a periodic pattern) has no single
 * answer. Rivals are the refined hypotheses hyp[1..n) (ranked) that put the query's corners
 * elsewhere (farther than the 2 % of the reference diagonal by which an answer is judged);
 * ghmi_rivals writes the indices of the best GHMI_RIVALS of them to idx and returns how many.
 * One counts only when the transform halfway between it and the best (ghmi_halfway) scores
 * below GHMI_VALLEY of it: a valley between two placements, not two ends of the same one (a
 * query that a similarity fits only roughly, seen in perspective, gives a ridge of nearly equal
 * transforms). ghmi_rival_share is then its confidence over the best one's, else 0. */
#define GHMI_RIVALS 2
#define GHMI_VALLEY 0.8
size_t ghmi_rivals(const GhmMatcher *m, const Hypothesis *hyp, size_t n, int qw, int qh,
                   size_t *idx);
GhmSimilarity ghmi_halfway(const GhmSimilarity *a, const GhmSimilarity *b);
double ghmi_rival_share(const Hypothesis *best, const Hypothesis *rival, double halfway_conf);
void ghmi_fill_result(const GhmMatcher *m, const Hypothesis *h, const Evidence *ev,
                      GhmMatchResult *res);
/* Corner coincidences: how many of the query's basis points (levels lv) land under s within
 * about a pixel of their level of a reference basis point, against how many a random placement
 * would give there (the local density of reference corners). Returns -log10 of the Poisson
 * chance of at least as many: 3 means one chance in a thousand. */
double ghmi_corner_evidence(const GhmMatcher *m, const GhmGeoPoint *qb, const GhmGeoLevel *lv,
                            size_t nlv, const GhmSimilarity *s);
/* The summed-area table of reference corner counts (m->corner_sat). */
int ghmi_corner_table(GhmMatcher *m);
/* Pose clustering: how many distinct reference basis points (apart by more than 4 pixels) the
 * voted cells m->cand[0..m->ncand_all) that agree with s bring. A true match is voted for by
 * several bases of the object; a chance fit on texture by one (two points). */
size_t ghmi_support(const GhmMatcher *m, const GhmGeoPoint *qb, const GhmSimilarity *s);

/* The evidence for hypothesis h (refined and scored) with its rival share: the support, and
 * the corner significance only where the decision depends on it (else NAN). */
Evidence ghmi_evidence(const GhmMatcher *m, const GhmGeoPoint *qb, const GhmGeoLevel *lv,
                       size_t nlv, const Hypothesis *h, double rival);

/* --- the two query paths ----------------------------------------------------------------- */

/* ghm_matcher_match on the host (match_host.c): features, voting and verification on the CPU. */
int ghmi_match_host_query(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res);


/* Sets m->dev up when m's backend has vision kernels (uploads the reference side), else leaves
 * it NULL. */
int ghmi_match_device_create(GhmMatcher *m);
void ghmi_match_device_free(GhmMatcher *m);
/* ghm_matcher_match on the device: features, voting and verification. */
int ghmi_match_device_query(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res);

/* A reference's features, as an image gives them and a reference file stores them: level 0's
 * edge points and their pixels (y * width + x), and every level's corners and coded points
 * with their ranges (full-image pixels). */
typedef struct GhmiRefFeatures {
    int width, height;
    const GhmEdgePoint *edges;
    const uint32_t *edge_pixel;
    size_t nedges;
    const GhmCorner *corners;
    size_t ncorners;
    const GhmGeoPoint *coded;
    size_t ncoded;
    const GhmGeoLevel *levels;
    size_t nlevels;
} GhmiRefFeatures;

/* Builds a matcher from reference features (copied): the path shared by ghm_matcher_create
 * and ghm_matcher_load (with_table 0: for one query, ghm_matcher_create_for_one_query).
 * edge_pixel[i] must be < width * height and the level ranges must cover the corners and coded
 * points in order (GHM_ERR_INVALID otherwise). */
int ghmi_matcher_build(GhmContext *ctx, const GhmiRefFeatures *f, const GhmMatchParams *p,
                       int with_table, GhmMatcher **out);
/* GHM_OK when the level ranges of f cover its corners and coded points in order. */
int ghmi_check_ref_levels(const GhmiRefFeatures *f);

#endif /* GHM_MATCH_INTERNAL_H */
