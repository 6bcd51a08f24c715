/*
 * vision_backend_internal.h - how a vision stage reaches device kernels: the backend's vision op
 * table. Included by the host modules of vision/ and by kernels/vision/; not a public header.
 *
 * Usage (in a host module vision/X.c):
 *     const GhmVisionOps *ops = ghmi_vision_ops(ctx);
 *     if (ops && ops->geo_vote)       // this backend runs the stage on its device
 *         ret = ops->geo_vote(ctx, ...backend memory...);
 *     else
 *         ...the CPU path of X.c...
 *
 * The choice between the CPU path and a device kernel is made here and nowhere else: the CUDA
 * backend's "vision" device module (GhmDeviceModule, hashing/ghm_backend_internal.h; defined in
 * kernels/vision/match/ops.cu) holds the launchers of kernels/vision/, and the CPU backend has
 * none, so ghmi_vision_ops() is NULL there. So no
 * pipeline tests for CUDA with #if (STYLE.md, "The CPU/GPU split lives in one place"), and a build
 * without CUDA is the same tree minus kernels/. Every op takes backend memory (ghm_buffer_*)
 * and queues its work on the context's stream; it neither allocates nor synchronises, so the
 * caller's next ghm_buffer_download waits for it.
 */
#ifndef GHM_VISION_BACKEND_INTERNAL_H
#define GHM_VISION_BACKEND_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_edges.h"
#include "ghm_geohash.h"
#include "ghm_multimap.h"
#include "ghm_similarity.h"
#include "verify_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Best cells kept per query basis (row of the vote array) before the global ranking. */
#define GHM_GEO_ROW_BEST 2

/* A query basis (a, b) as the signature arithmetic of geohash.c sees it: a's position as float,
 * d = b - a (computed in float, as geohash.c does, then widened), 1 / |d|^2 and atan2(dy, dx)
 * computed on the host by the same code as the CPU path, so that a device recomputes nothing
 * that a different libm could round differently. valid = 0 for a degenerate basis (|d| = 0).
 * The basis codes coded[coded_first .. + coded_count): the points of its pyramid level. */
typedef struct GhmGeoFrame {
    float ax, ay;
    int32_t valid;
    uint32_t coded_first, coded_count; /* the coded points of the basis's level */
    uint32_t pad;
    double dx, dy, inv_len2, phi;
} GhmGeoFrame;

/* The quantisation of signatures (GhmGeoParams and the table's bins per axis), with the
 * factors that turn the divisions into products, computed once on the host (geohash.c's
 * ghmi_sig_params) and used as they are by both backends. */
typedef struct GhmGeoSigParams {
    double window, inv_quant;   /* 1 / quant */
    double inv_two_pi, angle_scale; /* 1 / (2 pi), angle_bins / (2 pi) */
    int32_t nbins, angle_bins;
} GhmGeoSigParams;

/* Gaussian taps g[0..radius] of edges.c (radius 0: no blur), passed to kernels by value. */
#define GHM_EDGE_MAX_RADIUS 16
typedef struct GhmEdgeTaps {
    float g[GHM_EDGE_MAX_RADIUS + 1];
    int32_t radius;
} GhmEdgeTaps;

/* A Harris corner candidate: a local maximum of the response (strict within the radius, above
 * the relative threshold), its pixel (y * w + x) and its sub-pixel position. Both backends
 * find these and hand them to ghmi_corners_select (edges.c), which keeps the strongest. */
typedef struct GhmCornerCand {
    float response;
    int32_t pixel;
    float x, y;
} GhmCornerCand;

/* The most Harris candidates a w x h image can have: two maxima are never within the radius
 * (>= 1) of each other, so at most one per 2x2 block (plus the odd row and column). */
static inline size_t ghm_corner_capacity(int w, int h)
{
    return (size_t)w * h / 4 + (size_t)w + (size_t)h + 1;
}

/* What the device feature chain needs from GhmEdgeParams and GhmCornerParams, prepared on the
 * host by ghmi_feature_params (edges.c) with the CPU's own arithmetic. */
typedef struct GhmFeatureParams {
    GhmEdgeTaps blur;      /* the edge detector's Gaussian */
    double noise_gain;     /* noise = noise_gain * (sum of |Immerkaer mask|) / ((w-2)(h-2)) */
    double noise_factor;   /* edge floor = max(0.5, noise_factor * noise) */
    double percentile;     /* the threshold's quantile of the suppressed maxima */
    int corners;           /* 0: skip the Harris stage (image too small for it) */
    GhmEdgeTaps tensor;    /* the structure tensor's Gaussian */
    float harris_k;
    float rel_threshold;   /* candidates need response >= rel_threshold x the strongest */
    int radius;            /* local maximum radius */
} GhmFeatureParams;

/* What a run of the device feature chain found (counts and levels read back after it). The
 * arrays stay in the workspace, on the device, until its next run. */
typedef struct GhmDeviceFeatures {
    int width, height;
    float noise, threshold;
    size_t npoints;           /* edge points, raster order, as edges.c's compaction */
    const GhmEdgePoint *points;
    const int32_t *pixel_point; /* width * height: index into points or -1 */
    const float *gx, *gy;     /* the Sobel gradients */
    size_t ncand;             /* Harris candidates, in no particular order */
    const GhmCornerCand *cand;
} GhmDeviceFeatures;

/* The device feature chain's buffers, sized for an image; opaque (kernels/vision/features/features.cu). */
typedef struct GhmFeatureWorkspace GhmFeatureWorkspace;

/* One grid sampling of a batch (features_sample_batch): the points of ws's last run, in cells
 * of `cell` pixels (>= 1), the kept indices into idx (backend memory, the run's npoints
 * entries); cells: backend memory of ceil(w / cell) ceil(h / cell) words of scratch, NULL for
 * the workspace's own. */
#define GHM_SAMPLE_MAX_JOBS 8
typedef struct GhmSampleJob {
    const GhmFeatureWorkspace *ws;
    double cell;
    uint32_t *idx;
    unsigned long long *cells;
} GhmSampleJob;

/* The reference side that candidate transforms are verified against, in backend memory. */
typedef struct GhmVerifyRef {
    const int32_t *nearest;     /* width * height: nearest reference edge point or -1 */
    const GhmEdgePoint *edges;
    const float (*edge_dir)[2]; /* unit gradient directions of edges */
    const uint32_t *check;      /* edge points that check a transform backwards */
    size_t ncheck;
    int width, height;
} GhmVerifyRef;

/* A query's side, in backend memory: its edge points and per-pixel point map. */
typedef struct GhmVerifyQuery {
    const GhmEdgePoint *points;
    const int32_t *pixel_point;
    int width, height;
} GhmVerifyQuery;

/* A query point prepared for verification: its position and unit gradient direction, in
 * double, as match.c's query_pts_from computes them. */
typedef struct GhmVerifyPoint {
    double x, y, dx, dy;
} GhmVerifyPoint;

/* Counts behind one transform's score (match.c turns them into shares). */
typedef struct GhmVerifyCounts {
    uint32_t inliers, inside;           /* query points on reference edges / inside it */
    uint32_t back_inliers, back_inside; /* check points explained / inside the footprint */
} GhmVerifyCounts;

/* Doubles a refinement sums per pass and thread block (count, centroids, normal equations). */
#define GHM_REFINE_SUMS 20

/* The refinement's schedule: one landing radius per iteration. */
#define GHM_REFINE_MAX_STEPS 16
typedef struct GhmRefineSteps {
    double radius[GHM_REFINE_MAX_STEPS];
    int32_t steps;
} GhmRefineSteps;

typedef struct GhmVisionOps {
    /* Votes of the mb query bases `frames` against the reference table: for every query basis,
     * the distinct signatures of the nc coded points (seen: mb x ceil(key space / 32) words of
     * scratch), one multimap look-up each and one atomic add per value into
     * votes[b * nbases + reference basis id] (mb x nbases words; both zeroed here).
     * counters[0] += distinct signatures looked up, counters[1] += votes cast (not zeroed here).
     * All pointers are backend memory. */
    int (*geo_vote)(GhmContext *ctx, const GhmMultimap *table, size_t nbases,
                    const GhmGeoFrame *frames, size_t mb, const GhmGeoPoint *coded, size_t nc,
                    const GhmGeoSigParams *sp, uint32_t *votes, uint32_t *seen,
                    unsigned long long *counters);
    /* The GHM_GEO_ROW_BEST best cells of each of the mb rows of votes (nbases wide), by falling
     * votes then rising reference basis id: best[(b * GHM_GEO_ROW_BEST + k) * 2] = votes (0 for
     * none), [... + 1] = reference basis id. Backend memory. */
    int (*geo_best)(GhmContext *ctx, const uint32_t *votes, size_t mb, size_t nbases,
                    uint32_t *best);

    /* The feature chain of edges.c on the device, with the same float arithmetic (every value
     * bit for bit the CPU's): noise estimate, blur, Sobel, suppression, the quantile threshold
     * (a CUB sort), compaction into points and the pixel map, then the Harris response and its
     * candidates. Unlike the ops above it owns its buffers (a workspace, grown to the largest
     * image seen) and waits for the device once, to read the counts back into *out. pixels is
     * host memory (rows stride bytes apart). */
    int (*features_create)(GhmContext *ctx, GhmFeatureWorkspace **out);
    void (*features_free)(GhmContext *ctx, GhmFeatureWorkspace **ws);
    int (*features_run)(GhmContext *ctx, GhmFeatureWorkspace *ws, const uint8_t *pixels, int w,
                        int h, size_t stride, const GhmFeatureParams *p, GhmDeviceFeatures *out);
    /* features_run in two halves, so that several workspaces (a pyramid's levels) run on the
     * device one after the other while the host prepares the next image: start queues the
     * chain and the copy of its counts without waiting; finish waits and fills *out. */
    int (*features_start)(GhmContext *ctx, GhmFeatureWorkspace *ws, const uint8_t *pixels, int w,
                          int h, size_t stride, const GhmFeatureParams *p);
    /* features_start on the image of src's last start halved (ghm_image_halve's pixels, made
     * on the device after src's image is there): a pyramid's next level, not uploaded. */
    int (*features_start_halved)(GhmContext *ctx, GhmFeatureWorkspace *ws,
                                 const GhmFeatureWorkspace *src, const GhmFeatureParams *p);
    int (*features_finish)(GhmContext *ctx, GhmFeatureWorkspace *ws, GhmDeviceFeatures *out);
    /* edges.c's ghm_edges_grid_sample (cells of `cell` pixels, the strongest point of each)
     * over the points of the workspace's last run: the kept indices, ascending, into idx
     * (backend memory, npoints entries) and their number into *kept (waits for the device). */
    int (*features_sample)(GhmContext *ctx, GhmFeatureWorkspace *ws, double cell, uint32_t *idx,
                           size_t *kept);
    /* features_sample for n (1..GHM_SAMPLE_MAX_JOBS) jobs at once, queued without a wait:
     * every pass of every job in one launch (a sampling is five small passes, and a query
     * samples five point sets a round), job k's count into kept[k] (staging memory, read after
     * ghm_context_sync). Two jobs of a batch must not share cells. */
    int (*features_sample_batch)(GhmContext *ctx, const GhmSampleJob *jobs, int n,
                                 uint32_t *kept);
    /* out[i] = the last run's points[idx[i]] as coded points (angle, and the position in the
     * full image when the run was pyramid level `level`: x 2^level + (2^level - 1) / 2), i < n
     * (backend memory): what the voting reads, without a round trip through the host. */
    int (*features_gather)(GhmContext *ctx, GhmFeatureWorkspace *ws, const uint32_t *idx,
                           size_t n, int level, GhmGeoPoint *out);

    /* The query points idx[0..n) prepared for verification into out (backend memory). */
    int (*verify_prepare)(GhmContext *ctx, const GhmVerifyQuery *q, const uint32_t *idx,
                          size_t n, GhmVerifyPoint *out);
    /* Scores the nh transforms hyps (backend memory) on the prepared query points pts[0..npts)
     * as match.c's score() does: counts[k].inliers / inside forward with the landing radius,
     * and with `backward` also the reference check points check[check_range[2k] .. +
     * check_range[2k + 1]) of transform k (backend memory, 2 nh entries) mapped into the query
     * (a window search of the query's pixel map stands in for the CPU's distance transform). */
    int (*verify_score)(GhmContext *ctx, const GhmVerifyRef *ref, const GhmVerifyQuery *q,
                        const GhmVerifyPoint *pts, size_t npts, const GhmSimilarity *hyps,
                        size_t nh, double radius, double cos_tol, int backward,
                        const uint32_t *check_range, GhmVerifyCounts *counts);
    /* Refines each of the nh transforms in place as match.c's refine(): per step, the points
     * that land within the step's radius give point-to-line correspondences and a
     * least-squares fit (ghm_fit_*); it stops early below 8 correspondences or on a singular
     * system. Fixed reduction order: deterministic. partials: backend scratch of npartials
     * doubles, at least 2 x GHM_REFINE_SUMS (more lets several thread blocks share the
     * transforms: 2 x GHM_REFINE_SUMS per block, up to 1024 blocks a transform). */
    int (*verify_refine)(GhmContext *ctx, const GhmVerifyRef *ref, const GhmVerifyQuery *q,
                         const GhmVerifyPoint *pts, size_t npts, GhmSimilarity *hyps, size_t nh,
                         const GhmRefineSteps *steps, double cos_tol, double *partials,
                         size_t npartials);
    /* The check ranges of the nh transforms hyps (ghm_check_range for a qw x qh query):
     * ranges[2k], ranges[2k + 1] = first check point and count of transform k. Backend
     * memory: a refinement's transforms are scored without a trip through the host. */
    int (*verify_ranges)(GhmContext *ctx, const GhmSimilarity *hyps, size_t nh,
                         const GhmCheckGrids *grids, int qw, int qh, uint32_t *ranges);
    /* Where each point pts[i] lands under *hyp when it is an inlier (radius, cos_tol):
     * xy[i] = its mapped position, or NaN when it is not one. */
    int (*verify_inliers)(GhmContext *ctx, const GhmVerifyRef *ref, const GhmVerifyQuery *q,
                          const GhmVerifyPoint *pts, size_t npts, const GhmSimilarity *hyp,
                          double radius, double cos_tol, float (*xy)[2]);

    /* Staging memory: host memory (pinned on CUDA) that copy_async reads or fills while the
     * host goes on. stage_reserve grows *p (cap bytes) to at least `bytes`, its contents lost;
     * stage_free releases it (NULL and 0 after). */
    int (*stage_reserve)(GhmContext *ctx, void **p, size_t *cap, size_t bytes);
    void (*stage_free)(GhmContext *ctx, void **p, size_t *cap);
    /* Queues a copy of `bytes` between staging memory and backend memory (either way) on the
     * context's stream, without waiting: staging bytes being uploaded must stay unchanged, and
     * bytes being downloaded may be read, only after ghm_context_sync. */
    int (*copy_async)(GhmContext *ctx, void *dst, const void *src, size_t bytes);
} GhmVisionOps;

/* The vision op table of ctx's backend, or NULL when the backend runs vision on the CPU. */
const GhmVisionOps *ghmi_vision_ops(const GhmContext *ctx);

#ifdef __cplusplus
}
#endif

#endif /* GHM_VISION_BACKEND_INTERNAL_H */
