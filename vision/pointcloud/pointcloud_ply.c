/*
 * pointcloud_ply.c - the PLY reader: header, then an ascii or binary (little or big endian) body.
 * Every element is walked, not only the vertices, so that a body that does not match its header
 * is noticed; see ghm_pointcloud.h for what is accepted and refused.
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

#include "pointcloud_internal.h"

enum { MAX_ELEMENTS = 32, MAX_PROPS = 64, NAME_LEN = 64, LINE_LEN = 1024, TOKEN_LEN = 96 };

typedef enum Scalar { S_CHAR, S_UCHAR, S_SHORT, S_USHORT, S_INT, S_UINT, S_FLOAT, S_DOUBLE } Scalar;

static const size_t scalar_size[] = {1, 1, 2, 2, 4, 4, 4, 8};

static const struct {
    const char *name;
    Scalar type;
} scalar_names[] = {
    {"char", S_CHAR},     {"int8", S_CHAR},     {"uchar", S_UCHAR},   {"uint8", S_UCHAR},
    {"short", S_SHORT},   {"int16", S_SHORT},   {"ushort", S_USHORT}, {"uint16", S_USHORT},
    {"int", S_INT},       {"int32", S_INT},     {"uint", S_UINT},     {"uint32", S_UINT},
    {"float", S_FLOAT},   {"float32", S_FLOAT}, {"double", S_DOUBLE}, {"float64", S_DOUBLE},
};

typedef enum Format { FMT_ASCII, FMT_LITTLE, FMT_BIG } Format;

typedef struct Prop {
    char name[NAME_LEN];
    Scalar type; /* of the value, or of the items of a list */
    int is_list;
    Scalar count_type;
    size_t offset; /* byte offset in a fixed-size binary record (elements without lists) */
} Prop;

typedef struct Element {
    char name[NAME_LEN];
    uint64_t count;
    int line; /* header line that declared it, for messages */
    int nprops;
    int has_list;
    size_t min_bytes; /* binary: scalars plus list counts; the record size when no lists */
    Prop props[MAX_PROPS];
} Element;

/* The vertex fields the reader keeps, in this order. */
enum { F_X, F_Y, F_Z, F_NX, F_NY, F_NZ, F_R, F_G, F_B, F_COUNT };
static const char *const field_names[F_COUNT][2] = {
    {"x", NULL},    {"y", NULL},    {"z", NULL},   {"nx", "normal_x"}, {"ny", "normal_y"},
    {"nz", "normal_z"}, {"red", "diffuse_red"}, {"green", "diffuse_green"}, {"blue", "diffuse_blue"},
};

typedef struct Header {
    Format format;
    int have_format;
    int nelems;
    int vertex; /* index of the vertex element */
    int field[F_COUNT]; /* property index of each field in the vertex element, or -1 */
    size_t body;        /* byte offset of the first body byte */
    int body_line;      /* line number of the first body line (ascii) */
    Element elems[MAX_ELEMENTS];
} Header;

/* --- small helpers ------------------------------------------------------------------------ */

static int is_blank(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Splits line into at most max blank-separated tokens, in place; returns how many. */
static int split(char *line, char **tok, int max)
{
    int n = 0;
    char *p = line;
    while (*p) {
        while (*p && is_blank((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (n == max)
            return max + 1;
        tok[n++] = p;
        while (*p && !is_blank((unsigned char)*p))
            p++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

/* Parses a whole token of decimal digits into *out; 0 on success, -1 otherwise. */
static int parse_count(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int scalar_from_name(const char *s, Scalar *out)
{
    for (size_t i = 0; i < sizeof scalar_names / sizeof scalar_names[0]; i++)
        if (strcmp(s, scalar_names[i].name) == 0) {
            *out = scalar_names[i].type;
            return 0;
        }
    return -1;
}

static int host_is_little(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* --- header ------------------------------------------------------------------------------- */

/* Copies the header line at *pos into buf without its line ending and moves *pos past it.
 * Returns 1 for a line, 0 at the end of the data, -1 when the line does not fit in buf. */
static int header_line(const uint8_t *data, size_t size, size_t *pos, char *buf)
{
    if (*pos >= size)
        return 0;
    const uint8_t *start = data + *pos;
    const uint8_t *nl = memchr(start, '\n', size - *pos);
    size_t len = nl ? (size_t)(nl - start) : size - *pos;
    *pos += len + (nl ? 1 : 0);
    if (len > 0 && start[len - 1] == '\r')
        len--;
    if (len >= LINE_LEN)
        return -1;
    memcpy(buf, start, len);
    buf[len] = '\0';
    for (size_t i = 0; i < len; i++)
        if (buf[i] == '\0')
            buf[i] = '?'; /* a NUL would cut the line short silently */
    return 1;
}

static int header_format(Header *h, char **tok, int nt, int line, char *why, size_t ws)
{
    if (h->have_format)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: a second format line", line);
    if (nt != 3)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: the format line needs a format and a version", line);
    if (strcmp(tok[1], "ascii") == 0)
        h->format = FMT_ASCII;
    else if (strcmp(tok[1], "binary_little_endian") == 0)
        h->format = FMT_LITTLE;
    else if (strcmp(tok[1], "binary_big_endian") == 0)
        h->format = FMT_BIG;
    else
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: unknown format '%.40s' (expected ascii, "
                            "binary_little_endian or binary_big_endian)",
                            line, tok[1]);
    if (strcmp(tok[2], "1.0") != 0 && strcmp(tok[2], "1") != 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_UNSUPPORTED,
                            "line %d: PLY version '%.20s' is not supported (only 1.0)", line,
                            tok[2]);
    h->have_format = 1;
    return GHM_OK;
}

static int header_element(Header *h, char **tok, int nt, int line, char *why, size_t ws)
{
    if (nt != 3)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: an element line needs a name and a count", line);
    if (h->nelems == MAX_ELEMENTS)
        return ghmi_pc_fail(why, ws, GHM_ERR_UNSUPPORTED,
                            "line %d: more than %d elements", line, MAX_ELEMENTS);
    Element *e = &h->elems[h->nelems];
    memset(e, 0, sizeof *e);
    if (strlen(tok[1]) >= NAME_LEN)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: element name too long", line);
    strcpy(e->name, tok[1]);
    if (parse_count(tok[2], &e->count) < 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: element count '%.30s' is not a whole number", line, tok[2]);
    e->line = line;
    h->nelems++;
    return GHM_OK;
}

static int header_property(Header *h, char **tok, int nt, int line, char *why, size_t ws)
{
    if (h->nelems == 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: a property before any element", line);
    Element *e = &h->elems[h->nelems - 1];
    if (e->nprops == MAX_PROPS)
        return ghmi_pc_fail(why, ws, GHM_ERR_UNSUPPORTED,
                            "line %d: element '%s' has more than %d properties", line, e->name,
                            MAX_PROPS);
    Prop *p = &e->props[e->nprops];
    memset(p, 0, sizeof *p);
    int is_list = nt >= 2 && strcmp(tok[1], "list") == 0;
    if (nt != (is_list ? 5 : 3))
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: a property line needs %s", line,
                            is_list ? "'list', two types and a name" : "a type and a name");
    const char *type = tok[is_list ? 3 : 1], *name = tok[is_list ? 4 : 2];
    if (scalar_from_name(type, &p->type) < 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: unknown property type '%.30s'",
                            line, type);
    if (is_list) {
        if (scalar_from_name(tok[2], &p->count_type) < 0 || p->count_type >= S_FLOAT)
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                "line %d: list count type '%.30s' is not an integer type", line,
                                tok[2]);
        p->is_list = 1;
        e->has_list = 1;
    }
    if (strlen(name) >= NAME_LEN)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: property name too long", line);
    for (int i = 0; i < e->nprops; i++)
        if (strcmp(e->props[i].name, name) == 0)
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                "line %d: property '%s' appears twice in element '%s'", line,
                                name, e->name);
    strcpy(p->name, name);
    p->offset = e->min_bytes;
    e->min_bytes += scalar_size[is_list ? p->count_type : p->type];
    e->nprops++;
    return GHM_OK;
}

/* Finds the vertex element and the properties the reader keeps. */
static int header_vertex(Header *h, char *why, size_t ws)
{
    h->vertex = -1;
    for (int i = 0; i < h->nelems; i++)
        if (strcmp(h->elems[i].name, "vertex") == 0) {
            if (h->vertex >= 0)
                return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                    "line %d: a second vertex element", h->elems[i].line);
            h->vertex = i;
        }
    if (h->vertex < 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "the header declares no vertex element");
    const Element *v = &h->elems[h->vertex];
    for (int f = 0; f < F_COUNT; f++) {
        h->field[f] = -1;
        for (int i = 0; i < v->nprops; i++)
            for (int k = 0; k < 2; k++)
                if (field_names[f][k] && strcmp(v->props[i].name, field_names[f][k]) == 0)
                    h->field[f] = i;
        if (h->field[f] >= 0 && v->props[h->field[f]].is_list)
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                "line %d: vertex property '%s' is a list, not a number",
                                v->line, v->props[h->field[f]].name);
    }
    for (int f = F_X; f <= F_Z; f++)
        if (h->field[f] < 0)
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                "line %d: the vertex element has no '%s' property", v->line,
                                field_names[f][0]);
    /* Normals or colours count only when all three components are there. */
    for (int group = F_NX; group <= F_R; group += 3)
        if (h->field[group] < 0 || h->field[group + 1] < 0 || h->field[group + 2] < 0)
            h->field[group] = h->field[group + 1] = h->field[group + 2] = -1;
    return GHM_OK;
}

static int header_keyword(Header *h, char *buf, int line, int *done, char *why, size_t ws)
{
    char *tok[8];
    int nt = split(buf, tok, 7);
    if (nt == 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: an empty header line", line);
    if (strcmp(tok[0], "comment") == 0 || strcmp(tok[0], "obj_info") == 0)
        return GHM_OK;
    if (nt > 7)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: too many words in a header line",
                            line);
    if (strcmp(tok[0], "format") == 0)
        return header_format(h, tok, nt, line, why, ws);
    if (strcmp(tok[0], "element") == 0)
        return header_element(h, tok, nt, line, why, ws);
    if (strcmp(tok[0], "property") == 0)
        return header_property(h, tok, nt, line, why, ws);
    if (strcmp(tok[0], "end_header") == 0 && nt == 1) {
        *done = 1;
        return GHM_OK;
    }
    return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                        "line %d: '%.40s' is not a PLY header line (is end_header missing?)", line,
                        tok[0]);
}

static int parse_header(const uint8_t *data, size_t size, Header *h, char *why, size_t ws)
{
    char buf[LINE_LEN];
    size_t pos = 0;
    int line = 0, done = 0, r, ret;
    while (!done) {
        r = header_line(data, size, &pos, buf);
        line++;
        if (r == 0)
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                "the header has no end_header line (it runs to the end of the file)");
        if (r < 0)
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                "line %d: header line longer than %d bytes", line, LINE_LEN - 1);
        if (line == 1) {
            if (strcmp(buf, "ply") != 0)
                return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line 1: not the PLY magic 'ply'");
            continue;
        }
        if ((ret = header_keyword(h, buf, line, &done, why, ws)) < 0)
            return ret;
    }
    if (!h->have_format)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "the header has no format line");
    for (int i = 0; i < h->nelems; i++)
        if (h->elems[i].nprops == 0)
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: element '%s' has no properties",
                                h->elems[i].line, h->elems[i].name);
    h->body = pos;
    h->body_line = line + 1;
    return header_vertex(h, why, ws);
}

/* Refuses counts that the rest of the file cannot hold, before anything is allocated:
 * a binary record takes at least min_bytes, an ascii value at least two bytes. While every
 * element so far has fixed-size records, the end of the file is placed exactly. */
static int check_counts(const Header *h, size_t size, char *why, size_t ws)
{
    size_t room = size - h->body, used = 0;
    int exact = h->format != FMT_ASCII;
    for (int i = 0; i < h->nelems; i++) {
        const Element *e = &h->elems[i];
        uint64_t per = h->format == FMT_ASCII ? 2u * (uint64_t)e->nprops : e->min_bytes;
        uint64_t most = per ? (room - used) / per : UINT64_MAX;
        exact = exact && !e->has_list;
        if (e->count > most && exact)
            return ghmi_pc_fail(why, ws, GHM_ERR_TRUNCATED,
                                "the file ends at byte offset %zu, inside %s %llu of the %llu "
                                "that line %d declares",
                                size, e->name, (unsigned long long)most,
                                (unsigned long long)e->count, e->line);
        if (e->count > most)
            return ghmi_pc_fail(why, ws, GHM_ERR_TRUNCATED,
                                "line %d: the header declares %llu %s elements, but the rest "
                                "of the file can hold at most %llu (%zu bytes follow the header)",
                                e->line, (unsigned long long)e->count, e->name,
                                (unsigned long long)most, room);
        used += (size_t)(e->count * per);
    }
    if (h->elems[h->vertex].count > GHM_POINTCLOUD_MAX_POINTS)
        return ghmi_pc_fail(why, ws, GHM_ERR_TOO_LARGE, "%llu vertices (at most %zu)",
                            (unsigned long long)h->elems[h->vertex].count,
                            GHM_POINTCLOUD_MAX_POINTS);
    return GHM_OK;
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
static inline double get_scalar(const uint8_t *p, Scalar t, int swap)
{
    uint64_t u = load_bytes(p, scalar_size[t], swap);
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
static uint8_t to_colour(double v, Scalar t)
{
    if (t >= S_FLOAT)
        v *= 255.0;
    if (!(v > 0.0))
        return 0;
    return v >= 255.0 ? 255 : (uint8_t)(v + (t >= S_FLOAT ? 0.5 : 0.0));
}

/* Stores the value of field f of vertex i; refuses non-finite coordinates and normals. */
static int store_field(GhmPointCloud *pc, size_t i, int f, double v, Scalar t, const char *where,
                       char *why, size_t ws)
{
    if (f <= F_NZ && !isfinite(v))
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "%s: vertex %zu: %s is %s", where, i,
                            field_names[f][0], isnan(v) ? "nan" : "infinite");
    if (f <= F_Z)
        pc->xyz[3 * i + (size_t)f] = (float)v;
    else if (f <= F_NZ)
        pc->normals[3 * i + (size_t)(f - F_NX)] = (float)v;
    else
        pc->rgb[3 * i + (size_t)(f - F_R)] = to_colour(v, t);
    return GHM_OK;
}

/* --- binary body -------------------------------------------------------------------------- */

static int binary_truncated(const Element *e, uint64_t item, size_t size, char *why, size_t ws)
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
    Scalar type[F_COUNT];
    size_t stride;
} Layout;

/* The common layout: float fields in the host's byte order, copied without conversion.
 * Returns non-zero when some value is not finite. */
static int copy_float_records(const Layout *l, const uint8_t *base, GhmPointCloud *pc)
{
    int bad = 0;
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

/* Any types and byte order. Returns non-zero when some coordinate or normal is not finite. */
static int convert_records(const Layout *l, const uint8_t *base, int swap, GhmPointCloud *pc)
{
    int bad = 0;
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
static int binary_vertices_fixed(const Header *h, const uint8_t *data, size_t pos, int swap,
                                 GhmPointCloud *pc, char *why, size_t ws)
{
    const Element *v = &h->elems[h->vertex];
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
static int binary_record(const Element *e, const Header *h, const uint8_t *data, size_t size,
                         size_t *pos, uint64_t item, int swap, GhmPointCloud *pc, char *why,
                         size_t ws)
{
    for (int i = 0; i < e->nprops; i++) {
        const Prop *p = &e->props[i];
        size_t at = *pos;
        if (p->is_list) {
            size_t cs = scalar_size[p->count_type];
            if (size - at < cs)
                return binary_truncated(e, item, size, why, ws);
            double c = get_scalar(data + at, p->count_type, swap);
            size_t isz = scalar_size[p->type];
            if (c < 0)
                return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                    "byte offset %zu: %s %llu: negative list length %.0f", at,
                                    e->name, (unsigned long long)item, c);
            if ((double)(size - at - cs) / (double)isz < c)
                return binary_truncated(e, item, size, why, ws);
            *pos = at + cs + (size_t)c * isz;
            continue;
        }
        size_t sz = scalar_size[p->type];
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
        if (!is_blank(data[i]) && data[i] != '\n')
            return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                                "%s %zu: %zu bytes of data after the last element (the header's "
                                "counts do not match the body)",
                                where, pos, size - pos);
    return GHM_OK;
}

static int binary_body(const Header *h, const uint8_t *data, size_t size, GhmPointCloud *pc,
                       char *why, size_t ws)
{
    int swap = (h->format == FMT_LITTLE) != host_is_little();
    size_t pos = h->body;
    for (int ei = 0; ei < h->nelems; ei++) {
        const Element *e = &h->elems[ei];
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
        while (q < c->end && is_blank(*q))
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
    while (c->p < c->end && is_blank(*c->p))
        c->p++;
    size_t n = 0;
    while (c->p < c->end && !is_blank(*c->p) && *c->p != '\n') {
        if (n == TOKEN_LEN - 1)
            return -1;
        tok[n++] = (char)*c->p++;
    }
    tok[n] = '\0';
    return (int)n;
}

/* Parses a whole token as a value of type t; integers must be whole and in range. */
static int parse_value(const char *tok, Scalar t, double *out)
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

static int ascii_value(Cursor *c, const Element *e, uint64_t item, const Prop *p, Scalar t,
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

static int ascii_record(Cursor *c, const Element *e, const Header *h, uint64_t item,
                        GhmPointCloud *pc, char *why, size_t ws)
{
    double v;
    int ret;
    for (int i = 0; i < e->nprops; i++) {
        const Prop *p = &e->props[i];
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

static int ascii_body(const Header *h, const uint8_t *data, size_t size, GhmPointCloud *pc,
                      char *why, size_t ws)
{
    Cursor c = {data + h->body, data + size, h->body_line};
    for (int ei = 0; ei < h->nelems; ei++) {
        const Element *e = &h->elems[ei];
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
    Header *h = calloc(1, sizeof *h);
    int ret;
    if (!h)
        return ghmi_pc_fail(why, why_size, GHM_ERR_NOMEM, "out of memory");
    if ((ret = parse_header(data, size, h, why, why_size)) < 0)
        goto fail;
    if ((ret = check_counts(h, size, why, why_size)) < 0)
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
