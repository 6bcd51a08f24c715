/*
 * match_stages.c - the matcher's stages that the host path (match_host.c) and the device path
 * (match_device.c) share: coded points, basis points, voting, the hypotheses of the voted
 * candidates, their ranking and the result. A leaf: it calls neither path.
 */
#include <stdlib.h>

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
