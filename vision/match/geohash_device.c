/*
 * geohash_device.c - the votes of geohash_vote.c on the backend's device (GhmVisionOps
 * geo_vote / geo_best, kernels/vision/match/geohash.cu): the query's basis frames up, the best
 * cells of every row down.
 */
#include <stdlib.h>

#include "geohash_internal.h"


/* Basis (a, b) with what geohash_signatures.c derives from it, computed by the same
 * expressions (d in float, then widened), so that the device's signatures are bit for bit the
 * CPU's. */
static GhmGeoFrame basis_frame(const GhmGeoPoint *a, const GhmGeoPoint *b)
{
    GhmGeoFrame f = {0};
    double dx = b->x - a->x, dy = b->y - a->y;
    double len2 = dx * dx + dy * dy;
    f.ax = a->x;
    f.ay = a->y;
    f.dx = dx;
    f.dy = dy;
    f.valid = len2 > 0.0;
    if (f.valid) {
        f.inv_len2 = 1.0 / len2;
        f.phi = atan2(dy, dx);
    }
    return f;
}

static int dev_grow(GhmGeoVoter *v, int which, size_t bytes)
{
    return ghm_buffer_reserve(v->ref->ctx, &v->dev[which], &v->cap_dev[which], bytes + 4);
}

/* Rounds n up to a multiple of 16 bytes: the staging arrays' offsets. */
static size_t align16(size_t n) { return (n + 15) & ~(size_t)15; }

/* Signatures and votes of the m query bases in v->qbasis on the device, in batches of query
 * bases that keep the vote array within DEVICE_CELLS; fills row_best as vote_rows() does and
 * st->lookups / st->votes. *t_up is set when the inputs are on the device. */
int ghmi_geo_device_vote(GhmGeoVoter *v, const GhmVisionOps *ops, const GhmGeoPoint *bp,
                         const GhmGeoPoint *cp, const GhmGeoLevel *levels, const GhmGeoParams *p,
                         size_t m, GhmGeoCandidate *row_best, GhmGeoStats *st, double *t_up)
{
    size_t nc = 0; /* the coded points span up to the end of the last level's */
    for (size_t b = 0; b < m; b++) {
        const GhmGeoLevel *l = &levels[v->qlevel[b]];
        nc = (size_t)l->coded_first + l->ncoded > nc ? (size_t)l->coded_first + l->ncoded : nc;
    }
    const GhmGeoRef *r = v->ref;
    GhmContext *ctx = r->ctx;
    size_t n = r->nbases, words = (key_space(p, r->nbins) + 31) / 32;
    size_t batch = DEVICE_CELLS / (n > words ? n : words);
    batch = batch < 1 ? 1 : batch > m ? m : batch;
    GhmGeoSigParams sp = ghmi_sig_params(p, r->nbins);
    /* One staging array: frames | best cells | the two counters. */
    size_t frames_bytes = align16(m * sizeof(GhmGeoFrame));
    size_t best_bytes = align16(m * CAND_PER_ROW * 2 * sizeof(uint32_t));
    int ret = ops->stage_reserve(ctx, &v->stage, &v->cap_stage,
                                 frames_bytes + best_bytes + 2 * sizeof(unsigned long long));
    if (ret < 0)
        return ret;
    GhmGeoFrame *frames = v->stage;
    uint32_t *best = (uint32_t *)((char *)v->stage + frames_bytes);
    unsigned long long *counters =
        (unsigned long long *)((char *)v->stage + frames_bytes + best_bytes);
    for (size_t b = 0; b < m; b++) {
        frames[b] = basis_frame(&bp[v->qbasis[b] >> 16], &bp[v->qbasis[b] & 0xFFFF]);
        frames[b].coded_first = levels[v->qlevel[b]].coded_first;
        frames[b].coded_count = levels[v->qlevel[b]].ncoded;
    }
    if ((ret = dev_grow(v, DEV_FRAMES, m * sizeof *frames)) < 0 ||
        (ret = dev_grow(v, DEV_VOTES, batch * n * sizeof(uint32_t))) < 0 ||
        (ret = dev_grow(v, DEV_SEEN, batch * words * sizeof(uint32_t))) < 0 ||
        (ret = dev_grow(v, DEV_BEST, m * CAND_PER_ROW * 2 * sizeof *best)) < 0 ||
        (ret = dev_grow(v, DEV_COUNTERS, 2 * sizeof *counters)) < 0 ||
        (ret = ops->copy_async(ctx, v->dev[DEV_FRAMES], frames, m * sizeof *frames)) < 0 ||
        (ret = ghm_buffer_zero(ctx, v->dev[DEV_COUNTERS], 2 * sizeof *counters)) < 0)
        goto fail;
    /* Coded points a device stage already produced (match_device.c) are read where they are. */
    const GhmGeoPoint *dev_cp = cp;
    if (nc && !ghm_buffer_in_place(ctx, cp)) {
        if ((ret = dev_grow(v, DEV_CODED, nc * sizeof *cp)) < 0 ||
            (ret = ghm_buffer_upload(ctx, v->dev[DEV_CODED], cp, nc * sizeof *cp)) < 0)
            goto fail;
        dev_cp = v->dev[DEV_CODED];
    }
    *t_up = ghm_now();
    for (size_t b0 = 0; b0 < m; b0 += batch) {
        size_t mb = m - b0 < batch ? m - b0 : batch;
        if ((ret = ops->geo_vote(ctx, r->table, n, (const GhmGeoFrame *)v->dev[DEV_FRAMES] + b0,
                                 mb, dev_cp, nc, &sp, v->dev[DEV_VOTES],
                                 v->dev[DEV_SEEN], v->dev[DEV_COUNTERS])) < 0 ||
            (ret = ops->geo_best(ctx, v->dev[DEV_VOTES], mb, n,
                                 (uint32_t *)v->dev[DEV_BEST] + b0 * CAND_PER_ROW * 2)) < 0)
            goto fail;
    }
    /* The one wait of the voting: the best cells and the counters, copied together. */
    if ((ret = ops->copy_async(ctx, best, v->dev[DEV_BEST],
                               m * CAND_PER_ROW * 2 * sizeof *best)) < 0 ||
        (ret = ops->copy_async(ctx, counters, v->dev[DEV_COUNTERS], 2 * sizeof *counters)) < 0 ||
        (ret = ghm_context_sync(ctx)) < 0)
        goto fail;
    for (size_t i = 0; i < m * CAND_PER_ROW; i++) {
        GhmGeoCandidate *c = &row_best[i];
        uint32_t votes = best[2 * i], rk = votes ? r->basis_keys[best[2 * i + 1]] : 0;
        c->votes = votes;
        c->ref_i = rk >> 16;
        c->ref_j = rk & 0xFFFF;
        c->q_k = v->qbasis[i / CAND_PER_ROW] >> 16;
        c->q_l = v->qbasis[i / CAND_PER_ROW] & 0xFFFF;
    }
    st->lookups = (size_t)counters[0];
    st->votes = counters[1];
    return GHM_OK;
fail:
    ghm_context_sync(ctx); /* no copy of the staging array may still be queued */
    return ret;
}
