/*
 * pointcloud_ply.c - the PLY reader's second half and its entry: after the header
 * (pointcloud_ply_header.c), an ascii or binary (little or big endian) body. Every element is
 * walked, not only the vertices, so that a body that does not match its header is noticed; see
 * ghm_pointcloud.h for what is accepted and refused.
 *
 * Binary bodies are read straight from the caller's buffer (the whole file, usually mmap'ed):
 * the vertex element's layout is computed once and the loop pulls the needed fields out of each
 * fixed-size record, so 10 million points take a few hundred milliseconds at most. Ascii bodies
 * are read line by line so that errors can name the line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pointcloud_ply_internal.h"

static int host_is_little(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* --- values ------------------------------------------------------------------------------- */

static inline uint64_t load_bytes(const uint8_t *p, size_t n, int swap)
{
    uint8_t b[8];
    for (size_t i = 0; i < n; i++)
        b[i] = swap ? p[n - 1 - i] : p[i];
    uint64_t v = 0;
    if (n == 1)
        v = b[0];
    else if (n == 2) {
        uint16_t u;
        memcpy(&u, b, 2);
        v = u;
    } else if (n == 4) {
        uint32_t u;
        memcpy(&u, b, 4);
        v = u;
    } else
        memcpy(&v, b, 8);
    return v;
}

/* The binary value of type t at p as a double. */
static inline double get_scalar(const uint8_t *p, PlyScalar t, int swap)
{
    uint64_t u = load_bytes(p, ghmi_ply_scalar_size[t], swap);
    switch (t) {
    case S_CHAR:
        return (int8_t)u;
    case S_UCHAR:
        return (uint8_t)u;
    case S_SHORT:
        return (int16_t)u;
    case S_USHORT:
        return (uint16_t)u;
    case S_INT:
        return (int32_t)u;
    case S_UINT:
        return (uint32_t)u;
    case S_FLOAT: {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, 4);
        return f;
    }
    default: {
        double d;
        memcpy(&d, &u, 8);
        return d;
    }
    }
}

/* Colours: integer channels are taken as 0..255 (clamped), float channels as 0..1. */
static uint8_t to_colour(double v, PlyScalar t)
{
    if (t >= S_FLOAT)
        v *= 255.0;
    if (!(v > 0.0))
        return 0;
    return v >= 255.0 ? 255 : (uint8_t)(v + (t >= S_FLOAT ? 0.5 : 0.0));
}

/* Stores the value of field f of vertex i; refuses non-finite coordinates and normals. */
static int store_field(GhmPointCloud *pc, size_t i, int f, double v, PlyScalar t, const char *where,
                       char *why, size_t ws)
{
    if (f <= F_NZ && !isfinite(v))
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "%s: vertex %zu: %s is %s", where, i,
                            ghmi_ply_field_names[f][0], isnan(v) ? "nan" : "infinite");
    if (f <= F_Z)
        pc->xyz[3 * i + (size_t)f] = (float)v;
    else if (f <= F_NZ)
        pc->normals[3 * i + (size_t)(f - F_NX)] = (float)v;
    else
        pc->rgb[3 * i + (size_t)(f - F_R)] = to_colour(v, t);
    return GHM_OK;
}

/* --- binary body -------------------------------------------------------------------------- */

static int binary_truncated(const PlyElement *e, uint64_t item, size_t size, char *why, size_t ws)
{
    return ghmi_pc_fail(why, ws, GHM_ERR_TRUNCATED,
                        "the file ends at byte offset %zu, inside %s %llu of the %llu that line "
                        "%d declares",
                        size, e->name, (unsigned long long)item, (unsigned long long)e->count,
                        e->line);
}

/* Where the kept fields sit in a fixed-size vertex record. */
typedef struct Layout {
    int nf;
    int which[F_COUNT]; /* F_* of each kept field, ascending */
    size_t off[F_COUNT];
    PlyScalar type[F_COUNT];
    size_t stride;
} Layout;

/* The common layout: float fields in the host's byte order, copied without conversion, on the
 * OpenMP threads for large clouds (2M points with normals: 47 ms on one thread, 20-24 on two).
 * Returns non-zero when some value is not finite. */
static int copy_float_records(const Layout *l, const uint8_t *base, GhmPointCloud *pc)
{
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)                                   \
    if (pc->n >= 2 * GHMI_PC_PARALLEL_POINTS)
    for (size_t i = 0; i < pc->n; i++) {
        const uint8_t *rec = base + i * l->stride;
        for (int k = 0; k < l->nf; k++) {
            float c;
            memcpy(&c, rec + l->off[k], 4);
            if (k < 3)
                pc->xyz[3 * i + (size_t)k] = c;
            else
                pc->normals[3 * i + (size_t)(k - 3)] = c;
            bad |= !isfinite(c);
        }
    }
    return bad;
}

/* Any types and byte order, on the OpenMP threads as above. Returns non-zero when some
 * coordinate or normal is not finite. */
static int convert_records(const Layout *l, const uint8_t *base, int swap, GhmPointCloud *pc)
{
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)                                   \
    if (pc->n >= 2 * GHMI_PC_PARALLEL_POINTS)
    for (size_t i = 0; i < pc->n; i++) {
        const uint8_t *rec = base + i * l->stride;
        for (int k = 0; k < l->nf; k++) {
            double d = get_scalar(rec + l->off[k], l->type[k], swap);
            int f = l->which[k];
            if (f <= F_Z)
                pc->xyz[3 * i + (size_t)f] = (float)d;
            else if (f <= F_NZ)
                pc->normals[3 * i + (size_t)(f - F_NX)] = (float)d;
            else
                pc->rgb[3 * i + (size_t)(f - F_R)] = to_colour(d, l->type[k]);
            bad |= f <= F_NZ && !isfinite(d);
        }
    }
    return bad;
}

/* Fixed-size vertex records: the fast path for large files. */
static int binary_vertices_fixed(const PlyHeader *h, const uint8_t *data, size_t pos, int swap,
                                 GhmPointCloud *pc, char *why, size_t ws)
{
    const PlyElement *v = &h->elems[h->vertex];
    Layout l = {.stride = v->min_bytes};
    int all_float = !swap;
    for (int f = 0; f < F_COUNT; f++)
        if (h->field[f] >= 0) {
            l.which[l.nf] = f;
            l.off[l.nf] = v->props[h->field[f]].offset;
            l.type[l.nf] = v->props[h->field[f]].type;
            all_float &= l.type[l.nf] == S_FLOAT && f <= F_NZ;
            l.nf++;
        }
    int bad = all_float ? copy_float_records(&l, data + pos, pc)
                        : convert_records(&l, data + pos, swap, pc);
    if (!bad)
        return GHM_OK;
    /* Rare: find the first bad value again to say where it is. */
    for (size_t i = 0; i < pc->n; i++)
        for (int k = 0; k < l.nf && l.which[k] <= F_NZ; k++) {
            size_t at = pos + i * l.stride + l.off[k];
            double d = get_scalar(data + at, l.type[k], swap);
            if (!isfinite(d)) {
                char where[64];
                snprintf(where, sizeof where, "byte offset %zu", at);
                return store_field(pc, i, l.which[k], d, l.type[k], where, why, ws);
            }
        }
    return GHM_OK;
}

/* One record with lists: walks it, storing vertex fields when pc is not NULL. */
static int binary_record(const PlyElement *e, const PlyHeader *h, const uint8_t *data, size_t size,
                         size_t *pos, uint64_t item, int swap, GhmPointCloud *pc, char *why,
                         size_t ws)
{
    for (int i = 0; i < e->nprops; i++) {
        const PlyProp *p = &e->props[i];
        size_t at = *pos;
        if (p->is_list) {
            size_t cs = ghmi_ply_scalar_size[p->count_type];
            if (size - at < cs)
                return binary_truncated(e, item, size, why, ws);
            double c = get_scalar(data + at, p->count_type, swap);
            size_t isz = ghmi_ply_scalar_size[p->type];
            if (c < 0)
                return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                    "byte offset %zu: %s %llu: negative list length %.0f", at,
                                    e->name, (unsigned long long)item, c);
            if ((double)(size - at - cs) / (double)isz < c)
                return binary_truncated(e, item, size, why, ws);
            *pos = at + cs + (size_t)c * isz;
            continue;
        }
        size_t sz = ghmi_ply_scalar_size[p->type];
        if (size - at < sz)
            return binary_truncated(e, item, size, why, ws);
        *pos = at + sz;
        if (!pc)
            continue;
        for (int f = 0; f < F_COUNT; f++)
            if (h->field[f] == i) {
                char where[64];
                snprintf(where, sizeof where, "byte offset %zu", at);
                int ret = store_field(pc, (size_t)item, f, get_scalar(data + at, p->type, swap),
                                      p->type, where, why, ws);
                if (ret < 0)
                    return ret;
            }
    }
    return GHM_OK;
}

static int trailing_bytes(const uint8_t *data, size_t size, size_t pos, const char *where,
                          char *why, size_t ws)
{
    for (size_t i = pos; i < size; i++)
        if (!ghmi_ply_is_blank(data[i]) && data[i] != '\n')
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                "%s %zu: %zu bytes of data after the last element (the header's "
                                "counts do not match the body)",
                                where, pos, size - pos);
    return GHM_OK;
}

static int binary_body(const PlyHeader *h, const uint8_t *data, size_t size, GhmPointCloud *pc,
                       char *why, size_t ws)
{
    int swap = (h->format == FMT_LITTLE) != host_is_little();
    size_t pos = h->body;
    for (int ei = 0; ei < h->nelems; ei++) {
        const PlyElement *e = &h->elems[ei];
        int is_vertex = ei == h->vertex;
        if (!e->has_list) {
            /* check_counts() bounded count * min_bytes by the bytes after the header */
            size_t need = (size_t)e->count * e->min_bytes;
            if (size - pos < need)
                return binary_truncated(e, (size - pos) / e->min_bytes, size, why, ws);
            if (is_vertex) {
                int ret = binary_vertices_fixed(h, data, pos, swap, pc, why, ws);
                if (ret < 0)
                    return ret;
            }
            pos += need;
            continue;
        }
        for (uint64_t item = 0; item < e->count; item++) {
            int ret = binary_record(e, h, data, size, &pos, item, swap, is_vertex ? pc : NULL,
                                    why, ws);
            if (ret < 0)
                return ret;
        }
    }
    return trailing_bytes(data, size, pos, "byte offset", why, ws);
}

/* --- ascii body --------------------------------------------------------------------------- */

typedef struct Cursor {
    const uint8_t *p, *end;
    int line;
} Cursor;

/* Skips lines holding only blanks; returns 0 at the end of the data, 1 at a line with data. */
static int skip_blank_lines(Cursor *c)
{
    for (;;) {
        const uint8_t *q = c->p;
        while (q < c->end && ghmi_ply_is_blank(*q))
            q++;
        if (q == c->end) {
            c->p = q;
            return 0;
        }
        if (*q != '\n') {
            c->p = q;
            return 1;
        }
        c->p = q + 1;
        c->line++;
    }
}

/* Copies the next token of the current line into tok. Returns its length, 0 at the end of the
 * line (the newline is not consumed), -1 for a token longer than TOKEN_LEN - 1. */
static int next_token(Cursor *c, char *tok)
{
    while (c->p < c->end && ghmi_ply_is_blank(*c->p))
        c->p++;
    size_t n = 0;
    while (c->p < c->end && !ghmi_ply_is_blank(*c->p) && *c->p != '\n') {
        if (n == TOKEN_LEN - 1)
            return -1;
        tok[n++] = (char)*c->p++;
    }
    tok[n] = '\0';
    return (int)n;
}

/* Parses a whole token as a value of type t; integers must be whole and in range. */
static int parse_value(const char *tok, PlyScalar t, double *out)
{
    static const double lo[] = {-128, 0, -32768, 0, -2147483648.0, 0};
    static const double hi[] = {127, 255, 32767, 65535, 2147483647.0, 4294967295.0};
    char *end = NULL;
    if (t >= S_FLOAT) {
        *out = strtod(tok, &end);
        return end != tok && *end == '\0' ? 0 : -1;
    }
    long long v = strtoll(tok, &end, 10);
    if (end == tok || *end != '\0' || (double)v < lo[t] || (double)v > hi[t])
        return -1;
    *out = (double)v;
    return 0;
}

static int ascii_value(Cursor *c, const PlyElement *e, uint64_t item, const PlyProp *p, PlyScalar t,
                       double *v, char *why, size_t ws)
{
    char tok[TOKEN_LEN];
    int len = next_token(c, tok);
    if (len < 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: %s %llu: a value longer than %d "
                            "characters", c->line, e->name, (unsigned long long)item, TOKEN_LEN - 1);
    if (len == 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: %s %llu ends before its property '%s' (the line has fewer "
                            "values than the header declares)",
                            c->line, e->name, (unsigned long long)item, p->name);
    if (parse_value(tok, t, v) < 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: %s %llu: '%s' is not a valid %s for property '%s'", c->line,
                            e->name, (unsigned long long)item, tok,
                            t >= S_FLOAT ? "number" : "integer", p->name);
    return GHM_OK;
}

static int ascii_record(Cursor *c, const PlyElement *e, const PlyHeader *h, uint64_t item,
                        GhmPointCloud *pc, char *why, size_t ws)
{
    double v;
    int ret;
    for (int i = 0; i < e->nprops; i++) {
        const PlyProp *p = &e->props[i];
        if ((ret = ascii_value(c, e, item, p, p->is_list ? p->count_type : p->type, &v, why, ws)) < 0)
            return ret;
        if (p->is_list) {
            if (v < 0)
                return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: %s %llu: negative list "
                                    "length", c->line, e->name, (unsigned long long)item);
            for (long long k = 0; k < (long long)v; k++)
                if ((ret = ascii_value(c, e, item, p, p->type, &(double){0}, why, ws)) < 0)
                    return ret;
            continue;
        }
        for (int f = 0; pc && f < F_COUNT; f++)
            if (h->field[f] == i) {
                char where[32];
                snprintf(where, sizeof where, "line %d", c->line);
                if ((ret = store_field(pc, (size_t)item, f, v, p->type, where, why, ws)) < 0)
                    return ret;
            }
    }
    char tok[TOKEN_LEN];
    if (next_token(c, tok) != 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: %s %llu has more values than the header declares", c->line,
                            e->name, (unsigned long long)item);
    if (c->p < c->end) { /* the newline */
        c->p++;
        c->line++;
    }
    return GHM_OK;
}

static int ascii_body(const PlyHeader *h, const uint8_t *data, size_t size, GhmPointCloud *pc,
                      char *why, size_t ws)
{
    Cursor c = {data + h->body, data + size, h->body_line};
    for (int ei = 0; ei < h->nelems; ei++) {
        const PlyElement *e = &h->elems[ei];
        for (uint64_t item = 0; item < e->count; item++) {
            if (!skip_blank_lines(&c))
                return ghmi_pc_fail(why, ws, GHM_ERR_TRUNCATED,
                                    "line %d: the file ends after %llu of the %llu %s elements "
                                    "that line %d declares",
                                    c.line, (unsigned long long)item,
                                    (unsigned long long)e->count, e->name, e->line);
            int ret = ascii_record(&c, e, h, item, ei == h->vertex ? pc : NULL, why, ws);
            if (ret < 0)
                return ret;
        }
    }
    if (skip_blank_lines(&c))
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: data after the last element (the header's counts do not "
                            "match the body)",
                            c.line);
    return GHM_OK;
}

/* --- entry -------------------------------------------------------------------------------- */

int ghmi_ply_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why,
                    size_t why_size)
{
    GhmPointCloud *pc = NULL;
    PlyHeader *h = calloc(1, sizeof *h);
    int ret;
    if (!h)
        return ghmi_pc_fail(why, why_size, GHM_ERR_NOMEM, "out of memory");
    if ((ret = ghmi_ply_parse_header(data, size, h, why, why_size)) < 0)
        goto fail;
    if ((ret = ghmi_ply_check_counts(h, size, why, why_size)) < 0)
        goto fail;
    ret = ghm_pointcloud_create((size_t)h->elems[h->vertex].count, h->field[F_NX] >= 0,
                                h->field[F_R] >= 0, &pc);
    if (ret < 0) {
        ghmi_pc_fail(why, why_size, ret, "cannot hold %llu points: %s",
                     (unsigned long long)h->elems[h->vertex].count, ghm_strerror(ret));
        goto fail;
    }
    ret = h->format == FMT_ASCII ? ascii_body(h, data, size, pc, why, why_size)
                                 : binary_body(h, data, size, pc, why, why_size);
    if (ret < 0)
        goto fail;
    if (pc->normals)
        ghmi_normalise(pc->normals, pc->n);
    *out = pc;
    free(h);
    return GHM_OK;
fail:
    ghm_pointcloud_free(&pc);
    free(h);
    return ret;
}
