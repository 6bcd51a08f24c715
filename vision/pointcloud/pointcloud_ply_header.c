/*
 * pointcloud_ply_header.c - the PLY reader's first half: the header (format line, elements,
 * scalar and list properties, the vertex fields kept) and the check that the counts it
 * declares fit in the rest of the file, before anything is allocated. The body is read by
 * pointcloud_ply.c.
 */
#include <stdio.h>
#include <string.h>

#include "pointcloud_ply_internal.h"

const size_t ghmi_ply_scalar_size[] = {1, 1, 2, 2, 4, 4, 4, 8};

static const struct {
    const char *name;
    PlyScalar type;
} scalar_names[] = {
    {"char", S_CHAR},     {"int8", S_CHAR},     {"uchar", S_UCHAR},   {"uint8", S_UCHAR},
    {"short", S_SHORT},   {"int16", S_SHORT},   {"ushort", S_USHORT}, {"uint16", S_USHORT},
    {"int", S_INT},       {"int32", S_INT},     {"uint", S_UINT},     {"uint32", S_UINT},
    {"float", S_FLOAT},   {"float32", S_FLOAT}, {"double", S_DOUBLE}, {"float64", S_DOUBLE},
};

const char *const ghmi_ply_field_names[F_COUNT][2] = {
    {"x", NULL},          {"y", NULL},
    {"z", NULL},          {"nx", "normal_x"},
    {"ny", "normal_y"},   {"nz", "normal_z"},
    {"red", "diffuse_red"}, {"green", "diffuse_green"},
    {"blue", "diffuse_blue"},
};

/* --- small helpers ------------------------------------------------------------------------ */

/* Splits line into at most max blank-separated tokens, in place; returns how many. */
static int split(char *line, char **tok, int max)
{
    int n = 0;
    char *p = line;
    while (*p) {
        while (*p && ghmi_ply_is_blank((unsigned char)*p))
            p++;
        if (!*p)
            break;
        if (n == max)
            return max + 1;
        tok[n++] = p;
        while (*p && !ghmi_ply_is_blank((unsigned char)*p))
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

static int scalar_from_name(const char *s, PlyScalar *out)
{
    for (size_t i = 0; i < sizeof scalar_names / sizeof scalar_names[0]; i++)
        if (strcmp(s, scalar_names[i].name) == 0) {
            *out = scalar_names[i].type;
            return 0;
        }
    return -1;
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

static int header_format(PlyHeader *h, char **tok, int nt, int line, char *why, size_t ws)
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

static int header_element(PlyHeader *h, char **tok, int nt, int line, char *why, size_t ws)
{
    if (nt != 3)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: an element line needs a name and a count", line);
    if (h->nelems == MAX_ELEMENTS)
        return ghmi_pc_fail(why, ws, GHM_ERR_UNSUPPORTED,
                            "line %d: more than %d elements", line, MAX_ELEMENTS);
    PlyElement *e = &h->elems[h->nelems];
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

static int header_property(PlyHeader *h, char **tok, int nt, int line, char *why, size_t ws)
{
    if (h->nelems == 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "line %d: a property before any element", line);
    PlyElement *e = &h->elems[h->nelems - 1];
    if (e->nprops == MAX_PROPS)
        return ghmi_pc_fail(why, ws, GHM_ERR_UNSUPPORTED,
                            "line %d: element '%s' has more than %d properties", line, e->name,
                            MAX_PROPS);
    PlyProp *p = &e->props[e->nprops];
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
    e->min_bytes += ghmi_ply_scalar_size[is_list ? p->count_type : p->type];
    e->nprops++;
    return GHM_OK;
}

/* Finds the vertex element and the properties the reader keeps. */
static int header_vertex(PlyHeader *h, char *why, size_t ws)
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
    const PlyElement *v = &h->elems[h->vertex];
    for (int f = 0; f < F_COUNT; f++) {
        h->field[f] = -1;
        for (int i = 0; i < v->nprops; i++)
            for (int k = 0; k < 2; k++)
                if (ghmi_ply_field_names[f][k] &&
                    strcmp(v->props[i].name, ghmi_ply_field_names[f][k]) == 0)
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
                                ghmi_ply_field_names[f][0]);
    /* Normals or colours count only when all three components are there. */
    for (int group = F_NX; group <= F_R; group += 3)
        if (h->field[group] < 0 || h->field[group + 1] < 0 || h->field[group + 2] < 0)
            h->field[group] = h->field[group + 1] = h->field[group + 2] = -1;
    return GHM_OK;
}

static int header_keyword(PlyHeader *h, char *buf, int line, int *done, char *why, size_t ws)
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

int ghmi_ply_parse_header(const uint8_t *data, size_t size, PlyHeader *h, char *why, size_t ws)
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
int ghmi_ply_check_counts(const PlyHeader *h, size_t size, char *why, size_t ws)
{
    size_t room = size - h->body, used = 0;
    int exact = h->format != FMT_ASCII;
    for (int i = 0; i < h->nelems; i++) {
        const PlyElement *e = &h->elems[i];
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
