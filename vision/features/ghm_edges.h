/*
 * ghm_edges.h - edge and corner features of a grey image, the input of geometric hashing.
 *
 * Usage:
 *     GhmEdgeParams ep = ghm_edge_defaults();
 *     GhmEdges *e = NULL;
 *     if ((ret = ghm_edges_detect(img, &ep, &e)) < 0) goto fail;
 *     // e->points[0 .. e->count): thin (one pixel wide) edge points with sub-pixel position,
 *     // gradient direction and strength; e->pixel_point[y * w + x] = index of the point found
 *     // at that pixel or -1 (what the distance transform starts from).
 *     GhmCorner *c = NULL; size_t nc = 0;
 *     ghm_corners_detect(e, &cp, &c, &nc);   // Harris corners from the same gradients
 *     ghm_edges_free(&e); free(c);
 *
 * The pipeline: Gaussian blur (sigma blur_sigma) -> Sobel -> non-maximum suppression along the
 * gradient direction (interpolated, so a contour gives a line one pixel wide) -> a threshold
 * chosen from the image itself (a percentile of the suppressed magnitudes, never below a floor
 * proportional to the measured noise) -> sub-pixel position by a parabola across the edge.
 * Everything is deterministic (the point order is raster order), OpenMP over rows.
 */
#ifndef GHM_EDGES_H
#define GHM_EDGES_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_error.h"
#include "ghm_image.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmEdgeParams {
    double blur_sigma;   /* Gaussian sigma before Sobel, pixels; 0 = none (default 1.0) */
    double percentile;   /* keep suppressed maxima above this quantile of their magnitudes,
                            in [0, 1) (default 0.35: the weakest 35 % are texture and noise),
                            but never above half of their 90 % quantile */
    double noise_factor; /* magnitude floor = noise_factor x the image's gradient noise (4) */
} GhmEdgeParams;

typedef struct GhmEdgePoint {
    float x, y;     /* sub-pixel position, origin at the centre of the top-left pixel */
    float angle;    /* gradient direction, radians in [-pi, pi] (dark -> bright) */
    float strength; /* gradient magnitude (Sobel / 8 units: grey levels per pixel) */
} GhmEdgePoint;

typedef struct GhmEdges {
    int width, height;
    float threshold;      /* the magnitude threshold that was applied */
    float noise;          /* the estimated gradient noise level */
    GhmEdgePoint *points; /* count points in raster order of their pixels */
    size_t count;
    int32_t *pixel_point; /* width * height: index into points, or -1 */
    float *gx, *gy;       /* the Sobel gradients (width * height), kept for corners */
} GhmEdges;

typedef struct GhmCorner {
    float x, y;     /* sub-pixel position */
    float response; /* Harris response */
} GhmCorner;

typedef struct GhmCornerParams {
    double sigma;        /* integration sigma of the structure tensor (default 1.5) */
    double k;            /* Harris k (default 0.05) */
    int radius;          /* non-maximum suppression radius in pixels (default 3) */
    double rel_threshold; /* keep responses above this share of the strongest (default 0.001) */
    size_t max_corners;  /* keep at most this many, the strongest (default 200) */
    int grid;            /* spread them: the image is cut into about grid x grid cells and each
                            cell first gets its share of the strongest; 0 = globally strongest
                            (default 0: spacing spreads them) */
    double spacing;      /* no two corners closer than this many pixels: the strongest of a
                            neighbourhood wins (default 10; 0 = off) */
} GhmCornerParams;

GHM_API GhmEdgeParams ghm_edge_defaults(void);
GHM_API GhmCornerParams ghm_corner_defaults(void);

/* Detects the edges of img. Images smaller than 3x3 give zero points (not an error).
 * GHM_ERR_INVALID on NULL arguments or parameters out of range, GHM_ERR_TOO_LARGE on an image
 * of more than GHM_IMAGE_MAX_PIXELS (one made by hand: the library's never are), GHM_ERR_NOMEM.
 * The caller owns *out and frees it with ghm_edges_free(). */
GHM_API int ghm_edges_detect(const GhmImage *img, const GhmEdgeParams *p, GhmEdges **out);

/* As ghm_edges_detect, on ctx's backend: where it has vision kernels (CUDA) the whole chain
 * (noise floor, blur, Sobel, suppression, threshold, compaction) runs on its device, with a
 * result identical to the CPU's, and the gradients, pixel map and points are brought back;
 * elsewhere, or with ctx NULL, this is ghm_edges_detect. Also GHM_ERR_CUDA and the buffer
 * errors. The matcher's device path (match_device.c) runs the same chain and keeps its arrays
 * on the device. */
GHM_API int ghm_edges_detect_ctx(GhmContext *ctx, const GhmImage *img, const GhmEdgeParams *p,
                                 GhmEdges **out);

/* Frees the edges and sets *e to NULL; accepts NULL and a pointer to NULL. */
GHM_API void ghm_edges_free(GhmEdges **e);

/* Spatially even subsampling: the image is cut into cells of cell x cell pixels and the
 * strongest point of each cell is kept, the first of equally strong ones (-0 equals +0; a NaN
 * strength is weaker than any number). Writes the kept indices (ascending) to idx, which must
 * hold n entries, and their number to *kept. GHM_ERR_INVALID for n > UINT32_MAX. */
GHM_API int ghm_edges_grid_sample(const GhmEdgePoint *pts, size_t n, int width, int height,
                                  double cell, uint32_t *idx, size_t *kept);

/* Chooses a grid cell size (>= min_cell) for which ghm_edges_grid_sample keeps at most
 * max_points points, and runs it. */
GHM_API int ghm_edges_sample_capped(const GhmEdgePoint *pts, size_t n, int width, int height,
                                    double min_cell, size_t max_points, uint32_t *idx, size_t *kept,
                                    double *cell_used);

/* Harris corners from the gradients in e: response local maxima within radius, above the
 * relative threshold; with spacing > 0, strongest first, each one closer than spacing to a
 * stronger one that was kept is dropped; at most max_corners: with grid > 0 each cell first
 * takes its share of its strongest, then the strongest left fill up; sorted by falling
 * response (ties by position).
 * The caller frees *out with free(); *out is NULL when *n is 0. */
GHM_API int ghm_corners_detect(const GhmEdges *e, const GhmCornerParams *p, GhmCorner **out,
                               size_t *n);

#ifdef __cplusplus
}
#endif

#endif /* GHM_EDGES_H */
