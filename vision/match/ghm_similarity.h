/*
 * ghm_similarity.h - 2-D similarity transforms (scale, rotation, translation): from one pair of
 * corresponding points (a basis correspondence), and least-squares fits on many
 * correspondences, point to point (Umeyama 1991, closed form) or point to line (edge normals).
 *
 * Usage:
 *     GhmSimilarity s;
 *     ghm_similarity_from_bases(q1, q2, r1, r2, &s);     // maps q1 -> r1 and q2 -> r2
 *     ghm_similarity_apply(&s, x, y, &xr, &yr);
 *     ghm_similarity_fit_points(q, r, w, n, &s);          // min sum w |s(q) - r|^2
 *
 * Convention (as in the tool's output): x' = a x - b y + tx, y' = b x + a y + ty, so the 2x3
 * matrix is [[a, -b, tx], [b, a, ty]], scale = hypot(a, b), rotation = atan2(b, a) (positive
 * turns +x towards +y, clockwise on screen).
 */
#ifndef GHM_SIMILARITY_H
#define GHM_SIMILARITY_H

#include <stddef.h>

#include "ghm_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct GhmSimilarity {
    double a, b, tx, ty;
} GhmSimilarity;

static inline void ghm_similarity_apply(const GhmSimilarity *s, double x, double y, double *ox,
                                        double *oy)
{
    *ox = s->a * x - s->b * y + s->tx;
    *oy = s->b * x + s->a * y + s->ty;
}

GHM_API double ghm_similarity_scale(const GhmSimilarity *s);
GHM_API double ghm_similarity_rotation_deg(const GhmSimilarity *s); /* in (-180, 180] */

/* Writes the 2x3 matrix. */
GHM_API void ghm_similarity_matrix(const GhmSimilarity *s, double m[2][3]);

/* The similarity mapping q1 -> r1 and q2 -> r2. GHM_ERR_INVALID when q1 == q2. */
GHM_API int ghm_similarity_from_bases(const double q1[2], const double q2[2], const double r1[2],
                                      const double r2[2], GhmSimilarity *out);

/* The inverse transform. GHM_ERR_INVALID for a degenerate (zero-scale) s. */
GHM_API int ghm_similarity_invert(const GhmSimilarity *s, GhmSimilarity *out);

/* Weighted least squares point to point: min sum w[i] |s(q[i]) - r[i]|^2 (w may be NULL for
 * unit weights). GHM_ERR_INVALID when fewer than 2 distinct points carry weight. */
GHM_API int ghm_similarity_fit_points(const double (*q)[2], const double (*r)[2], const double *w,
                                      size_t n, GhmSimilarity *out);

/* Weighted least squares point to line: min sum w[i] ((s(q[i]) - r[i]) . nrm[i])^2 +
 * along * w[i] |s(q[i]) - r[i]|^2, with unit normals nrm. A small `along` (e.g. 0.01) keeps the
 * system well posed where all lines are parallel. GHM_ERR_INVALID when singular. */
GHM_API int ghm_similarity_fit_lines(const double (*q)[2], const double (*r)[2],
                                     const double (*nrm)[2], const double *w, size_t n,
                                     double along, GhmSimilarity *out);

#ifdef __cplusplus
}
#endif

#endif /* GHM_SIMILARITY_H */
