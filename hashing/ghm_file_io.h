/*
 * ghm_file_io.h - the one file-I/O unit of the library and the program: whole-file reads with a
 * size cap, content sniffing (which format a file is by its first bytes, never its name),
 * atomic writes, and the removal of unfinished temporary files when the process is interrupted.
 *
 * Usage:
 *     GhmFileData in = {0};
 *     char why[256];
 *     if ((ret = ghm_file_read("bunny.ply", (size_t)1 << 30, GHM_FILE_MAP, &in, why,
 *                              sizeof why)) < 0) {
 *         fprintf(stderr, "bunny.ply: %s\n", why);   // e.g. "cannot open: No such file..."
 *         goto fail;
 *     }
 *     if (ghm_file_sniff(in.data, in.size, 0) == GHM_FILE_PLY) ...
 *     ghm_file_data_free(&in);
 *
 *     GhmFileWriter *w = NULL;
 *     if ((ret = ghm_file_writer_create("out.ply", &w, why, sizeof why)) < 0)
 *         goto fail;
 *     fprintf(ghm_file_writer_stream(w), "ply\n...");
 *     ret = ghm_file_writer_commit(&w, why, sizeof why); // out.ply is complete, or untouched
 *
 * Why in the core (hashing/, beside the errors and the "why" formatter): every layer above reads
 * or writes files (images, point clouds, reference files, voxel output in vision/; JSON in the
 * front ends), and each had grown its own copy with its own rules. In the bottom layer all of
 * them share one policy without a vision module depending sideways on another. The signature
 * table below names formats of the layers above only as bytes; it calls nothing of theirs.
 *
 * Atomic writes: the data goes to a new file with a unique name in the target's folder
 * (TARGET.tmp.PID.N, so that the rename cannot cross file systems), created with O_EXCL and mode
 * 0666 so that the kernel applies the umask as for any output file; the process umask is never
 * read or changed (changing it would race with other threads). Commit flushes, fsyncs and
 * renames it over the target, then fsyncs the folder; on any failure the temporary file is
 * removed and the target is left as it was. Two processes writing one target at once each write
 * their own temporary file: the last rename wins, and the target is always one complete output.
 * A target that exists and is not a regular file (a device, a pipe: /dev/null, /dev/stdout into
 * a pipe) is opened and written in place instead, without atomicity, since a rename would
 * replace it with a file; a symbolic link to a regular file has that file replaced, the link
 * kept.
 *
 * Signals: the unit keeps the names of its temporary files in flight in a fixed table that a
 * signal handler may read. The library installs no handler (signal dispositions belong to the
 * application); the program installs one for SIGINT and SIGTERM that calls
 * ghm_file_remove_temporaries() and re-raises the signal.
 *
 * Every "why" is one line saying what is wrong without the file name (the caller prints
 * "FILE: why"). Thread-safe: writers on different threads do not share state beyond the table.
 */
#ifndef GHM_FILE_IO_H
#define GHM_FILE_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ghm_api.h"
#include "ghm_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- reading ------------------------------------------------------------------------------ */

/* A whole file in memory: size bytes at data (never NULL after a successful read, even for an
 * empty file). mapped says whether data is a read-only mapping of the file. */
typedef struct GhmFileData {
    const uint8_t *data;
    size_t size;
    int mapped;
} GhmFileData;

/* ghm_file_read flags. GHM_FILE_MAP: a regular file may be mapped instead of copied; other
 * files (pipes, devices) are always read. Only for files nobody truncates while they are in use:
 * touching a mapped page past a shrunken end raises SIGBUS. The library's own readers copy. */
#define GHM_FILE_MAP 1u

/* Reads the whole file at path into *out, refusing more than max_bytes: a regular file above
 * the cap is refused before anything is read, a stream as soon as it passes the cap. Returns
 * GHM_OK; GHM_ERR_IO (cannot open, read or map; a directory), GHM_ERR_TOO_LARGE (above
 * max_bytes), GHM_ERR_NOMEM or GHM_ERR_INVALID (NULL path or out), with why. *out is zeroed
 * first and filled only on success; release it with ghm_file_data_free(). */
GHM_API int ghm_file_read(const char *path, size_t max_bytes, unsigned flags,
                          GhmFileData *out, char *why, size_t why_size);

/* Releases what ghm_file_read() gave (unmaps or frees) and zeroes *d. Accepts NULL and a
 * zeroed struct. */
GHM_API void ghm_file_data_free(GhmFileData *d);

/* Opens the file at path for reading as a stream, for readers that never hold a whole file
 * (a YUV4MPEG2 video is read frame by frame). Same checks and messages as ghm_file_read():
 * GHM_ERR_IO for a file that cannot be opened or is a directory, GHM_ERR_NOMEM,
 * GHM_ERR_INVALID. The caller closes *out with fclose(). */
GHM_API int ghm_file_open_read(const char *path, FILE **out, char *why, size_t why_size);

/* Reads at most n bytes from the start of the file at path into buf and sets *got to how many
 * there were (fewer for a shorter file). GHM_ERR_IO with why when it cannot be opened or read
 * or is a directory. For sniffing files that are then read by someone else (FFmpeg, a reader
 * that streams). */
GHM_API int ghm_file_head(const char *path, uint8_t *buf, size_t n, size_t *got, char *why,
                          size_t why_size);

/* --- content sniffing --------------------------------------------------------------------- */

typedef enum GhmFileKind {
    GHM_FILE_UNKNOWN = 0, /* none of the below, or no bytes at all */
    GHM_FILE_PNG,         /* 89 'PNG' 0D 0A 1A 0A */
    GHM_FILE_JPEG,        /* FF D8 FF */
    GHM_FILE_PLY,         /* "ply\n" or "ply\r\n" */
    GHM_FILE_XYZ,         /* text whose first line that is not blank or a comment starts with a
                             number (XYZ point clouds; the reader says more) */
    GHM_FILE_Y4M,         /* "YUV4MPEG2 " */
    GHM_FILE_REFERENCE,   /* GHM_FILE_REFERENCE_MAGIC: a geohash-match reference file */
    GHM_FILE_VIDEO        /* a video container: AVI, MP4/MOV, Matroska/WebM, Ogg, FLV, MPEG-PS */
} GhmFileKind;

/* The first 8 bytes of a reference file (vision/match/match_file.c writes them). */
#define GHM_FILE_REFERENCE_MAGIC "GHMREF\r\n"

/* How many first bytes ghm_file_sniff_path() reads; enough for every signature and for the
 * first lines of a text file. */
#define GHM_FILE_SNIFF_BYTES 512

/* ghm_file_sniff flags. GHM_SNIFF_PREFIX: bytes that end inside a signature and agree with it
 * so far count as that format (a file cut inside its signature is then reported by the right
 * decoder as truncated rather than as foreign). Without it a signature must be whole. */
#define GHM_SNIFF_PREFIX 1u

/* Which format the n bytes at head (the start of a file, n may be 0) are, by content only. */
GHM_API GhmFileKind ghm_file_sniff(const uint8_t *head, size_t n, unsigned flags);

/* ghm_file_sniff() on the first GHM_FILE_SNIFF_BYTES of the file at path, whole signatures
 * only. GHM_ERR_IO (with why) when it cannot be opened or read. */
GHM_API int ghm_file_sniff_path(const char *path, GhmFileKind *kind, char *why,
                                size_t why_size);

/* A short name for a kind ("PNG", "PLY", "reference file", ...); never NULL. */
GHM_API const char *ghm_file_kind_name(GhmFileKind kind);

/* --- atomic writes ------------------------------------------------------------------------ */

typedef struct GhmFileWriter GhmFileWriter;

/* Starts an atomic write of path: creates the temporary file beside it (see the top of this
 * file; a device or a pipe is opened in place) and registers it for removal on a signal.
 * Returns GHM_OK with *out set, GHM_ERR_IO with why ("cannot create a file in that folder:
 * Permission denied"), GHM_ERR_NOMEM or GHM_ERR_INVALID. Nothing exists at path's folder after
 * a failure. */
GHM_API int ghm_file_writer_create(const char *path, GhmFileWriter **out, char *why,
                                   size_t why_size);

/* The stream to write the data to (stdio, binary). Valid until commit or free; do not close it.
 * Errors on it are collected and reported by ghm_file_writer_commit(). */
GHM_API FILE *ghm_file_writer_stream(GhmFileWriter *w);

/* Finishes the write: flushes, fsyncs, closes and renames the temporary file over the target.
 * Always releases the writer and sets *w to NULL. GHM_OK, or GHM_ERR_IO with why (a write error
 * such as a full disk, or the rename failing: the target is a directory, ...), in which case
 * the temporary file is gone and the target untouched. GHM_ERR_INVALID for NULL. */
GHM_API int ghm_file_writer_commit(GhmFileWriter **w, char *why, size_t why_size);

/* Abandons the write: closes and removes the temporary file, leaves the target untouched,
 * releases the writer and sets *w to NULL. Accepts NULL and a pointer to NULL. */
GHM_API void ghm_file_writer_free(GhmFileWriter **w);

/* Writes size bytes atomically to path (create, one write, commit). Same codes as above. */
GHM_API int ghm_file_write(const char *path, const void *data, size_t size, char *why,
                           size_t why_size);

/* --- interruption ------------------------------------------------------------------------- */

/* Removes the temporary file of every atomic write still in progress in this process. Only
 * reads the unit's table and calls unlink(), so it is async-signal-safe: meant for a SIGINT or
 * SIGTERM handler that then ends the process. Writers in progress fail at commit afterwards. */
GHM_API void ghm_file_remove_temporaries(void);

/* How many atomic writes are in progress (for tests and diagnostics). */
GHM_API int ghm_file_temporaries_in_flight(void);

#ifdef __cplusplus
}
#endif

#endif /* GHM_FILE_IO_H */
