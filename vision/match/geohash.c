/*
 * geohash.c - geometric hashing tables and voting on the hashing API; see ghm_geohash.h.
 */
#include "ghm_geohash.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_index.h"
#include "ghm_map.h"
#include "ghm_multimap.h"
#include "vision_backend_internal.h"

#define TWO_PI 6.28318530717958647692
#define CAND_PER_ROW GHM_GEO_ROW_BEST /* best cells kept per query basis before the ranking */
/* Cells of the vote array per device batch of query bases: bounds its memory (128 MiB). */
#define DEVICE_CELLS ((size_t)32 << 20)

struct GhmGeoRef {
    GhmContext *ctx;
    GhmGeoParams p;
    GhmGeoPoint *bpts;
    size_t nb;
    double len_min, len_max; /* reference basis length band, pixels */
    int nbins;               /* (u, v) bins per axis */
    GhmIndex *bases;         /* packed (i, j) <-> basis id */
    GhmMultimap *table;      /* signature -> basis id */
    uint32_t *basis_keys;    /* host copy: id -> packed (i, j) */
    uint32_t *values;        /* host copy of the multimap's value array */
    size_t nbases, nentries, nkeys;
};

/* The device voter's buffers: query basis frames, coded points, a batch of the vote array, its
 * signature bitmaps, the best cells of every row, the two counters. */
enum { DEV_FRAMES, DEV_CODED, DEV_VOTES, DEV_SEEN, DEV_BEST, DEV_COUNTERS, DEV_BUFFERS };

struct GhmGeoVoter {
    const GhmGeoRef *ref;
    int nthreads;
    uint32_t *rows;   /* nthreads x nbases vote counters: one row of T per thread */
    uint32_t *stamps; /* nthreads x key space: de-duplicates a basis's signatures */
    GhmIndex *qindex; /* the query's two-way basis index */
    /* per-query arrays, grown as needed */
    uint32_t *pairs, *keys, *first, *count, *offsets, *qbasis;
    size_t cap_pairs, cap_keys, cap_first, cap_count, cap_bases;
    void *dev_pairs, *dev_keys; /* backend copies fed to the hashing calls */
    size_t cap_dev_pairs, cap_dev_keys; /* bytes */
    /* voting on the backend's device (GhmVisionOps): backend memory, grown as needed */
    void *dev[DEV_BUFFERS];
    size_t cap_dev[DEV_BUFFERS]; /* bytes */
};

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

static inline uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A reproducible coin with probability prob for the ordered pair (i, j). */
static inline int keep_pair(uint64_t seed, uint64_t salt, uint32_t i, uint32_t j, double prob)
{
    if (prob >= 1.0)
        return 1;
    uint64_t h = mix64(seed ^ mix64(salt ^ ((uint64_t)i << 32 | j)));
    return (double)(h >> 11) * 0x1.0p-53 < prob;
}

static size_t key_space(const GhmGeoParams *p, int nbins)
{
    size_t na = p->angle_bins > 0 ? (size_t)p->angle_bins : 1;
    return (size_t)nbins * nbins * na;
}

/* The signature of point c in the frame of basis (a, b); returns 0 when c lies outside the
 * window. The key is packed as u | v << 8 | angle << 16; *slot is its dense index in the key
 * space (for de-duplication). */
static inline int signature(const GhmGeoPoint *a, const GhmGeoPoint *b, const GhmGeoPoint *c,
                            double inv_len2, double phi, const GhmGeoParams *p, int nbins,
                            uint32_t *key, uint32_t *slot)
{
    double dx = b->x - a->x, dy = b->y - a->y;
    double qx = c->x - a->x, qy = c->y - a->y;
    double u = (qx * dx + qy * dy) * inv_len2 - 0.5;
    double v = (qx * dy - qy * dx) * inv_len2;
    double iu = floor((u + p->window) / p->quant), iv = floor((v + p->window) / p->quant);
    if (iu < 0.0 || iv < 0.0 || iu >= nbins || iv >= nbins)
        return 0;
    uint32_t qa = 0;
    if (p->angle_bins > 0) {
        double rel = c->angle - phi;
        rel -= TWO_PI * floor(rel / TWO_PI);
        qa = (uint32_t)(rel * p->angle_bins / TWO_PI);
        if (qa >= (uint32_t)p->angle_bins)
            qa = 0;
    }
    uint32_t ku = (uint32_t)iu, kv = (uint32_t)iv;
    *key = ku | kv << 8 | qa << 16;
    *slot = ((ku * (uint32_t)nbins) + kv) * (uint32_t)(p->angle_bins > 0 ? p->angle_bins : 1) + qa;
    return 1;
}

/* Writes the distinct signatures of all coded points in basis (a, b) to out (room for nc);
 * stamps (key space) with value stamp marks what this basis already has. Returns the count. */
static size_t basis_signatures(const GhmGeoPoint *a, const GhmGeoPoint *b, const GhmGeoPoint *pts,
                               size_t nc, const GhmGeoParams *p, int nbins, uint32_t *stamps,
                               uint32_t stamp, uint32_t *out)
{
    double dx = b->x - a->x, dy = b->y - a->y;
    double len2 = dx * dx + dy * dy;
    if (!(len2 > 0.0))
        return 0;
    double inv = 1.0 / len2, phi = atan2(dy, dx);
    size_t k = 0;
    for (size_t c = 0; c < nc; c++) {
        uint32_t key, slot;
        if (!signature(a, b, &pts[c], inv, phi, p, nbins, &key, &slot))
            continue;
        if (stamps[slot] == stamp)
            continue;
        stamps[slot] = stamp;
        out[k++] = key;
    }
    return k;
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

/* --- voting ----------------------------------------------------------------------------------- */

void ghm_geo_voter_free(GhmGeoVoter **v)
{
    if (!v || !*v)
        return;
    GhmGeoVoter *t = *v;
    GhmContext *ctx = t->ref->ctx;
    free(t->rows);
    free(t->stamps);
    ghm_index_free(&t->qindex);
    free(t->pairs);
    free(t->keys);
    free(t->first);
    free(t->count);
    free(t->offsets);
    free(t->qbasis);
    ghm_buffer_free(ctx, &t->dev_pairs);
    ghm_buffer_free(ctx, &t->dev_keys);
    for (int i = 0; i < DEV_BUFFERS; i++)
        ghm_buffer_free(ctx, &t->dev[i]);
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
     * rows and stamps below are sized for them. */
    v->nthreads = ghm_context_threads(ref->ctx);
    size_t space = key_space(&ref->p, ref->nbins);
    v->rows = calloc((size_t)v->nthreads * (ref->nbases ? ref->nbases : 1), sizeof *v->rows);
    v->stamps = calloc((size_t)v->nthreads * space, sizeof *v->stamps);
    int ret = GHM_ERR_NOMEM;
    if (!v->rows || !v->stamps)
        goto fail;
    if ((ret = ghm_index_create(ref->ctx, 0.0, &v->qindex)) < 0)
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

/* Samples the query bases into v->pairs (packed k << 16 | l, ascending) and builds the query's
 * two-way index; v->qbasis[id] is the packed pair of basis id. Returns the count in *m. */
static int query_bases(GhmGeoVoter *v, const GhmGeoPoint *bp, size_t nb, const GhmGeoParams *p,
                       uint64_t seed, size_t *m)
{
    const GhmGeoRef *r = v->ref;
    double lo = r->len_min / p->max_scale, hi = r->len_max / p->min_scale;
    double lo2 = lo * lo, hi2 = hi * hi;
    size_t total = 0;
    for (uint32_t k = 0; k < nb; k++)
        for (uint32_t l = 0; l < nb; l++) {
            double dx = bp[l].x - bp[k].x, dy = bp[l].y - bp[k].y, d2 = dx * dx + dy * dy;
            total += k != l && d2 >= lo2 && d2 <= hi2;
        }
    int ret = grow(&v->pairs, &v->cap_pairs, total ? total : 1);
    if (ret < 0)
        return ret;
    double prob = total > p->query_bases ? (double)p->query_bases / (double)total : 1.0;
    size_t n = 0;
    for (uint32_t k = 0; k < nb && n < p->query_bases; k++)
        for (uint32_t l = 0; l < nb && n < p->query_bases; l++) {
            double dx = bp[l].x - bp[k].x, dy = bp[l].y - bp[k].y, d2 = dx * dx + dy * dy;
            if (k != l && d2 >= lo2 && d2 <= hi2 && keep_pair(seed, 0x9B, k, l, prob))
                v->pairs[n++] = k << 16 | l;
        }
    if ((ret = grow(&v->qbasis, &v->cap_bases, n ? n : 1)) < 0 ||
        (ret = ghm_buffer_reserve(r->ctx, &v->dev_pairs, &v->cap_dev_pairs,
                                  (n ? n : 1) * sizeof(uint32_t))) < 0)
        return ret;
    if (n && (ret = ghm_buffer_upload(r->ctx, v->dev_pairs, v->pairs, n * sizeof *v->pairs)) < 0)
        return ret;
    if ((ret = ghm_index_build(v->qindex, v->dev_pairs, n)) < 0)
        return ret;
    size_t k = ghm_index_size(v->qindex);
    const uint32_t *ka = NULL;
    if ((ret = ghm_index_key_array(v->qindex, &ka)) < 0)
        return ret;
    if (k && (ret = ghm_buffer_download(r->ctx, v->qbasis, ka, k * sizeof *ka)) < 0)
        return ret;
    *m = k;
    return GHM_OK;
}

/* The distinct signatures of every query basis, concatenated (offsets per basis id), then one
 * bulk multimap look-up for all of them. */
static int query_signatures(GhmGeoVoter *v, const GhmGeoPoint *bp, const GhmGeoPoint *cp,
                            size_t nc, const GhmGeoParams *p, size_t m, size_t *nkeys)
{
    const GhmGeoRef *r = v->ref;
    size_t space = key_space(&r->p, r->nbins);
    int ret = grow(&v->keys, &v->cap_keys, m * nc + 1);
    if (ret < 0)
        return ret;
    uint32_t *counts = malloc((m + 1) * sizeof *counts);
    if (!counts)
        return GHM_ERR_NOMEM;
#pragma omp parallel num_threads(v->nthreads)
    {
        uint32_t *st = v->stamps + (size_t)omp_get_thread_num() * space;
        memset(st, 0, space * sizeof *st);
#pragma omp for schedule(dynamic, 16)
        for (size_t b = 0; b < m; b++) {
            const GhmGeoPoint *pa = &bp[v->qbasis[b] >> 16], *pb = &bp[v->qbasis[b] & 0xFFFF];
            counts[b] = (uint32_t)basis_signatures(pa, pb, cp, nc, p, r->nbins, st,
                                                   (uint32_t)b + 1, v->keys + b * nc);
        }
    }
    /* Compact the per-basis runs (each starts at b * nc) into one array. */
    free(v->offsets);
    v->offsets = malloc((m + 1) * sizeof *v->offsets);
    if (!v->offsets) {
        free(counts);
        return GHM_ERR_NOMEM;
    }
    size_t n = 0;
    for (size_t b = 0; b < m; b++) {
        v->offsets[b] = (uint32_t)n;
        memmove(v->keys + n, v->keys + b * nc, counts[b] * sizeof *v->keys);
        n += counts[b];
    }
    v->offsets[m] = (uint32_t)n;
    free(counts);
    if ((ret = grow(&v->first, &v->cap_first, n ? n : 1)) < 0 ||
        (ret = grow(&v->count, &v->cap_count, n ? n : 1)) < 0)
        return ret;
    if ((ret = ghm_buffer_reserve(r->ctx, &v->dev_keys, &v->cap_dev_keys,
                                  (n ? n : 1) * sizeof(uint32_t))) < 0)
        return ret;
    if (n && (ret = ghm_buffer_upload(r->ctx, v->dev_keys, v->keys, n * sizeof *v->keys)) < 0)
        return ret;
    if ((ret = ghm_multimap_find(r->table, v->dev_keys, n, v->first, v->count)) < 0)
        return ret;
    *nkeys = n;
    return GHM_OK;
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

/* The order of cells within a row: more votes first, then the lower reference basis id. A
 * strict total order on (final count, id) makes the incremental best list below exact whatever
 * the order the votes arrive in (counts only grow), so the device's reduction of the finished
 * row picks the same cells. */
static inline int beats(uint32_t votes, uint32_t id, uint32_t best_votes, uint32_t best_id)
{
    return votes > best_votes || (votes == best_votes && id < best_id);
}

/* One row of T per query basis: accumulate, keep its CAND_PER_ROW best cells. */
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
            for (uint32_t s = v->offsets[b]; s < v->offsets[b + 1]; s++) {
                const uint32_t *vals = r->values + v->first[s];
                for (uint32_t c = 0; c < v->count[s]; c++) {
                    uint32_t id = vals[c], votes = ++row[id];
                    if (!beats(votes, id, best[CAND_PER_ROW - 1], who[CAND_PER_ROW - 1]))
                        continue;
                    /* Insert id into the small best list (it may already be in it). */
                    int at = CAND_PER_ROW - 1;
                    for (int i = 0; i < CAND_PER_ROW; i++)
                        if (who[i] == id && best[i] > 0) {
                            at = i;
                            break;
                        }
                    while (at > 0 && beats(votes, id, best[at - 1], who[at - 1])) {
                        best[at] = best[at - 1];
                        who[at] = who[at - 1];
                        at--;
                    }
                    best[at] = votes;
                    who[at] = id;
                }
                total += v->count[s];
            }
            for (int i = 0; i < CAND_PER_ROW; i++) {
                GhmGeoCandidate *c = &row_best[b * CAND_PER_ROW + i];
                c->votes = best[i];
                uint32_t rk = best[i] ? r->basis_keys[who[i]] : 0;
                c->ref_i = rk >> 16;
                c->ref_j = rk & 0xFFFF;
                c->q_k = v->qbasis[b] >> 16;
                c->q_l = v->qbasis[b] & 0xFFFF;
            }
        }
    }
    return total;
}

/* --- voting on the backend's device ----------------------------------------------------------- */

/* Basis (a, b) with what signature() derives from it, computed by the same expressions (d in
 * float, then widened), so that the device's signatures are bit for bit the CPU's. */
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

/* Signatures and votes of the m query bases in v->qbasis on the device, in batches of query
 * bases that keep the vote array within DEVICE_CELLS; fills row_best as vote_rows() does and
 * st->lookups / st->votes. *t_up is set when the inputs are on the device. */
static int device_vote(GhmGeoVoter *v, const GhmVisionOps *ops, const GhmGeoPoint *bp,
                       const GhmGeoPoint *cp, size_t nc, const GhmGeoParams *p, size_t m,
                       GhmGeoCandidate *row_best, GhmGeoStats *st, double *t_up)
{
    const GhmGeoRef *r = v->ref;
    GhmContext *ctx = r->ctx;
    size_t n = r->nbases, words = (key_space(p, r->nbins) + 31) / 32;
    size_t batch = DEVICE_CELLS / (n > words ? n : words);
    batch = batch < 1 ? 1 : batch > m ? m : batch;
    GhmGeoSigParams sp = {p->window, p->quant, r->nbins, p->angle_bins};
    GhmGeoFrame *frames = malloc((m ? m : 1) * sizeof *frames);
    uint32_t *best = malloc((m ? m : 1) * CAND_PER_ROW * 2 * sizeof *best);
    unsigned long long counters[2] = {0, 0};
    int ret = GHM_ERR_NOMEM;
    if (!frames || !best)
        goto done;
    for (size_t b = 0; b < m; b++)
        frames[b] = basis_frame(&bp[v->qbasis[b] >> 16], &bp[v->qbasis[b] & 0xFFFF]);
    if ((ret = dev_grow(v, DEV_FRAMES, m * sizeof *frames)) < 0 ||
        (ret = dev_grow(v, DEV_VOTES, batch * n * sizeof(uint32_t))) < 0 ||
        (ret = dev_grow(v, DEV_SEEN, batch * words * sizeof(uint32_t))) < 0 ||
        (ret = dev_grow(v, DEV_BEST, m * CAND_PER_ROW * 2 * sizeof *best)) < 0 ||
        (ret = dev_grow(v, DEV_COUNTERS, sizeof counters)) < 0 ||
        (ret = ghm_buffer_upload(ctx, v->dev[DEV_FRAMES], frames, m * sizeof *frames)) < 0 ||
        (ret = ghm_buffer_zero(ctx, v->dev[DEV_COUNTERS], sizeof counters)) < 0)
        goto done;
    /* Coded points a device stage already produced (match_device.c) are read where they are. */
    const GhmGeoPoint *dev_cp = cp;
    if (nc && !ghm_buffer_in_place(ctx, cp)) {
        if ((ret = dev_grow(v, DEV_CODED, nc * sizeof *cp)) < 0 ||
            (ret = ghm_buffer_upload(ctx, v->dev[DEV_CODED], cp, nc * sizeof *cp)) < 0)
            goto done;
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
            goto done;
    }
    if ((ret = ghm_buffer_download(ctx, best, v->dev[DEV_BEST],
                                   m * CAND_PER_ROW * 2 * sizeof *best)) < 0 ||
        (ret = ghm_buffer_download(ctx, counters, v->dev[DEV_COUNTERS], sizeof counters)) < 0)
        goto done;
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
done:
    free(frames);
    free(best);
    return ret;
}

int ghm_geo_vote(GhmGeoVoter *v, const GhmGeoPoint *basis_pts, size_t nb,
                 const GhmGeoPoint *coded_pts, size_t nc, const GhmGeoParams *p, uint64_t seed,
                 GhmGeoCandidate *cand, size_t max_cand, size_t *ncand, GhmGeoStats *stats)
{
    if (!v || !p || !ncand || (!cand && max_cand) || (!basis_pts && nb) || (!coded_pts && nc))
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
    int ret = query_bases(v, basis_pts, nb, p, seed, &m);
    if (ret < 0)
        return ret;
    double t1 = ghm_now();
    /* A backend with vision kernels computes signatures and votes on its device. */
    const GhmVisionOps *ops = ghmi_vision_ops(r->ctx);
    int on_device = ops && ops->geo_vote && ops->geo_best;
    if (!on_device && (ret = query_signatures(v, basis_pts, coded_pts, nc, p, m, &nkeys)) < 0)
        return ret;
    double t2 = ghm_now();
    GhmGeoCandidate *row_best = malloc((m ? m : 1) * CAND_PER_ROW * sizeof *row_best);
    if (!row_best)
        return GHM_ERR_NOMEM;
    if (on_device) {
        if ((ret = device_vote(v, ops, basis_pts, coded_pts, nc, p, m, row_best, &st, &t2)) < 0) {
            free(row_best);
            return ret;
        }
        nkeys = st.lookups;
    } else {
        st.votes = r->nbases ? vote_rows(v, m, row_best) : 0;
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
