/*
 * json_out.h - JSON output through jansson, so that every string (file names with quotes,
 * non-ASCII or even invalid UTF-8) comes out as valid JSON.
 */
#ifndef GHM_JSON_OUT_H
#define GHM_JSON_OUT_H

#include <jansson.h>
#include <stdio.h>

/* A JSON string for arbitrary bytes: valid UTF-8 is kept, each invalid byte becomes U+FFFD.
 * Returns a new reference, or NULL when out of memory. */
json_t *ghm_json_string_lossy(const char *s);

/* Writes obj on one line followed by a newline (JSON Lines friendly) and flushes f.
 * Returns 0, or -1 on a write error. Does not take the reference. */
int ghm_json_print(FILE *f, const json_t *obj);

/* Writes obj to path as one JSON document through the atomic writer of ghm_file_io.h (a unique
 * temporary file beside path, renamed over it), so a failed run never leaves a partial file and
 * two runs writing one path at once each leave a whole document. Takes the reference (obj may
 * be NULL: a failed json_pack, reported as out of memory). On failure prints one line naming
 * path on stderr and returns -1; returns 0 otherwise. */
int ghm_json_write_file(const char *path, json_t *obj);

#endif /* GHM_JSON_OUT_H */
