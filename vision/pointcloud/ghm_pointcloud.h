/*
 * ghm_pointcloud.h - point clouds for the voxel mode: PLY (ascii, binary little and big endian)
 * and XYZ text readers, recognised by content (the PLY magic "ply\n"), never by extension, and a
 * small PLY writer for per-vertex tables.
 *
 * Usage:
 *     GhmPointCloud *pc = NULL;
 *     char why[256];
 *     if ((ret = ghm_pointcloud_load("bunny.ply", &pc, why, sizeof why)) < 0) {
 *         fprintf(stderr, "bunny.ply: %s\n", why);   // e.g. "line 14: vertex 3: x is nan"
 *         goto fail;
 *     }
 *     // pc->xyz[3*i + 0..2]; pc->normals (unit length) or NULL; pc->rgb or NULL
 *     ghm_pointcloud_free(&pc);
 *
 * PLY: any property order and scalar type (char/uchar/short/ushort/int/uint/float/double and the
 * int8/uint8/int16/uint16/int32/uint32/float32/float64 aliases); x, y, z are required, nx/ny/nz
 * and red/green/blue (or r/g/b, diffuse_red...) are found by name. Every other element and
 * property (faces, list properties, also a list inside the vertex element) is read and skipped,
 * so a file whose data does not match its header is refused. Strictness: vertex counts are
 * capped by what the file can hold before anything is allocated; a body that ends early, extra
 * data after the last element, NaN/Inf coordinates or normals, and malformed headers are errors
 * whose message names the line (ascii) or the byte offset (binary). Normals are normalised to
 * unit length; a zero normal stays zero (callers treat it as "no normal").
 *
 * XYZ: one point per line, 3 (x y z) or 6 (x y z nx ny nz) numbers separated by blanks or
 * commas, the same count on every line; blank lines and lines starting with '#' or '//' are
 * comments. Six columns none of which is negative, with a vector not of unit length, are
 * refused as colours (x y z r g b, a common export), which read as normals would give wrong
 * labels. OFF and OBJ files are recognised and refused as unsupported formats.
 */
#ifndef GHM_POINTCLOUD_H
#define GHM_POINTCLOUD_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many points per cloud (ids are 32-bit in the voxel pipeline). */
#define GHM_POINTCLOUD_MAX_POINTS ((size_t)1 << 30)

typedef struct GhmPointCloud {
    size_t n;
    float *xyz;     /* 3n floats, x y z per point */
    float *normals; /* 3n floats of unit (or zero) normals, or NULL when the file has none */
    uint8_t *rgb;   /* 3n bytes, or NULL when the file has no colours */
} GhmPointCloud;

/* Creates a cloud of n points with zeroed coordinates; normals and colours are allocated when
 * asked for. GHM_ERR_TOO_LARGE above GHM_POINTCLOUD_MAX_POINTS, GHM_ERR_NOMEM. The caller frees
 * *out with ghm_pointcloud_free(). */
GHM_API int ghm_pointcloud_create(size_t n, int with_normals, int with_rgb, GhmPointCloud **out);

/* Reads a PLY or XYZ file. Returns GHM_ERR_IO (cannot open or read), GHM_ERR_FORMAT (damaged or
 * not a point cloud), GHM_ERR_UNSUPPORTED (OFF, OBJ, or a PLY variant this reader does not
 * handle), GHM_ERR_TRUNCATED (the body ends before the data the header declares),
 * GHM_ERR_TOO_LARGE or GHM_ERR_NOMEM; when why is not NULL it receives one line saying what is
 * wrong and where (without the file name). *out is set only on success. */
GHM_API int ghm_pointcloud_load(const char *path, GhmPointCloud **out, char *why, size_t why_size);

/* The same for a whole file already in memory. */
GHM_API int ghm_pointcloud_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why,
                                  size_t why_size);

/* The cloud's bounding box: lo[k] and hi[k] the smallest and largest coordinate k of its points
 * (lo = +inf, hi = -inf for no points). */
GHM_API void ghm_pointcloud_bounds(const GhmPointCloud *pc, double lo[3], double hi[3]);

/* Frees the cloud's normals and sets them to NULL, so that a voxel pipeline estimates them
 * (`voxel --normals estimate`); accepts NULL. */
GHM_API void ghm_pointcloud_drop_normals(GhmPointCloud *pc);

/* Frees the cloud and sets *pc to NULL; accepts NULL and a pointer to NULL. */
GHM_API void ghm_pointcloud_free(GhmPointCloud **pc);

/* --- writing ------------------------------------------------------------------------------ */

typedef enum GhmPlyType {
    GHM_PLY_UCHAR = 0,
    GHM_PLY_INT = 1,   /* int32 */
    GHM_PLY_UINT = 2,  /* uint32 */
    GHM_PLY_FLOAT = 3, /* float32 */
    GHM_PLY_DOUBLE = 4
} GhmPlyType;

/* One column of the vertex table: value i is read at (const char *)data + i * stride. */
typedef struct GhmPlyColumn {
    const char *name;
    GhmPlyType type;
    const void *data;
    size_t stride; /* bytes between consecutive values */
} GhmPlyColumn;

/* Writes n vertices with the given columns as a PLY file (binary little endian, or ascii when
 * ascii is non-zero), with optional comment lines (NULL-terminated array, may be NULL). The file
 * is written atomically (ghm_file_io.h: a temporary file in the same folder, renamed into place,
 * mode from the umask), so `path` is either complete or untouched. GHM_ERR_IO with `why` on
 * failure, GHM_ERR_INVALID for bad arguments (a name or comment with a newline, no columns). */
GHM_API int ghm_ply_write(const char *path, int ascii, size_t n, const GhmPlyColumn *cols,
                          int ncols, const char *const *comments, char *why, size_t why_size);

/* Writes a cloud (x y z, then nx ny nz and red green blue when present) through ghm_ply_write. */
GHM_API int ghm_pointcloud_save_ply(const GhmPointCloud *pc, const char *path, int ascii, char *why,
                                    size_t why_size);

#ifdef __cplusplus
}
#endif

#endif /* GHM_POINTCLOUD_H */
