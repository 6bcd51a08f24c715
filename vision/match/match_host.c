/*
 * match_host.c - ghm_matcher_match on the host (the CPU backend): the query's features, voting,
 * then verification: every voted candidate scored forward on the verification points, the best
 * also backward, the best few refined (point-to-line least squares), the winner polished on all
 * query edge points. match_device.c is its device twin; both use match_stages.c.
 */
#include <math.h>
#include <stdlib.h>

#include "floor_clones_internal.h"
#include "ghm_distance.h"
#include "ghm_similarity.h"
#include "match_internal.h"
#include "verify_math.h"

/* Query points prepared for scoring: positions and unit gradient directions. */
typedef struct QueryPts {
    size_t n;
    double (*xy)[2];
    double (*dir)[2];
} QueryPts;

static void query_pts_free(QueryPts *q)
{
    free(q->xy);
    free(q->dir);
    q->xy = q->dir = NULL;
}

static int query_pts_from(const GhmEdgePoint *pts, const uint32_t *idx, size_t n, QueryPts *q)
{
    q->n = n;
    q->xy = malloc((n ? n : 1) * sizeof *q->xy);
    q->dir = malloc((n ? n : 1) * sizeof *q->dir);
    if (!q->xy || !q->dir) {
        query_pts_free(q);
        return GHM_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const GhmEdgePoint *e = &pts[idx ? idx[i] : i];
        q->xy[i][0] = e->x;
        q->xy[i][1] = e->y;
        q->dir[i][0] = cos(e->angle);
        q->dir[i][1] = sin(e->angle);
    }
    return GHM_OK;
}

/* The reference edge point that query point i lands on under s, or -1 (ghm_land). */
static inline int32_t land(const GhmMatcher *m, const GhmSimilarity *s, double cs, double sn,
                           const QueryPts *q, size_t i, double radius, double cos_tol,
                           int *inside)
{
    GhmLandRef r = {m->nearest, m->edges, (const float(*)[2])m->edge_dir, m->width, m->height};
    return ghm_land(&r, s, cs, sn, q->xy[i][0], q->xy[i][1], q->dir[i][0], q->dir[i][1], radius,
                    cos_tol, inside);
}

/* The backward direction: reference edge points inside the query's footprint (away from its
 * border, where the query has no edges) that a query edge explains, with radius in reference
 * pixels. */
GHMI_FLOOR_CLONES
static void score_backward(const GhmMatcher *m, const GhmSimilarity *s, double radius, Score *r)
{
    GhmSimilarity inv;
    const GhmEdges *qe = m->qedges;
    if (ghm_similarity_invert(s, &inv) < 0 || !qe)
        return;
    double cs, sn, cos_tol = ghmi_cos_tol(&m->p);
    ghm_sim_unit_rotation(&inv, &cs, &sn);
    double rq = radius / ghm_similarity_scale(s), rq2 = rq * rq; /* in query pixels */
    size_t first, count;
    ghmi_check_range(m, s, qe->width, qe->height, &first, &count);
    for (size_t k = first; k < first + count; k++) {
        const GhmEdgePoint *e = &m->edges[m->rcheck[k]];
        double x, y;
        ghm_similarity_apply(&inv, e->x, e->y, &x, &y);
        double fx = floor(x + 0.5), fy = floor(y + 0.5);
        if (!(fx >= 2.0 && fy >= 2.0 && fx < qe->width - 2 && fy < qe->height - 2))
            continue;
        r->back_inside++;
        int32_t qi = m->qnearest[(size_t)fy * qe->width + (size_t)fx];
        if (qi < 0)
            continue;
        const GhmEdgePoint *q = &qe->points[qi];
        double dx = x - q->x, dy = y - q->y;
        if (dx * dx + dy * dy > rq2)
            continue;
        double ex = m->edge_dir[m->rcheck[k]][0], ey = m->edge_dir[m->rcheck[k]][1];
        double ux = cs * ex - sn * ey, uy = sn * ex + cs * ey;
        if (ux * m->qdir[qi][0] + uy * m->qdir[qi][1] >= cos_tol)
            r->back_inliers++;
    }
}

/* Forward share = query edge points on reference edges over those that land inside the
 * reference, but never over fewer than half of all points: a transform that throws most of the
 * query outside cannot score high on the few that stay. Backward share = reference edge points
 * in the footprint explained by query edges. Confidence = their geometric mean: a query that
 * sits on dense texture explains its own edges (forward) but not the texture's (backward). */
GHMI_FLOOR_CLONES
static Score score(const GhmMatcher *m, const GhmSimilarity *s, const QueryPts *q, double radius,
                   int backward)
{
    Score r = {0};
    double cs, sn, cos_tol = ghmi_cos_tol(&m->p);
    ghm_sim_unit_rotation(s, &cs, &sn);
    for (size_t i = 0; i < q->n; i++) {
        int inside;
        r.inliers += land(m, s, cs, sn, q, i, radius, cos_tol, &inside) >= 0;
        r.inside += inside != 0;
    }
    if (backward)
        score_backward(m, s, radius, &r);
    ghmi_score_shares(&r, q->n, backward);
    return r;
}

/* Iterated point-to-line least squares: correspondences are the nearest reference edge points
 * with a matching direction within a shrinking radius. Scratch arrays hold q->n entries. */
GHMI_FLOOR_CLONES
static void refine(const GhmMatcher *m, GhmSimilarity *s, const QueryPts *q, double (*src)[2],
                   double (*dst)[2], double (*nrm)[2])
{
    double cos_tol = ghmi_cos_tol(&m->p);
    for (size_t it = 0; it < GHMI_REFINE_STEPS; it++) {
        double cs, sn;
        ghm_sim_unit_rotation(s, &cs, &sn);
        size_t k = 0;
        for (size_t i = 0; i < q->n; i++) {
            int inside;
            int32_t e = land(m, s, cs, sn, q, i, GHMI_REFINE_RADII[it], cos_tol, &inside);
            if (e < 0)
                continue;
            src[k][0] = q->xy[i][0];
            src[k][1] = q->xy[i][1];
            dst[k][0] = m->edges[e].x;
            dst[k][1] = m->edges[e].y;
            nrm[k][0] = m->edge_dir[e][0];
            nrm[k][1] = m->edge_dir[e][1];
            k++;
        }
        GhmSimilarity t;
        if (k < 8 || ghm_similarity_fit_lines((const double(*)[2])src, (const double(*)[2])dst,
                                              (const double(*)[2])nrm, NULL, k, 0.01, &t) < 0)
            return;
        *s = t;
    }
}

static int score_candidates(const GhmMatcher *m, const GhmGeoPoint *qb, const QueryPts *vq,
                            size_t ncand, Hypothesis *hyp, size_t *nhyp)
{
    size_t n = ghmi_hypotheses(m, qb, ncand, hyp);
#pragma omp parallel for schedule(dynamic, 4)
    for (size_t i = 0; i < n; i++)
        hyp[i].sc = score(m, &hyp[i].s, vq, 2.0 * m->p.inlier_px, 0);
    qsort(hyp, n, sizeof *hyp, ghmi_cmp_hyp);
    /* The best by the forward share are checked backwards too, and ranked by both. */
    size_t nb = n < GHMI_BACKWARD_CANDIDATES ? n : GHMI_BACKWARD_CANDIDATES;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < nb; i++)
        hyp[i].sc = score(m, &hyp[i].s, vq, 2.0 * m->p.inlier_px, 1);
    qsort(hyp, nb, sizeof *hyp, ghmi_cmp_hyp);
    *nhyp = n;
    return GHM_OK;
}

/* Refines the best few hypotheses on the verification points and returns the best, and how
 * close the best other placement comes (ghmi_rival). */
static int refine_best(const GhmMatcher *m, const QueryPts *vq, Hypothesis *hyp, size_t nhyp,
                       Hypothesis *best, double *rival)
{
    size_t nr = nhyp < m->p.refine_candidates ? nhyp : m->p.refine_candidates;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (size_t i = 0; i < nr; i++) {
        double(*buf)[2] = malloc(3 * (vq->n ? vq->n : 1) * sizeof *buf);
        if (!buf) {
            failed = 1;
            continue;
        }
        refine(m, &hyp[i].s, vq, buf, buf + vq->n, buf + 2 * vq->n);
        hyp[i].sc = score(m, &hyp[i].s, vq, m->p.inlier_px, 1);
        free(buf);
    }
    if (failed)
        return GHM_ERR_NOMEM;
    qsort(hyp, nr, sizeof *hyp, ghmi_cmp_hyp);
    size_t idx[GHMI_RIVALS], nv = ghmi_rivals(m, hyp, nr, m->qedges->width, m->qedges->height, idx);
    *rival = 0.0;
    for (size_t i = 0; i < nv; i++) {
        GhmSimilarity mid = ghmi_halfway(&hyp[0].s, &hyp[idx[i]].s);
        Score sc = score(m, &mid, vq, m->p.inlier_px, 1);
        *rival = fmax(*rival, ghmi_rival_share(&hyp[0], &hyp[idx[i]], sc.confidence));
    }
    *best = hyp[0];
    return GHM_OK;
}

/* Final polish on all query edge points, the final score, and the inliers for drawing. */
static int polish(GhmMatcher *m, const QueryPts *all, Hypothesis *h)
{
    double(*buf)[2] = malloc(3 * (all->n ? all->n : 1) * sizeof *buf);
    if (!buf)
        return GHM_ERR_NOMEM;
    refine(m, &h->s, all, buf, buf + all->n, buf + 2 * all->n);
    free(buf);
    h->sc = score(m, &h->s, all, m->p.inlier_px, 1);
    if (h->sc.inliers > m->cap_inliers) {
        float(*t)[2] = realloc(m->inliers, h->sc.inliers * sizeof *t);
        if (!t)
            return GHM_ERR_NOMEM;
        m->inliers = t;
        m->cap_inliers = h->sc.inliers;
    }
    double cs, sn, cos_tol = ghmi_cos_tol(&m->p);
    ghm_sim_unit_rotation(&h->s, &cs, &sn);
    size_t k = 0;
    for (size_t i = 0; i < all->n && k < h->sc.inliers; i++) {
        int inside;
        if (land(m, &h->s, cs, sn, all, i, m->p.inlier_px, cos_tol, &inside) < 0)
            continue;
        double x, y;
        ghm_similarity_apply(&h->s, all->xy[i][0], all->xy[i][1], &x, &y);
        m->inliers[k][0] = (float)x;
        m->inliers[k][1] = (float)y;
        k++;
    }
    m->ninliers = k;
    return GHM_OK;
}

/* Voting and verification for a query whose features are known. */
static int match_features(GhmMatcher *m, const GhmiPyramid *py, const GhmGeoPoint *qb,
                          GhmMatchResult *res)
{
    const GhmEdges *qe = py->edges;
    size_t ncand = 0, nhyp = 0;
    uint32_t *idx = NULL;
    QueryPts vq = {0}, all = {0};
    Hypothesis *hyp = NULL;
    int ret = ghmi_vote(m, py->coded, py->ncoded, qb, py->ncorners, py->levels, py->nlevels, res,
                        &ncand);
    if (ret < 0)
        return ret;
    double t0 = ghm_now();
    size_t nv = 0;
    ret = GHM_ERR_NOMEM;
    if (!(idx = malloc((qe->count ? qe->count : 1) * sizeof *idx)) ||
        !(hyp = malloc((ncand ? ncand : 1) * sizeof *hyp)))
        goto done;
    if ((ret = ghm_edges_sample_capped(qe->points, qe->count, qe->width, qe->height, 2.0,
                                       m->p.verify_points, idx, &nv, NULL)) < 0 ||
        (ret = query_pts_from(qe->points, idx, nv, &vq)) < 0 ||
        (ret = score_candidates(m, qb, &vq, ncand, hyp, &nhyp)) < 0)
        goto done;
    if (nhyp > 0) {
        Hypothesis best;
        size_t na = 0;
        double rival = 0.0;
        if ((ret = refine_best(m, &vq, hyp, nhyp, &best, &rival)) < 0 ||
            (ret = ghm_edges_sample_capped(qe->points, qe->count, qe->width, qe->height, 1.0,
                                           GHMI_MAX_POLISH_POINTS, idx, &na, NULL)) < 0 ||
            (ret = query_pts_from(qe->points, idx, na, &all)) < 0 ||
            (ret = polish(m, &all, &best)) < 0)
            goto done;
        Evidence ev = ghmi_evidence(m, qb, py->levels, py->nlevels, &best, rival);
        ghmi_fill_result(m, &best, &ev, res);
        res->query_edges = all.n;
    }
    res->time.verification_ms = 1e3 * (ghm_now() - t0);
    ret = GHM_OK;
done:
    query_pts_free(&vq);
    query_pts_free(&all);
    free(hyp);
    free(idx);
    return ret;
}

/* The query's nearest-edge map and edge directions, for the backward check (scratch kept
 * between queries). */
static int query_nearest(GhmMatcher *m, const GhmEdges *qe)
{
    size_t npix = (size_t)qe->width * qe->height;
    if (npix > m->cap_qnearest) {
        int32_t *t = realloc(m->qnearest, npix * sizeof *t);
        if (!t)
            return GHM_ERR_NOMEM;
        m->qnearest = t;
        m->cap_qnearest = npix;
    }
    int ret = ghmi_nearest_points(qe->width, qe->height, qe->pixel_point, m->qnearest);
    if (ret < 0)
        return ret;
    if (qe->count > m->cap_qdir) {
        float(*t)[2] = realloc(m->qdir, qe->count * sizeof *t);
        if (!t)
            return GHM_ERR_NOMEM;
        m->qdir = t;
        m->cap_qdir = qe->count;
    }
    ghmi_unit_directions(qe->points, qe->count, m->qdir);
    m->qedges = qe;
    return GHM_OK;
}

int ghmi_match_host_query(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res)
{
    double t0 = ghm_now();
    GhmiPyramid py;
    GhmGeoPoint *qb = NULL;
    int ret = ghmi_pyramid_build(query, &m->p, m->p.query_corners, &py);
    if (ret < 0)
        return ret;
    if ((ret = ghmi_corners_to_points(py.corners, py.ncorners, &qb)) < 0 ||
        (ret = query_nearest(m, py.edges)) < 0)
        goto done;
    res->time.edges_ms = 1e3 * (ghm_now() - t0);
    res->query_edge_points = py.edges->count;
    res->query_basis_points = py.ncorners;
    ret = match_features(m, &py, qb, res);
done:
    m->qedges = NULL;
    res->time.total_ms = 1e3 * (ghm_now() - t0);
    free(qb);
    ghmi_pyramid_free(&py);
    return ret;
}
