/*
 * geohash_internal.h - the state of the geometric-hashing tables and voter, and the signature
 * arithmetic that building (geohash.c, geohash_signatures.c) and voting (geohash_vote.c,
 * geohash_device.c) share.
 * Not a public header.
 */
#ifndef GHM_GEOHASH_INTERNAL_H
#define GHM_GEOHASH_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_geohash.h"
#include "ghm_index.h"
#include "ghm_multimap.h"
#include "vision_backend_internal.h"

#define TWO_PI 6.28318530717958647692
#define CAND_PER_ROW GHM_GEO_ROW_BEST /* best cells kept per query basis before the ranking */
/* Cells of the vote array per device batch of query bases: bounds its memory (128 MiB). */
#define DEVICE_CELLS ((size_t)32 << 20)

/* A new array of n elements of `size` bytes copied from src (room for one when n is 0), or
 * NULL when memory runs out: what a clone or a copied feature array is made of. */
static inline void *ghmi_copy_of(const void *src, size_t n, size_t size)
{
    void *d = malloc((n ? n : 1) * size);
    if (d && n)
        memcpy(d, src, n * size);
    return d;
}

/* The coded points of one level bucketed by a square grid, so that a basis visits only the
 * buckets its window overlaps instead of every point of the image. */
typedef struct GhmiCodedGrid {
    GhmGeoPoint *pts; /* the level's coded points, bucket after bucket (owned) */
    uint32_t *start;  /* gw * gh + 1: bucket b holds pts[start[b] .. start[b + 1]) (owned) */
    size_t n;
    double x0, y0, cell;
    int gw, gh;
} GhmiCodedGrid;

struct GhmGeoRef {
    GhmContext *ctx;
    GhmGeoParams p;
    GhmGeoPoint *bpts;
    size_t nb;
    GhmGeoLevel *levels; /* the reference's levels and their coded grids */
    GhmiCodedGrid *grids;
    size_t nlevels;
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
    uint64_t *seen;   /* nthreads x key-space bitmaps: de-duplicate a basis's signatures */
    /* per-query arrays, grown as needed */
    uint32_t *pairs, *keys, *first, *count, *offsets, *qbasis;
    size_t cap_pairs, cap_keys, cap_first, cap_count, cap_bases;
    uint8_t *rank, *qlevel; /* per candidate pair: neighbour rank; per basis id: its level */
    size_t cap_rank, cap_qlevel;
    GhmiCodedGrid *grids; /* the query's coded grids, one per level */
    size_t nlevels;
    void *dev_keys; /* backend copy fed to the hashing calls */
    size_t cap_dev_keys; /* bytes */
    /* voting on the backend's device (GhmVisionOps): backend memory, grown as needed */
    void *dev[DEV_BUFFERS];
    size_t cap_dev[DEV_BUFFERS]; /* bytes */
    /* staging memory (GhmVisionOps stage_reserve): the frames going up, the best cells and the
     * counters coming down, copied without a wait of their own */
    void *stage;
    size_t cap_stage; /* bytes */
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

/* The signature arithmetic's constants for parameters p and nbins bins per axis. */
static inline GhmGeoSigParams ghmi_sig_params(const GhmGeoParams *p, int nbins)
{
    GhmGeoSigParams sp = {p->window, 1.0 / p->quant, 1.0 / TWO_PI,
                          (double)p->angle_bins / TWO_PI, nbins, p->angle_bins};
    return sp;
}

/* The words of a bitmap over the key space (one bit per signature slot). */
static inline size_t seen_words64(const GhmGeoParams *p, int nbins)
{
    return (key_space(p, nbins) + 63) / 64;
}

/* The dense slot of a packed key (as geohash_signatures.c's span_signatures computes it). */
static inline uint32_t key_slot(uint32_t key, const GhmGeoParams *p, int nbins)
{
    uint32_t na = (uint32_t)(p->angle_bins > 0 ? p->angle_bins : 1);
    return ((key & 0xFF) * (uint32_t)nbins + (key >> 8 & 0xFF)) * na + (key >> 16);
}

/* --- geohash_signatures.c: shared by building and voting ----------------------------------- */

/* Writes the distinct signatures of the coded points of grid g in basis (a, b) to out (room
 * for g->n). seen is a zeroed bitmap over the key space (seen_words64 words), small enough to
 * stay in the first-level cache, and zeroed again on return. Only the buckets that the window
 * (plus one bin) can reach are visited: a point of the window lies within
 * (window + quant) (|dx| + |dy|) of the basis midpoint along each axis, and within a bucket's
 * half diagonal (0.71 cells, 0.75 with a margin for rounding) of its bucket's centre. Returns
 * the count. The device visits every point of the level: the same keys, in another order.
 * Its arithmetic is built for SSE4.1 and for the baseline (GHMI_FLOOR_CLONES). */
size_t ghmi_basis_signatures(const GhmGeoPoint *a, const GhmGeoPoint *b, const GhmiCodedGrid *g,
                             const GhmGeoParams *p, int nbins, uint64_t *seen, uint32_t *out);

/* Buckets coded points pts[0..n) into g (freed with ghmi_coded_grid_free). */
int ghmi_coded_grid_build(const GhmGeoPoint *pts, size_t n, GhmiCodedGrid *g);
void ghmi_coded_grid_free(GhmiCodedGrid *g);

/* Basis points bucketed by position for nearest-neighbour searches (geohash.c). */
typedef struct GhmiPointGrid {
    double x0, y0, cell;
    int gw, gh;
    uint32_t *start; /* gw * gh + 1: cell c holds order[start[c] .. start[c + 1]) */
    uint32_t *order; /* point indices, by cell */
} GhmiPointGrid;

/* The bases of one level, whose basis points are bp[first .. first + n): the ordered pairs
 * (i, j) with j among the k nearest basis points of i that are not nearer than sqrt(skip2)
 * (ties by index), and |ij|^2 in [lo2, hi2], packed i << 16 | j into out (room for n * k) in
 * ascending order, with j's neighbour rank (0: the nearest) into rank (may be NULL). Nearness decides, not length: under
 * a similarity the k nearest stay the k nearest, so a query and its reference pair the same
 * points wherever their basis points agree. threads: OpenMP workers (the result does not depend
 * on them). Returns the count, SIZE_MAX when out of memory. */
size_t ghmi_geo_neighbour_pairs(int threads, const GhmGeoPoint *bp, uint32_t first, uint32_t n,
                                int k, double skip2, double lo2, double hi2, uint32_t *out,
                                uint8_t *rank);

/* GHM_OK when every level's ranges lie inside [0, nb) and [0, nc), else GHM_ERR_INVALID. */
int ghmi_geo_check_levels(const GhmGeoLevel *levels, size_t nlevels, size_t nb, size_t nc);

/* Whether ctx's backend votes on its device (GhmVisionOps' geo_vote and geo_best), with the
 * reference's table there; else the host votes. */
static inline int ghmi_geo_votes_on_device(const GhmContext *ctx)
{
    const GhmVisionOps *ops = ghmi_vision_ops(ctx);
    return ops && ops->geo_vote && ops->geo_best;
}

/* As ghm_geo_ref_build_levels; with_table 0 leaves the signature table unbuilt where the host
 * votes (ghmi_geo_votes_on_device), for a reference that answers one query: its votes are then
 * counted by ghmi_geo_scan_votes. */
int ghmi_geo_ref_build(GhmContext *ctx, const GhmGeoPoint *basis_pts, size_t nb,
                       const GhmGeoPoint *coded_pts, size_t nc, const GhmGeoLevel *levels,
                       size_t nlevels, double diag, const GhmGeoParams *p, int with_table,
                       GhmGeoRef **out);

/* The level of reference basis key (i << 16 | j): the one whose basis points hold i. */
size_t ghmi_geo_level_of(const GhmGeoRef *r, uint32_t key);

/* The order of cells within a row of votes: more votes first, then the lower reference basis
 * id. A strict total order on (final count, id) makes a best list kept as counts grow exact
 * whatever the order the votes arrive in, so every way of counting picks the same cells. */
static inline int ghmi_geo_beats(uint32_t votes, uint32_t id, uint32_t best_votes,
                                 uint32_t best_id)
{
    return votes > best_votes || (votes == best_votes && id < best_id);
}

/* Puts cell (votes, id) into a row's best list (CAND_PER_ROW cells in ghmi_geo_beats order),
 * moving it up from slot `at`: the cell's own slot where id is in the list already (its count
 * grew), else the last, which it beats. */
static inline void ghmi_geo_raise(uint32_t *best, uint32_t *who, int at, uint32_t votes,
                                  uint32_t id)
{
    while (at > 0 && ghmi_geo_beats(votes, id, best[at - 1], who[at - 1])) {
        best[at] = best[at - 1];
        who[at] = who[at - 1];
        at--;
    }
    best[at] = votes;
    who[at] = id;
}

/* Query basis b's best cells (votes and reference basis ids; 0 votes: none) into row_best[b *
 * CAND_PER_ROW ..]. */
void ghmi_geo_row_cells(const GhmGeoVoter *v, size_t b, const uint32_t *best,
                        const uint32_t *who, GhmGeoCandidate *row_best);

/* The votes of the m query bases whose signatures are in v->keys (v->offsets) against a
 * reference without its table (geohash_scan.c): row_best (m x CAND_PER_ROW) as voting by the
 * table fills it, and st's votes, ref_entries and ref_keys. */
int ghmi_geo_scan_votes(GhmGeoVoter *v, size_t m, GhmGeoCandidate *row_best, GhmGeoStats *st);

/* Signatures and votes of the m query bases in v->qbasis on the backend's device
 * (geohash_device.c), each basis coding the coded points of its level (v->qlevel): fills
 * row_best (m x CAND_PER_ROW) and st->lookups / st->votes; *t_up is set when the inputs are on
 * the device. */
int ghmi_geo_device_vote(GhmGeoVoter *v, const GhmVisionOps *ops, const GhmGeoPoint *bp,
                         const GhmGeoPoint *cp, const GhmGeoLevel *levels, const GhmGeoParams *p,
                         size_t m, GhmGeoCandidate *row_best, GhmGeoStats *st, double *t_up);

#endif /* GHM_GEOHASH_INTERNAL_H */
