/*
 * edges_internal.h - what the matcher's device path (match_device.c) shares with edges.c: the
 * corner selection both backends run on their candidates and the device chain's parameters.
 * Not a public header.
 */
#ifndef GHM_EDGES_INTERNAL_H
#define GHM_EDGES_INTERNAL_H

#include "ghm_edges.h"
#include "vision_backend_internal.h"

/* Keeps at most p->max_corners of the nc candidates as ghm_corners_detect does (strongest
 * first, spread over a grid); reorders cand. The caller frees *out (NULL when *n is 0). */
int ghmi_corners_select(GhmCornerCand *cand, size_t nc, int w, int h, const GhmCornerParams *p,
                        GhmCorner **out, size_t *n);

/* The device chain's parameters for a w x h image, computed by the CPU's own functions (taps,
 * noise gain). cp may be NULL: no corners. GHM_ERR_INVALID for parameters out of range. */
int ghmi_feature_params(const GhmEdgeParams *ep, const GhmCornerParams *cp, int w, int h,
                        GhmFeatureParams *out);

/* The capped grid sampling (ghm_edges_sample_capped) tries cell sizes from the smallest up, at
 * most this many, each the last one grown by ghmi_sample_next_cell, until few enough points
 * are kept. The device path runs the same search with the device's sampler. */
#define GHMI_SAMPLE_TRIES 64
double ghmi_sample_next_cell(double cell, size_t kept, size_t max_points);

#endif /* GHM_EDGES_INTERNAL_H */
