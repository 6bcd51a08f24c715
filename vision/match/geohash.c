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
    GhmGeoParams p = {.basis_prob = 0.2,
                      .min_dist = 0.05,
                      .max_dist = 0.35,
                      .min_scale = 0.5,
                      .max_scale = 2.0,
                      .quant = 0.05,
                      .window = 1.5,
                      .angle_bins = 32,
                      .query_bases = 600};
    return p;
}

int ghm_geo_check_params(const GhmGeoParams *p)
{
    if (!p || !(p->basis_prob > 0.0 && p->basis_prob <= 1.0) || !(p->min_dist > 0.0) ||
        !(p->max_dist > p->min_dist && p->max_dist <= 2.0) || !(p->min_scale > 0.0) ||
        !(p->max_scale >= p->min_scale && p->max_scale <= 100.0) || !(p->window > 0.0) ||
        !(p->window <= 8.0) || !(p->quant > 0.0) || p->angle_bins < 0 || p->angle_bins > 64 ||
        p->query_bases < 1 || p->query_bases > 1000000)
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

/* Uploads n words to a new backend buffer. */
static int to_backend(GhmContext *ctx, const uint32_t *host, size_t n, void **out)
{
    int ret = ghm_buffer_alloc(ctx, n * sizeof *host, out);
    if (ret < 0)
        return ret;
    if (n && (ret = ghm_buffer_upload(ctx, *out, host, n * sizeof *host)) < 0)
        ghm_buffer_free(ctx, out);
    return ret;
}

/* Chooses the reference bases: ordered pairs in the length band, each kept with basis_prob.
 * Writes their packed keys (ascending) to *keys_out. */
static int choose_ref_bases(GhmGeoRef *r, uint64_t seed, uint32_t **keys_out, size_t *n_out)
{
    size_t cap = 1024, n = 0;
    uint32_t *keys = malloc(cap * sizeof *keys);
    if (!keys)
        return GHM_ERR_NOMEM;
    double lo2 = r->len_min * r->len_min, hi2 = r->len_max * r->len_max;
    for (uint32_t i = 0; i < r->nb; i++) {
        for (uint32_t j = 0; j < r->nb; j++) {
            double dx = r->bpts[j].x - r->bpts[i].x, dy = r->bpts[j].y - r->bpts[i].y;
            double d2 = dx * dx + dy * dy;
            if (i == j || d2 < lo2 || d2 > hi2 || !keep_pair(seed, 0x5EF, i, j, r->p.basis_prob))
                continue;
            if (n == cap) {
                uint32_t *t = realloc(keys, 2 * cap * sizeof *keys);
                if (!t) {
                    free(keys);
                    return GHM_ERR_NOMEM;
                }
                keys = t;
                cap *= 2;
            }
            keys[n++] = i << 16 | j;
        }
    }
    *keys_out = keys;
    *n_out = n;
    return GHM_OK;
}

/* Two passes over the bases (count, then fill) so that the signature arrays are exact. */
static int ref_signatures(GhmGeoRef *r, const uint32_t *basis_keys, const uint32_t *ids,
                          const GhmGeoPoint *cpts, size_t nc, uint32_t **keys_out,
                          uint32_t **vals_out, size_t *n_out)
{
    size_t nbases = r->nbases, space = key_space(&r->p, r->nbins);
    int nthreads = ghm_context_threads(r->ctx);
    size_t *offs = calloc(nbases + 1, sizeof *offs);
    uint32_t *stamps = calloc((size_t)nthreads * space, sizeof *stamps);
    uint32_t *scratch = malloc((size_t)nthreads * (nc ? nc : 1) * sizeof *scratch);
    uint32_t *keys = NULL, *vals = NULL;
    int ret = GHM_ERR_NOMEM;
    if (!offs || !stamps || !scratch)
        goto fail;
    for (int pass = 0; pass < 2; pass++) {
        memset(stamps, 0, (size_t)nthreads * space * sizeof *stamps);
#pragma omp parallel num_threads(nthreads)
        {
            int t = omp_get_thread_num();
            uint32_t *st = stamps + (size_t)t * space, *buf = scratch + (size_t)t * nc;
#pragma omp for schedule(dynamic, 64)
            for (size_t b = 0; b < nbases; b++) {
                const GhmGeoPoint *pa = &r->bpts[basis_keys[b] >> 16];
                const GhmGeoPoint *pb = &r->bpts[basis_keys[b] & 0xFFFF];
                uint32_t stamp = (uint32_t)(2 * b + (size_t)pass + 1);
                size_t k = basis_signatures(pa, pb, cpts, nc, &r->p, r->nbins, st, stamp,
                                            pass ? keys + offs[b] : buf);
                if (!pass)
                    offs[b + 1] = k;
                else
                    for (size_t i = 0; i < k; i++)
                        vals[offs[b] + i] = ids[b];
            }
        }
        if (pass)
            break;
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
    }
    *n_out = offs[nbases];
    *keys_out = keys;
    *vals_out = vals;
    keys = vals = NULL;
    ret = GHM_OK;
fail:
    free(keys);
    free(vals);
    free(offs);
    free(stamps);
    free(scratch);
    return ret;
}

/* Index of the bases, the signature table and host copies of what voting reads. */
static int build_tables(GhmGeoRef *r, const GhmGeoPoint *cpts, size_t nc)
{
    uint32_t *bkeys = NULL, *ids = NULL, *skeys = NULL, *svals = NULL;
    void *dev_a = NULL, *dev_b = NULL;
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
    if ((ret = to_backend(r->ctx, bkeys, r->nbases, &dev_a)) < 0 ||
        (ret = ghm_index_create(r->ctx, 0.0, &r->bases)) < 0 ||
        (ret = ghm_index_build(r->bases, dev_a, r->nbases)) < 0 ||
        (ret = ghm_index_ids(r->bases, bkeys, r->nbases, ids)) < 0 ||
        (ret = ghm_index_keys(r->bases, ids, r->nbases, r->basis_keys)) < 0)
        goto done;
    ghm_buffer_free(r->ctx, &dev_a);
    if ((ret = ref_signatures(r, r->basis_keys, ids, cpts, nc, &skeys, &svals, &nsig)) < 0)
        goto done;
    r->nentries = nsig;
    if ((ret = to_backend(r->ctx, skeys, nsig, &dev_a)) < 0 ||
        (ret = to_backend(r->ctx, svals, nsig, &dev_b)) < 0 ||
        (ret = ghm_multimap_create(r->ctx, 0.0, &r->table)) < 0 ||
        (ret = ghm_multimap_build(r->table, dev_a, dev_b, nsig)) < 0)
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
    ghm_buffer_free(r->ctx, &dev_a);
    ghm_buffer_free(r->ctx, &dev_b);
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
    if (!ctx || !out || (!basis_pts && nb) || (!coded_pts && nc) || !(diag > 0.0))
        return GHM_ERR_INVALID;
    int ret = ghm_geo_check_params(p);
    if (ret < 0)
        return ret;
    if (nb > 65535)
        return GHM_ERR_TOO_LARGE;
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
    if (!r->bpts) {
        ret = GHM_ERR_NOMEM;
        goto fail;
    }
    if (nb)
        memcpy(r->bpts, basis_pts, nb * sizeof *r->bpts);
    if ((ret = build_tables(r, coded_pts, nc)) < 0)
        goto fail;
    *out = r;
    return GHM_OK;
fail:
    ghm_geo_ref_free(&r);
    return ret;
}
