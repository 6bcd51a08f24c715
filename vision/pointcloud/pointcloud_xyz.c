/*
 * pointcloud_xyz.c - the XYZ text reader (3 or 6 numbers a line; 6 that look like colours
 * refused), and the recognition of the formats that are not point clouds we read (OFF and OBJ
 * meshes, binary data), so that they get a message saying what they are rather than "not a
 * number" on their first line.
 */
#include <math.h>
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

int ghmi_xyz_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why, size_t ws)
{
    ColourClues clues = {0, 0, 0.0};
    size_t lines = 1, pos = 0, n = 0;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    GhmPointCloud *pc = NULL;
    int cols = 0, line = 0, ret;
    double v[7];
    char bad[40];
    /* Allocated for every line being a point, then n set to the points found. */
    size_t cap = lines < GHM_POINTCLOUD_MAX_POINTS ? lines : GHM_POINTCLOUD_MAX_POINTS;
    if ((ret = ghm_pointcloud_create(cap, 1, 0, &pc)) < 0)
        return ghmi_pc_fail(why, ws, ret, "cannot hold %zu points: %s", cap, ghm_strerror(ret));
    while (pos < size) {
        line++;
        int k = xyz_line(data, size, &pos, v, bad, sizeof bad);
        if (k == 0)
            continue;
        if (k < 0) {
            ret = ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                               "line %d: '%s' is not a number (not a PLY or XYZ point cloud)",
                               line, bad);
            goto fail;
        }
        if (cols == 0 && k != 3 && k != 6) {
            ret = ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                               "line %d: an XYZ line needs 3 (x y z) or 6 (x y z nx ny nz) numbers, "
                               "this one has %d%s",
                               line, k, k == 7 ? " or more" : "");
            goto fail;
        }
        if (cols == 0)
            cols = k;
        if (k != cols) {
            ret = ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                               "line %d: %d numbers where the lines before have %d", line, k, cols);
            goto fail;
        }
        for (int c = 0; c < cols; c++)
            if (!isfinite(v[c])) {
                ret = ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "line %d: %s is %s", line,
                                   c < 3 ? "a coordinate" : "a normal component",
                                   isnan(v[c]) ? "nan" : "infinite");
                goto fail;
            }
        for (int c = 0; c < 3; c++)
            pc->xyz[3 * n + (size_t)c] = (float)v[c];
        for (int c = 3; c < cols; c++)
            pc->normals[3 * n + (size_t)(c - 3)] = (float)v[c];
        if (cols == 6)
            colour_clues(v + 3, line, &clues);
        n++;
    }
    if (n == 0) {
        ret = ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "no points (only blank or comment lines)");
        goto fail;
    }
    if (cols == 6 && !clues.negative && clues.line) {
        ret = ghmi_pc_fail(why, ws, GHM_ERR_FORMAT,
                           "columns 4-6 look like colours, not normals (none is negative, and "
                           "line %d's has length %g): an XYZ file is read as x y z or x y z nx "
                           "ny nz (keep the first three columns, or write a PLY, whose "
                           "properties are named)", clues.line, clues.length);
        goto fail;
    }
    pc->n = n;
    if (cols == 3) {
        free(pc->normals);
        pc->normals = NULL;
    } else
        ghmi_normalise(pc->normals, n);
    *out = pc;
    return GHM_OK;
fail:
    ghm_pointcloud_free(&pc);
    return ret;
}
