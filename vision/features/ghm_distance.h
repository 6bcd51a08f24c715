/*
 * ghm_distance.h - exact Euclidean distance transform with nearest-seed indices
 * (Felzenszwalb and Huttenlocher, "Distance Transforms of Sampled Functions", 2012): for every
 * pixel, which seed pixel is nearest and how far it is. The matcher scores a candidate
 * transform by looking up, for each mapped query edge point, the nearest reference edge point.
 *
 * Usage:
 *     int32_t *near = malloc(w * h * sizeof *near);
 *     ghm_distance_transform(w, h, seeds, near, NULL);  // seeds[i] >= 0 marks a seed pixel
 *     // near[y * w + x] = linear index of the nearest seed pixel, or -1 if there are none
 *
 * Cost O(w * h), OpenMP over columns then rows. Each row and column is computed by one thread
 * in a fixed order, so equidistant ties resolve the same way for any thread count.
 */
#ifndef GHM_DISTANCE_H
#define GHM_DISTANCE_H

#include <stdint.h>

#include "ghm_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* seeds: w*h values, >= 0 for a seed pixel. nearest (w*h, required) receives the linear pixel
 * index of the nearest seed (-1 everywhere when there is no seed); dist2 (w*h, may be NULL) the
 * squared distance (INFINITY without seeds). GHM_ERR_INVALID for bad sizes or NULL, NOMEM. */
GHM_API int ghm_distance_transform(int w, int h, const int32_t *seeds, int32_t *nearest,
                                   float *dist2);

#ifdef __cplusplus
}
#endif

#endif /* GHM_DISTANCE_H */
