/* similarity.c - similarity transforms from bases and by least squares; see ghm_similarity.h. */
#include "ghm_similarity.h"

#include <math.h>

#include "verify_math.h"

double ghm_similarity_scale(const GhmSimilarity *s)
{
    return hypot(s->a, s->b);
}

double ghm_similarity_rotation_deg(const GhmSimilarity *s)
{
    double r = atan2(s->b, s->a) * (180.0 / 3.14159265358979323846);
    return r <= -180.0 ? r + 360.0 : r;
}

void ghm_similarity_matrix(const GhmSimilarity *s, double m[2][3])
{
    m[0][0] = s->a;
    m[0][1] = -s->b;
    m[0][2] = s->tx;
    m[1][0] = s->b;
    m[1][1] = s->a;
    m[1][2] = s->ty;
}

int ghm_similarity_from_bases(const double q1[2], const double q2[2], const double r1[2],
                              const double r2[2], GhmSimilarity *out)
{
    /* As complex numbers: (r2 - r1) = z (q2 - q1), z = a + i b. */
    double qx = q2[0] - q1[0], qy = q2[1] - q1[1];
    double rx = r2[0] - r1[0], ry = r2[1] - r1[1];
    double n = qx * qx + qy * qy;
    if (!(n > 0.0))
        return GHM_ERR_INVALID;
    out->a = (rx * qx + ry * qy) / n;
    out->b = (ry * qx - rx * qy) / n;
    out->tx = r1[0] - (out->a * q1[0] - out->b * q1[1]);
    out->ty = r1[1] - (out->b * q1[0] + out->a * q1[1]);
    return GHM_OK;
}

int ghm_similarity_invert(const GhmSimilarity *s, GhmSimilarity *out)
{
    return ghm_sim_invert(s, out) < 0 ? GHM_ERR_INVALID : GHM_OK;
}

int ghm_similarity_fit_points(const double (*q)[2], const double (*r)[2], const double *w,
                              size_t n, GhmSimilarity *out)
{
    /* Centre both sets; then the rotation-scale z = a + i b is sum w conj(q') r' / sum w |q'|^2
     * (Umeyama's closed form for the similarity case, no reflection possible). */
    double sw = 0.0, qx = 0.0, qy = 0.0, rx = 0.0, ry = 0.0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        sw += wi;
        qx += wi * q[i][0];
        qy += wi * q[i][1];
        rx += wi * r[i][0];
        ry += wi * r[i][1];
    }
    if (!(sw > 0.0))
        return GHM_ERR_INVALID;
    qx /= sw, qy /= sw, rx /= sw, ry /= sw;
    double sa = 0.0, sb = 0.0, sq = 0.0;
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        double ax = q[i][0] - qx, ay = q[i][1] - qy, bx = r[i][0] - rx, by = r[i][1] - ry;
        sa += wi * (ax * bx + ay * by);
        sb += wi * (ax * by - ay * bx);
        sq += wi * (ax * ax + ay * ay);
    }
    if (!(sq > 1e-12 * sw))
        return GHM_ERR_INVALID;
    out->a = sa / sq;
    out->b = sb / sq;
    out->tx = rx - (out->a * qx - out->b * qy);
    out->ty = ry - (out->b * qx + out->a * qy);
    return GHM_OK;
}

int ghm_similarity_fit_lines(const double (*q)[2], const double (*r)[2], const double (*nrm)[2],
                             const double *w, size_t n, double along, GhmSimilarity *out)
{
    /* Unknowns (a, b, tx, ty); residuals are linear in them. Coordinates are taken relative to
     * the query centroid and the reference centroid for conditioning. */
    double sw = 0.0, cq[2] = {0, 0}, cr[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        double wi = w ? w[i] : 1.0;
        sw += wi;
        cq[0] += wi * q[i][0], cq[1] += wi * q[i][1];
        cr[0] += wi * r[i][0], cr[1] += wi * r[i][1];
    }
    if (!(sw > 0.0))
        return GHM_ERR_INVALID;
    cq[0] /= sw, cq[1] /= sw, cr[0] /= sw, cr[1] /= sw;
    double A[4][4] = {{0}}, y[4] = {0}, x[4];
    for (size_t i = 0; i < n; i++)
        ghm_fit_accumulate_line(A, y, q[i][0] - cq[0], q[i][1] - cq[1], r[i][0] - cr[0],
                                r[i][1] - cr[1], nrm[i][0], nrm[i][1], along, w ? w[i] : 1.0);
    if (ghm_fit_solve4(A, y, x) < 0)
        return GHM_ERR_INVALID;
    *out = ghm_fit_uncentre(x, cq[0], cq[1], cr[0], cr[1]);
    return GHM_OK;
}
