/*
 * pointcloud_xyz.c - the XYZ text reader (3 or 6 numbers a line; 6 that look like colours
 * refused), and the recognition of the formats that are not point clouds we read (OFF and OBJ
 * meshes, binary data), so that they get a message saying what they are rather than "not a
 * number" on their first line.
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pointcloud_internal.h"

/* --- recognising the format --------------------------------------------------------------- */

static int is_space(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static int is_sep(int c) { return is_space(c) || c == ','; }

/* The first word of the first line that is neither blank nor a '#' comment, in word. */
static void first_word(const uint8_t *data, size_t size, char *word, size_t len)
{
    size_t i = 0;
    word[0] = '\0';
    while (i < size) {
        while (i < size && (is_space(data[i]) || data[i] == '\n'))
            i++;
        if (i < size && data[i] == '#') {
            while (i < size && data[i] != '\n')
                i++;
            continue;
        }
        size_t n = 0;
        while (i < size && !is_sep(data[i]) && data[i] != '\n' && n + 1 < len)
            word[n++] = (char)data[i++];
        word[n] = '\0';
        return;
    }
}

int ghmi_pc_refuse_other_formats(const uint8_t *data, size_t size, char *why, size_t ws)
{
    static const char *const obj_words[] = {"v", "vn", "vt", "vp", "f", "o", "g", "s", "l",
                                            "mtllib", "usemtl"};
    char w[16];
    first_word(data, size, w, sizeof w);
    size_t wl = strlen(w);
    if (wl >= 3 && wl <= 6 && strcmp(w + wl - 3, "OFF") == 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_UNSUPPORTED,
                            "an OFF mesh file, which voxel mode does not read (use PLY or XYZ)");
    for (size_t i = 0; i < sizeof obj_words / sizeof obj_words[0]; i++)
        if (strcmp(w, obj_words[i]) == 0)
            return ghmi_pc_fail(why, ws, GHM_ERR_UNSUPPORTED,
                                "a Wavefront OBJ file, which voxel mode does not read (use PLY or "
                                "XYZ)");
    if (memchr(data, '\0', size < 4096 ? size : 4096))
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "binary data that is not a PLY file (no 'ply' magic)");
    return GHM_OK;
}

/* --- XYZ ---------------------------------------------------------------------------------- */

/* Reads up to 7 numbers of the line starting at *pos into v; moves *pos to the next line.
 * Returns the count, 0 for a blank or comment line, -1 for a word that is not a number. */
static int xyz_line(const uint8_t *data, size_t size, size_t *pos, double *v, char *bad,
                    size_t bad_len)
{
    size_t i = *pos, end = i;
    while (end < size && data[end] != '\n')
        end++;
    *pos = end < size ? end + 1 : end;
    while (i < end && is_sep(data[i]))
        i++;
    if (i == end || data[i] == '#' || (end - i >= 2 && data[i] == '/' && data[i + 1] == '/'))
        return 0;
    int n = 0;
    while (i < end) {
        char tok[64];
        size_t t = 0;
        while (i < end && !is_sep(data[i]) && t + 1 < sizeof tok)
            tok[t++] = (char)data[i++];
        tok[t] = '\0';
        char *stop = NULL;
        double d = strtod(tok, &stop);
        if (stop == tok || *stop != '\0' || (i < end && !is_sep(data[i]))) {
            snprintf(bad, bad_len, "%.30s", tok);
            return -1;
        }
        if (n < 7)
            v[n] = d;
        n++;
        while (i < end && is_sep(data[i]))
            i++;
    }
    return n > 7 ? 7 : n;
}

/* What tells x y z r g b (a common export) from x y z nx ny nz: colours are never negative and
 * their lengths vary, while the normals of any surface with an inside point every way, and a
 * flat patch's all one way have length 1. Read as normals, colours would give wrong labels
 * without a word. */
typedef struct ColourClues {
    int negative; /* a component below 0 was seen: normals */
    int line;     /* the first line whose vector is not of unit length (0: none) */
    double length;
} ColourClues;

static void colour_clues(const double *nv, int line, ColourClues *c)
{
    c->negative |= nv[0] < 0 || nv[1] < 0 || nv[2] < 0;
    double len = sqrt(nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2]);
    if (!c->line && fabs(len - 1.0) > 0.01) {
        c->line = line;
        c->length = len;
    }
}

/* A stretch of whole lines of the file, parsed on its own into pc's arrays from point `at` on
 * (at most one point a line): its points, the columns of its first point line and its colour
 * clues, lines counted from its first. A parallel read gives each thread one and passes no
 * why: the first irregular line (a word that is not a number, a count other than the first
 * line's or not 3 or 6, a value not finite) then only stops it (GHM_ERR_FORMAT, no message), and
 * the file is read again in one stretch, which names that line. */
typedef struct Stretch {
    size_t from, to; /* bytes: whole lines */
    size_t at;       /* its first point's place in pc */
    size_t lines, n; /* lines begun in it, points found */
    int cols;        /* of its first point line; 0 before it */
    ColourClues clues;
} Stretch;

static int parse_stretch(const uint8_t *data, Stretch *st, GhmPointCloud *pc, char *why,
                         size_t ws)
{
    double v[7];
    char bad[40];
    int line = 0, ret = GHM_ERR_FORMAT;
    size_t pos = st->from;
    while (pos < st->to) {
        line++;
        int k = xyz_line(data, st->to, &pos, v, bad, sizeof bad);
        if (k == 0)
            continue;
        if (k < 0)
            return ghmi_pc_fail(why, ws, ret,
                                "line %d: '%s' is not a number (not a PLY or XYZ point cloud)",
                                line, bad);
        if (st->cols == 0 && k != 3 && k != 6)
            return ghmi_pc_fail(why, ws, ret,
                                "line %d: an XYZ line needs 3 (x y z) or 6 (x y z nx ny nz) "
                                "numbers, this one has %d%s",
                                line, k, k == 7 ? " or more" : "");
        if (st->cols == 0)
            st->cols = k;
        if (k != st->cols)
            return ghmi_pc_fail(why, ws, ret, "line %d: %d numbers where the lines before have %d",
                                line, k, st->cols);
        for (int c = 0; c < k; c++)
            if (!isfinite(v[c]))
                return ghmi_pc_fail(why, ws, ret, "line %d: %s is %s", line,
                                    c < 3 ? "a coordinate" : "a normal component",
                                    isnan(v[c]) ? "nan" : "infinite");
        size_t p = st->at + st->n++;
        for (int c = 0; c < 3; c++)
            pc->xyz[3 * p + (size_t)c] = (float)v[c];
        for (int c = 3; c < k; c++)
            pc->normals[3 * p + (size_t)(c - 3)] = (float)v[c];
        if (k == 6)
            colour_clues(v + 3, line, &st->clues);
    }
    st->lines = (size_t)line;
    return GHM_OK;
}

/* What is checked of the points as a whole, then pc made the cloud of n points of cols
 * columns. */
static int finish(GhmPointCloud *pc, size_t n, int cols, const ColourClues *clues, char *why,
                  size_t ws)
{
    if (n == 0)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "no points (only blank or comment lines)");
    if (cols == 6 && !clues->negative && clues->line)
        return ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                            "columns 4-6 look like colours, not normals (none is negative, and "
                            "line %d's has length %g): an XYZ file is read as x y z or x y z nx "
                            "ny nz (keep the first three columns, or write a PLY, whose "
                            "properties are named)", clues->line, clues->length);
    pc->n = n;
    if (cols == 3) {
        free(pc->normals);
        pc->normals = NULL;
    } else {
        ghmi_normalise(pc->normals, n);
    }
    return GHM_OK;
}

/* Files from this size are parsed in stretches on the OpenMP threads (2M points, 111 MB:
 * 1.5-1.8 s on one thread of the 2-core machine, strtod half of it); tests lower it. */
#define PARALLEL_BYTES ((size_t)8 << 20)
#define MAX_STRETCHES 64

static size_t parallel_bytes = PARALLEL_BYTES;

void ghmi_xyz_tune(size_t bytes) { parallel_bytes = bytes ? bytes : PARALLEL_BYTES; }

/* The file cut into up to `count` stretches of whole lines, each given its place in pc (a point
 * a line at most, the newlines counted on the threads); returns how many, *lines the file's. */
static int cut(const uint8_t *data, size_t size, int count, Stretch *st, size_t *lines)
{
    int made = 0;
    size_t from = 0;
    for (int t = 0; t < count && from < size; t++) {
        size_t to = t == count - 1 ? size : size / (size_t)count * (size_t)(t + 1);
        to = to < from ? from : to;
        const uint8_t *nl = to < size ? memchr(data + to, '\n', size - to) : NULL;
        to = nl ? (size_t)(nl - data) + 1 : size;
        st[made++] = (Stretch){.from = from, .to = to};
        from = to;
    }
#pragma omp parallel for schedule(static, 1) if (made > 1)
    for (int t = 0; t < made; t++)
        for (size_t i = st[t].from; i < st[t].to; i++)
            st[t].lines += data[i] == '\n';
    /* every stretch but the last ends with its last line's newline */
    size_t at = 0;
    for (int t = 0; t < made; t++) {
        st[t].at = at;
        at += st[t].lines + (t == made - 1);
        st[t].lines = 0;
    }
    *lines = made ? at : 1;
    return made;
}

/* The parallel read (each thread in the "C" locale, as the caller): 1 when some stretch was
 * irregular or the stretches disagree on the columns (the caller reads the file in one stretch,
 * for the message), else pc made. */
static int parse_stretches(const uint8_t *data, Stretch *st, int count, GhmPointCloud *pc,
                           char *why, size_t ws)
{
    int irregular = 0;
#pragma omp parallel for schedule(static, 1) reduction(| : irregular)
    for (int t = 0; t < count; t++) {
        locale_t previous = ghmi_pc_c_locale_enter();
        irregular |= parse_stretch(data, &st[t], pc, NULL, 0) < 0;
        ghmi_pc_c_locale_leave(previous);
    }
    int cols = 0;
    for (int t = 0; t < count && !irregular; t++) {
        irregular |= cols && st[t].cols && st[t].cols != cols;
        cols = cols ? cols : st[t].cols;
    }
    if (irregular)
        return 1;
    /* the points closed up in order, the clues of the first stretch that has one */
    ColourClues clues = {0, 0, 0.0};
    size_t n = 0, lines = 0;
    for (int t = 0; t < count; t++) {
        if (n != st[t].at) {
            memmove(pc->xyz + 3 * n, pc->xyz + 3 * st[t].at, st[t].n * 3 * sizeof *pc->xyz);
            memmove(pc->normals + 3 * n, pc->normals + 3 * st[t].at,
                    st[t].n * 3 * sizeof *pc->normals);
        }
        n += st[t].n;
        clues.negative |= st[t].clues.negative;
        if (!clues.line && st[t].clues.line) {
            clues.line = (int)(lines + (size_t)st[t].clues.line);
            clues.length = st[t].clues.length;
        }
        lines += st[t].lines;
    }
    return finish(pc, n, cols, &clues, why, ws);
}

int ghmi_xyz_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why, size_t ws)
{
    Stretch st[MAX_STRETCHES];
    int threads = omp_get_max_threads();
    threads = threads < MAX_STRETCHES ? threads : MAX_STRETCHES;
    size_t lines = 1;
    int count = cut(data, size, size >= parallel_bytes ? threads : 1, st, &lines);
    GhmPointCloud *pc = NULL;
    /* Allocated for every line being a point, then n set to the points found. */
    size_t cap = lines < GHM_POINTCLOUD_MAX_POINTS ? lines : GHM_POINTCLOUD_MAX_POINTS;
    int ret = ghm_pointcloud_create(cap, 1, 0, &pc);
    if (ret < 0)
        return ghmi_pc_fail(why, ws, ret, "cannot hold %zu points: %s", cap, ghm_strerror(ret));
    ret = count > 1 && lines <= cap ? parse_stretches(data, st, count, pc, why, ws) : 1;
    if (ret == 1) {
        Stretch whole = {.from = 0, .to = size};
        ret = parse_stretch(data, &whole, pc, why, ws);
        if (ret == GHM_OK)
            ret = finish(pc, whole.n, whole.cols, &whole.clues, why, ws);
    }
    if (ret < 0)
        ghm_pointcloud_free(&pc);
    *out = pc;
    return ret;
}
