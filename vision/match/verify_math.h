/*
 * verify_math.h - the arithmetic of verifying a candidate transform, shared by the CPU path
 * (vision/match/match.c, vision/match/similarity.c) and the CUDA kernels (kernels/vision/match/verify.cu), so
 * that both backends land query points and fit refinements with the same expressions.
 *
 * Usage:
 *     GhmLandRef r = {nearest, edges, edge_dir, width, height};
 *     int inside;
 *     int32_t e = ghm_land(&r, &s, cs, sn, qx, qy, qdx, qdy, radius, cos_tol, &inside);
 *     // e >= 0: the reference edge point that (qx, qy) lands on under s
 *     double A[4][4] = {{0}}, y[4] = {0}, x[4];
 *     ghm_fit_accumulate_line(A, y, qx - cqx, qy - cqy, rx - crx, ry - cry, nx, ny, along, w);
 *     ghm_fit_solve4(A, y, x);   // (a, b, tx', ty') of the centred problem
 *
 * Everything is static inline and plain C that nvcc also compiles as device code (GHM_HD).
 * The device may contract a * b + c into one rounding (FMA) where the CPU rounds twice: the
 * backends can disagree in the last bits of a double, which moves a landing decision only for
 * a point exactly on the radius; results agree to far below a pixel.
 */
#ifndef GHM_VERIFY_MATH_H
#define GHM_VERIFY_MATH_H

#include <math.h>
#include <stdint.h>

#include "ghm_edges.h"
#include "ghm_similarity.h"

#ifdef __CUDACC__
#define GHM_HD __host__ __device__
#else
#define GHM_HD
#endif

/* The reference side a query point lands on: the per-pixel nearest edge point (-1: none), the
 * edge points and their unit gradient directions. */
typedef struct GhmLandRef {
    const int32_t *nearest;
    const GhmEdgePoint *edges;
    const float (*edge_dir)[2];
    int width, height;
} GhmLandRef;

/* The inverse of s; returns -1 for a degenerate (zero-scale) s. */
GHM_HD static inline int ghm_sim_invert(const GhmSimilarity *s, GhmSimilarity *out)
{
    double n = s->a * s->a + s->b * s->b;
    if (!(n > 0.0))
        return -1;
    GhmSimilarity t = {s->a / n, -s->b / n, 0.0, 0.0};
    t.tx = -(t.a * s->tx - t.b * s->ty);
    t.ty = -(t.b * s->tx + t.a * s->ty);
    *out = t;
    return 0;
}

/* The unit rotation (cos, sin) of s; the identity for a zero-scale s. */
GHM_HD static inline void ghm_sim_unit_rotation(const GhmSimilarity *s, double *cs, double *sn)
{
    double sc = hypot(s->a, s->b);
    *cs = sc > 0.0 ? s->a / sc : 1.0;
    *sn = sc > 0.0 ? s->b / sc : 0.0;
}

/* The reference edge point that query point (qx, qy) with unit direction (qdx, qdy) lands on
 * under s (whose unit rotation is cs, sn), or -1: within radius of its nearest reference edge
 * point, with an edge direction within the angle tolerance (cos_tol). *inside says whether it
 * landed inside the reference at all. */
GHM_HD static inline int32_t ghm_land(const GhmLandRef *r, const GhmSimilarity *s, double cs,
                                      double sn, double qx, double qy, double qdx, double qdy,
                                      double radius, double cos_tol, int *inside)
{
    double x = s->a * qx - s->b * qy + s->tx, y = s->b * qx + s->a * qy + s->ty;
    double fx = floor(x + 0.5), fy = floor(y + 0.5);
    *inside = fx >= 0.0 && fy >= 0.0 && fx < r->width && fy < r->height;
    if (!*inside)
        return -1;
    int32_t e = r->nearest[(size_t)fy * (size_t)r->width + (size_t)fx];
    if (e < 0)
        return -1;
    const GhmEdgePoint *p = &r->edges[e];
    double dx = x - p->x, dy = y - p->y;
    if (dx * dx + dy * dy > radius * radius)
        return -1;
    double ux = cs * qdx - sn * qdy, uy = sn * qdx + cs * qdy;
    if (ux * r->edge_dir[e][0] + uy * r->edge_dir[e][1] < cos_tol)
        return -1;
    return e;
}

/* Adds w * row row^T to A and w * row * target to y (normal equations of one residual). */
GHM_HD static inline void ghm_fit_accumulate(double A[4][4], double y[4], const double row[4],
                                             double target, double w)
{
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 4; j++)
            A[i][j] += w * row[i] * row[j];
        y[i] += w * row[i] * target;
    }
}

/* The residuals of one point-to-line correspondence in centred coordinates (q, r: the query
 * and reference point minus their centroids; n: the unit normal), unknowns (a, b, tx, ty):
 * the distance along the normal, plus `along` times the two point-to-point components. */
GHM_HD static inline void ghm_fit_accumulate_line(double A[4][4], double y[4], double qx,
                                                  double qy, double rx, double ry, double nx,
                                                  double ny, double along, double w)
{
    double line[4] = {nx * qx + ny * qy, ny * qx - nx * qy, nx, ny};
    ghm_fit_accumulate(A, y, line, nx * rx + ny * ry, w);
    if (along > 0.0) {
        double px[4] = {qx, -qy, 1.0, 0.0}, py[4] = {qy, qx, 0.0, 1.0};
        ghm_fit_accumulate(A, y, px, rx, along * w);
        ghm_fit_accumulate(A, y, py, ry, along * w);
    }
}

/* Solves the 4x4 system A x = y by Gaussian elimination with partial pivoting (A and y are
 * overwritten). Returns 0, or -1 when A is singular. */
GHM_HD static inline int ghm_fit_solve4(double A[4][4], double y[4], double x[4])
{
    for (int c = 0; c < 4; c++) {
        int p = c;
        for (int r = c + 1; r < 4; r++)
            if (fabs(A[r][c]) > fabs(A[p][c]))
                p = r;
        if (!(fabs(A[p][c]) > 1e-12))
            return -1;
        if (p != c) {
            for (int k = 0; k < 4; k++) {
                double t = A[p][k];
                A[p][k] = A[c][k];
                A[c][k] = t;
            }
            double u = y[p];
            y[p] = y[c];
            y[c] = u;
        }
        for (int r = c + 1; r < 4; r++) {
            double f = A[r][c] / A[c][c];
            for (int k = c; k < 4; k++)
                A[r][k] -= f * A[c][k];
            y[r] -= f * y[c];
        }
    }
    for (int c = 3; c >= 0; c--) {
        double s = y[c];
        for (int k = c + 1; k < 4; k++)
            s -= A[c][k] * x[k];
        x[c] = s / A[c][c];
    }
    return 0;
}

/* The similarity of the centred solution x = (a, b, tx', ty'): s(q) = z (q - cq) + t' + cr. */
GHM_HD static inline GhmSimilarity ghm_fit_uncentre(const double x[4], double cqx, double cqy,
                                                    double crx, double cry)
{
    GhmSimilarity s;
    s.a = x[0];
    s.b = x[1];
    s.tx = x[2] + crx - (x[0] * cqx - x[1] * cqy);
    s.ty = x[3] + cry - (x[1] * cqx + x[0] * cqy);
    return s;
}

/* Double products, sums and quotients rounded one by one on both sides: nvcc would contract
 * a * b + c into one FMA, the host compiler (no FMA in its target) does not. */
#ifdef __CUDA_ARCH__
#define GHM_MUL_RN(x, y) __dmul_rn((x), (y))
#define GHM_ADD_RN(x, y) __dadd_rn((x), (y))
#define GHM_DIV_RN(x, y) __ddiv_rn((x), (y))
#else
#define GHM_MUL_RN(x, y) ((x) * (y))
#define GHM_ADD_RN(x, y) ((x) + (y))
#define GHM_DIV_RN(x, y) ((x) / (y))
#endif

/* The reference's check grids (a transform is checked backwards on the coarsest grid that puts
 * at least `target` of its points into the transform's footprint, the finest when none does):
 * grid g holds check points first[g] .. first[g + 1], levels grids; ref_area = width x height
 * of the reference. */
#define GHM_CHECK_MAX_LEVELS 8
typedef struct GhmCheckGrids {
    uint32_t first[GHM_CHECK_MAX_LEVELS + 1];
    int32_t levels;
    double ref_area, target;
} GhmCheckGrids;

/* The check grid of transform s for a qw x qh query, its points first .. first + count: the
 * same bits on the host and the device, so that both score a transform on the same grid. */
GHM_HD static inline void ghm_check_range(const GhmCheckGrids *c, const GhmSimilarity *s, int qw,
                                          int qh, uint32_t *first, uint32_t *count)
{
    double len2 = GHM_ADD_RN(GHM_MUL_RN(s->a, s->a), GHM_MUL_RN(s->b, s->b));
    double area = GHM_MUL_RN(GHM_MUL_RN(len2, (double)qw), (double)qh);
    double share = fmin(1.0, GHM_DIV_RN(area, c->ref_area));
    int g = c->levels - 1;
    while (g > 0 && GHM_MUL_RN(share, (double)(c->first[g + 1] - c->first[g])) < c->target)
        g--;
    *first = c->first[g];
    *count = c->first[g + 1] - c->first[g];
}

#endif /* GHM_VERIFY_MATH_H */
