/*
 * geohash.c - geometric hashing tables on the hashing API: the reference's bases (a two-way
 * GhmIndex) and its signatures (a GhmMultimap signature -> basis id); see ghm_geohash.h.
 * Voting is geohash_vote.c (host) and geohash_device.c (device).
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_map.h"
#include "geohash_internal.h"

GhmGeoParams ghm_geo_defaults(void)
{
    GhmGeoParams p = {.basis_prob = 1.0,
                      .min_dist = 0.0,
                      .max_dist = 0.35,
                      .min_scale = 0.25,
                      .max_scale = 4.0,
                      .quant = 0.05,
                      .window = 1.0,
                      .angle_bins = 32,
                      .query_bases = 1000,
                      .neighbours = 8,
                      .query_neighbours = 4,
                      .min_len = 0.0};
    return p;
}

int ghm_geo_check_params(const GhmGeoParams *p)
{
    if (!p || !(p->basis_prob > 0.0 && p->basis_prob <= 1.0) || !(p->min_dist >= 0.0) ||
        !(p->max_dist > p->min_dist && p->max_dist <= 2.0) || !(p->min_scale > 0.0) ||
        !(p->max_scale >= p->min_scale && p->max_scale <= 100.0) || !(p->window > 0.0) ||
        !(p->window <= 8.0) || !(p->quant > 0.0) || p->angle_bins < 0 || p->angle_bins > 64 ||
        p->query_bases < 1 || p->query_bases > 1000000 || p->neighbours < 1 ||
        p->neighbours > 64 || p->query_neighbours < 1 || p->query_neighbours > 64 ||
        !(p->min_len >= 0.0 && p->min_len <= 1000.0))
        return GHM_ERR_INVALID;
    if (2.0 * p->window / p->quant > 255.0)
        return GHM_ERR_INVALID; /* (u, v) bins must fit in 8 bits each */
    return GHM_OK;
}
void ghm_geo_ref_free(GhmGeoRef **ref)
{
    if (!ref || !*ref)
        return;
    ghm_index_free(&(*ref)->bases);
    ghm_multimap_free(&(*ref)->table);
    free((*ref)->bpts);
    for (size_t l = 0; (*ref)->grids && l < (*ref)->nlevels; l++)
        ghmi_coded_grid_free(&(*ref)->grids[l]);
    free((*ref)->grids);
    free((*ref)->levels);
    free((*ref)->basis_keys);
    free((*ref)->values);
    free(*ref);
    *ref = NULL;
}

void ghm_geo_ref_sizes(const GhmGeoRef *ref, size_t *bases, size_t *entries, size_t *keys)
{
    if (bases)
        *bases = ref ? ref->nbases : 0;
    if (entries)
        *entries = ref ? ref->nentries : 0;
    if (keys)
        *keys = ref ? ref->nkeys : 0;
}

int ghmi_geo_check_levels(const GhmGeoLevel *levels, size_t nlevels, size_t nb, size_t nc)
{
    for (size_t l = 0; l < nlevels; l++)
        if ((size_t)levels[l].basis_first + levels[l].nbasis > nb ||
            (size_t)levels[l].coded_first + levels[l].ncoded > nc)
            return GHM_ERR_INVALID;
    return GHM_OK;
}

/* Whether (d2, j) is nearer than (bd, bj): by distance, ties by the lower index. */
static inline int nearer(double d2, uint32_t j, double bd, uint32_t bj)
{
    return d2 < bd || (d2 == bd && j < bj);
}

/* The k nearest of point i among bp[first..first+n) (bucketed in cells of `cell` pixels,
 * start/order as a counting sort builds them), farther than sqrt(skip2): bd/bj, nearest first.
 * Rings of cells are visited outwards until the k-th is nearer than the next ring can be. */
static int knn_of(const GhmGeoPoint *bp, uint32_t i, const uint32_t *start, const uint32_t *order,
                  int gw, int gh, double x0, double y0, double cell, int k, double skip2,
                  double *bd, uint32_t *bj)
{
    int nk = 0;
    int cx = (int)((bp[i].x - x0) / cell), cy = (int)((bp[i].y - y0) / cell);
    int rmax = gw > gh ? gw : gh;
    for (int r = 0; r <= rmax; r++) {
        if (nk == k && bd[k - 1] < ((double)(r - 1) * cell) * ((double)(r - 1) * cell))
            break;
        for (int y = cy - r; y <= cy + r; y++) {
            if (y < 0 || y >= gh)
                continue;
            int edge = y == cy - r || y == cy + r;
            for (int x = cx - r; x <= cx + r; x += edge ? 1 : 2 * r) {
                if (x >= 0 && x < gw)
                    for (uint32_t t = start[(size_t)y * gw + x]; t < start[(size_t)y * gw + x + 1]; t++) {
                        uint32_t j = order[t];
                        double dx = bp[j].x - bp[i].x, dy = bp[j].y - bp[i].y;
                        double d2 = dx * dx + dy * dy;
                        if (j == i || d2 < skip2 || (nk == k && !nearer(d2, j, bd[k - 1], bj[k - 1])))
                            continue;
                        int at = nk < k ? nk++ : k - 1;
                        while (at > 0 && nearer(d2, j, bd[at - 1], bj[at - 1])) {
                            bd[at] = bd[at - 1];
                            bj[at] = bj[at - 1];
                            at--;
                        }
                        bd[at] = d2;
                        bj[at] = j;
                    }
                if (r == 0)
                    break;
            }
        }
    }
    return nk;
}

/* The bases of point i (ghmi_geo_neighbour_pairs) into out[0..) and rank[0..), ascending j;
 * returns their count (at most k). */
static int point_pairs(const GhmGeoPoint *bp, uint32_t i, const GhmiPointGrid *g, int k,
                       double skip2, double lo2, double hi2, uint32_t *out, uint8_t *rank)
{
    enum { MAXK = 64 };
    double bd[MAXK];
    uint32_t bj[MAXK];
    uint8_t rk[MAXK];
    int nk = knn_of(bp, i, g->start, g->order, g->gw, g->gh, g->x0, g->y0, g->cell, k, skip2, bd,
                    bj);
    for (int r = 0; r < nk; r++)
        rk[r] = (uint8_t)r;
    /* Ascending j for the output, the rank kept alongside. */
    for (int a = 1; a < nk; a++)
        for (int b = a; b > 0 && bj[b] < bj[b - 1]; b--) {
            uint32_t tj = bj[b];
            double td = bd[b];
            uint8_t tr = rk[b];
            bj[b] = bj[b - 1], bd[b] = bd[b - 1], rk[b] = rk[b - 1];
            bj[b - 1] = tj, bd[b - 1] = td, rk[b - 1] = tr;
        }
    int m = 0;
    for (int r = 0; r < nk; r++) {
        if (bd[r] < lo2 || bd[r] > hi2)
            continue;
        rank[m] = rk[r];
        out[m++] = i << 16 | bj[r];
    }
    return m;
}

/* Buckets bp[first .. first + n) into cells of about two points (a counting sort). */
static int point_grid_build(const GhmGeoPoint *bp, uint32_t first, uint32_t n, GhmiPointGrid *g)
{
    double x0 = bp[first].x, y0 = bp[first].y, x1 = x0, y1 = y0;
    for (uint32_t i = first; i < first + n; i++) {
        x0 = fmin(x0, bp[i].x), y0 = fmin(y0, bp[i].y);
        x1 = fmax(x1, bp[i].x), y1 = fmax(y1, bp[i].y);
    }
    g->x0 = x0, g->y0 = y0;
    g->cell = fmax(1.0, sqrt((x1 - x0 + 1.0) * (y1 - y0 + 1.0) * 2.0 / (double)n));
    g->gw = (int)((x1 - x0) / g->cell) + 1, g->gh = (int)((y1 - y0) / g->cell) + 1;
    size_t cells = (size_t)g->gw * g->gh;
    g->start = calloc(cells + 1, sizeof *g->start);
    g->order = malloc(n * sizeof *g->order);
    uint32_t *at = malloc(n * sizeof *at);
    if (!g->start || !g->order || !at) {
        free(at);
        return GHM_ERR_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        int cx = (int)((bp[first + i].x - x0) / g->cell), cy = (int)((bp[first + i].y - y0) / g->cell);
        at[i] = (uint32_t)((size_t)cy * g->gw + cx);
        g->start[at[i] + 1]++;
    }
    for (size_t c = 0; c < cells; c++)
        g->start[c + 1] += g->start[c];
    for (uint32_t i = 0; i < n; i++)
        g->order[g->start[at[i]]++] = first + i;
    for (size_t c = cells; c > 0; c--)
        g->start[c] = g->start[c - 1];
    g->start[0] = 0;
    free(at);
    return GHM_OK;
}

size_t ghmi_geo_neighbour_pairs(int threads, const GhmGeoPoint *bp, uint32_t first, uint32_t n,
                                int k, double skip2, double lo2, double hi2, uint32_t *out,
                                uint8_t *rank)
{
    if (n == 0)
        return 0;
    GhmiPointGrid g = {0};
    /* Each point's pairs go to its own k slots, in parallel, then are packed in point order:
     * the output does not depend on the thread count. */
    int *count = malloc(n * sizeof *count);
    uint8_t *rk = malloc((size_t)n * k);
    uint32_t *tmp = malloc((size_t)n * k * sizeof *tmp);
    size_t m = SIZE_MAX;
    if (count && rk && tmp && point_grid_build(bp, first, n, &g) == GHM_OK) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
        for (uint32_t t = 0; t < n; t++)
            count[t] = point_pairs(bp, first + t, &g, k, skip2, lo2, hi2, tmp + (size_t)t * k,
                                   rk + (size_t)t * k);
        m = 0;
        for (uint32_t t = 0; t < n; t++)
            for (int r = 0; r < count[t]; r++) {
                if (rank)
                    rank[m] = rk[(size_t)t * k + r];
                out[m++] = tmp[(size_t)t * k + r];
            }
    }
    free(g.start), free(g.order), free(count), free(rk), free(tmp);
    return m;
}

/* Chooses the reference bases: in every level, each basis point with its nearest ones (within
 * the length band), each pair kept with basis_prob. Writes their packed keys (ascending) to
 * *keys_out. */
static int choose_ref_bases(GhmGeoRef *r, uint64_t seed, uint32_t **keys_out, size_t *n_out)
{
    size_t cap = 0, n = 0;
    for (size_t l = 0; l < r->nlevels; l++)
        cap += (size_t)r->levels[l].nbasis * (size_t)r->p.neighbours;
    uint32_t *keys = malloc((cap ? cap : 1) * sizeof *keys);
    if (!keys)
        return GHM_ERR_NOMEM;
    double lo2 = r->len_min * r->len_min, hi2 = r->len_max * r->len_max;
    for (size_t l = 0; l < r->nlevels; l++) {
        double skip = r->p.min_len * r->levels[l].scale;
        size_t k = ghmi_geo_neighbour_pairs(ghm_context_threads(r->ctx), r->bpts,
                                            r->levels[l].basis_first,
                                            r->levels[l].nbasis, r->p.neighbours, skip * skip,
                                            lo2, hi2, keys + n, NULL);
        if (k == SIZE_MAX) {
            free(keys);
            return GHM_ERR_NOMEM;
        }
        size_t w = n;
        for (size_t i = 0; i < k; i++)
            if (keep_pair(seed, 0x5EF, keys[n + i] >> 16, keys[n + i] & 0xFFFF, r->p.basis_prob))
                keys[w++] = keys[n + i];
        n = w;
    }
    *keys_out = keys;
    *n_out = n;
    return GHM_OK;
}

size_t ghmi_geo_level_of(const GhmGeoRef *r, uint32_t key)
{
    uint32_t i = key >> 16;
    for (size_t l = 0; l < r->nlevels; l++)
        if (i >= r->levels[l].basis_first && i < r->levels[l].basis_first + r->levels[l].nbasis)
            return l;
    return 0;
}

/* One thread's signatures: its bases' runs, appended. */
typedef struct Runs {
    uint32_t *keys;
    size_t n, cap;
} Runs;

static int runs_reserve(Runs *r, size_t more)
{
    if (r->n + more <= r->cap)
        return GHM_OK;
    size_t cap = 2 * r->cap + more + 4096;
    uint32_t *t = realloc(r->keys, cap * sizeof *t);
    if (!t)
        return GHM_ERR_NOMEM;
    r->keys = t;
    r->cap = cap;
    return GHM_OK;
}

/* The signatures of every basis, in one pass: each thread appends the runs of the bases it
 * takes to its own array, then the runs are laid out in basis order (keys) with the basis ids
 * (values; ids NULL: the positions), so the arrays do not depend on the thread count. */
static int ref_signatures(const GhmGeoRef *r, const uint32_t *basis_keys, const uint32_t *ids,
                          uint32_t **keys_out, uint32_t **vals_out, size_t *n_out)
{
    size_t nbases = r->nbases, words = seen_words64(&r->p, r->nbins);
    int nthreads = ghm_context_threads(r->ctx), failed = 0;
    size_t *offs = calloc(nbases + 1, sizeof *offs), *at = malloc((nbases + 1) * sizeof *at);
    uint64_t *seen = calloc((size_t)nthreads * words, sizeof *seen);
    uint8_t *lev = malloc((nbases ? nbases : 1) * sizeof *lev);
    uint16_t *owner = malloc((nbases ? nbases : 1) * sizeof *owner);
    Runs *runs = calloc((size_t)nthreads, sizeof *runs);
    uint32_t *keys = NULL, *vals = NULL;
    int ret = GHM_ERR_NOMEM;
    if (!offs || !at || !seen || !lev || !owner || !runs)
        goto fail;
    for (size_t b = 0; b < nbases; b++)
        lev[b] = (uint8_t)ghmi_geo_level_of(r, basis_keys[b]);
#pragma omp parallel num_threads(nthreads) reduction(| : failed)
    {
        int t = omp_get_thread_num();
        uint64_t *st = seen + (size_t)t * words;
        Runs *rr = &runs[t];
#pragma omp for schedule(dynamic, 64)
        for (size_t b = 0; b < nbases; b++) {
            if (failed || runs_reserve(rr, r->grids[lev[b]].n) < 0) {
                failed = 1;
                continue;
            }
            const GhmGeoPoint *pa = &r->bpts[basis_keys[b] >> 16];
            const GhmGeoPoint *pb = &r->bpts[basis_keys[b] & 0xFFFF];
            size_t k = ghmi_basis_signatures(pa, pb, &r->grids[lev[b]], &r->p, r->nbins, st,
                                             rr->keys + rr->n);
            owner[b] = (uint16_t)t;
            at[b] = rr->n;
            offs[b + 1] = k;
            rr->n += k;
        }
    }
    if (failed)
        goto fail;
    for (size_t b = 0; b < nbases; b++)
        offs[b + 1] += offs[b];
    if (offs[nbases] > (size_t)INT32_MAX) {
        ret = GHM_ERR_TOO_LARGE;
        goto fail;
    }
    keys = malloc((offs[nbases] ? offs[nbases] : 1) * sizeof *keys);
    vals = malloc((offs[nbases] ? offs[nbases] : 1) * sizeof *vals);
    if (!keys || !vals)
        goto fail;
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (size_t b = 0; b < nbases; b++) {
        size_t k = offs[b + 1] - offs[b];
        memcpy(keys + offs[b], runs[owner[b]].keys + at[b], k * sizeof *keys);
        for (size_t i = 0; i < k; i++)
            vals[offs[b] + i] = ids ? ids[b] : (uint32_t)b;
    }
    *n_out = offs[nbases];
    *keys_out = keys;
    *vals_out = vals;
    keys = vals = NULL;
    ret = GHM_OK;
fail:
    for (int t = 0; runs && t < nthreads; t++)
        free(runs[t].keys);
    free(runs);
    free(keys);
    free(vals);
    free(offs);
    free(at);
    free(seen);
    free(lev);
    free(owner);
    return ret;
}

/* Whether ids[b] == b for every basis: the bases' keys were ascending and distinct. */
static int ids_are_positions(const uint32_t *ids, size_t n)
{
    for (size_t b = 0; b < n; b++)
        if (ids[b] != b)
            return 0;
    return 1;
}

/* Index of the bases, the signature table (with_table, or where the device votes) and host
 * copies of what voting reads. The scan that votes without the table takes a basis's position
 * for its id: choose_ref_bases' keys are ascending and distinct, so they are the same; were
 * they not, the table is built. */
static int build_tables(GhmGeoRef *r, int with_table)
{
    uint32_t *bkeys = NULL, *ids = NULL, *skeys = NULL, *svals = NULL;
    size_t nsig = 0;
    int ret = choose_ref_bases(r, ghm_context_seed(r->ctx), &bkeys, &r->nbases);
    if (ret < 0)
        goto done;
    ids = malloc((r->nbases ? r->nbases : 1) * sizeof *ids);
    r->basis_keys = malloc((r->nbases ? r->nbases : 1) * sizeof *r->basis_keys);
    if (!ids || !r->basis_keys) {
        ret = GHM_ERR_NOMEM;
        goto done;
    }
    /* the hashing calls take host arrays on either backend (ghm_map.h), staging them where the
     * backend needs device memory */
    if ((ret = ghm_index_create(r->ctx, 0.0, &r->bases)) < 0 ||
        (ret = ghm_index_build(r->bases, bkeys, r->nbases)) < 0 ||
        (ret = ghm_index_ids(r->bases, bkeys, r->nbases, ids)) < 0 ||
        (ret = ghm_index_keys(r->bases, ids, r->nbases, r->basis_keys)) < 0)
        goto done;
    if (!with_table && !ghmi_geo_votes_on_device(r->ctx) && ids_are_positions(ids, r->nbases))
        goto done;
    if ((ret = ref_signatures(r, r->basis_keys, ids, &skeys, &svals, &nsig)) < 0)
        goto done;
    r->nentries = nsig;
    if ((ret = ghm_multimap_create(r->ctx, 0.0, &r->table)) < 0 ||
        (ret = ghm_multimap_build(r->table, skeys, svals, nsig)) < 0)
        goto done;
    r->nkeys = ghm_multimap_keys(r->table);
    const uint32_t *vals = NULL;
    size_t nvals = 0;
    if ((ret = ghm_multimap_values(r->table, &vals, &nvals)) < 0)
        goto done;
    r->values = malloc((nvals ? nvals : 1) * sizeof *r->values);
    if (!r->values) {
        ret = GHM_ERR_NOMEM;
        goto done;
    }
    /* Voting runs on the host here, so it reads a host copy of the value runs. */
    if (nvals && (ret = ghm_buffer_download(r->ctx, r->values, vals, nvals * sizeof *vals)) < 0)
        goto done;
done:
    free(bkeys);
    free(ids);
    free(skeys);
    free(svals);
    return ret;
}

int ghm_geo_ref_build(GhmContext *ctx, const GhmGeoPoint *basis_pts, size_t nb,
                      const GhmGeoPoint *coded_pts, size_t nc, double diag,
                      const GhmGeoParams *p, GhmGeoRef **out)
{
    return ghm_geo_ref_build_levels(ctx, basis_pts, nb, coded_pts, nc, NULL, 0, diag, p, out);
}

int ghm_geo_ref_build_levels(GhmContext *ctx, const GhmGeoPoint *basis_pts, size_t nb,
                             const GhmGeoPoint *coded_pts, size_t nc, const GhmGeoLevel *levels,
                             size_t nlevels, double diag, const GhmGeoParams *p,
                             GhmGeoRef **out)
{
    return ghmi_geo_ref_build(ctx, basis_pts, nb, coded_pts, nc, levels, nlevels, diag, p, 1,
                              out);
}

int ghmi_geo_ref_build(GhmContext *ctx, const GhmGeoPoint *basis_pts, size_t nb,
                       const GhmGeoPoint *coded_pts, size_t nc, const GhmGeoLevel *levels,
                       size_t nlevels, double diag, const GhmGeoParams *p, int with_table,
                       GhmGeoRef **out)
{
    GhmGeoLevel one = {0, (uint32_t)nb, 0, (uint32_t)nc, 1.0f};
    if (!levels) {
        levels = &one;
        nlevels = 1;
    }
    if (!ctx || !out || (!basis_pts && nb) || (!coded_pts && nc) || !(diag > 0.0) ||
        nlevels < 1 || nlevels > 255 || nc > UINT32_MAX)
        return GHM_ERR_INVALID;
    int ret = ghm_geo_check_params(p);
    if (ret < 0)
        return ret;
    if (nb > 65535)
        return GHM_ERR_TOO_LARGE;
    if ((ret = ghmi_geo_check_levels(levels, nlevels, nb, nc)) < 0)
        return ret;
    *out = NULL;
    GhmGeoRef *r = calloc(1, sizeof *r);
    if (!r)
        return GHM_ERR_NOMEM;
    r->ctx = ctx;
    r->p = *p;
    r->nb = nb;
    r->len_min = p->min_dist * diag;
    r->len_max = p->max_dist * diag;
    r->nbins = (int)ceil(2.0 * p->window / p->quant);
    r->bpts = malloc((nb ? nb : 1) * sizeof *r->bpts);
    r->levels = malloc(nlevels * sizeof *r->levels);
    r->grids = calloc(nlevels, sizeof *r->grids);
    if (!r->bpts || !r->levels || !r->grids) {
        ret = GHM_ERR_NOMEM;
        goto fail;
    }
    r->nlevels = nlevels;
    if (nb)
        memcpy(r->bpts, basis_pts, nb * sizeof *r->bpts);
    memcpy(r->levels, levels, nlevels * sizeof *r->levels);
    for (size_t l = 0; l < nlevels; l++)
        if ((ret = ghmi_coded_grid_build(coded_pts + levels[l].coded_first, levels[l].ncoded,
                                         &r->grids[l])) < 0)
            goto fail;
    if ((ret = build_tables(r, with_table)) < 0)
        goto fail;
    *out = r;
    return GHM_OK;
fail:
    ghm_geo_ref_free(&r);
    return ret;
}

static int copy_grid(const GhmiCodedGrid *src, GhmiCodedGrid *g)
{
    *g = *src;
    g->pts = ghmi_copy_of(src->pts, src->n, sizeof *src->pts);
    g->start = ghmi_copy_of(src->start, (size_t)src->gw * src->gh + 1, sizeof *src->start);
    return g->pts && g->start ? GHM_OK : GHM_ERR_NOMEM;
}

/* Everything copied, the tables by the hashing layer's clones: no signature is computed and
 * nothing is sorted again, which is what a build spends its time on. */
int ghm_geo_ref_clone(GhmContext *ctx, const GhmGeoRef *src, GhmGeoRef **out)
{
    if (!ctx || !src || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmGeoRef *r = calloc(1, sizeof *r);
    if (!r)
        return GHM_ERR_NOMEM;
    *r = *src;
    r->ctx = ctx;
    r->bases = NULL;
    r->table = NULL;
    r->bpts = ghmi_copy_of(src->bpts, src->nb, sizeof *src->bpts);
    r->levels = ghmi_copy_of(src->levels, src->nlevels, sizeof *src->levels);
    r->grids = calloc(src->nlevels, sizeof *r->grids);
    r->basis_keys = ghmi_copy_of(src->basis_keys, src->nbases, sizeof *src->basis_keys);
    r->values = src->table ? ghmi_copy_of(src->values, src->nentries, sizeof *src->values) : NULL;
    int ret = r->bpts && r->levels && r->grids && r->basis_keys && (r->values || !src->table)
                  ? GHM_OK
                  : GHM_ERR_NOMEM;
    if (!r->grids)
        r->nlevels = 0; /* ghm_geo_ref_free walks the grids */
    for (size_t l = 0; l < r->nlevels && ret == GHM_OK; l++)
        ret = copy_grid(&src->grids[l], &r->grids[l]);
    if (ret == GHM_OK && (ret = ghm_index_clone(ctx, src->bases, &r->bases)) == GHM_OK &&
        src->table) /* a reference without its table (ghmi_geo_ref_build) has a clone without */
        ret = ghm_multimap_clone(ctx, src->table, &r->table);
    if (ret < 0) {
        ghm_geo_ref_free(&r);
        return ret;
    }
    *out = r;
    return GHM_OK;
}

/* Every packed key of the signature space (u | v << 8 | angle << 16), into a new array. */
static int signature_space(const GhmGeoRef *r, uint32_t **out, size_t *n)
{
    uint32_t na = r->p.angle_bins > 0 ? (uint32_t)r->p.angle_bins : 1, nb = (uint32_t)r->nbins;
    *n = key_space(&r->p, r->nbins);
    uint32_t *k = malloc(*n * sizeof *k);
    if (!k)
        return GHM_ERR_NOMEM;
    size_t i = 0;
    for (uint32_t a = 0; a < na; a++)
        for (uint32_t v = 0; v < nb; v++)
            for (uint32_t u = 0; u < nb; u++)
                k[i++] = u | v << 8 | a << 16;
    *out = k;
    return GHM_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* A reference without its table: every basis's signatures computed again, each basis's run put
 * in key order. */
static int signatures_without_table(const GhmGeoRef *r, uint32_t **keys, size_t *n)
{
    uint32_t *k = NULL, *ids = NULL;
    size_t nsig = 0;
    int ret = ref_signatures(r, r->basis_keys, NULL, &k, &ids, &nsig);
    if (ret < 0)
        return ret;
    for (size_t i = 0, j; i < nsig; i = j) {
        for (j = i + 1; j < nsig && ids[j] == ids[i]; j++)
            ;
        qsort(k + i, j - i, sizeof *k, cmp_u32);
    }
    free(ids);
    *keys = k;
    *n = nsig;
    return GHM_OK;
}

/* The table's entries are found by looking every key of the signature space up (the table
 * keeps no host copy of its keys), then laid out by basis with a counting sort of the host copy
 * of the values (basis ids). */
int ghm_geo_ref_signatures(const GhmGeoRef *r, uint32_t **keys, size_t *n)
{
    if (!r || !keys || !n)
        return GHM_ERR_INVALID;
    if (!r->table)
        return signatures_without_table(r, keys, n);
    uint32_t *space = NULL, *first = NULL, *count = NULL, *at = NULL, *out = NULL;
    size_t ns = 0;
    int ret = signature_space(r, &space, &ns);
    if (ret < 0)
        return ret;
    first = malloc(ns * sizeof *first);
    count = malloc(ns * sizeof *count);
    at = calloc(r->nbases + 1, sizeof *at);
    out = malloc((r->nentries ? r->nentries : 1) * sizeof *out);
    if (!first || !count || !at || !out)
        ret = GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = ghm_multimap_find(r->table, space, ns, first, count);
    for (size_t i = 0; ret == GHM_OK && i < ns; i++) /* entries per basis, then their starts */
        for (uint32_t j = 0; j < count[i]; j++)
            at[r->values[first[i] + j] + 1]++;
    for (size_t b = 0; ret == GHM_OK && b < r->nbases; b++)
        at[b + 1] += at[b];
    for (size_t i = 0; ret == GHM_OK && i < ns; i++)
        for (uint32_t j = 0; j < count[i]; j++)
            out[at[r->values[first[i] + j]]++] = space[i];
    free(space);
    free(first);
    free(count);
    free(at);
    if (ret < 0) {
        free(out);
        return ret;
    }
    *keys = out;
    *n = r->nentries;
    return GHM_OK;
}
