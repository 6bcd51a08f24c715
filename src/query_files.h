/*
 * query_files.h - the files a QUERY (or --search REFERENCE) argument stands for: a directory
 * stands for its PNG and JPEG images (by content, not name), sorted by name, not descending
 * into subdirectories; anything else stands for itself.
 */
#ifndef GHM_QUERY_FILES_H
#define GHM_QUERY_FILES_H

#include <stddef.h>

typedef struct GhmQueryFiles {
    char **paths; /* "DIR/NAME", each malloc'ed, owned by the list */
    size_t n;
} GhmQueryFiles;

/* 1 when path names a directory (following links), else 0 ("-" and missing files are not). */
int ghm_query_is_dir(const char *path);

/* Lists the images of directory dir into *out, sorted by name (strcmp: byte order, so the
 * same on every machine). Hidden files (a leading dot) and files that are not PNG or JPEG by
 * their first bytes are left out. Returns GHM_OK, or after printing one error line naming dir
 * (cannot be read, holds no image, out of memory) a GHM_ERR_* code; *out is then empty. The
 * caller frees the list with ghm_query_files_free(). */
int ghm_query_files_dir(const char *dir, GhmQueryFiles *out);

/* Frees the paths and empties the list; accepts an empty list. */
void ghm_query_files_free(GhmQueryFiles *f);

#endif /* GHM_QUERY_FILES_H */
