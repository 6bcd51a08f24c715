/*
 * pointcloud.c - point clouds: creation, loading (format recognised by content), the XYZ reader
 * and the PLY writer. The PLY reader is in pointcloud_ply.c. See ghm_pointcloud.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pointcloud_internal.h"

int ghmi_pc_fail(char *why, size_t why_size, int status, const char *fmt, ...)
{
    if (why && why_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

int ghm_pointcloud_create(size_t n, int with_normals, int with_rgb, GhmPointCloud **out)
{
    if (!out)
        return GHM_ERR_INVALID;
    if (n > GHM_POINTCLOUD_MAX_POINTS)
        return GHM_ERR_TOO_LARGE;
    GhmPointCloud *pc = calloc(1, sizeof *pc);
    if (!pc)
        return GHM_ERR_NOMEM;
    pc->n = n;
    /* +1 so that an empty cloud still has valid (freeable) arrays */
    pc->xyz = calloc(3 * n + 1, sizeof *pc->xyz);
    if (with_normals)
        pc->normals = calloc(3 * n + 1, sizeof *pc->normals);
    if (with_rgb)
        pc->rgb = calloc(3 * n + 1, 1);
    if (!pc->xyz || (with_normals && !pc->normals) || (with_rgb && !pc->rgb)) {
        ghm_pointcloud_free(&pc);
        return GHM_ERR_NOMEM;
    }
    *out = pc;
    return GHM_OK;
}

void ghm_pointcloud_free(GhmPointCloud **pc)
{
    if (!pc || !*pc)
        return;
    free((*pc)->xyz);
    free((*pc)->normals);
    free((*pc)->rgb);
    free(*pc);
    *pc = NULL;
}

void ghmi_normalise(float *normals, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float *v = normals + 3 * i;
        float len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        if (fabsf(len2 - 1.0f) <= 1e-6f || len2 == 0.0f)
            continue; /* already unit (most files), or no normal at all */
        double len = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
        v[0] = (float)(v[0] / len);
        v[1] = (float)(v[1] / len);
        v[2] = (float)(v[2] / len);
    }
}

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

static int refuse_other_formats(const uint8_t *data, size_t size, char *why, size_t ws)
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

static int xyz_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why, size_t ws)
{
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
        n++;
    }
    if (n == 0) {
        ret = ghmi_pc_fail(why, ws, GHM_ERR_FORMAT, "no points (only blank or comment lines)");
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

/* --- loading ------------------------------------------------------------------------------ */

int ghm_pointcloud_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why,
                          size_t why_size)
{
    if (!out || (!data && size))
        return ghmi_pc_fail(why, why_size, GHM_ERR_INVALID, "invalid arguments");
    if (size == 0)
        return ghmi_pc_fail(why, why_size, GHM_ERR_FORMAT, "empty file");
    if ((size >= 4 && memcmp(data, "ply\n", 4) == 0) ||
        (size >= 5 && memcmp(data, "ply\r\n", 5) == 0))
        return ghmi_ply_decode(data, size, out, why, why_size);
    int ret = refuse_other_formats(data, size, why, why_size);
    if (ret < 0)
        return ret;
    return xyz_decode(data, size, out, why, why_size);
}

/* Reads a stream that cannot be mapped (a pipe) into a growing buffer. */
static int read_all(int fd, uint8_t **buf, size_t *size, char *why, size_t ws)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    if (!b)
        return ghmi_pc_fail(why, ws, GHM_ERR_NOMEM, "out of memory");
    for (;;) {
        if (n == cap) {
            uint8_t *nb = cap < ((size_t)1 << 40) ? realloc(b, cap * 2) : NULL;
            if (!nb) {
                free(b);
                return ghmi_pc_fail(why, ws, GHM_ERR_NOMEM, "out of memory");
            }
            b = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            return ghmi_pc_fail(why, ws, GHM_ERR_IO, "cannot read: %s", strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    *buf = b;
    *size = n;
    return GHM_OK;
}

int ghm_pointcloud_load(const char *path, GhmPointCloud **out, char *why, size_t why_size)
{
    if (!path || !out)
        return ghmi_pc_fail(why, why_size, GHM_ERR_INVALID, "invalid arguments");
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return ghmi_pc_fail(why, why_size, GHM_ERR_IO, "cannot open: %s", strerror(errno));
    struct stat st;
    int ret;
    if (fstat(fd, &st) < 0) {
        ret = ghmi_pc_fail(why, why_size, GHM_ERR_IO, "cannot stat: %s", strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        ret = ghmi_pc_fail(why, why_size, GHM_ERR_IO, "is a directory");
    } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
        size_t size = (size_t)st.st_size;
        void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            ret = ghmi_pc_fail(why, why_size, GHM_ERR_IO, "cannot map: %s", strerror(errno));
        } else {
            posix_madvise(map, size, POSIX_MADV_SEQUENTIAL);
            ret = ghm_pointcloud_decode(map, size, out, why, why_size);
            munmap(map, size);
        }
    } else {
        uint8_t *buf = NULL;
        size_t size = 0;
        ret = read_all(fd, &buf, &size, why, why_size);
        if (ret == GHM_OK)
            ret = ghm_pointcloud_decode(buf, size, out, why, why_size);
        free(buf);
    }
    close(fd);
    return ret;
}

/* --- writing ------------------------------------------------------------------------------ */

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

int ghm_ply_write(const char *path, int ascii, size_t n, const GhmPlyColumn *cols, int ncols,
                  const char *const *comments, char *why, size_t why_size)
{
    if (!path || check_columns(cols, ncols, comments) < 0)
        return ghmi_pc_fail(why, why_size, GHM_ERR_INVALID, "invalid PLY columns");
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    if (!tmp)
        return ghmi_pc_fail(why, why_size, GHM_ERR_NOMEM, "out of memory");
    snprintf(tmp, plen + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return ghmi_pc_fail(why, why_size, GHM_ERR_IO, "cannot create: %s", strerror(e));
    }
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask); /* mkstemp's 0600 would surprise whoever reads the result */
    FILE *f = fdopen(fd, "wb");
    int bad = !f;
    if (f) {
        bad |= fprintf(f, "ply\nformat %s 1.0\n", ascii ? "ascii" : "binary_little_endian") < 0;
        for (int k = 0; comments && comments[k]; k++)
            bad |= fprintf(f, "comment %s\n", comments[k]) < 0;
        bad |= fprintf(f, "element vertex %zu\n", n) < 0;
        for (int k = 0; k < ncols; k++)
            bad |= fprintf(f, "property %s %s\n", ply_type_name[cols[k].type], cols[k].name) < 0;
        bad |= fprintf(f, "end_header\n") < 0;
        bad |= !bad && write_body(f, ascii, n, cols, ncols) < 0;
        bad |= fclose(f) != 0;
    } else
        close(fd);
    int e = errno;
    if (!bad && rename(tmp, path) != 0) {
        e = errno;
        bad = 1;
    }
    if (bad)
        unlink(tmp);
    free(tmp);
    if (bad)
        return ghmi_pc_fail(why, why_size, GHM_ERR_IO, "cannot write: %s", strerror(e));
    return GHM_OK;
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
