/*
 * match_stages.c - the matcher's stages that the host path (match_host.c) and the device path
 * (match_device.c) share: coded points, basis points, voting, the hypotheses of the voted
 * candidates, their ranking and the result. A leaf: it calls neither path.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edges_internal.h"
#include "ghm_distance.h"
#include "match_internal.h"

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

size_t ghmi_pyramid_levels(int w, int h, const GhmMatchParams *p)
{
    size_t n = 1;
    while ((int)n < p->levels && n < GHMI_MAX_LEVELS && (w >> n) >= GHMI_MIN_LEVEL_SIDE &&
           (h >> n) >= GHMI_MIN_LEVEL_SIDE)
        n++;
    return n;
}

void ghmi_pyramid_free(GhmiPyramid *py)
{
    ghm_edges_free(&py->edges);
    free(py->corners);
    free(py->coded);
    py->corners = NULL;
    py->coded = NULL;
}

/* Appends src[0..n) to the growing array *dst (of *count elements of size bytes). */
static int append(void **dst, size_t *count, const void *src, size_t n, size_t size)
{
    void *t = realloc(*dst, (*count + n + 1) * size);
    if (!t)
        return GHM_ERR_NOMEM;
    if (n)
        memcpy((char *)t + *count * size, src, n * size);
    *dst = t;
    *count += n;
    return GHM_OK;
}

/* One pyramid level's corners and coded points, appended in full-image pixels. */
static int level_features(const GhmEdges *e, int level, const GhmMatchParams *p,
                          size_t max_corners, GhmiPyramid *py)
{
    GhmCornerParams cp = p->corners;
    cp.max_corners = max_corners;
    GhmCorner *c = NULL;
    GhmGeoPoint *g = NULL;
    size_t nc = 0, ng = 0;
    GhmGeoLevel *lv = &py->levels[py->nlevels];
    int ret = ghm_corners_detect(e, &cp, &c, &nc);
    if (ret == GHM_OK)
        ret = ghmi_select_coded(e->points, e->count, e->width, e->height, p, &g, &ng);
    for (size_t i = 0; ret == GHM_OK && i < nc; i++) {
        c[i].x = ghmi_level_to_full(c[i].x, level);
        c[i].y = ghmi_level_to_full(c[i].y, level);
    }
    for (size_t i = 0; ret == GHM_OK && i < ng; i++) {
        g[i].x = ghmi_level_to_full(g[i].x, level);
        g[i].y = ghmi_level_to_full(g[i].y, level);
    }
    lv->basis_first = (uint32_t)py->ncorners;
    lv->nbasis = (uint32_t)nc;
    lv->coded_first = (uint32_t)py->ncoded;
    lv->ncoded = (uint32_t)ng;
    lv->scale = (float)(1 << level);
    if (ret == GHM_OK &&
        (ret = append((void **)&py->corners, &py->ncorners, c, nc, sizeof *c)) == GHM_OK)
        ret = append((void **)&py->coded, &py->ncoded, g, ng, sizeof *g);
    if (ret == GHM_OK)
        py->nlevels++;
    free(c);
    free(g);
    return ret;
}

/* Level 0 is the image; each next level halves it (ghm_image_halve) and is analysed by the same
 * edge and corner detectors with the same parameters, in its own pixels: a feature of a given
 * size in pixels is found at the level where the image shows it at that size, so that two
 * images of different scales meet at some pair of levels with the same corner spacing and
 * point density. */
int ghmi_pyramid_build(const GhmImage *img, const GhmMatchParams *p, size_t max_corners,
                       GhmiPyramid *out)
{
    memset(out, 0, sizeof *out);
    size_t nl = ghmi_pyramid_levels(img->width, img->height, p);
    GhmImage *cur = NULL;
    int ret = ghm_edges_detect(img, &p->edges, &out->edges);
    if (ret == GHM_OK)
        ret = level_features(out->edges, 0, p, max_corners, out);
    for (size_t l = 1; ret == GHM_OK && l < nl; l++) {
        GhmImage *next = NULL;
        GhmEdges *e = NULL;
        ret = ghm_image_halve(cur ? cur : img, &next);
        ghm_image_free(&cur);
        cur = next;
        if (ret == GHM_OK && (ret = ghm_edges_detect(cur, &p->edges, &e)) == GHM_OK)
            ret = level_features(e, (int)l, p, max_corners, out);
        ghm_edges_free(&e);
    }
    ghm_image_free(&cur);
    if (ret < 0)
        ghmi_pyramid_free(out);
    return ret;
}

int ghmi_nearest_points(int w, int h, const int32_t *seeds, int32_t *nearest)
{
    int ret = ghm_distance_transform(w, h, seeds, nearest, NULL);
    if (ret < 0)
        return ret;
    /* On the team: serial, the gathers were a tenth of a 2-core reference build's serial time
     * (docs/BENCHMARKS.md). */
    size_t npix = (size_t)w * (size_t)h;
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(w, h))
    for (size_t i = 0; i < npix; i++)
        nearest[i] = nearest[i] < 0 ? -1 : seeds[nearest[i]];
    return GHM_OK;
}

void ghmi_unit_directions(const GhmEdgePoint *pts, size_t n, float (*dir)[2])
{
#pragma omp parallel for schedule(static) if (n >= GHMI_PARALLEL_POINTS)
    for (size_t i = 0; i < n; i++) {
        dir[i][0] = cosf(pts[i].angle);
        dir[i][1] = sinf(pts[i].angle);
    }
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


void ghmi_check_grids(const GhmMatcher *m, GhmCheckGrids *c)
{
    _Static_assert(GHMI_CHECK_LEVELS <= GHM_CHECK_MAX_LEVELS, "check grids");
    for (int g = 0; g <= GHMI_CHECK_LEVELS; g++)
        c->first[g] = (uint32_t)m->check_first[g];
    c->levels = GHMI_CHECK_LEVELS;
    c->ref_area = (double)m->width * (double)m->height;
    c->target = GHMI_CHECK_TARGET;
}

void ghmi_check_range(const GhmMatcher *m, const GhmSimilarity *s, int qw, int qh, size_t *first,
                      size_t *count)
{
    GhmCheckGrids c;
    uint32_t f, n;
    ghmi_check_grids(m, &c);
    ghm_check_range(&c, s, qw, qh, &f, &n);
    *first = f;
    *count = n;
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

int ghmi_cmp_hyp(const void *a, const void *b)
{
    const Hypothesis *x = a, *y = b;
    if (x->sc.confidence != y->sc.confidence)
        return x->sc.confidence < y->sc.confidence ? 1 : -1;
    if (x->sc.inliers != y->sc.inliers)
        return x->sc.inliers < y->sc.inliers ? 1 : -1;
    return (x->votes < y->votes) - (x->votes > y->votes);
}

/* Whether s is within the scales searched for (a quarter of the bin off). Beyond them: a chance
 * pair of bases, or a refinement that slid away, and a query shrunk to a few pixels can fit
 * anything. */
static int scale_searched(const GhmMatcher *m, const GhmSimilarity *s)
{
    double sc = ghm_similarity_scale(s);
    return sc >= 0.8 * m->p.geo.min_scale && sc <= 1.25 * m->p.geo.max_scale;
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
        if (!scale_searched(m, &hyp[n].s))
            continue;
        hyp[n].votes = cd->votes;
        n++;
    }
    return n;
}


/* Whether candidate cd's two point correspondences agree with s: both query basis points land
 * near their reference basis points (a tenth of the basis length, at least 3 pixels: corners
 * of coarse levels are placed to about a pixel of their level). */
static int agrees(const GhmMatcher *m, const GhmGeoPoint *qb, const GhmGeoCandidate *cd,
                  const GhmSimilarity *s)
{
    const GhmCorner *r1 = &m->corners[cd->ref_i], *r2 = &m->corners[cd->ref_j];
    double len = hypot(r2->x - r1->x, r2->y - r1->y), tol = fmax(3.0, 0.1 * len);
    double x, y;
    ghm_similarity_apply(s, qb[cd->q_k].x, qb[cd->q_k].y, &x, &y);
    if (hypot(x - r1->x, y - r1->y) > tol)
        return 0;
    ghm_similarity_apply(s, qb[cd->q_l].x, qb[cd->q_l].y, &x, &y);
    return hypot(x - r2->x, y - r2->y) <= tol;
}

size_t ghmi_support(const GhmMatcher *m, const GhmGeoPoint *qb, const GhmSimilarity *s)
{
    float seen[64][2];
    size_t n = 0;
    for (size_t c = 0; c < m->ncand_all && n + 2 <= sizeof seen / sizeof *seen; c++) {
        const GhmGeoCandidate *cd = &m->cand[c];
        if (!agrees(m, qb, cd, s))
            continue;
        /* Distinct reference points, by position: a corner found at two pyramid levels, or a
         * basis voted for in both orders, is one piece of evidence. */
        const GhmCorner *r[2] = {&m->corners[cd->ref_i], &m->corners[cd->ref_j]};
        for (int k = 0; k < 2; k++) {
            size_t i = 0;
            while (i < n && hypot(seen[i][0] - r[k]->x, seen[i][1] - r[k]->y) > 4.0)
                i++;
            if (i == n) {
                seen[n][0] = r[k]->x;
                seen[n][1] = r[k]->y;
                n++;
            }
        }
    }
    return n;
}

int ghmi_corner_table(GhmMatcher *m)
{
    size_t w = (size_t)m->width + 1, h = (size_t)m->height + 1;
    uint32_t *t = calloc(w * h, sizeof *t);
    if (!t)
        return GHM_ERR_NOMEM;
    for (size_t i = 0; i < m->ncorners; i++) {
        long x = lround(m->corners[i].x), y = lround(m->corners[i].y);
        if (x >= 0 && y >= 0 && x < m->width && y < m->height)
            t[(size_t)(y + 1) * w + (size_t)(x + 1)]++;
    }
    /* The sums along each row, then down strips of columns, a row at a time: both passes on
     * the team, the second vectorised (one pass with the four-term rule was serial: ~1 ms for
     * a 1024 x 768 reference on one core). Sums wrap alike in any order. */
    enum { STRIP = 256 };
    int team = ghmi_parallel_image(m->width, m->height);
#pragma omp parallel for schedule(static) if (team)
    for (size_t y = 1; y < h; y++)
        for (size_t x = 1; x < w; x++)
            t[y * w + x] += t[y * w + x - 1];
#pragma omp parallel for schedule(static) if (team)
    for (size_t x0 = 1; x0 < w; x0 += STRIP) {
        size_t x1 = x0 + STRIP < w ? x0 + STRIP : w;
        for (size_t y = 2; y < h; y++)
            for (size_t x = x0; x < x1; x++)
                t[y * w + x] += t[(y - 1) * w + x];
    }
    m->corner_sat = t;
    return GHM_OK;
}

/* Reference corners in the box [x - r, x + r] x [y - r, y + r] (clipped to the image), and the
 * box's area in pixels. */
static uint32_t corners_in_box(const GhmMatcher *m, double x, double y, double r, double *area)
{
    long x0 = lround(x - r), x1 = lround(x + r), y0 = lround(y - r), y1 = lround(y + r);
    x0 = x0 < 0 ? 0 : x0, y0 = y0 < 0 ? 0 : y0;
    x1 = x1 >= m->width ? m->width - 1 : x1, y1 = y1 >= m->height ? m->height - 1 : y1;
    if (x1 < x0 || y1 < y0) {
        *area = 0.0;
        return 0;
    }
    size_t w = (size_t)m->width + 1;
    const uint32_t *t = m->corner_sat;
    *area = (double)(x1 - x0 + 1) * (double)(y1 - y0 + 1);
    return t[(size_t)(y1 + 1) * w + (size_t)(x1 + 1)] - t[(size_t)y0 * w + (size_t)(x1 + 1)] -
           t[(size_t)(y1 + 1) * w + (size_t)x0] + t[(size_t)y0 * w + (size_t)x0];
}

/* -log10 of P(X >= k) for X Poisson with mean mu. */
static double poisson_tail_signif(size_t k, double mu)
{
    if (k == 0)
        return 0.0;
    if (!(mu > 0.0))
        return 30.0;
    double term = exp(-mu), below = 0.0; /* P(X < k) */
    for (size_t i = 0; i < k; i++) {
        below += term;
        term *= mu / (double)(i + 1);
    }
    double tail = 1.0 - below;
    if (tail < 1e-12) { /* 1 - below has lost its digits: the first terms of the tail */
        tail = 0.0;
        term = exp(-mu);
        for (size_t i = 1; i <= k; i++)
            term *= mu / (double)i;
        for (size_t i = k; i < k + 64 && term > 0.0; i++) {
            tail += term;
            term *= mu / (double)(i + 1);
        }
    }
    return tail > 1e-30 ? -log10(tail) : 30.0;
}

double ghmi_corner_evidence(const GhmMatcher *m, const GhmGeoPoint *qb, const GhmGeoLevel *lv,
                            size_t nlv, const GhmSimilarity *s)
{
    double sc = hypot(s->a, s->b), chance = 0.0;
    size_t hits = 0;
    if (!m->corner_sat)
        return 0.0;
    for (size_t l = 0; l < nlv; l++) {
        /* A corner of level l is placed to about one of its pixels: 2^l query pixels. */
        double tol = fmax(1.5, 1.5 * lv[l].scale * sc), area, larea;
        for (uint32_t q = lv[l].basis_first; q < lv[l].basis_first + lv[l].nbasis; q++) {
            double x, y;
            ghm_similarity_apply(s, qb[q].x, qb[q].y, &x, &y);
            if (!(x >= 0.0 && y >= 0.0 && x < m->width && y < m->height))
                continue;
            /* A box of the area of the disc of radius tol. */
            hits += corners_in_box(m, x, y, 0.886 * tol, &area) > 0;
            /* The chance of a corner in it, from the density of a wider neighbourhood (wide
             * enough that an object's own corners do not make up most of it). */
            uint32_t n = corners_in_box(m, x, y, fmax(40.0, 8.0 * tol), &larea);
            chance += larea > 0.0 ? fmin(1.0, (double)n * area / larea) : 0.0;
        }
    }
    return poisson_tail_signif(hits, chance);
}

double ghmi_inlier_spread(const float (*xy)[2], size_t n)
{
    if (n < 3)
        return 0.0;
    double mx = 0.0, my = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0;
    for (size_t i = 0; i < n; i++)
        mx += xy[i][0], my += xy[i][1];
    mx /= (double)n, my /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double dx = xy[i][0] - mx, dy = xy[i][1] - my;
        sxx += dx * dx, syy += dy * dy, sxy += dx * dy;
    }
    double half = 0.5 * (sxx + syy), off = hypot(0.5 * (sxx - syy), sxy);
    return half + off > 0.0 ? (half - off) / (half + off) : 0.0;
}

/* What every match needs, whatever its evidence: its shares, a scale searched for, and no other
 * placement nearly as good. */
static int may_match(const GhmMatcher *m, const Hypothesis *h, double rival)
{
    return h->sc.confidence >= m->p.min_confidence && h->sc.inliers >= 8 &&
           scale_searched(m, &h->s) && rival < m->p.max_rival;
}

Evidence ghmi_evidence(const GhmMatcher *m, const GhmGeoPoint *qb, const GhmGeoLevel *lv,
                       size_t nlv, const Hypothesis *h, double rival)
{
    Evidence ev = {ghmi_support(m, qb, &h->s), NAN, rival,
                   ghmi_inlier_spread((const float(*)[2])m->inliers, m->ninliers)};
    /* The corner count is the slowest piece of evidence (two box sums per query corner, in a
     * table the size of the reference): asked only when it can decide. */
    if (may_match(m, h, rival) && ev.support < m->p.min_support &&
        h->sc.confidence < m->p.sure_confidence && ev.spread >= GHMI_MIN_SPREAD)
        ev.corner_signif = ghmi_corner_evidence(m, qb, lv, nlv, &h->s);
    return ev;
}

size_t ghmi_rivals(const GhmMatcher *m, const Hypothesis *hyp, size_t n, int qw, int qh,
                   size_t *idx)
{
    double far = 0.02 * hypot((double)m->width, (double)m->height);
    double cx[4] = {0.0, qw - 1.0, qw - 1.0, 0.0}, cy[4] = {0.0, 0.0, qh - 1.0, qh - 1.0};
    size_t k = 0;
    for (size_t i = 1; i < n && k < GHMI_RIVALS; i++) { /* ranked: the best come first */
        double d = 0.0;
        for (int c = 0; c < 4; c++) {
            double x0, y0, x1, y1;
            ghm_similarity_apply(&hyp[0].s, cx[c], cy[c], &x0, &y0);
            ghm_similarity_apply(&hyp[i].s, cx[c], cy[c], &x1, &y1);
            d = fmax(d, hypot(x1 - x0, y1 - y0));
        }
        if (d > far)
            idx[k++] = i;
    }
    return k;
}

GhmSimilarity ghmi_halfway(const GhmSimilarity *a, const GhmSimilarity *b)
{
    GhmSimilarity h = {0.5 * (a->a + b->a), 0.5 * (a->b + b->b), 0.5 * (a->tx + b->tx),
                       0.5 * (a->ty + b->ty)};
    return h;
}

double ghmi_rival_share(const Hypothesis *best, const Hypothesis *rival, double halfway_conf)
{
    if (!(best->sc.confidence > 0.0) || halfway_conf >= GHMI_VALLEY * rival->sc.confidence)
        return 0.0;
    return rival->sc.confidence / best->sc.confidence;
}

void ghmi_fill_result(const GhmMatcher *m, const Hypothesis *h, const Evidence *ev,
                      GhmMatchResult *res)
{
    res->votes = h->votes;
    res->confidence = h->sc.confidence;
    res->forward_share = h->sc.forward;
    res->backward_share = h->sc.backward;
    res->inliers = h->sc.inliers;
    /* A match needs what may_match asks, and either several voted bases behind it, or corners
     * that coincide far beyond chance, or shares so high that a chance fit on texture does not
     * reach them. The last two only where the inliers spread in two directions: along a
     * straight edge, shares and coincidences stay high wherever the query slides and whatever
     * its scale (the aperture problem), while voted bases are evidence of their own. */
    res->support = ev->support;
    res->corner_signif = ev->corner_signif;
    int placed = ev->spread >= GHMI_MIN_SPREAD;
    res->found = may_match(m, h, ev->rival) &&
                 (ev->support >= m->p.min_support ||
                  (placed && (ev->corner_signif >= m->p.min_corner_signif ||
                              h->sc.confidence >= m->p.sure_confidence)));
    res->scale = ghm_similarity_scale(&h->s);
    res->rotation_deg = ghm_similarity_rotation_deg(&h->s);
    res->tx = h->s.tx;
    res->ty = h->s.ty;
    ghm_similarity_matrix(&h->s, res->matrix);
}

int ghmi_vote(GhmMatcher *m, const GhmGeoPoint *coded, size_t ncoded, const GhmGeoPoint *qb,
              size_t nqb, const GhmGeoLevel *levels, size_t nlevels, GhmMatchResult *res,
              size_t *ncand)
{
    GhmGeoStats st = {0};
    res->query_coded_points = ncoded;
    int ret = ghm_geo_vote_levels(m->voter, qb, nqb, coded, ncoded, levels, nlevels, &m->p.geo,
                                  m->seed, m->cand, m->cap_cand, &m->ncand_all, &st);
    if (ret < 0)
        return ret;
    *ncand = m->ncand_all < m->p.top_candidates ? m->ncand_all : m->p.top_candidates;
    res->time.bases_ms = st.bases_ms;
    res->time.signatures_ms = st.signatures_ms;
    res->time.voting_ms = st.voting_ms;
    res->query_bases = st.query_bases;
    res->lookups = st.lookups;
    res->votes_cast = st.votes;
    res->ref_entries = st.ref_entries; /* a reference without its table counted them now */
    res->ref_keys = st.ref_keys;
    res->ref_scanned = st.scanned;
    res->candidates = *ncand;
    return GHM_OK;
}
