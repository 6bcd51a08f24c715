/*
 * pointcloud_internal.h - what the files of the point-cloud module share: the readers that
 * pointcloud_load.c picks from, and the helpers of pointcloud.c (messages, normals) that the
 * readers call. Included by the files in vision/pointcloud/ only.
 */
#ifndef GHM_POINTCLOUD_INTERNAL_H
#define GHM_POINTCLOUD_INTERNAL_H

#include <locale.h>
#include <stddef.h>
#include <stdint.h>

#include "ghm_pointcloud.h"

/* Points a loop over a cloud hands each OpenMP thread at the least: below twice this, one thread
 * does it all (starting a team costs more than it saves). */
#define GHMI_PC_PARALLEL_POINTS 65536

/* Formats one line into why (when not NULL) and returns status, so that error paths read
 * `return ghmi_pc_fail(why, why_size, GHM_ERR_FORMAT, "line %d: ...", line);`. */
int ghmi_pc_fail(char *why, size_t why_size, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Decodes a PLY file held in data[0..size), which starts with the magic "ply\n" (or
 * "ply\r\n"). Same contract as ghm_pointcloud_decode. */
int ghmi_ply_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why,
                    size_t why_size);

/* Decodes XYZ text (3 or 6 numbers a line) held in data[0..size). Same contract as
 * ghm_pointcloud_decode; errors name the line. */
int ghmi_xyz_decode(const uint8_t *data, size_t size, GhmPointCloud **out, char *why,
                    size_t why_size);

/* GHM_ERR_UNSUPPORTED for OFF and OBJ meshes, GHM_ERR_FORMAT for binary data, each with a why
 * that says what the file is; GHM_OK for anything else (which may still not be XYZ). */
int ghmi_pc_refuse_other_formats(const uint8_t *data, size_t size, char *why, size_t why_size);

/* Switches the calling thread to the "C" locale, so that numbers are read and written with a
 * decimal point whatever locale the application set (strtod and printf follow LC_NUMERIC: under
 * a decimal comma "0.5" reads as 0 and "0,5" is written). Returns what to hand to
 * ghmi_pc_c_locale_leave, which restores the thread's locale. Per thread: other threads of
 * the application keep theirs. */
locale_t ghmi_pc_c_locale_enter(void);
void ghmi_pc_c_locale_leave(locale_t previous);

/* Tests: XYZ files of `bytes` or more are parsed in stretches on the threads (0: the default,
 * 8 MB), so that small files exercise it. */
void ghmi_xyz_tune(size_t bytes);

/* Normalises n (nx, ny, nz) triples in place; zero vectors stay zero. */
void ghmi_normalise(float *normals, size_t n);

#endif /* GHM_POINTCLOUD_INTERNAL_H */
