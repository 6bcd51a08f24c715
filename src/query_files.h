/*
 * query_files.h - the files the QUERY (or --search REFERENCE) arguments stand for, in order: a
 * directory stands for its PNG and JPEG images (by content, whatever their names) and the files
 * named like pictures (.heic, .webp, .jpg ...: each then gets the image loader's error line),
 * sorted by name, not descending into subdirectories; anything else stands for itself. Each file is classified
 * once, as an image or a video, so that the runs of images (query_source.h) and the video mode
 * agree on which entries are whose.
 */
#ifndef GHM_QUERY_FILES_H
#define GHM_QUERY_FILES_H

#include <stddef.h>

typedef enum GhmQueryKind {
    GHM_QUERY_IMAGE, /* decoded by the image loader (which explains a file it cannot read) */
    GHM_QUERY_VIDEO, /* "-", or a file that ghm_video_is_video_path() calls a video */
    GHM_QUERY_BAD    /* a directory that cannot be listed or holds no image: why says so */
} GhmQueryKind;

typedef struct GhmQueryEntry {
    char *path; /* owned by the list */
    GhmQueryKind kind;
    char *why;  /* GHM_QUERY_BAD only: one line without the path, owned by the list */
} GhmQueryEntry;

typedef struct GhmQueryList {
    GhmQueryEntry *entries;
    size_t n;
} GhmQueryList;

/* 1 when path names a directory (following links), else 0 ("-" and missing files are not). */
int ghm_query_is_dir(const char *path);

/* The entries args[0..n) stand for, in order, into *out. A directory that cannot be read or
 * holds no image becomes one GHM_QUERY_BAD entry, so that its error line comes in its turn.
 * Returns GHM_OK or GHM_ERR_NOMEM (then *out is empty). Free with ghm_query_list_free(). */
int ghm_query_list_build(char *const *args, int n, GhmQueryList *out);

/* The number of GHM_QUERY_IMAGE entries. */
size_t ghm_query_list_images(const GhmQueryList *l);

/* Frees the entries and empties the list; accepts an empty list. */
void ghm_query_list_free(GhmQueryList *l);

#endif /* GHM_QUERY_FILES_H */
