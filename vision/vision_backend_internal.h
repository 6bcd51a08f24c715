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
 * The choice between the CPU path and a device kernel is made here and nowhere else: a backend
 * (GhmBackend, hashing/ghm_backend_internal.h) carries a `vision` op table, which the CUDA
 * backend fills with the launchers of kernels/vision/ and the CPU backend leaves NULL. So no
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
#include "ghm_geohash.h"
#include "ghm_multimap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Best cells kept per query basis (row of the vote array) before the global ranking. */
#define GHM_GEO_ROW_BEST 2

/* A query basis (a, b) as the signature arithmetic of geohash.c sees it: a's position as float,
 * d = b - a (computed in float, as geohash.c does, then widened), 1 / |d|^2 and atan2(dy, dx)
 * computed on the host by the same code as the CPU path, so that a device recomputes nothing
 * that a different libm could round differently. valid = 0 for a degenerate basis (|d| = 0). */
typedef struct GhmGeoFrame {
    float ax, ay;
    int32_t valid, pad;
    double dx, dy, inv_len2, phi;
} GhmGeoFrame;

/* The quantisation of signatures (GhmGeoParams and the table's bins per axis). */
typedef struct GhmGeoSigParams {
    double window, quant;
    int32_t nbins, angle_bins;
} GhmGeoSigParams;

/* Gaussian taps g[0..radius] of edges.c (radius 0: no blur), passed to kernels by value. */
#define GHM_EDGE_MAX_RADIUS 16
typedef struct GhmEdgeTaps {
    float g[GHM_EDGE_MAX_RADIUS + 1];
    int32_t radius;
} GhmEdgeTaps;

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
    /* The first stages of edges.c on the device, with the same float arithmetic (results bit
     * for bit the CPU's): the w x h grey image pixels (rows stride bytes apart) blurred by the
     * separable taps (clamped borders; tmp and blur: w * h floats of scratch), Sobel / 8 into gx
     * and gy, and the magnitude into mag. */
    int (*edge_gradients)(GhmContext *ctx, const uint8_t *pixels, int w, int h, size_t stride,
                          const GhmEdgeTaps *taps, float *tmp, float *blur, float *gx, float *gy,
                          float *mag);
    /* Non-maximum suppression across the edge as edges.c's suppress(): nms = the magnitude of
     * maxima above floor_mag (0 elsewhere), off = their sub-pixel offset along the gradient. */
    int (*edge_suppress)(GhmContext *ctx, const float *mag, const float *gx, const float *gy,
                         int w, int h, float floor_mag, float *nms, float *off);
} GhmVisionOps;

/* The vision op table of ctx's backend, or NULL when the backend runs vision on the CPU. */
const GhmVisionOps *ghmi_vision_ops(const GhmContext *ctx);

#ifdef __cplusplus
}
#endif

#endif /* GHM_VISION_BACKEND_INTERNAL_H */
