/*
 * match_device.c - ghm_matcher_match on a backend with vision kernels (CUDA): the query's
 * features (kernels/vision/features/features.cu), voting (geohash.c's device path) and verification
 * (kernels/vision/match/verify.cu) run on the device; the host keeps what is small and sequential:
 * choosing the corners among the candidates, the search for a grid cell size (the sampling
 * itself runs on the device), the ranking of the transforms between the scoring rounds. The
 * steps and their order are match.c's, so that both backends find the same transforms (within
 * a pixel; the tests check it).
 *
 * What crosses the bus per query: the grey pixels up; the corner candidates down (tens of KB);
 * the query bases up (the voting); a few hundred bytes of transforms and counts each way per
 * verification round; the inlier positions down at the end. The edge points, the sampled
 * indices and the coded points stay on the device.
 *
 * The host waits (ghm_cuda_host_waits) only where it reads what the device made: once for the
 * pyramid's counts; once for the corner candidates with the first try of every grid-sampling
 * search (the levels' and the verification's, run side by side), then once per further round
 * of tries; once for the votes; once per verification round (a refinement's transforms get
 * their check ranges on the device and come back with the counts); once for the inliers.
 * Small inputs go up and small results come down through staging (pinned) memory by queued
 * copies, which wait for nothing.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edges_internal.h"
#include "match_internal.h"

/* Blocks the refinement may spread one transform over, and their partial sums. */
#define REFINE_PARTIAL_BLOCKS 256

/* The device buffers: the reference's, uploaded once, then the per-query ones, grown. */
enum {
    D_NEAREST, D_EDGES, D_EDGE_DIR, D_CHECK,
    D_SAMPLE_IDX, D_VERIFY_PTS, D_POLISH_PTS, D_CODED, D_HYPS, D_RANGES, D_COUNTS, D_PARTIALS,
    D_XY, D_CELLS_VERIFY, D_CELLS_POLISH, D_COUNT
};

/* The capped sampling searches of a query: one per pyramid level, then the level-0 points for
 * the verification rounds and for the polish. */
enum { SEARCH_VERIFY = GHMI_MAX_LEVELS, SEARCH_POLISH, SEARCHES };

struct GhmMatchDevice {
    const GhmVisionOps *ops;
    GhmFeatureWorkspace *ws[GHMI_MAX_LEVELS]; /* one per pyramid level of the query */
    void *d[D_COUNT];
    size_t cap[D_COUNT]; /* bytes */
    GhmVerifyRef ref;
    /* host scratch, grown */
    /* staging memory of the pyramid: each level's first sampling count, then the levels'
     * corner candidates, read after one wait */
    void *pyr;
    size_t cap_pyr; /* bytes */
    /* the counts of the last batch of sampling tries (in pyr, in batch order), the searches
     * of that batch, and where each search's indices start in D_SAMPLE_IDX: the pyramid's
     * levels, then the verification points (SEARCH_VERIFY, SEARCH_POLISH) */
    uint32_t *kept;
    int batch[SEARCHES], nbatch;
    size_t idx_first[SEARCHES];
    size_t nkept[SEARCHES]; /* each search's answer: the points its indices hold */
    float (*xy)[2];   /* staging memory: the polish points mapped (NaN: not an inlier) */
    size_t cap_xy;    /* bytes */
    Hypothesis *hyp;
    size_t cap_hyp; /* transforms */
    /* staging memory (ops->stage_reserve), what a verification round sends and reads back:
     * the copies are queued without waiting, and each round waits once, for its result */
    GhmSimilarity *sims;
    GhmVerifyCounts *counts;
    uint32_t *ranges; /* two a transform: its check points (ghmi_check_range) */
    size_t cap_sims, cap_counts, cap_ranges; /* bytes */
};

static int grow_host(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return GHM_OK;
    void *t = realloc(*p, need * size);
    if (!t)
        return GHM_ERR_NOMEM;
    *p = t;
    *cap = need;
    return GHM_OK;
}

/* The per-transform arrays (hypotheses on the host; their transforms, counts and check ranges
 * in staging memory), grown together. */
static int grow_hypotheses(GhmContext *ctx, GhmMatchDevice *d, size_t need)
{
    const GhmVisionOps *ops = d->ops;
    int ret = grow_host((void **)&d->hyp, &d->cap_hyp, need, sizeof *d->hyp);
    if (ret == GHM_OK)
        ret = ops->stage_reserve(ctx, (void **)&d->sims, &d->cap_sims, need * sizeof *d->sims);
    if (ret == GHM_OK)
        ret = ops->stage_reserve(ctx, (void **)&d->counts, &d->cap_counts,
                                 need * sizeof *d->counts);
    if (ret == GHM_OK)
        ret = ops->stage_reserve(ctx, (void **)&d->ranges, &d->cap_ranges,
                                 2 * need * sizeof *d->ranges);
    return ret;
}

static int grow_dev(GhmContext *ctx, GhmMatchDevice *d, int which, size_t bytes)
{
    return ghm_buffer_reserve(ctx, &d->d[which], &d->cap[which], bytes);
}

static int upload_new(GhmContext *ctx, GhmMatchDevice *d, int which, const void *src,
                      size_t bytes)
{
    int ret = grow_dev(ctx, d, which, bytes ? bytes : 1);
    return ret < 0 || !bytes ? ret : ghm_buffer_upload(ctx, d->d[which], src, bytes);
}

void ghmi_match_device_free(GhmMatcher *m)
{
    GhmMatchDevice *d = m->dev;
    if (!d)
        return;
    for (int l = 0; l < GHMI_MAX_LEVELS; l++)
        d->ops->features_free(m->ctx, &d->ws[l]);
    for (int i = 0; i < D_COUNT; i++)
        ghm_buffer_free(m->ctx, &d->d[i]);
    d->ops->stage_free(m->ctx, &d->pyr, &d->cap_pyr);
    d->ops->stage_free(m->ctx, (void **)&d->xy, &d->cap_xy);
    free(d->hyp);
    d->ops->stage_free(m->ctx, (void **)&d->sims, &d->cap_sims);
    d->ops->stage_free(m->ctx, (void **)&d->counts, &d->cap_counts);
    d->ops->stage_free(m->ctx, (void **)&d->ranges, &d->cap_ranges);
    free(d);
    m->dev = NULL;
}

int ghmi_match_device_create(GhmMatcher *m)
{
    const GhmVisionOps *ops = ghmi_vision_ops(m->ctx);
    if (!ops || !ops->features_start || !ops->features_start_halved || !ops->features_finish ||
        !ops->features_sample || !ops->features_sample_batch || !ops->verify_prepare ||
        !ops->stage_reserve || !ops->stage_free || !ops->copy_async || !ops->verify_ranges)
        return GHM_OK;
    GhmMatchDevice *d = calloc(1, sizeof *d);
    if (!d)
        return GHM_ERR_NOMEM;
    d->ops = ops;
    m->dev = d;
    GhmContext *ctx = m->ctx;
    size_t npix = (size_t)m->width * m->height;
    int ret = GHM_OK;
    for (int l = 0; l < GHMI_MAX_LEVELS && ret == GHM_OK; l++)
        ret = ops->features_create(ctx, &d->ws[l]);
    if (ret == GHM_OK)
        ret = upload_new(ctx, d, D_NEAREST, m->nearest, npix * sizeof *m->nearest);
    if (ret == GHM_OK)
        ret = upload_new(ctx, d, D_EDGES, m->edges, m->nedges * sizeof *m->edges);
    if (ret == GHM_OK)
        ret = upload_new(ctx, d, D_EDGE_DIR, m->edge_dir, m->nedges * sizeof *m->edge_dir);
    if (ret == GHM_OK)
        ret = upload_new(ctx, d, D_CHECK, m->rcheck, m->nrcheck * sizeof *m->rcheck);
    if (ret < 0) {
        ghmi_match_device_free(m);
        return ret;
    }
    d->ref.nearest = d->d[D_NEAREST];
    d->ref.edges = d->d[D_EDGES];
    d->ref.edge_dir = (const float(*)[2])d->d[D_EDGE_DIR];
    d->ref.check = d->d[D_CHECK];
    d->ref.ncheck = m->nrcheck;
    d->ref.width = m->width;
    d->ref.height = m->height;
    return GHM_OK;
}

/* --- features ------------------------------------------------------------------------------ */

/* The corners of pyramid level l (features f, its candidates cand, already on the host) as
 * basis points in full-image pixels, appended to (*qb, *nqb); the selection is the CPU's
 * (ghmi_corners_select, which reorders cand). */
static int level_corners(GhmMatcher *m, GhmCornerCand *cand, const GhmDeviceFeatures *f, int l,
                         GhmGeoPoint **qb, size_t *nqb)
{
    GhmCornerParams cp = m->p.corners;
    cp.max_corners = m->p.query_corners;
    GhmCorner *qc = NULL;
    size_t nc = 0;
    int ret = ghmi_corners_select(cand, f->ncand, f->width, f->height, &cp, &qc, &nc);
    if (ret < 0)
        return ret;
    GhmGeoPoint *t = realloc(*qb, (*nqb + nc + 1) * sizeof *t);
    if (!t) {
        free(qc);
        return GHM_ERR_NOMEM;
    }
    for (size_t i = 0; i < nc; i++)
        t[*nqb + i] = (GhmGeoPoint){ghmi_level_to_full(qc[i].x, l), ghmi_level_to_full(qc[i].y, l),
                                    0.0f};
    *qb = t;
    *nqb += nc;
    free(qc);
    return GHM_OK;
}

/* The cell search of sampling search k (a pyramid level, SEARCH_VERIFY, SEARCH_POLISH): its
 * first cell and the most points it keeps (match.c's choices). */
static GhmiCellSearch search_start(const GhmMatcher *m, int k)
{
    if (k == SEARCH_VERIFY)
        return ghmi_cell_search_start(2.0, m->p.verify_points);
    if (k == SEARCH_POLISH)
        return ghmi_cell_search_start(1.0, GHMI_MAX_POLISH_POINTS);
    return ghmi_cell_search_start(m->p.point_cell, m->p.max_points);
}

/* The points kept by search k (SEARCH_VERIFY or SEARCH_POLISH, over the level-0 query points),
 * prepared for verification in `which`; their number in *n. */
static int verify_points(GhmMatcher *m, const GhmVerifyQuery *q, int k, int which, size_t *n)
{
    GhmMatchDevice *d = m->dev;
    *n = d->nkept[k];
    int ret = grow_dev(m->ctx, d, which, (*n + 1) * sizeof(GhmVerifyPoint));
    return ret < 0 ? ret : d->ops->verify_prepare(m->ctx, q,
                                                  (uint32_t *)d->d[D_SAMPLE_IDX] + d->idx_first[k],
                                                  *n, d->d[which]);
}

/* Queues one try of each of the n searches which[] at cells cell[], as one batch (its counts
 * into d->kept, in batch order). The verification's two searches sample the level-0 points
 * beside level 0's own, so each has cells of its own. */
static int queue_tries(GhmMatcher *m, const int *which, const double *cell, int n)
{
    GhmMatchDevice *d = m->dev;
    GhmSampleJob jobs[SEARCHES];
    for (int j = 0; j < n; j++) {
        int k = which[j];
        unsigned long long *cells = NULL;
        if (k == SEARCH_VERIFY || k == SEARCH_POLISH)
            cells = d->d[k == SEARCH_VERIFY ? D_CELLS_VERIFY : D_CELLS_POLISH];
        jobs[j] = (GhmSampleJob){d->ws[k < GHMI_MAX_LEVELS ? k : 0], cell[j],
                                 (uint32_t *)d->d[D_SAMPLE_IDX] + d->idx_first[k], cells};
        d->batch[j] = k;
    }
    d->nbatch = n;
    return d->ops->features_sample_batch(m->ctx, jobs, n, d->kept);
}

/* After the wait for a batch: its counts, into the searches' answers. */
static void read_tries(GhmMatchDevice *d)
{
    for (int j = 0; j < d->nbatch; j++)
        d->nkept[d->batch[j]] = d->kept[j];
}

/* The capped sampling searches (ghm_edges_sample_capped's, try by try) of the pyramid's levels
 * and of the verification, side by side: every round queues the next try of each search not
 * yet done, and the host reads their counts after one wait. The answers end in d->nkept. */
typedef struct Searches {
    GhmiCellSearch s[SEARCHES];
    int tries[SEARCHES], live[SEARCHES];
} Searches;

/* The searches of nl levels after their first tries (queue_level_reads), read after a wait. */
static void searches_begin(GhmMatcher *m, size_t nl, Searches *st)
{
    GhmMatchDevice *d = m->dev;
    for (int k = 0; k < SEARCHES; k++) {
        st->live[k] = k >= GHMI_MAX_LEVELS || (size_t)k < nl;
        st->s[k] = search_start(m, k);
        st->tries[k] = 1;
        d->nkept[k] = 0;
    }
    read_tries(d);
}

/* Queues the next try of every search that needs one, as one batch; *queued = 0 when every
 * search is done. */
static int searches_queue(GhmMatcher *m, Searches *st, int *queued)
{
    GhmMatchDevice *d = m->dev;
    int which[SEARCHES], n = 0;
    double cell[SEARCHES];
    for (int k = 0; k < SEARCHES; k++) {
        if (!st->live[k])
            continue;
        if (st->tries[k] >= GHMI_SAMPLE_TRIES || ghmi_cell_search_step(&st->s[k], d->nkept[k])) {
            st->live[k] = 0;
            continue;
        }
        which[n] = k;
        cell[n++] = st->s[k].cell;
        st->tries[k]++;
    }
    *queued = n > 0;
    return n ? queue_tries(m, which, cell, n) : GHM_OK;
}

/* The cells search k's tries over the level-0 points f0 can need: its first try's (cells only
 * grow from try to try), in bytes. */
static size_t cells_bound(const GhmMatcher *m, const GhmDeviceFeatures *f0, int k)
{
    double c = search_start(m, k).cell;
    return (size_t)ceil(f0->width / c) * (size_t)ceil(f0->height / c) * sizeof(unsigned long long);
}

/* Queues, for every level, the copy of its corner candidates into staging memory (cand[l]) and
 * the first try of every sampling search (the levels', the two of the verification over the
 * level-0 points) into its own part of D_SAMPLE_IDX (d->idx_first), its count into
 * d->kept: the host reads them all after one wait. */
static int queue_level_reads(GhmMatcher *m, const GhmDeviceFeatures *f, size_t nl,
                             GhmCornerCand **cand)
{
    GhmMatchDevice *d = m->dev;
    size_t ncand = 0, nidx = 0, head = (SEARCHES * sizeof(uint32_t) + 15) & ~(size_t)15;
    for (int k = 0; k < SEARCHES; k++) {
        const GhmDeviceFeatures *fk = k < GHMI_MAX_LEVELS ? &f[k] : &f[0];
        if (k < GHMI_MAX_LEVELS && (size_t)k >= nl)
            continue;
        d->idx_first[k] = nidx;
        nidx += fk->npoints + 1;
        ncand += k < GHMI_MAX_LEVELS ? fk->ncand : 0;
    }
    int ret = d->ops->stage_reserve(m->ctx, &d->pyr, &d->cap_pyr,
                                    head + (ncand + 1) * sizeof **cand);
    if (ret < 0 || (ret = grow_dev(m->ctx, d, D_SAMPLE_IDX, nidx * sizeof(uint32_t))) < 0 ||
        (ret = grow_dev(m->ctx, d, D_CELLS_VERIFY, cells_bound(m, &f[0], SEARCH_VERIFY))) < 0 ||
        (ret = grow_dev(m->ctx, d, D_CELLS_POLISH, cells_bound(m, &f[0], SEARCH_POLISH))) < 0)
        return ret;
    d->kept = d->pyr;
    GhmCornerCand *c = (GhmCornerCand *)((char *)d->pyr + head);
    for (size_t l = 0; l < nl && ret == GHM_OK; l++) {
        cand[l] = c;
        ret = d->ops->copy_async(m->ctx, c, f[l].cand, f[l].ncand * sizeof *c);
        c += f[l].ncand;
    }
    int which[SEARCHES], n = 0;
    double cell[SEARCHES];
    for (int k = 0; k < SEARCHES; k++)
        if (k >= GHMI_MAX_LEVELS || (size_t)k < nl) {
            which[n] = k;
            cell[n++] = search_start(m, k).cell;
        }
    return ret < 0 ? ret : queue_tries(m, which, cell, n);
}

/* The query's pyramid on the device, as ghmi_pyramid_build makes it on the host: every level's
 * features (f[l], in workspace ws[l]), its corners (host: *qb, *nqb) and its coded points
 * (sampled and gathered into D_CODED in full-image pixels, where the voting reads them), the
 * ranges in lv. The levels' images are halved on the device (features_start_halved). The host
 * waits once for the levels' counts, once for their candidates and first sampling counts, then
 * once per further round of sampling tries; it chooses the corners during the first round. */
static int query_pyramid(GhmMatcher *m, const GhmImage *query, GhmDeviceFeatures *f,
                         GhmGeoPoint **qb, size_t *nqb, GhmGeoLevel *lv, size_t *nlv)
{
    GhmMatchDevice *d = m->dev;
    size_t nl = ghmi_pyramid_levels(query->width, query->height, &m->p), bound = 0, nc = 0;
    GhmCornerParams cp = m->p.corners;
    GhmCornerCand *cand[GHMI_MAX_LEVELS];
    int ret = GHM_OK;
    /* Every level queued at once (each after the first halves the one before on the device),
     * then their counts read: the context's stream waits for every level's. */
    for (size_t l = 0; l < nl && ret == GHM_OK; l++) {
        GhmFeatureParams fp;
        int w = query->width >> l, h = query->height >> l; /* ghm_image_halve's sizes */
        if ((ret = ghmi_feature_params(&m->p.edges, &cp, w, h, &fp)) < 0)
            break;
        ret = l ? d->ops->features_start_halved(m->ctx, d->ws[l], d->ws[l - 1], &fp)
                : d->ops->features_start(m->ctx, d->ws[0], query->pixels, w, h, query->stride,
                                         &fp);
    }
    if (ret == GHM_OK)
        ret = ghm_context_sync(m->ctx);
    for (size_t l = 0; l < nl && ret == GHM_OK; l++) {
        if ((ret = d->ops->features_finish(m->ctx, d->ws[l], &f[l])) < 0)
            break;
        bound += f[l].npoints < m->p.max_points ? f[l].npoints : m->p.max_points;
    }
    if (ret == GHM_OK)
        ret = grow_dev(m->ctx, d, D_CODED, (bound + 1) * sizeof(GhmGeoPoint));
    if (ret == GHM_OK && (ret = queue_level_reads(m, f, nl, cand)) == GHM_OK &&
        (ret = ghm_context_sync(m->ctx)) == GHM_OK) {
        Searches st;
        int queued = 0;
        searches_begin(m, nl, &st);
        ret = searches_queue(m, &st, &queued);
        /* the corners are chosen on the host while the device runs the searches' next tries */
        for (size_t l = 0; l < nl && ret == GHM_OK; l++) {
            lv[l] = (GhmGeoLevel){(uint32_t)*nqb, 0, 0, 0, (float)(1 << l)};
            ret = level_corners(m, cand[l], &f[l], (int)l, qb, nqb);
            lv[l].nbasis = (uint32_t)(*nqb - lv[l].basis_first);
        }
        while (ret == GHM_OK && queued && (ret = ghm_context_sync(m->ctx)) == GHM_OK) {
            read_tries(d);
            ret = searches_queue(m, &st, &queued);
        }
    }
    for (size_t l = 0; l < nl && ret == GHM_OK; l++) {
        size_t n = d->nkept[l];
        uint32_t *idx = (uint32_t *)d->d[D_SAMPLE_IDX] + d->idx_first[l];
        lv[l].coded_first = (uint32_t)nc;
        lv[l].ncoded = (uint32_t)n;
        ret = d->ops->features_gather(m->ctx, d->ws[l], idx, n, (int)l,
                                      (GhmGeoPoint *)d->d[D_CODED] + nc);
        nc += n;
    }
    *nlv = nl;
    return ret;
}

/* --- verification -------------------------------------------------------------------------- */

/* Queues the check ranges of the n transforms in D_HYPS into D_RANGES: computed on the host
 * from hyp[0..n) and uploaded, or, for transforms the device refined (`on_device`), computed
 * there by the same function (ghm_check_range). */
static int queue_ranges(GhmMatcher *m, const GhmVerifyQuery *q, const Hypothesis *hyp, size_t n,
                        int on_device)
{
    GhmMatchDevice *d = m->dev;
    int ret = grow_dev(m->ctx, d, D_RANGES, (2 * n + 1) * sizeof *d->ranges);
    if (ret < 0)
        return ret;
    if (on_device) {
        GhmCheckGrids grids;
        ghmi_check_grids(m, &grids);
        return d->ops->verify_ranges(m->ctx, d->d[D_HYPS], n, &grids, q->width, q->height,
                                     d->d[D_RANGES]);
    }
    for (size_t i = 0; i < n; i++) {
        size_t first, count;
        ghmi_check_range(m, &hyp[i].s, q->width, q->height, &first, &count);
        d->ranges[2 * i] = (uint32_t)first;
        d->ranges[2 * i + 1] = (uint32_t)count;
    }
    return d->ops->copy_async(m->ctx, d->d[D_RANGES], d->ranges, 2 * n * sizeof *d->ranges);
}

/* Scores the n transforms queued into D_HYPS (those of hyp[0..n), in that order) on the device
 * (the prepared points of buffer idx_buf, nidx of them) and ranks hyp. The round waits once, for
 * the counts the ranking reads; with `refined`, the device refined the transforms in D_HYPS,
 * and they come back in the same wait, into hyp. */
static int score_queued(GhmMatcher *m, const GhmVerifyQuery *q, int idx_buf, size_t nidx,
                        Hypothesis *hyp, size_t n, double radius, int backward, int rank,
                        int refined)
{
    GhmMatchDevice *d = m->dev;
    int ret = grow_dev(m->ctx, d, D_COUNTS, (n + 1) * sizeof *d->counts);
    if (ret < 0 || (ret = queue_ranges(m, q, hyp, n, refined)) < 0 ||
        (ret = d->ops->verify_score(m->ctx, &d->ref, q, d->d[idx_buf], nidx, d->d[D_HYPS], n,
                                    radius, ghmi_cos_tol(&m->p), backward, d->d[D_RANGES],
                                    d->d[D_COUNTS])) < 0 ||
        (ret = d->ops->copy_async(m->ctx, d->counts, d->d[D_COUNTS], n * sizeof *d->counts)) < 0 ||
        (refined &&
         (ret = d->ops->copy_async(m->ctx, d->sims, d->d[D_HYPS], n * sizeof *d->sims)) < 0) ||
        (ret = ghm_context_sync(m->ctx)) < 0)
        return ret;
    for (size_t i = 0; i < n; i++) {
        Score sc = {d->counts[i].inliers, d->counts[i].inside, d->counts[i].back_inliers,
                    d->counts[i].back_inside, 0.0, 0.0, 0.0};
        ghmi_score_shares(&sc, nidx, backward);
        hyp[i].sc = sc;
        if (refined)
            hyp[i].s = d->sims[i];
    }
    if (rank)
        qsort(hyp, n, sizeof *hyp, ghmi_cmp_hyp);
    return GHM_OK;
}

/* Queues the upload of hyp[0..n)'s transforms into D_HYPS (through the staging array). */
static int queue_transforms(GhmMatcher *m, const Hypothesis *hyp, size_t n)
{
    GhmMatchDevice *d = m->dev;
    for (size_t i = 0; i < n; i++)
        d->sims[i] = hyp[i].s;
    int ret = grow_dev(m->ctx, d, D_HYPS, (n + 1) * sizeof *d->sims);
    return ret < 0 ? ret : d->ops->copy_async(m->ctx, d->d[D_HYPS], d->sims, n * sizeof *d->sims);
}

/* Uploads the transforms of hyp[0..n), then scores and ranks them as score_queued. */
static int score_round(GhmMatcher *m, const GhmVerifyQuery *q, int idx_buf, size_t nidx,
                       Hypothesis *hyp, size_t n, double radius, int backward, int rank)
{
    int ret = queue_transforms(m, hyp, n);
    return ret < 0 ? ret : score_queued(m, q, idx_buf, nidx, hyp, n, radius, backward, rank, 0);
}

/* Refines hyp[0..n) on the device (points of idx_buf), then scores and ranks them as
 * score_queued: the refined transforms stay in D_HYPS, where their check ranges are computed
 * and they are scored, and come back with the counts (one wait). */
static int refine_round(GhmMatcher *m, const GhmVerifyQuery *q, int idx_buf, size_t nidx,
                        Hypothesis *hyp, size_t n)
{
    GhmMatchDevice *d = m->dev;
    GhmRefineSteps steps = {.steps = (int32_t)GHMI_REFINE_STEPS};
    for (size_t i = 0; i < GHMI_REFINE_STEPS; i++)
        steps.radius[i] = GHMI_REFINE_RADII[i];
    size_t npart = REFINE_PARTIAL_BLOCKS * 2 * GHM_REFINE_SUMS;
    int ret = queue_transforms(m, hyp, n);
    if (ret < 0 || (ret = grow_dev(m->ctx, d, D_PARTIALS, npart * sizeof(double))) < 0 ||
        (ret = d->ops->verify_refine(m->ctx, &d->ref, q, d->d[idx_buf], nidx, d->d[D_HYPS], n,
                                     &steps, ghmi_cos_tol(&m->p), d->d[D_PARTIALS], npart)) < 0)
        return ret;
    return score_queued(m, q, idx_buf, nidx, hyp, n, m->p.inlier_px, 1, 1, 1);
}

/* The inliers of the polished transform on the polish points, mapped into the reference, in
 * point order. The polish round refined that one transform alone, so D_HYPS[0] holds it. */
static int collect_inliers(GhmMatcher *m, const GhmVerifyQuery *q, size_t na)
{
    GhmMatchDevice *d = m->dev;
    int ret = grow_dev(m->ctx, d, D_XY, (na + 1) * sizeof *d->xy);
    if (ret < 0 ||
        (ret = d->ops->stage_reserve(m->ctx, (void **)&d->xy, &d->cap_xy,
                                     (na + 1) * sizeof *d->xy)) < 0 ||
        (ret = grow_host((void **)&m->inliers, &m->cap_inliers, na + 1, sizeof *m->inliers)) < 0)
        return ret;
    /* into staging memory by a queued copy, as the other results come back, not downloaded
     * into pageable memory (the driver stages those through a buffer of its own) */
    if ((ret = d->ops->verify_inliers(m->ctx, &d->ref, q, d->d[D_POLISH_PTS], na, d->d[D_HYPS],
                                      m->p.inlier_px, ghmi_cos_tol(&m->p), d->d[D_XY])) < 0 ||
        (na && (ret = d->ops->copy_async(m->ctx, d->xy, d->d[D_XY], na * sizeof *d->xy)) < 0) ||
        (ret = ghm_context_sync(m->ctx)) < 0)
        return ret;
    size_t k = 0;
    for (size_t i = 0; i < na; i++)
        if (!isnan(d->xy[i][0])) {
            m->inliers[k][0] = d->xy[i][0];
            m->inliers[k][1] = d->xy[i][1];
            k++;
        }
    m->ninliers = k;
    return GHM_OK;
}

/* match_host.c's ambiguity test on the refined hyp[0..nr): the rivals' halfway transforms
 * scored on the device in one round, in their order. */
static int rival_share(GhmMatcher *m, const GhmVerifyQuery *q, size_t nv, const Hypothesis *hyp,
                       size_t nr, double *rival)
{
    size_t idx[GHMI_RIVALS], n = ghmi_rivals(m, hyp, nr, q->width, q->height, idx);
    Hypothesis mid[GHMI_RIVALS];
    for (size_t i = 0; i < n; i++)
        mid[i].s = ghmi_halfway(&hyp[0].s, &hyp[idx[i]].s);
    int ret = n ? score_round(m, q, D_VERIFY_PTS, nv, mid, n, m->p.inlier_px, 1, 0) : GHM_OK;
    for (size_t i = 0; i < n && ret == GHM_OK; i++)
        *rival = fmax(*rival, ghmi_rival_share(&hyp[0], &hyp[idx[i]], mid[i].sc.confidence));
    return ret;
}

/* match.c's verification (score_candidates, refine_best, polish) with the device doing the
 * per-point work. */
static int verify(GhmMatcher *m, const GhmDeviceFeatures *f, const GhmGeoPoint *qb,
                  const GhmGeoLevel *lv, size_t nlv, size_t ncand, GhmMatchResult *res)
{
    GhmMatchDevice *d = m->dev;
    GhmVerifyQuery q = {f->points, f->pixel_point, f->width, f->height};
    size_t nv = 0, na = 0;
    int ret = grow_hypotheses(m->ctx, d, ncand + 1);
    if (ret < 0)
        return ret;
    size_t n = ghmi_hypotheses(m, qb, ncand, d->hyp);
    if (n == 0)
        return GHM_OK;
    size_t nb = n < GHMI_BACKWARD_CANDIDATES ? n : GHMI_BACKWARD_CANDIDATES;
    size_t nr = n < m->p.refine_candidates ? n : m->p.refine_candidates;
    double screen = 2.0 * m->p.inlier_px;
    if ((ret = verify_points(m, &q, SEARCH_VERIFY, D_VERIFY_PTS, &nv)) < 0 ||
        (ret = score_round(m, &q, D_VERIFY_PTS, nv, d->hyp, n, screen, 0, 1)) < 0 ||
        (ret = score_round(m, &q, D_VERIFY_PTS, nv, d->hyp, nb, screen, 1, 1)) < 0 ||
        (ret = refine_round(m, &q, D_VERIFY_PTS, nv, d->hyp, nr)) < 0)
        return ret;
    double rival = 0.0;
    if ((ret = rival_share(m, &q, nv, d->hyp, nr, &rival)) < 0)
        return ret;
    if ((ret = verify_points(m, &q, SEARCH_POLISH, D_POLISH_PTS, &na)) < 0 ||
        (ret = refine_round(m, &q, D_POLISH_PTS, na, d->hyp, 1)) < 0 ||
        (ret = collect_inliers(m, &q, na)) < 0)
        return ret;
    Evidence ev = ghmi_evidence(m, qb, lv, nlv, &d->hyp[0], rival);
    ghmi_fill_result(m, &d->hyp[0], &ev, res);
    res->query_edges = na;
    return GHM_OK;
}

int ghmi_match_device_query(GhmMatcher *m, const GhmImage *query, GhmMatchResult *res)
{
    GhmDeviceFeatures f[GHMI_MAX_LEVELS];
    GhmGeoLevel lv[GHMI_MAX_LEVELS];
    GhmGeoPoint *qb = NULL;
    size_t nqb = 0, nlv = 0, ncand = 0;
    double t0 = ghm_now();
    int ret = query_pyramid(m, query, f, &qb, &nqb, lv, &nlv);
    if (ret < 0)
        goto done;
    res->time.edges_ms = 1e3 * (ghm_now() - t0);
    res->query_edge_points = f[0].npoints;
    res->query_basis_points = nqb;
    size_t ncoded = (size_t)lv[nlv - 1].coded_first + lv[nlv - 1].ncoded;
    if ((ret = ghmi_vote(m, m->dev->d[D_CODED], ncoded, qb, nqb, lv, nlv, res, &ncand)) < 0)
        goto done;
    double t1 = ghm_now();
    ret = verify(m, &f[0], qb, lv, nlv, ncand, res);
    res->time.verification_ms = 1e3 * (ghm_now() - t1);
done:
    if (ret < 0)
        ghm_context_sync(m->ctx); /* no copy of the staging arrays may still be queued */
    res->time.total_ms = 1e3 * (ghm_now() - t0);
    free(qb);
    return ret;
}
