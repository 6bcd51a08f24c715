/*
 * geohash_internal.h - the state of the geometric-hashing tables and voter, and the signature
 * arithmetic that building (geohash.c) and voting (geohash_vote.c, geohash_device.c) share.
 * Not a public header.
 */
#ifndef GHM_GEOHASH_INTERNAL_H
#define GHM_GEOHASH_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "ghm_geohash.h"
#include "ghm_index.h"
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

static inline size_t key_space(const GhmGeoParams *p, int nbins)
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
static inline size_t basis_signatures(const GhmGeoPoint *a, const GhmGeoPoint *b,
                                      const GhmGeoPoint *pts, size_t nc, const GhmGeoParams *p, int nbins, uint32_t *stamps,
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

/* Signatures and votes of the m query bases in v->qbasis on the backend's device
 * (geohash_device.c): fills row_best (m x CAND_PER_ROW) and st->lookups / st->votes; *t_up is
 * set when the inputs are on the device. */
int ghmi_geo_device_vote(GhmGeoVoter *v, const GhmVisionOps *ops, const GhmGeoPoint *bp,
                         const GhmGeoPoint *cp, size_t nc, const GhmGeoParams *p, size_t m,
                         GhmGeoCandidate *row_best, GhmGeoStats *st, double *t_up);

#endif /* GHM_GEOHASH_INTERNAL_H */
