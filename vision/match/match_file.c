/*
 * match_file.c - reference files: the reference's features and parameters, so that a later run
 * rebuilds the matcher without decoding and analysing the reference image again.
 *
 * Layout (all integers little-endian, floats IEEE-754 binary32 / binary64 little-endian):
 *     header   8 bytes magic "GHMREF\r\n" (GHM_FILE_REFERENCE_MAGIC), u32 version (2), u32 0,
 *              u64 payload bytes, u64 FNV-1a 64 of the payload
 *     payload  u32 width, u32 height, the reference-side parameters (see put_params), u64 number
 *              of edge points, u64 number of corners, u64 number of coded points, u32 number of
 *              pyramid levels, per level u32 first corner, corners, first coded point, coded
 *              points; edge points of level 0 (f32 x, y, angle, strength, u32 pixel), corners
 *              of every level (f32 x, y, response), coded points of every level (f32 x, y,
 *              angle), all positions in the pixels of the full image
 * Version 1 (one level, no coded points) is refused with a message: save the reference again.
 * The tables are not stored: they follow from the features, the parameters and the seed of the
 * run that loads the file, exactly as when the reference image itself is given.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_file_io.h"
#include "hash_internal.h"
#include "match_internal.h"
#include "why_internal.h"

#define REF_VERSION 2u
#define HEADER_BYTES 32u
#define EDGE_BYTES 20u
#define CORNER_BYTES 12u
#define CODED_BYTES 12u
#define LEVEL_BYTES 16u
/* A reference of the largest accepted size has a few million edge points; refuse files that
 * claim more than this before allocating anything. */
#define MAX_PAYLOAD ((uint64_t)1 << 31)

typedef struct Buf {
    uint8_t *p;
    size_t n, cap;
    int failed;
} Buf;

static void put(Buf *b, const void *src, size_t n)
{
    if (b->failed)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *t = realloc(b->p, cap);
        if (!t) {
            b->failed = 1;
            return;
        }
        b->p = t;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_u32(Buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}

static void put_u64(Buf *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static void put_f32(Buf *b, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    put_u32(b, v);
}

static void put_f64(Buf *b, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(b, v);
}

/* Reading side: a cursor that fails (and stays failed) instead of reading past the end. */
typedef struct Cur {
    const uint8_t *p;
    size_t n, at;
    int failed;
} Cur;

static uint32_t get_u32(Cur *c)
{
    if (c->failed || c->n - c->at < 4) {
        c->failed = 1;
        return 0;
    }
    const uint8_t *x = c->p + c->at;
    c->at += 4;
    return (uint32_t)x[0] | (uint32_t)x[1] << 8 | (uint32_t)x[2] << 16 | (uint32_t)x[3] << 24;
}

static uint64_t get_u64(Cur *c)
{
    uint64_t lo = get_u32(c);
    return lo | (uint64_t)get_u32(c) << 32;
}

static float get_f32(Cur *c)
{
    uint32_t v = get_u32(c);
    float f;
    memcpy(&f, &v, 4);
    return f;
}

static double get_f64(Cur *c)
{
    uint64_t v = get_u64(c);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

/* The parameters that shape the reference side, in a fixed order. */
static void put_params(Buf *b, const GhmMatchParams *p)
{
    put_f64(b, p->edges.blur_sigma);
    put_f64(b, p->edges.percentile);
    put_f64(b, p->edges.noise_factor);
    put_f64(b, p->corners.sigma);
    put_f64(b, p->corners.k);
    put_u32(b, (uint32_t)p->corners.radius);
    put_f64(b, p->corners.rel_threshold);
    put_u64(b, p->corners.max_corners);
    put_u64(b, p->max_points);
    put_f64(b, p->point_cell);
    put_f64(b, p->geo.basis_prob);
    put_f64(b, p->geo.min_dist);
    put_f64(b, p->geo.max_dist);
    put_f64(b, p->geo.quant);
    put_f64(b, p->geo.window);
    put_u32(b, (uint32_t)p->geo.angle_bins);
    put_f64(b, p->corners.spacing);
    put_u32(b, (uint32_t)p->corners.grid);
    put_u32(b, (uint32_t)p->geo.neighbours);
    put_u32(b, (uint32_t)p->levels);
    put_f64(b, p->geo.min_len);
}

static void get_params(Cur *c, GhmMatchParams *p)
{
    p->edges.blur_sigma = get_f64(c);
    p->edges.percentile = get_f64(c);
    p->edges.noise_factor = get_f64(c);
    p->corners.sigma = get_f64(c);
    p->corners.k = get_f64(c);
    p->corners.radius = (int)get_u32(c);
    p->corners.rel_threshold = get_f64(c);
    p->corners.max_corners = (size_t)get_u64(c);
    p->max_points = (size_t)get_u64(c);
    p->point_cell = get_f64(c);
    p->geo.basis_prob = get_f64(c);
    p->geo.min_dist = get_f64(c);
    p->geo.max_dist = get_f64(c);
    p->geo.quant = get_f64(c);
    p->geo.window = get_f64(c);
    p->geo.angle_bins = (int)get_u32(c);
    p->corners.spacing = get_f64(c);
    p->corners.grid = (int)get_u32(c);
    p->geo.neighbours = (int)get_u32(c);
    p->levels = (int)get_u32(c);
    p->geo.min_len = get_f64(c);
}

static void encode(const GhmMatcher *m, Buf *b)
{
    Buf payload = {0};
    put_u32(&payload, (uint32_t)m->width);
    put_u32(&payload, (uint32_t)m->height);
    put_params(&payload, &m->p);
    put_u64(&payload, m->nedges);
    put_u64(&payload, m->ncorners);
    put_u64(&payload, m->ncoded);
    put_u32(&payload, (uint32_t)m->nlevels);
    for (size_t l = 0; l < m->nlevels; l++) {
        put_u32(&payload, m->levels[l].basis_first);
        put_u32(&payload, m->levels[l].nbasis);
        put_u32(&payload, m->levels[l].coded_first);
        put_u32(&payload, m->levels[l].ncoded);
    }
    for (size_t i = 0; i < m->nedges; i++) {
        put_f32(&payload, m->edges[i].x);
        put_f32(&payload, m->edges[i].y);
        put_f32(&payload, m->edges[i].angle);
        put_f32(&payload, m->edges[i].strength);
        put_u32(&payload, m->edge_pixel[i]);
    }
    for (size_t i = 0; i < m->ncorners; i++) {
        put_f32(&payload, m->corners[i].x);
        put_f32(&payload, m->corners[i].y);
        put_f32(&payload, m->corners[i].response);
    }
    for (size_t i = 0; i < m->ncoded; i++) {
        put_f32(&payload, m->coded[i].x);
        put_f32(&payload, m->coded[i].y);
        put_f32(&payload, m->coded[i].angle);
    }
    put(b, GHM_FILE_REFERENCE_MAGIC, 8);
    put_u32(b, REF_VERSION);
    put_u32(b, 0);
    put_u64(b, payload.n);
    put_u64(b, payload.failed ? 0 : ghmi_fnv1a64(payload.p, payload.n));
    put(b, payload.p, payload.n);
    b->failed |= payload.failed;
    free(payload.p);
}

int ghm_matcher_save(const GhmMatcher *m, const char *path, char *why, size_t why_size)
{
    if (!m || !path)
        return GHM_ERR_INVALID;
    Buf b = {0};
    encode(m, &b);
    if (b.failed) {
        free(b.p);
        ghmi_why(why, why_size, "out of memory");
        return GHM_ERR_NOMEM;
    }
    /* Through the atomic writer: the target is a whole reference file or untouched. */
    int ret = ghm_file_write(path, b.p, b.n, why, why_size);
    free(b.p);
    return ret;
}

/* Reads the whole file, refusing anything larger than a reference file can be. */
static int read_file(const char *path, GhmFileData *in, char *why, size_t why_size)
{
    int ret = ghm_file_read(path, MAX_PAYLOAD + HEADER_BYTES, 0, in, why, why_size);
    if (ret == GHM_ERR_TOO_LARGE) {
        ghmi_why(why, why_size, "not a reference file (far too large)");
        return GHM_ERR_FORMAT;
    }
    return ret;
}

/* Checks the header; on success *payload and *plen describe the verified payload. */
static int check_header(const uint8_t *data, size_t n, const uint8_t **payload, size_t *plen,
                        char *why, size_t why_size)
{
    if (n < HEADER_BYTES || ghm_file_sniff(data, n, 0) != GHM_FILE_REFERENCE) {
        ghmi_why(why, why_size, "not a geohash-match reference file (bad magic)");
        return GHM_ERR_FORMAT;
    }
    Cur c = {data, n, 8, 0};
    uint32_t version = get_u32(&c);
    (void)get_u32(&c);
    uint64_t len = get_u64(&c), sum = get_u64(&c);
    if (version != REF_VERSION) {
        ghmi_why(why, why_size, "reference file version %u, this program reads version %u", version,
            REF_VERSION);
        return GHM_ERR_FORMAT;
    }
    if (len != n - HEADER_BYTES) {
        ghmi_why(why, why_size, "damaged reference file: %s (payload %llu bytes, file holds %zu)",
            len > n - HEADER_BYTES ? "truncated" : "trailing bytes", (unsigned long long)len,
            n - HEADER_BYTES);
        return GHM_ERR_FORMAT;
    }
    if (ghmi_fnv1a64(data + HEADER_BYTES, (size_t)len) != sum) {
        ghmi_why(why, why_size, "damaged reference file (checksum mismatch)");
        return GHM_ERR_FORMAT;
    }
    *payload = data + HEADER_BYTES;
    *plen = (size_t)len;
    return GHM_OK;
}

typedef struct Features {
    int width, height;
    GhmMatchParams p;
    GhmEdgePoint *edges;
    uint32_t *pixel;
    GhmCorner *corners;
    GhmGeoPoint *coded;
    GhmGeoLevel levels[GHMI_MAX_LEVELS];
    size_t nedges, ncorners, ncoded, nlevels;
} Features;

/* The counts and level ranges; GHM_ERR_FORMAT when they cannot describe the rest of the
 * payload (n bytes in all). */
static int decode_counts(Cur *c, size_t n, Features *ft)
{
    uint32_t w = get_u32(c), h = get_u32(c);
    get_params(c, &ft->p);
    uint64_t ne = get_u64(c), nc = get_u64(c), ng = get_u64(c);
    uint32_t nl = get_u32(c);
    if (c->failed || nl < 1 || nl > GHMI_MAX_LEVELS)
        return GHM_ERR_FORMAT;
    for (uint32_t l = 0; l < nl; l++) {
        ft->levels[l].basis_first = get_u32(c);
        ft->levels[l].nbasis = get_u32(c);
        ft->levels[l].coded_first = get_u32(c);
        ft->levels[l].ncoded = get_u32(c);
        ft->levels[l].scale = (float)(1u << l);
    }
    if (c->failed || w < 1 || h < 1 || w > GHM_IMAGE_MAX_SIDE || h > GHM_IMAGE_MAX_SIDE ||
        ne > (n - c->at) / EDGE_BYTES || nc > (n - c->at) / CORNER_BYTES ||
        ng > (n - c->at) / CODED_BYTES ||
        ne * EDGE_BYTES + nc * CORNER_BYTES + ng * CODED_BYTES != n - c->at)
        return GHM_ERR_FORMAT;
    ft->width = (int)w;
    ft->height = (int)h;
    ft->nedges = ne;
    ft->ncorners = nc;
    ft->ncoded = ng;
    ft->nlevels = nl;
    GhmiRefFeatures f = {.ncorners = nc, .ncoded = ng, .levels = ft->levels, .nlevels = nl};
    return ghmi_check_ref_levels(&f) < 0 ? GHM_ERR_FORMAT : GHM_OK;
}


/* Every stored position lies in the image (a sub-pixel edge position or a coarse level's point
 * in full-image pixels stays within a pixel of it): a damaged file with a point far outside
 * would size the neighbour search's grid by it (a fuzzed file made it run for minutes). */
static int in_frame(float x, float y, const Features *ft)
{
    return x >= -1.0f && x <= (float)ft->width && y >= -1.0f && y <= (float)ft->height;
}

static int decode(const uint8_t *pl, size_t n, Features *ft, char *why, size_t why_size)
{
    Cur c = {pl, n, 0, 0};
    if (decode_counts(&c, n, ft) < 0) {
        ghmi_why(why, why_size, "damaged reference file (inconsistent sizes)");
        return GHM_ERR_FORMAT;
    }
    size_t ne = ft->nedges, nc = ft->ncorners, ng = ft->ncoded;
    uint64_t npix = (uint64_t)ft->width * ft->height;
    ft->edges = malloc((ne ? ne : 1) * sizeof *ft->edges);
    ft->pixel = malloc((ne ? ne : 1) * sizeof *ft->pixel);
    ft->corners = malloc((nc ? nc : 1) * sizeof *ft->corners);
    ft->coded = malloc((ng ? ng : 1) * sizeof *ft->coded);
    if (!ft->edges || !ft->pixel || !ft->corners || !ft->coded) {
        ghmi_why(why, why_size, "out of memory");
        return GHM_ERR_NOMEM;
    }
    int finite = 1;
    for (size_t i = 0; i < ne; i++) {
        GhmEdgePoint *e = &ft->edges[i];
        e->x = get_f32(&c), e->y = get_f32(&c), e->angle = get_f32(&c), e->strength = get_f32(&c);
        ft->pixel[i] = get_u32(&c);
        finite &= in_frame(e->x, e->y, ft) && fabsf(e->angle) <= 4.0f && e->strength >= 0.0f &&
                  isfinite(e->strength) && ft->pixel[i] < npix;
    }
    for (size_t i = 0; i < nc; i++) {
        GhmCorner *k = &ft->corners[i];
        k->x = get_f32(&c), k->y = get_f32(&c), k->response = get_f32(&c);
        finite &= in_frame(k->x, k->y, ft) && isfinite(k->response);
    }
    for (size_t i = 0; i < ng; i++) {
        GhmGeoPoint *g = &ft->coded[i];
        g->x = get_f32(&c), g->y = get_f32(&c), g->angle = get_f32(&c);
        finite &= in_frame(g->x, g->y, ft) && fabsf(g->angle) <= 4.0f;
    }
    if (c.failed || !finite) {
        ghmi_why(why, why_size, "damaged reference file (invalid point data)");
        return GHM_ERR_FORMAT;
    }
    return GHM_OK;
}

/* The reference-side parameters come from the file, the query-side ones from q. */
static int merge_params(const GhmMatchParams *file, const GhmMatchParams *q, GhmMatchParams *out)
{
    *out = q ? *q : ghm_match_defaults();
    out->edges = file->edges;
    out->corners = file->corners;
    out->max_points = file->max_points;
    out->point_cell = file->point_cell;
    out->geo.basis_prob = file->geo.basis_prob;
    out->geo.min_dist = file->geo.min_dist;
    out->geo.max_dist = file->geo.max_dist;
    out->geo.quant = file->geo.quant;
    out->geo.window = file->geo.window;
    out->geo.angle_bins = file->geo.angle_bins;
    out->geo.neighbours = file->geo.neighbours;
    out->geo.min_len = file->geo.min_len;
    out->levels = file->levels;
    return ghm_match_check_params(out);
}

static int load_impl(GhmContext *ctx, const char *path, const GhmMatchParams *p, int with_table,
                     GhmMatcher **out, char *why, size_t why_size)
{
    if (!ctx || !path || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmFileData in;
    size_t plen = 0;
    const uint8_t *payload = NULL;
    Features ft = {0};
    GhmMatchParams mp;
    int ret = read_file(path, &in, why, why_size);
    if (ret < 0)
        return ret;
    if ((ret = check_header(in.data, in.size, &payload, &plen, why, why_size)) < 0 ||
        (ret = decode(payload, plen, &ft, why, why_size)) < 0)
        goto done;
    if ((ret = merge_params(&ft.p, p, &mp)) < 0) {
        ghmi_why(why, why_size, "damaged reference file (parameters out of range)");
        ret = GHM_ERR_FORMAT;
        goto done;
    }
    GhmiRefFeatures f = {ft.width,  ft.height, ft.edges, ft.pixel,     ft.nedges, ft.corners,
                         ft.ncorners, ft.coded, ft.ncoded, ft.levels, ft.nlevels};
    ret = ghmi_matcher_build(ctx, &f, &mp, with_table, out);
    if (ret < 0)
        ghmi_why(why, why_size, "cannot rebuild the reference: %s", ghm_strerror(ret));
done:
    free(ft.edges);
    free(ft.pixel);
    free(ft.corners);
    free(ft.coded);
    ghm_file_data_free(&in);
    return ret;
}

int ghm_matcher_load(GhmContext *ctx, const char *path, const GhmMatchParams *p,
                     GhmMatcher **out, char *why, size_t why_size)
{
    return load_impl(ctx, path, p, 1, out, why, why_size);
}

int ghm_matcher_load_for_one_query(GhmContext *ctx, const char *path, const GhmMatchParams *p,
                                   GhmMatcher **out, char *why, size_t why_size)
{
    return load_impl(ctx, path, p, 0, out, why, why_size);
}
