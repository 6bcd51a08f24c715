/*
 * match.c - the image matcher: reference side built once, then per query: features, votes,
 * verification and refinement. See ghm_match.h.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_distance.h"
#include "ghm_similarity.h"
#include "match_internal.h"
#include "verify_math.h"

/* Images above this many pixels (16 megapixels, 4096 x 4096) are refused: the per-pixel
 * arrays of the stages take about 50 bytes a pixel. */
#define MAX_MATCH_PIXELS (16u * 1024u * 1024u)

/* The stages in vision/ (edges, distance transform, scoring) use OpenMP's default team size:
 * the public entry points run them with the context's thread count (--threads) and give the
 * caller its own setting back (the setting belongs to the calling thread only). */
static int threads_enter(GhmContext *ctx)
{
    int old = omp_get_max_threads();
    omp_set_num_threads(ghm_context_threads(ctx));
    return old;
}

GhmMatchParams ghm_match_defaults(void)
{
    GhmMatchParams p = {.edges = ghm_edge_defaults(),
                        .corners = ghm_corner_defaults(),
                        .query_corners = 160,
                        .max_points = 1500,
                        .point_cell = 4.0,
                        .geo = ghm_geo_defaults(),
                        .top_candidates = 96,
                        .refine_candidates = 6,
                        .verify_points = 1000,
                        .inlier_px = 2.0,
                        .inlier_angle_deg = 25.0,
                        .min_confidence = 0.25};
    return p;
}

int ghm_match_check_params(const GhmMatchParams *p)
{
    if (!p || ghm_geo_check_params(&p->geo) < 0)
        return GHM_ERR_INVALID;
    if (p->edges.blur_sigma < 0.0 || p->edges.blur_sigma > 5.0 || p->edges.percentile < 0.0 ||
        p->edges.percentile >= 1.0 || p->edges.noise_factor < 0.0)
        return GHM_ERR_INVALID;
    if (p->corners.max_corners < 2 || p->corners.max_corners > 65535 ||
        p->query_corners < 2 || p->query_corners > 65535 || p->corners.radius < 1 ||
        p->corners.sigma < 0.0 || p->corners.sigma > 5.0)
        return GHM_ERR_INVALID;
    if (p->max_points < 8 || p->max_points > 1000000 || !(p->point_cell >= 1.0) ||
        p->top_candidates < 1 || p->top_candidates > 100000 || p->refine_candidates < 1 ||
        p->verify_points < 16 || !(p->inlier_px > 0.0) || !(p->inlier_angle_deg > 0.0) ||
        !(p->min_confidence >= 0.0 && p->min_confidence <= 1.0))
        return GHM_ERR_INVALID;
    return GHM_OK;
}

void ghm_matcher_free(GhmMatcher **m)
{
    if (!m || !*m)
        return;
    GhmMatcher *t = *m;
    ghmi_match_device_free(t);
    ghm_geo_voter_free(&t->voter);
    ghm_geo_ref_free(&t->geo);
    free(t->edges);
    free(t->edge_pixel);
    free(t->corners);
    free(t->nearest);
    free(t->coded);
    free(t->cand);
    free(t->inliers);
    free(t->rcheck);
    free(t->edge_dir);
    free(t->qnearest);
    free(t->qdir);
    free(t);
    *m = NULL;
}

/* The coded points: edge points thinned by a grid (strongest per cell), with directions. */
int ghmi_select_coded(const GhmEdgePoint *pts, size_t n, int w, int h, const GhmMatchParams *p,
                      GhmGeoPoint **out, size_t *nout)
{
    uint32_t *idx = malloc((n ? n : 1) * sizeof *idx);
    GhmGeoPoint *g = NULL;
    size_t k = 0;
    int ret = GHM_ERR_NOMEM;
    if (!idx)
        return ret;
    if ((ret = ghm_edges_sample_capped(pts, n, w, h, p->point_cell, p->max_points, idx, &k,
                                       NULL)) < 0)
        goto done;
    ret = GHM_ERR_NOMEM;
    if (!(g = malloc((k ? k : 1) * sizeof *g)))
        goto done;
    for (size_t i = 0; i < k; i++) {
        g[i].x = pts[idx[i]].x;
        g[i].y = pts[idx[i]].y;
        g[i].angle = pts[idx[i]].angle;
    }
    *out = g;
    *nout = k;
    ret = GHM_OK;
done:
    free(idx);
    return ret;
}

int ghmi_corners_to_points(const GhmCorner *c, size_t n, GhmGeoPoint **out)
{
    *out = malloc((n ? n : 1) * sizeof **out);
    if (!*out)
        return GHM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        (*out)[i].x = c[i].x;
        (*out)[i].y = c[i].y;
        (*out)[i].angle = 0.0f;
    }
    return GHM_OK;
}

/* The per-pixel nearest edge point of the reference (through the distance transform). */
static int build_nearest(GhmMatcher *m)
{
    size_t npix = (size_t)m->width * m->height;
    int32_t *seeds = malloc(npix * sizeof *seeds);
    m->nearest = malloc(npix * sizeof *m->nearest);
    if (!seeds || !m->nearest) {
        free(seeds);
        return GHM_ERR_NOMEM;
    }
    for (size_t i = 0; i < npix; i++)
        seeds[i] = -1;
    for (size_t i = 0; i < m->nedges; i++)
        seeds[m->edge_pixel[i]] = (int32_t)i;
    int ret = ghm_distance_transform(m->width, m->height, seeds, m->nearest, NULL);
    if (ret == GHM_OK)
        for (size_t i = 0; i < npix; i++)
            m->nearest[i] = m->nearest[i] < 0 ? -1 : seeds[m->nearest[i]];
    free(seeds);
    return ret;
}

/* Reference edge points, evenly thinned, that check a transform in the backward direction. */
static int select_check_points(GhmMatcher *m)
{
    m->rcheck = malloc((m->nedges ? m->nedges : 1) * sizeof *m->rcheck);
    if (!m->rcheck)
        return GHM_ERR_NOMEM;
    return ghm_edges_sample_capped(m->edges, m->nedges, m->width, m->height, 2.0,
                                   GHMI_CHECK_POINTS, m->rcheck, &m->nrcheck, NULL);
}

static int copy_features(GhmMatcher *m, const GhmEdgePoint *edges, const uint32_t *edge_pixel,
                         size_t nedges, const GhmCorner *corners, size_t ncorners)
{
    m->edges = malloc((nedges ? nedges : 1) * sizeof *m->edges);
    m->edge_pixel = malloc((nedges ? nedges : 1) * sizeof *m->edge_pixel);
    m->corners = malloc((ncorners ? ncorners : 1) * sizeof *m->corners);
    if (!m->edges || !m->edge_pixel || !m->corners)
        return GHM_ERR_NOMEM;
    size_t npix = (size_t)m->width * m->height;
    for (size_t i = 0; i < nedges; i++)
        if (edge_pixel[i] >= npix)
            return GHM_ERR_INVALID;
    if (nedges) {
        memcpy(m->edges, edges, nedges * sizeof *edges);
        memcpy(m->edge_pixel, edge_pixel, nedges * sizeof *edge_pixel);
    }
    if (ncorners)
        memcpy(m->corners, corners, ncorners * sizeof *corners);
    /* Unit gradient directions, computed once: scoring compares directions millions of times. */
    m->edge_dir = malloc((nedges ? nedges : 1) * sizeof *m->edge_dir);
    if (!m->edge_dir)
        return GHM_ERR_NOMEM;
    for (size_t i = 0; i < nedges; i++) {
        m->edge_dir[i][0] = cosf(edges[i].angle);
        m->edge_dir[i][1] = sinf(edges[i].angle);
    }
    m->nedges = nedges;
    m->ncorners = ncorners;
    return GHM_OK;
}

static int build_impl(GhmContext *ctx, int width, int height, const GhmEdgePoint *edges,
                      const uint32_t *edge_pixel, size_t nedges, const GhmCorner *corners,
                      size_t ncorners, const GhmMatchParams *p, GhmMatcher **out)
{
    if (!ctx || !out || width < 1 || height < 1 || (!edges && nedges) ||
        (!edge_pixel && nedges) || (!corners && ncorners))
        return GHM_ERR_INVALID;
    int ret = ghm_match_check_params(p);
    if (ret < 0)
        return ret;
    if ((size_t)width * height > MAX_MATCH_PIXELS)
        return GHM_ERR_TOO_LARGE;
    *out = NULL;
    GhmMatcher *m = calloc(1, sizeof *m);
    GhmGeoPoint *bp = NULL;
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->p = *p;
    m->seed = ghm_context_seed(ctx);
    m->width = width;
    m->height = height;
    if ((ret = copy_features(m, edges, edge_pixel, nedges, corners, ncorners)) < 0 ||
        (ret = build_nearest(m)) < 0 || (ret = select_check_points(m)) < 0 ||
        (ret = ghmi_select_coded(m->edges, m->nedges, width, height, p, &m->coded, &m->ncoded)) < 0 ||
        (ret = ghmi_corners_to_points(m->corners, m->ncorners, &bp)) < 0)
        goto fail;
    double diag = hypot((double)width, (double)height);
    if ((ret = ghm_geo_ref_build(ctx, bp, m->ncorners, m->coded, m->ncoded, diag, &p->geo,
                                 &m->geo)) < 0 ||
        (ret = ghm_geo_voter_create(m->geo, &m->voter)) < 0)
        goto fail;
    ret = GHM_ERR_NOMEM;
    if (!(m->cand = malloc(p->top_candidates * sizeof *m->cand)))
        goto fail;
    if ((ret = ghmi_match_device_create(m)) < 0)
        goto fail;
    free(bp);
    *out = m;
    return GHM_OK;
fail:
    free(bp);
    ghm_matcher_free(&m);
    return ret;
}

int ghmi_matcher_build(GhmContext *ctx, int width, int height, const GhmEdgePoint *edges,
                       const uint32_t *edge_pixel, size_t nedges, const GhmCorner *corners,
                       size_t ncorners, const GhmMatchParams *p, GhmMatcher **out)
{
    if (!ctx)
        return GHM_ERR_INVALID;
    int old = threads_enter(ctx);
    int ret = build_impl(ctx, width, height, edges, edge_pixel, nedges, corners, ncorners, p, out);
    omp_set_num_threads(old);
    return ret;
}

static int create_impl(GhmContext *ctx, const GhmImage *ref, const GhmMatchParams *p,
                       GhmMatcher **out)
{
    if (!ctx || !ref || !out || ghm_match_check_params(p) < 0)
        return GHM_ERR_INVALID;
    if ((size_t)ref->width * ref->height > MAX_MATCH_PIXELS)
        return GHM_ERR_TOO_LARGE;
    GhmEdges *e = NULL;
    GhmCorner *c = NULL;
    size_t nc = 0;
    uint32_t *pix = NULL;
    int ret = ghm_edges_detect(ref, &p->edges, &e);
    if (ret < 0)
        return ret;
    if ((ret = ghm_corners_detect(e, &p->corners, &c, &nc)) < 0)
        goto done;
    ret = GHM_ERR_NOMEM;
    if (!(pix = malloc((e->count ? e->count : 1) * sizeof *pix)))
        goto done;
    size_t npix = (size_t)e->width * e->height;
    for (size_t i = 0; i < npix; i++)
        if (e->pixel_point[i] >= 0)
            pix[e->pixel_point[i]] = (uint32_t)i;
    ret = build_impl(ctx, ref->width, ref->height, e->points, pix, e->count, c, nc, p, out);
done:
    free(pix);
    free(c);
    ghm_edges_free(&e);
    return ret;
}

int ghm_matcher_create(GhmContext *ctx, const GhmImage *ref, const GhmMatchParams *p,
                       GhmMatcher **out)
{
    if (!ctx)
        return GHM_ERR_INVALID;
    int old = threads_enter(ctx);
    int ret = create_impl(ctx, ref, p, out);
    omp_set_num_threads(old);
    return ret;
}

/* --- verification ------------------------------------------------------------------------ */


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
static void score_backward(const GhmMatcher *m, const GhmSimilarity *s, double radius, Score *r)
{
    GhmSimilarity inv;
    const GhmEdges *qe = m->qedges;
    if (ghm_similarity_invert(s, &inv) < 0 || !qe)
        return;
    double cs, sn, cos_tol = ghmi_cos_tol(&m->p);
    ghm_sim_unit_rotation(&inv, &cs, &sn);
    double rq = radius / ghm_similarity_scale(s), rq2 = rq * rq; /* in query pixels */
    for (size_t k = 0; k < m->nrcheck; k++) {
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

void ghmi_score_shares(Score *r, size_t n, int backward)
{
    double den = fmax((double)r->inside, 0.5 * (double)n);
    r->forward = den > 0.0 ? (double)r->inliers / den : 0.0;
    if (!backward) { /* a cheap first screening: forward only */
        r->confidence = r->forward;
        return;
    }
    r->backward = r->back_inside >= 16 ? (double)r->back_inliers / (double)r->back_inside : 0.0;
    r->confidence = sqrt(r->forward * r->backward);
}

/* Forward share = query edge points on reference edges over those that land inside the
 * reference, but never over fewer than half of all points: a transform that throws most of the
 * query outside cannot score high on the few that stay. Backward share = reference edge points
 * in the footprint explained by query edges. Confidence = their geometric mean: a query that
 * sits on dense texture explains its own edges (forward) but not the texture's (backward). */
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


int ghmi_cmp_hyp(const void *a, const void *b)
{
    const Hypothesis *x = a, *y = b;
    if (x->sc.confidence != y->sc.confidence)
        return x->sc.confidence < y->sc.confidence ? 1 : -1;
    if (x->sc.inliers != y->sc.inliers)
        return x->sc.inliers < y->sc.inliers ? 1 : -1;
    return (x->votes < y->votes) - (x->votes > y->votes);
}

size_t ghmi_hypotheses(const GhmMatcher *m, const GhmGeoPoint *qb, size_t ncand, Hypothesis *hyp)
{
    size_t n = 0;
    for (size_t c = 0; c < ncand; c++) {
        const GhmGeoCandidate *cd = &m->cand[c];
        double q1[2] = {qb[cd->q_k].x, qb[cd->q_k].y}, q2[2] = {qb[cd->q_l].x, qb[cd->q_l].y};
        double r1[2] = {m->corners[cd->ref_i].x, m->corners[cd->ref_i].y};
        double r2[2] = {m->corners[cd->ref_j].x, m->corners[cd->ref_j].y};
        if (ghm_similarity_from_bases(q1, q2, r1, r2, &hyp[n].s) < 0)
            continue;
        hyp[n].votes = cd->votes;
        n++;
    }
    return n;
}

/* Transforms of the voted candidates, scored on the verification points. */
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

/* Refines the best few hypotheses on the verification points and returns the best. */
static int refine_best(const GhmMatcher *m, const QueryPts *vq, Hypothesis *hyp, size_t nhyp,
                       Hypothesis *best)
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

void ghmi_fill_result(const GhmMatcher *m, const Hypothesis *h, GhmMatchResult *res)
{
    res->votes = h->votes;
    res->confidence = h->sc.confidence;
    res->forward_share = h->sc.forward;
    res->backward_share = h->sc.backward;
    res->inliers = h->sc.inliers;
    res->found = h->sc.confidence >= m->p.min_confidence && h->sc.inliers >= 8;
    res->scale = ghm_similarity_scale(&h->s);
    res->rotation_deg = ghm_similarity_rotation_deg(&h->s);
    res->tx = h->s.tx;
    res->ty = h->s.ty;
    ghm_similarity_matrix(&h->s, res->matrix);
}

int ghmi_vote(GhmMatcher *m, const GhmGeoPoint *coded, size_t ncoded, const GhmGeoPoint *qb,
              size_t nqb, GhmMatchResult *res, size_t *ncand)
{
    GhmGeoStats st = {0};
    res->query_coded_points = ncoded;
    int ret = ghm_geo_vote(m->voter, qb, nqb, coded, ncoded, &m->p.geo, m->seed, m->cand,
                           m->p.top_candidates, ncand, &st);
    if (ret < 0)
        return ret;
    res->time.bases_ms = st.bases_ms;
    res->time.signatures_ms = st.signatures_ms;
    res->time.voting_ms = st.voting_ms;
    res->query_bases = st.query_bases;
    res->lookups = st.lookups;
    res->votes_cast = st.votes;
    res->candidates = *ncand;
    return GHM_OK;
}

/* Voting and verification for a query whose features are known. */
static int match_features(GhmMatcher *m, const GhmEdges *qe, const GhmGeoPoint *qb, size_t nqb,
                          GhmMatchResult *res)
{
    size_t ncand = 0, nhyp = 0;
    uint32_t *idx = NULL;
    QueryPts vq = {0}, all = {0};
    Hypothesis *hyp = NULL;
    GhmGeoPoint *coded = NULL;
    size_t ncoded = 0;
    int ret = ghmi_select_coded(qe->points, qe->count, qe->width, qe->height, &m->p, &coded,
                                &ncoded);
    if (ret == GHM_OK)
        ret = ghmi_vote(m, coded, ncoded, qb, nqb, res, &ncand);
    free(coded);
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
        if ((ret = refine_best(m, &vq, hyp, nhyp, &best)) < 0 ||
            (ret = ghm_edges_sample_capped(qe->points, qe->count, qe->width, qe->height, 1.0,
                                           GHMI_MAX_POLISH_POINTS, idx, &na, NULL)) < 0 ||
            (ret = query_pts_from(qe->points, idx, na, &all)) < 0 ||
            (ret = polish(m, &all, &best)) < 0)
            goto done;
        ghmi_fill_result(m, &best, res);
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
    int ret = ghm_distance_transform(qe->width, qe->height, qe->pixel_point, m->qnearest, NULL);
    if (ret < 0)
        return ret;
    for (size_t i = 0; i < npix; i++)
        m->qnearest[i] = m->qnearest[i] < 0 ? -1 : qe->pixel_point[m->qnearest[i]];
    if (qe->count > m->cap_qdir) {
        float(*t)[2] = realloc(m->qdir, qe->count * sizeof *t);
        if (!t)
            return GHM_ERR_NOMEM;
        m->qdir = t;
        m->cap_qdir = qe->count;
    }
    for (size_t i = 0; i < qe->count; i++) {
        m->qdir[i][0] = cosf(qe->points[i].angle);
        m->qdir[i][1] = sinf(qe->points[i].angle);
    }
    m->qedges = qe;
    return GHM_OK;
}

static int match_impl(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res)
{
    if (!m || !query || !res)
        return GHM_ERR_INVALID;
    if ((size_t)query->width * query->height > MAX_MATCH_PIXELS)
        return GHM_ERR_TOO_LARGE;
    memset(res, 0, sizeof *res);
    res->matrix[0][0] = res->matrix[1][1] = res->scale = 1.0;
    ghm_geo_ref_sizes(m->geo, &res->ref_bases, &res->ref_entries, &res->ref_keys);
    res->ref_edge_points = m->nedges;
    res->ref_basis_points = m->ncorners;
    res->ref_coded_points = m->ncoded;
    m->ninliers = 0;
    if (m->dev) /* this backend has vision kernels: the whole query on its device */
        return ghmi_match_device_query(m, query, res);
    double t0 = ghm_now();
    GhmEdges *qe = NULL;
    GhmCorner *qc = NULL;
    GhmGeoPoint *qb = NULL;
    size_t nqc = 0;
    GhmCornerParams cp = m->p.corners;
    cp.max_corners = m->p.query_corners;
    int ret = ghm_edges_detect(query, &m->p.edges, &qe);
    if (ret < 0)
        return ret;
    if ((ret = ghm_corners_detect(qe, &cp, &qc, &nqc)) < 0 ||
        (ret = ghmi_corners_to_points(qc, nqc, &qb)) < 0)
        goto done;
    if ((ret = query_nearest(m, qe)) < 0)
        goto done;
    res->time.edges_ms = 1e3 * (ghm_now() - t0);
    res->query_edge_points = qe->count;
    res->query_basis_points = nqc;
    ret = match_features(m, qe, qb, nqc, res);
done:
    m->qedges = NULL;
    res->time.total_ms = 1e3 * (ghm_now() - t0);
    free(qb);
    free(qc);
    ghm_edges_free(&qe);
    return ret;
}

int ghm_matcher_match(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res)
{
    if (!m)
        return GHM_ERR_INVALID;
    int old = threads_enter(m->ctx);
    int ret = match_impl(m, query, res);
    omp_set_num_threads(old);
    return ret;
}

void ghm_matcher_inliers(const GhmMatcher *m, const float (**xy)[2], size_t *n)
{
    *xy = (const float(*)[2])m->inliers;
    *n = m->ninliers;
}

void ghm_matcher_reference_edges(const GhmMatcher *m, const GhmEdgePoint **pts, size_t *n)
{
    *pts = m->edges;
    *n = m->nedges;
}

void ghm_matcher_size(const GhmMatcher *m, int *width, int *height)
{
    *width = m->width;
    *height = m->height;
}

const GhmMatchParams *ghm_matcher_params(const GhmMatcher *m)
{
    return &m->p;
}

int ghm_matcher_set_query_params(GhmMatcher *m, const GhmMatchParams *p)
{
    if (!m || !p)
        return GHM_ERR_INVALID;
    GhmMatchParams t = m->p;
    t.query_corners = p->query_corners;
    t.top_candidates = p->top_candidates;
    t.refine_candidates = p->refine_candidates;
    t.verify_points = p->verify_points;
    t.inlier_px = p->inlier_px;
    t.inlier_angle_deg = p->inlier_angle_deg;
    t.min_confidence = p->min_confidence;
    t.geo.query_bases = p->geo.query_bases;
    if (ghm_match_check_params(&t) < 0)
        return GHM_ERR_INVALID;
    if (t.top_candidates > m->p.top_candidates) {
        GhmGeoCandidate *c = realloc(m->cand, t.top_candidates * sizeof *c);
        if (!c)
            return GHM_ERR_NOMEM;
        m->cand = c;
    }
    m->p = t;
    return GHM_OK;
}
