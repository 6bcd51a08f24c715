/*
 * pointcloud_write.c - the PLY writer for per-vertex tables (ascii or binary little endian),
 * through the file-I/O unit's atomic writer: the target is complete or untouched. See
 * ghm_pointcloud.h.
 */
#include <stdio.h>
#include <string.h>

#include "ghm_file_io.h"
#include "pointcloud_internal.h"

static const char *const ply_type_name[] = {"uchar", "int", "uint", "float", "double"};
static const size_t ply_type_size[] = {1, 4, 4, 4, 8};

static void put_le(uint8_t *dst, const void *src, size_t n)
{
    static const uint16_t one = 1;
    int little = *(const uint8_t *)&one == 1;
    for (size_t i = 0; i < n; i++)
        dst[i] = ((const uint8_t *)src)[little ? i : n - 1 - i];
}

static int write_ascii_value(FILE *f, const GhmPlyColumn *c, size_t i, int last)
{
    const char *p = (const char *)c->data + i * c->stride;
    char sep = last ? '\n' : ' ';
    switch (c->type) {
    case GHM_PLY_UCHAR:
        return fprintf(f, "%u%c", *(const uint8_t *)p, sep);
    case GHM_PLY_INT: {
        int32_t v;
        memcpy(&v, p, 4);
        return fprintf(f, "%d%c", (int)v, sep);
    }
    case GHM_PLY_UINT: {
        uint32_t v;
        memcpy(&v, p, 4);
        return fprintf(f, "%u%c", (unsigned)v, sep);
    }
    case GHM_PLY_FLOAT: {
        float v;
        memcpy(&v, p, 4);
        return fprintf(f, "%.9g%c", (double)v, sep);
    }
    default: {
        double v;
        memcpy(&v, p, 8);
        return fprintf(f, "%.17g%c", v, sep);
    }
    }
}

static int write_body(FILE *f, int ascii, size_t n, const GhmPlyColumn *cols, int ncols)
{
    uint8_t rec[8 * 64];
    for (size_t i = 0; i < n; i++) {
        if (ascii) {
            for (int k = 0; k < ncols; k++)
                if (write_ascii_value(f, &cols[k], i, k == ncols - 1) < 0)
                    return -1;
            continue;
        }
        size_t o = 0;
        for (int k = 0; k < ncols; k++) {
            put_le(rec + o, (const char *)cols[k].data + i * cols[k].stride,
                   ply_type_size[cols[k].type]);
            o += ply_type_size[cols[k].type];
        }
        if (fwrite(rec, 1, o, f) != o)
            return -1;
    }
    return 0;
}

static int check_columns(const GhmPlyColumn *cols, int ncols, const char *const *comments)
{
    if (!cols || ncols < 1 || ncols > 64)
        return GHM_ERR_INVALID;
    for (int k = 0; k < ncols; k++)
        if (!cols[k].name || !cols[k].name[0] || strpbrk(cols[k].name, " \t\r\n") ||
            (unsigned)cols[k].type > GHM_PLY_DOUBLE || !cols[k].data)
            return GHM_ERR_INVALID;
    for (int k = 0; comments && comments[k]; k++)
        if (strpbrk(comments[k], "\r\n"))
            return GHM_ERR_INVALID;
    return GHM_OK;
}

/* The header: magic, format, comments, the vertex element and its properties. */
static int write_header(FILE *f, int ascii, size_t n, const GhmPlyColumn *cols, int ncols,
                        const char *const *comments)
{
    int bad = fprintf(f, "ply\nformat %s 1.0\n", ascii ? "ascii" : "binary_little_endian") < 0;
    for (int k = 0; comments && comments[k]; k++)
        bad |= fprintf(f, "comment %s\n", comments[k]) < 0;
    bad |= fprintf(f, "element vertex %zu\n", n) < 0;
    for (int k = 0; k < ncols; k++)
        bad |= fprintf(f, "property %s %s\n", ply_type_name[cols[k].type], cols[k].name) < 0;
    bad |= fprintf(f, "end_header\n") < 0;
    return bad ? -1 : 0;
}

int ghm_ply_write(const char *path, int ascii, size_t n, const GhmPlyColumn *cols, int ncols,
                  const char *const *comments, char *why, size_t why_size)
{
    if (!path || check_columns(cols, ncols, comments) < 0)
        return ghmi_pc_fail(why, why_size, GHM_ERR_INVALID, "invalid PLY columns");
    GhmFileWriter *w = NULL;
    int ret = ghm_file_writer_create(path, &w, why, why_size);
    if (ret < 0)
        return ret;
    FILE *f = ghm_file_writer_stream(w);
    locale_t previous = ghmi_pc_c_locale_enter();
    /* A failed write leaves the stream's error set; commit reports it and removes the file. */
    if (write_header(f, ascii, n, cols, ncols, comments) == 0)
        write_body(f, ascii, n, cols, ncols);
    ghmi_pc_c_locale_leave(previous);
    return ghm_file_writer_commit(&w, why, why_size);
}

int ghm_pointcloud_save_ply(const GhmPointCloud *pc, const char *path, int ascii, char *why,
                            size_t why_size)
{
    if (!pc)
        return ghmi_pc_fail(why, why_size, GHM_ERR_INVALID, "no cloud");
    GhmPlyColumn cols[9];
    static const char *const names[9] = {"x", "y", "z", "nx", "ny", "nz", "red", "green", "blue"};
    int nc = 0;
    for (int k = 0; k < 3; k++)
        cols[nc++] = (GhmPlyColumn){names[k], GHM_PLY_FLOAT, pc->xyz + k, 3 * sizeof(float)};
    for (int k = 0; pc->normals && k < 3; k++)
        cols[nc++] = (GhmPlyColumn){names[3 + k], GHM_PLY_FLOAT, pc->normals + k, 3 * sizeof(float)};
    for (int k = 0; pc->rgb && k < 3; k++)
        cols[nc++] = (GhmPlyColumn){names[6 + k], GHM_PLY_UCHAR, pc->rgb + k, 3};
    return ghm_ply_write(path, ascii, pc->n, cols, nc, NULL, why, why_size);
}
