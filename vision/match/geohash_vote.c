/*
 * geohash_vote.c - voting with the geometric-hashing tables: the query's bases sampled and
 * indexed, their signatures looked up, votes counted per (reference basis, query basis) cell on
 * the host, or on the backend's device (geohash_device.c), and the best cells ranked.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_sort_internal.h"
#include "geohash_internal.h"

void ghm_geo_voter_free(GhmGeoVoter **v)
{
    if (!v || !*v)
        return;
    GhmGeoVoter *t = *v;
    GhmContext *ctx = t->ref->ctx;
    free(t->rows);
    free(t->seen);
    free(t->pairs);
    free(t->keys);
    free(t->first);
    free(t->count);
    free(t->offsets);
    free(t->qbasis);
    free(t->rank);
    free(t->qlevel);
    for (size_t l = 0; t->grids && l < t->nlevels; l++)
        ghmi_coded_grid_free(&t->grids[l]);
    free(t->grids);
    ghm_buffer_free(ctx, &t->dev_keys);
    for (int i = 0; i < DEV_BUFFERS; i++)
        ghm_buffer_free(ctx, &t->dev[i]);
    const GhmVisionOps *ops = ghmi_vision_ops(ctx);
    if (t->stage && ops && ops->stage_free)
        ops->stage_free(ctx, &t->stage, &t->cap_stage);
    free(t);
    *v = NULL;
}

int ghm_geo_voter_create(const GhmGeoRef *ref, GhmGeoVoter **out)
{
    if (!ref || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmGeoVoter *v = calloc(1, sizeof *v);
    if (!v)
        return GHM_ERR_NOMEM;
    v->ref = ref;
    /* Every parallel region of the voter runs with exactly this many threads: the per-thread
     * rows and bitmaps below are sized for them. */
    v->nthreads = ghm_context_threads(ref->ctx);
    size_t words = seen_words64(&ref->p, ref->nbins);
    v->rows = calloc((size_t)v->nthreads * (ref->nbases ? ref->nbases : 1), sizeof *v->rows);
    v->seen = calloc((size_t)v->nthreads * words, sizeof *v->seen);
    int ret = GHM_ERR_NOMEM;
    if (!v->rows || !v->seen)
        goto fail;
    *out = v;
    return GHM_OK;
fail:
    ghm_geo_voter_free(&v);
    return ret;
}

static int grow(uint32_t **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return GHM_OK;
    uint32_t *t = realloc(*p, need * sizeof *t);
    if (!t)
        return GHM_ERR_NOMEM;
    *p = t;
    *cap = need;
    return GHM_OK;
}

static int grow8(uint8_t **p, size_t *cap, size_t need)
{
    if (need <= *cap)
        return GHM_OK;
    uint8_t *t = realloc(*p, need);
    if (!t)
        return GHM_ERR_NOMEM;
    *p = t;
    *cap = need;
    return GHM_OK;
}

/* Keeps the first keep of the n pairs in v->pairs by priority, ascending: the neighbour rank,
 * then how strong the first point is within its level (basis points come strongest first), as
 * a share of the level's points, so that every level gets its strongest points' bases; ties
 * by the pair. The pairs arrive ascending and the radix sort is stable, so sorting by (rank,
 * share) alone breaks the ties by the pair. */
static int keep_first_bases(GhmGeoVoter *v, const GhmGeoLevel *levels, size_t nlevels, size_t n,
                            size_t keep)
{
    uint32_t *key = malloc(n * sizeof *key);
    if (!key)
        return GHM_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = v->pairs[i] >> 16;
        double share = 0.0;
        for (size_t l = 0; l < nlevels; l++)
            if (k >= levels[l].basis_first && k < levels[l].basis_first + levels[l].nbasis)
                share = (double)(k - levels[l].basis_first) / (double)levels[l].nbasis;
        key[i] = (uint32_t)v->rank[i] << 16 | (uint32_t)(share * 65535.0);
    }
    int ret = ghmi_cpu_sort_pairs(v->nthreads, key, v->pairs, n);
    free(key);
    return ret < 0 ? ret : ghmi_cpu_sort_pairs(v->nthreads, v->pairs, NULL, keep);
}

/* Chooses the query bases into v->pairs (packed k << 16 | l, ascending): in every level each
 * basis point with its query_neighbours nearest, within the band of lengths that some scale in
 * [min_scale, max_scale] takes into the reference's band. Beyond query_bases, the nearest
 * neighbours (rank 0, then 1, ...) of every point come first, so that each point keeps a basis.
 * v->qbasis[id] is the packed pair of basis id (the pairs distinct and ascending) and
 * v->qlevel[id] its level. Returns the count in *m. */
static int query_bases(GhmGeoVoter *v, const GhmGeoPoint *bp, const GhmGeoLevel *levels,
                       size_t nlevels, const GhmGeoParams *p, size_t *m)
{
    const GhmGeoRef *r = v->ref;
    double lo = r->len_min / p->max_scale, hi = r->len_max / p->min_scale;
    size_t cap = 0, n = 0;
    for (size_t l = 0; l < nlevels; l++)
        cap += (size_t)levels[l].nbasis * (size_t)p->query_neighbours;
    int ret = grow(&v->pairs, &v->cap_pairs, cap ? cap : 1);
    if (ret < 0 || (ret = grow8(&v->rank, &v->cap_rank, cap ? cap : 1)) < 0)
        return ret;
    for (size_t l = 0; l < nlevels; l++) {
        double skip = p->min_len * levels[l].scale;
        size_t k = ghmi_geo_neighbour_pairs(v->nthreads, bp, levels[l].basis_first,
                                            levels[l].nbasis, p->query_neighbours, skip * skip,
                                            lo * lo, hi * hi, v->pairs + n, v->rank + n);
        if (k == SIZE_MAX)
            return GHM_ERR_NOMEM;
        n += k;
    }
    if (n > p->query_bases && (ret = keep_first_bases(v, levels, nlevels, n,
                                                      (size_t)p->query_bases)) < 0)
        return ret;
    n = n < (size_t)p->query_bases ? n : (size_t)p->query_bases;
    if ((ret = grow(&v->qbasis, &v->cap_bases, n ? n : 1)) < 0 ||
        (ret = grow8(&v->qlevel, &v->cap_qlevel, n ? n : 1)) < 0 ||
        (ret = ghmi_cpu_sort_pairs(v->nthreads, v->pairs, NULL, n)) < 0)
        return ret;
    /* The bases' ids are their ranks among the distinct pairs (a few thousand at most: sorted
     * here, on either backend, rather than through a device index and its round trips). */
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v->pairs[i] != v->pairs[i - 1])
            v->qbasis[k++] = v->pairs[i];
    for (size_t b = 0; b < k; b++) {
        uint32_t i = v->qbasis[b] >> 16;
        v->qlevel[b] = 0;
        for (size_t l = 0; l < nlevels; l++)
            if (i >= levels[l].basis_first && i < levels[l].basis_first + levels[l].nbasis)
                v->qlevel[b] = (uint8_t)l;
    }
    *m = k;
    return GHM_OK;
}

/* The query's coded points bucketed per level (host memory only). */
static int query_grids(GhmGeoVoter *v, const GhmGeoPoint *cp, const GhmGeoLevel *levels,
                       size_t nlevels)
{
    for (size_t l = 0; v->grids && l < v->nlevels; l++)
        ghmi_coded_grid_free(&v->grids[l]);
    free(v->grids);
    v->nlevels = 0;
    if (!(v->grids = calloc(nlevels, sizeof *v->grids)))
        return GHM_ERR_NOMEM;
    v->nlevels = nlevels;
    for (size_t l = 0; l < nlevels; l++) {
        int ret = ghmi_coded_grid_build(cp + levels[l].coded_first, levels[l].ncoded,
                                        &v->grids[l]);
        if (ret < 0)
            return ret;
    }
    return GHM_OK;
}

/* One thread's signatures: appended run after run. */
typedef struct SigRuns {
    uint32_t *keys;
    size_t n, cap;
} SigRuns;

/* The distinct signatures of every query basis, concatenated (offsets per basis id), then one
 * bulk multimap look-up for all of them (none without the reference's table: the scan counts
 * the votes). Each thread appends its bases' runs to its own array; the runs are then laid out
 * in basis order. */
static int query_signatures(GhmGeoVoter *v, const GhmGeoParams *p, const GhmGeoPoint *bp,
                            size_t m, size_t *nkeys)
{
    const GhmGeoRef *r = v->ref;
    size_t words = seen_words64(&r->p, r->nbins), maxc = 0;
    for (size_t l = 0; l < v->nlevels; l++)
        maxc = v->grids[l].n > maxc ? v->grids[l].n : maxc;
    uint32_t *counts = malloc((m + 1) * sizeof *counts), *owner = malloc((m + 1) * sizeof *owner);
    size_t *at = malloc((m + 1) * sizeof *at);
    SigRuns *runs = calloc((size_t)v->nthreads, sizeof *runs);
    int ret = GHM_ERR_NOMEM, failed = 0;
    if (!counts || !owner || !at || !runs)
        goto done;
#pragma omp parallel num_threads(v->nthreads) reduction(| : failed)
    {
        int t = omp_get_thread_num();
        uint64_t *st = v->seen + (size_t)t * words;
        SigRuns *rr = &runs[t];
#pragma omp for schedule(dynamic, 16)
        for (size_t b = 0; b < m; b++) {
            if (failed || (rr->n + maxc > rr->cap &&
                           grow(&rr->keys, &rr->cap, 2 * rr->cap + maxc + 1024) < 0)) {
                failed = 1;
                continue;
            }
            const GhmGeoPoint *pa = &bp[v->qbasis[b] >> 16], *pb = &bp[v->qbasis[b] & 0xFFFF];
            counts[b] = (uint32_t)ghmi_basis_signatures(pa, pb, &v->grids[v->qlevel[b]], p,
                                                        r->nbins, st, rr->keys + rr->n);
            owner[b] = (uint32_t)t;
            at[b] = rr->n;
            rr->n += counts[b];
        }
    }
    if (failed)
        goto done;
    free(v->offsets);
    if (!(v->offsets = malloc((m + 1) * sizeof *v->offsets)))
        goto done;
    size_t n = 0;
    for (size_t b = 0; b < m; b++) {
        v->offsets[b] = (uint32_t)n;
        n += counts[b];
    }
    v->offsets[m] = (uint32_t)n;
    if ((ret = grow(&v->keys, &v->cap_keys, n + 1)) < 0)
        goto done;
    for (size_t b = 0; b < m; b++)
        memcpy(v->keys + v->offsets[b], runs[owner[b]].keys + at[b], counts[b] * sizeof *v->keys);
    *nkeys = n;
    ret = GHM_OK;
    if (!r->table)
        goto done;
    if ((ret = grow(&v->first, &v->cap_first, n ? n : 1)) < 0 ||
        (ret = grow(&v->count, &v->cap_count, n ? n : 1)) < 0 ||
        (ret = ghm_buffer_reserve(r->ctx, &v->dev_keys, &v->cap_dev_keys,
                                  (n ? n : 1) * sizeof(uint32_t))) < 0)
        goto done;
    if (n && (ret = ghm_buffer_upload(r->ctx, v->dev_keys, v->keys, n * sizeof *v->keys)) < 0)
        goto done;
    ret = ghm_multimap_find(r->table, v->dev_keys, n, v->first, v->count);
done:
    for (int t = 0; runs && t < v->nthreads; t++)
        free(runs[t].keys);
    free(runs);
    free(counts);
    free(owner);
    free(at);
    return ret;
}

static int cmp_cand(const void *a, const void *b)
{
    const GhmGeoCandidate *x = a, *y = b;
    if (x->votes != y->votes)
        return x->votes < y->votes ? 1 : -1;
    uint32_t kx = x->q_k << 16 | x->q_l, ky = y->q_k << 16 | y->q_l;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    uint32_t rx = x->ref_i << 16 | x->ref_j, ry = y->ref_i << 16 | y->ref_j;
    return (rx > ry) - (rx < ry);
}

void ghmi_geo_row_cells(const GhmGeoVoter *v, size_t b, const uint32_t *best,
                        const uint32_t *who, GhmGeoCandidate *row_best)
{
    for (int i = 0; i < CAND_PER_ROW; i++) {
        GhmGeoCandidate *c = &row_best[b * CAND_PER_ROW + i];
        c->votes = best[i];
        uint32_t rk = best[i] ? v->ref->basis_keys[who[i]] : 0;
        c->ref_i = rk >> 16;
        c->ref_j = rk & 0xFFFF;
        c->q_k = v->qbasis[b] >> 16;
        c->q_l = v->qbasis[b] & 0xFFFF;
    }
}

/* One row of T per query basis: accumulate, keep its CAND_PER_ROW best cells (by
 * ghmi_geo_beats, so the device's reduction of the finished row picks the same). A signature's
 * run of values (14 on average, a cache line) starts anywhere in the table's megabytes of
 * values, and the row's increments wait on it: the runs VOTE_AHEAD signatures on are fetched
 * while this one is counted. */
#define VOTE_AHEAD 8
static uint64_t vote_rows(GhmGeoVoter *v, size_t m, GhmGeoCandidate *row_best)
{
    const GhmGeoRef *r = v->ref;
    size_t n = r->nbases;
    uint64_t total = 0;
#pragma omp parallel reduction(+ : total) num_threads(v->nthreads)
    {
        uint32_t *row = v->rows + (size_t)omp_get_thread_num() * (n ? n : 1);
#pragma omp for schedule(dynamic, 8)
        for (size_t b = 0; b < m; b++) {
            memset(row, 0, n * sizeof *row);
            uint32_t best[CAND_PER_ROW] = {0}, who[CAND_PER_ROW] = {0};
            const uint32_t end = v->offsets[b + 1];
            for (uint32_t s = v->offsets[b]; s < end; s++) {
                if (s + VOTE_AHEAD < end)
                    __builtin_prefetch(r->values + v->first[s + VOTE_AHEAD]);
                const uint32_t *vals = r->values + v->first[s];
                for (uint32_t c = 0; c < v->count[s]; c++) {
                    uint32_t id = vals[c], votes = ++row[id];
                    if (!ghmi_geo_beats(votes, id, best[CAND_PER_ROW - 1],
                                        who[CAND_PER_ROW - 1]))
                        continue;
                    /* Insert id into the small best list (it may already be in it). */
                    int at = CAND_PER_ROW - 1;
                    for (int i = 0; i < CAND_PER_ROW; i++)
                        if (who[i] == id && best[i] > 0) {
                            at = i;
                            break;
                        }
                    ghmi_geo_raise(best, who, at, votes, id);
                }
                total += v->count[s];
            }
            ghmi_geo_row_cells(v, b, best, who, row_best);
        }
    }
    return total;
}

int ghm_geo_vote(GhmGeoVoter *v, const GhmGeoPoint *basis_pts, size_t nb,
                 const GhmGeoPoint *coded_pts, size_t nc, const GhmGeoParams *p, uint64_t seed,
                 GhmGeoCandidate *cand, size_t max_cand, size_t *ncand, GhmGeoStats *stats)
{
    return ghm_geo_vote_levels(v, basis_pts, nb, coded_pts, nc, NULL, 0, p, seed, cand, max_cand,
                               ncand, stats);
}

int ghm_geo_vote_levels(GhmGeoVoter *v, const GhmGeoPoint *basis_pts, size_t nb,
                        const GhmGeoPoint *coded_pts, size_t nc, const GhmGeoLevel *levels,
                        size_t nlevels, const GhmGeoParams *p, uint64_t seed,
                        GhmGeoCandidate *cand, size_t max_cand, size_t *ncand,
                        GhmGeoStats *stats)
{
    GhmGeoLevel one = {0, (uint32_t)nb, 0, (uint32_t)nc, 1.0f};
    if (!levels) {
        levels = &one;
        nlevels = 1;
    }
    (void)seed;
    if (!v || !p || !ncand || (!cand && max_cand) || (!basis_pts && nb) || (!coded_pts && nc) ||
        nlevels < 1 || nlevels > 255 || nc > UINT32_MAX ||
        ghmi_geo_check_levels(levels, nlevels, nb, nc) < 0)
        return GHM_ERR_INVALID;
    if (nb > 65535)
        return GHM_ERR_TOO_LARGE;
    const GhmGeoRef *r = v->ref;
    if (p->window != r->p.window || p->quant != r->p.quant || p->angle_bins != r->p.angle_bins)
        return GHM_ERR_INVALID; /* signatures must be quantised as the table's were */
    GhmGeoStats st = {0};
    *ncand = 0;
    double t0 = ghm_now();
    size_t m = 0, nkeys = 0;
    int ret = query_bases(v, basis_pts, levels, nlevels, p, &m);
    if (ret < 0)
        return ret;
    double t1 = ghm_now();
    /* A backend with vision kernels computes signatures and votes on its device, with the
     * reference's table there (a reference without one is scanned on the host). */
    const GhmVisionOps *ops = ghmi_vision_ops(r->ctx);
    int on_device = r->table && ghmi_geo_votes_on_device(r->ctx);
    if (!on_device && ((ret = query_grids(v, coded_pts, levels, nlevels)) < 0 ||
                       (ret = query_signatures(v, p, basis_pts, m, &nkeys)) < 0))
        return ret;
    double t2 = ghm_now();
    GhmGeoCandidate *row_best = malloc((m ? m : 1) * CAND_PER_ROW * sizeof *row_best);
    if (!row_best)
        return GHM_ERR_NOMEM;
    if (on_device) {
        if ((ret = ghmi_geo_device_vote(v, ops, basis_pts, coded_pts, levels, p, m, row_best,
                                        &st, &t2)) < 0) {
            free(row_best);
            return ret;
        }
        nkeys = st.lookups;
    } else if (r->table) {
        st.votes = r->nbases ? vote_rows(v, m, row_best) : 0;
    } else if ((ret = ghmi_geo_scan_votes(v, m, row_best, &st)) < 0) {
        free(row_best);
        return ret;
    } else {
        st.scanned = 1;
    }
    if (r->table) {
        st.ref_entries = r->nentries;
        st.ref_keys = r->nkeys;
    }
    size_t n = 0;
    for (size_t i = 0; i < m * CAND_PER_ROW && r->nbases; i++)
        if (row_best[i].votes > 0)
            row_best[n++] = row_best[i];
    qsort(row_best, n, sizeof *row_best, cmp_cand);
    *ncand = n < max_cand ? n : max_cand;
    if (*ncand)
        memcpy(cand, row_best, *ncand * sizeof *cand);
    free(row_best);
    double t3 = ghm_now();
    st.query_bases = m;
    st.lookups = nkeys;
    st.bases_ms = 1e3 * (t1 - t0);
    st.signatures_ms = 1e3 * (t2 - t1);
    st.voting_ms = 1e3 * (t3 - t2);
    if (stats)
        *stats = st;
    return GHM_OK;
}
