/*
 * edges_internal.h - what the files of vision/features/ share (the filter, the corner
 * parameter checks) and what the matcher's device path (match_device.c) uses: the corner
 * selection both backends run on their candidates and the device chain's parameters.
 * Not a public header.
 */
#ifndef GHM_EDGES_INTERNAL_H
#define GHM_EDGES_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "ghm_edges.h"
#include "vision_backend_internal.h"

#define GHMI_MAX_KERNEL_RADIUS 16
_Static_assert(GHMI_MAX_KERNEL_RADIUS == GHM_EDGE_MAX_RADIUS, "device taps hold the CPU's");

/* Images of fewer pixels than this run each stage on one thread. With OpenMP's idle threads
 * asleep (src/main.c), waking the team costs tens of microseconds a stage, more than such an
 * image's stage takes: a 151 x 142 query's edges took 1.9-2.4 ms on one thread and 3.6-4.2 ms
 * on two (2-core machine, 2026-11-30). */
#define GHMI_PARALLEL_PIXELS 65536

/* Whether a stage over w x h pixels is worth the OpenMP team. */
static inline int ghmi_parallel_image(int w, int h)
{
    return (size_t)w * (size_t)h >= GHMI_PARALLEL_PIXELS;
}

/* Lists of fewer points than this are done on one thread, for the same reason: a pass over
 * 16 k points with a libm call each takes about the wake-up's time. */
#define GHMI_PARALLEL_POINTS 16384

/* A float's bits made to rise with its value (a negative one's all flipped, the others' sign
 * bit set), -0 taken as +0 so that the zeros tie: the integer keys by which the feature code
 * orders values (corners.c's candidates, edge_sampling.c's cells' strongest points). A NaN
 * lands beyond every number, on its sign bit's side. */
static inline uint32_t ghmi_rising_bits(float x)
{
    float v = x == 0.0f ? 0.0f : x;
    uint32_t b;
    memcpy(&b, &v, sizeof b);
    return b >> 31 ? ~b : b | 0x80000000u;
}

static inline int ghmi_clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* --- blur.c ------------------------------------------------------------------------------ */

/* Normalised 1-D Gaussian taps g[0..r] (room for GHMI_MAX_KERNEL_RADIUS + 1); returns the
 * radius r (0 for sigma 0: no blur). */
int ghmi_gaussian_taps(double sigma, float *g);
/* Separable symmetric convolution with clamped borders: src -> dst (tmp: w*h scratch; dst may
 * be src). */
void ghmi_convolve_sep(const float *src, float *tmp, float *dst, int w, int h, const float *g,
                       int r);
/* How much blur (taps g, radius r) followed by Sobel / 8 scales pixel noise. */
double ghmi_gradient_noise_gain(const float *g, int r);

/* --- corners.c --------------------------------------------------------------------------- */

/* GHM_ERR_INVALID when corner parameters are out of range, else GHM_OK. */
int ghmi_corner_params_check(const GhmCornerParams *p);
/* Whether a w x h image is large enough for corners at all (the border takes radius + 2). */
int ghmi_corners_fit(int w, int h, const GhmCornerParams *p);

/* Keeps at most p->max_corners of the nc candidates as ghm_corners_detect does (strongest
 * first, spread over a grid); reorders cand. The caller frees *out (NULL when *n is 0). */
int ghmi_corners_select(GhmCornerCand *cand, size_t nc, int w, int h, const GhmCornerParams *p,
                        GhmCorner **out, size_t *n);

/* The device chain's parameters for a w x h image, computed by the CPU's own functions (taps,
 * noise gain). cp may be NULL: no corners. GHM_ERR_INVALID for parameters out of range. */
int ghmi_feature_params(const GhmEdgeParams *ep, const GhmCornerParams *cp, int w, int h,
                        GhmFeatureParams *out);

/* The capped grid sampling (ghm_edges_sample_capped) tries cell sizes from the smallest up, at
 * most this many, each chosen by ghmi_sample_next_cell from the last two tries, until few
 * enough points are kept. The device path runs the same search with the device's sampler. */
#define GHMI_SAMPLE_TRIES 64

/* The state of that search: the last two (cell, kept) tries. */
typedef struct GhmiCellSearch {
    double cell, prev_cell;
    size_t kept, prev_kept, max_points;
} GhmiCellSearch;

/* Starts a search at min_cell for at most max_points. */
static inline GhmiCellSearch ghmi_cell_search_start(double min_cell, size_t max_points)
{
    GhmiCellSearch s = {min_cell, 0.0, 0, 0, max_points};
    return s;
}

/* Records that s->cell kept `kept` points; returns 1 when that is few enough (the search is
 * over, s->cell is the answer), else 0 with s->cell set to the next size to try. */
int ghmi_cell_search_step(GhmiCellSearch *s, size_t kept);

#endif /* GHM_EDGES_INTERNAL_H */
