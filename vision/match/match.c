/*
 * match.c - the image matcher's entry points: parameters, the reference side built once, and
 * ghm_matcher_match, which hands each query to the host path (match_host.c) or the device
 * path (match_device.c). See ghm_match.h.
 */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "edges_internal.h"
#include "geohash_internal.h"
#include "match_internal.h"

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
                        .query_corners = 20000,
                        .max_points = 12000,
                        .point_cell = 3.0,
                        .levels = 3,
                        .geo = ghm_geo_defaults(),
                        .top_candidates = 96,
                        .refine_candidates = 6,
                        .verify_points = 1000,
                        .inlier_px = 2.0,
                        .inlier_angle_deg = 25.0,
                        .min_confidence = 0.25,
                        .min_support = 3,
                        .min_corner_signif = 2.5,
                        .sure_confidence = 0.7,
                        .max_rival = 0.9};
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
        p->levels < 1 || p->levels > GHMI_MAX_LEVELS ||
        p->top_candidates < 1 || p->top_candidates > 100000 || p->refine_candidates < 1 ||
        p->verify_points < 16 || !(p->inlier_px > 0.0) || !(p->inlier_angle_deg > 0.0) ||
        !(p->min_confidence >= 0.0 && p->min_confidence <= 1.0) ||
        !(p->sure_confidence >= 0.0 && p->sure_confidence <= 1.0) || p->min_support > 1000 ||
        !(p->min_corner_signif >= 0.0) || !(p->max_rival > 0.0))
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
    free(t->corner_sat);
    free(t->edge_dir);
    free(t->qnearest);
    free(t->qdir);
    free(t);
    *m = NULL;
}

static int build_nearest(GhmMatcher *m)
{
    size_t npix = (size_t)m->width * m->height;
    int32_t *seeds = malloc(npix * sizeof *seeds);
    m->nearest = malloc(npix * sizeof *m->nearest);
    if (!seeds || !m->nearest) {
        free(seeds);
        return GHM_ERR_NOMEM;
    }
    /* on the team: these arrays' first touch is their pages' zeroing */
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(m->width, m->height))
    for (size_t i = 0; i < npix; i++)
        seeds[i] = -1;
    for (size_t i = 0; i < m->nedges; i++) /* in order: a later point on the same pixel wins */
        seeds[m->edge_pixel[i]] = (int32_t)i;
    int ret = ghmi_nearest_points(m->width, m->height, seeds, m->nearest);
    free(seeds);
    return ret;
}

/* Reference edge points that check a transform in the backward direction: the strongest of
 * every cell, on grids of 2, 4, 8, ... pixels one after the other. A cell of a grid is four
 * cells of the one before (a point's cell index halves with the cell size), so each grid is
 * sampled from the points the one before kept: the same points as from all of them. */
static int select_check_points(GhmMatcher *m)
{
    size_t cap = m->nedges ? m->nedges : 1;
    uint32_t *idx = malloc(cap * sizeof *idx);
    GhmEdgePoint *sub = malloc(cap * sizeof *sub);
    m->rcheck = malloc(2 * cap * sizeof *m->rcheck);
    int ret = idx && sub && m->rcheck ? GHM_OK : GHM_ERR_NOMEM;
    size_t n = 0, prev = 0, nprev = m->nedges;
    for (int g = 0; g < GHMI_CHECK_LEVELS && ret == GHM_OK; g++) {
        size_t k = 0;
        m->check_first[g] = n;
        for (size_t i = 0; i < nprev; i++) /* the points the grid before kept */
            sub[i] = m->edges[g ? m->rcheck[prev + i] : i];
        ret = ghm_edges_grid_sample(sub, nprev, m->width, m->height, 2.0 * (1 << g), idx, &k);
        for (size_t i = 0; i < k && ret == GHM_OK; i++)
            m->rcheck[n + i] = g ? m->rcheck[prev + idx[i]] : idx[i];
        prev = n;
        nprev = k;
        n += k;
    }
    m->check_first[GHMI_CHECK_LEVELS] = n;
    m->nrcheck = n;
    free(idx);
    free(sub);
    return ret;
}

int ghmi_check_ref_levels(const GhmiRefFeatures *f)
{
    size_t nb = 0, nc = 0;
    if (f->nlevels < 1 || f->nlevels > GHMI_MAX_LEVELS)
        return GHM_ERR_INVALID;
    for (size_t l = 0; l < f->nlevels; l++) {
        if (f->levels[l].basis_first != nb || f->levels[l].coded_first != nc)
            return GHM_ERR_INVALID;
        nb += f->levels[l].nbasis;
        nc += f->levels[l].ncoded;
    }
    return nb == f->ncorners && nc == f->ncoded ? GHM_OK : GHM_ERR_INVALID;
}

static int copy_features(GhmMatcher *m, const GhmiRefFeatures *f)
{
    size_t npix = (size_t)m->width * m->height;
    for (size_t i = 0; i < f->nedges; i++)
        if (f->edge_pixel[i] >= npix)
            return GHM_ERR_INVALID;
    m->edges = ghmi_copy_of(f->edges, f->nedges, sizeof *f->edges);
    m->edge_pixel = ghmi_copy_of(f->edge_pixel, f->nedges, sizeof *f->edge_pixel);
    m->corners = ghmi_copy_of(f->corners, f->ncorners, sizeof *f->corners);
    m->coded = ghmi_copy_of(f->coded, f->ncoded, sizeof *f->coded);
    m->edge_dir = malloc((f->nedges ? f->nedges : 1) * sizeof *m->edge_dir);
    if (!m->edges || !m->edge_pixel || !m->corners || !m->coded || !m->edge_dir)
        return GHM_ERR_NOMEM;
    ghmi_unit_directions(f->edges, f->nedges, m->edge_dir);
    m->nedges = f->nedges;
    m->ncorners = f->ncorners;
    m->ncoded = f->ncoded;
    memcpy(m->levels, f->levels, f->nlevels * sizeof *f->levels);
    m->nlevels = f->nlevels;
    return GHM_OK;
}

/* The voter, the candidates' room and the device side of a matcher whose tables are there. */
static int finish_matcher(GhmMatcher *m)
{
    int ret = ghm_geo_voter_create(m->geo, &m->voter);
    if (ret < 0)
        return ret;
    m->cap_cand = ghmi_cand_capacity(&m->p);
    if (!(m->cand = malloc(m->cap_cand * sizeof *m->cand)))
        return GHM_ERR_NOMEM;
    return ghmi_match_device_create(m);
}

/* with_table 0: a reference for one query, whose table the host need not build
 * (ghmi_geo_ref_build). */
static int build_impl(GhmContext *ctx, const GhmiRefFeatures *f, const GhmMatchParams *p,
                      int with_table, GhmMatcher **out)
{
    if (!ctx || !out || !f || f->width < 1 || f->height < 1 || (!f->edges && f->nedges) ||
        (!f->edge_pixel && f->nedges) || (!f->corners && f->ncorners) ||
        (!f->coded && f->ncoded) || ghmi_check_ref_levels(f) < 0)
        return GHM_ERR_INVALID;
    int ret = ghm_match_check_params(p);
    if (ret < 0)
        return ret;
    if ((size_t)f->width * f->height > MAX_MATCH_PIXELS)
        return GHM_ERR_TOO_LARGE;
    *out = NULL;
    GhmMatcher *m = calloc(1, sizeof *m);
    GhmGeoPoint *bp = NULL;
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->p = *p;
    m->seed = ghm_context_seed(ctx);
    m->width = f->width;
    m->height = f->height;
    if ((ret = copy_features(m, f)) < 0 || (ret = build_nearest(m)) < 0 ||
        (ret = select_check_points(m)) < 0 || (ret = ghmi_corner_table(m)) < 0 ||
        (ret = ghmi_corners_to_points(m->corners, m->ncorners, &bp)) < 0)
        goto fail;
    double diag = hypot((double)f->width, (double)f->height);
    if ((ret = ghmi_geo_ref_build(ctx, bp, m->ncorners, m->coded, m->ncoded, m->levels,
                                  m->nlevels, diag, &p->geo, with_table, &m->geo)) < 0 ||
        (ret = finish_matcher(m)) < 0)
        goto fail;
    free(bp);
    *out = m;
    return GHM_OK;
fail:
    free(bp);
    ghm_matcher_free(&m);
    return ret;
}

/* What a clone copies instead of deriving it from the features again: the per-pixel maps, the
 * check points and the tables (a build's cost is in them: the distance transform, the
 * signatures and their sort). */
static int copy_derived(GhmMatcher *c, const GhmMatcher *m)
{
    size_t npix = (size_t)m->width * m->height;
    size_t sat = ((size_t)m->width + 1) * ((size_t)m->height + 1);
    c->nearest = ghmi_copy_of(m->nearest, npix, sizeof *m->nearest);
    c->rcheck = ghmi_copy_of(m->rcheck, m->nrcheck, sizeof *m->rcheck);
    c->corner_sat = ghmi_copy_of(m->corner_sat, sat, sizeof *m->corner_sat);
    if (!c->nearest || !c->rcheck || !c->corner_sat)
        return GHM_ERR_NOMEM;
    c->nrcheck = m->nrcheck;
    memcpy(c->check_first, m->check_first, sizeof c->check_first);
    return ghm_geo_ref_clone(c->ctx, m->geo, &c->geo);
}

static int clone_impl(GhmContext *ctx, const GhmMatcher *m, GhmMatcher **out)
{
    GhmMatcher *c = calloc(1, sizeof *c);
    if (!c)
        return GHM_ERR_NOMEM;
    c->ctx = ctx;
    c->p = m->p;
    c->seed = ghm_context_seed(ctx);
    c->width = m->width;
    c->height = m->height;
    GhmiRefFeatures f = {m->width,  m->height, m->edges, m->edge_pixel, m->nedges, m->corners,
                         m->ncorners, m->coded, m->ncoded, m->levels, m->nlevels};
    int ret;
    if ((ret = copy_features(c, &f)) < 0 || (ret = copy_derived(c, m)) < 0 ||
        (ret = finish_matcher(c)) < 0) {
        ghm_matcher_free(&c);
        return ret;
    }
    *out = c;
    return GHM_OK;
}

int ghm_matcher_clone(GhmContext *ctx, const GhmMatcher *m, GhmMatcher **out)
{
    if (!ctx || !m || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    int old = threads_enter(ctx);
    int ret = clone_impl(ctx, m, out);
    omp_set_num_threads(old);
    return ret;
}

int ghmi_matcher_build(GhmContext *ctx, const GhmiRefFeatures *f, const GhmMatchParams *p,
                       int with_table, GhmMatcher **out)
{
    if (!ctx)
        return GHM_ERR_INVALID;
    int old = threads_enter(ctx);
    int ret = build_impl(ctx, f, p, with_table, out);
    omp_set_num_threads(old);
    return ret;
}

static int create_impl(GhmContext *ctx, const GhmImage *ref, const GhmMatchParams *p,
                       int with_table, GhmMatcher **out)
{
    if (!ctx || !ref || !out || ghm_match_check_params(p) < 0)
        return GHM_ERR_INVALID;
    if ((size_t)ref->width * ref->height > MAX_MATCH_PIXELS)
        return GHM_ERR_TOO_LARGE;
    GhmiPyramid py;
    uint32_t *pix = NULL;
    int ret = ghmi_pyramid_build(ref, p, p->corners.max_corners, &py);
    if (ret < 0)
        return ret;
    const GhmEdges *e = py.edges;
    ret = GHM_ERR_NOMEM;
    if (!(pix = malloc((e->count ? e->count : 1) * sizeof *pix)))
        goto done;
    size_t npix = (size_t)e->width * e->height;
#pragma omp parallel for schedule(static) if (ghmi_parallel_image(e->width, e->height))
    for (size_t i = 0; i < npix; i++) /* a pixel's point is its own: no two write one place */
        if (e->pixel_point[i] >= 0)
            pix[e->pixel_point[i]] = (uint32_t)i;
    GhmiRefFeatures f = {ref->width, ref->height, e->points, pix, e->count, py.corners,
                         py.ncorners, py.coded, py.ncoded, py.levels, py.nlevels};
    ret = build_impl(ctx, &f, p, with_table, out);
done:
    free(pix);
    ghmi_pyramid_free(&py);
    return ret;
}

int ghm_matcher_create(GhmContext *ctx, const GhmImage *ref, const GhmMatchParams *p,
                       GhmMatcher **out)
{
    if (!ctx)
        return GHM_ERR_INVALID;
    int old = threads_enter(ctx);
    int ret = create_impl(ctx, ref, p, 1, out);
    omp_set_num_threads(old);
    return ret;
}

int ghm_matcher_create_for_one_query(GhmContext *ctx, const GhmImage *ref,
                                     const GhmMatchParams *p, GhmMatcher **out)
{
    if (!ctx)
        return GHM_ERR_INVALID;
    int old = threads_enter(ctx);
    int ret = create_impl(ctx, ref, p, 0, out);
    omp_set_num_threads(old);
    return ret;
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
    return ghmi_match_host_query(m, query, res);
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

int ghm_matcher_signatures(const GhmMatcher *m, uint32_t **keys, size_t *n)
{
    return m ? ghm_geo_ref_signatures(m->geo, keys, n) : GHM_ERR_INVALID;
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
    t.min_support = p->min_support;
    t.sure_confidence = p->sure_confidence;
    t.min_corner_signif = p->min_corner_signif;
    t.max_rival = p->max_rival;
    t.geo.query_neighbours = p->geo.query_neighbours;
    t.geo.query_bases = p->geo.query_bases;
    if (ghm_match_check_params(&t) < 0)
        return GHM_ERR_INVALID;
    if (ghmi_cand_capacity(&t) > m->cap_cand) {
        GhmGeoCandidate *c = realloc(m->cand, ghmi_cand_capacity(&t) * sizeof *c);
        if (!c)
            return GHM_ERR_NOMEM;
        m->cand = c;
        m->cap_cand = ghmi_cand_capacity(&t);
    }
    m->p = t;
    return GHM_OK;
}
