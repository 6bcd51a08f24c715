/*
 * query_reader.h - the image queries of a run decoded ahead of matching, on their own thread,
 * as the video mode decodes frames ahead: while one query is matched the next ones are read,
 * and memory stays at (capacity + 2) images however many queries there are.
 *
 * Usage:
 *     GhmQueryReader *r = NULL;
 *     if ((ret = ghm_query_reader_start(&list, 2, &r)) < 0) goto fail;
 *     for (each entry of list in order)
 *         if (entry is GHM_QUERY_IMAGE) {
 *             ret = ghm_query_reader_next(r, &img, why, sizeof why);   // this entry's image
 *             ...
 *             ghm_image_free(&img);
 *         }
 *     ghm_query_reader_stop(&r);   // also fine in the middle: the thread stops, images freed
 */
#ifndef GHM_QUERY_READER_H
#define GHM_QUERY_READER_H

#include "ghm_image.h"
#include "query_files.h"

typedef struct GhmQueryReader GhmQueryReader;

/* Starts a thread that decodes the GHM_QUERY_IMAGE entries of list (which must outlive the
 * reader, unchanged) in order into a queue of capacity images. GHM_ERR_NOMEM,
 * GHM_ERR_EXTERNAL (no thread), GHM_ERR_INVALID. */
int ghm_query_reader_start(const GhmQueryList *list, int capacity, GhmQueryReader **out);

/* The next image entry's image, in list order: GHM_OK with *img (the caller's to free), or the
 * loader's error with why filled (one line, without the path). Never call it more often than
 * there are image entries. */
int ghm_query_reader_next(GhmQueryReader *r, GhmImage **img, char *why, size_t why_size);

/* Stops the thread (at once if it waits on a full queue, after the image it is decoding
 * otherwise), frees the images not taken and the reader; sets *r to NULL. Accepts NULL. */
void ghm_query_reader_stop(GhmQueryReader **r);

#endif /* GHM_QUERY_READER_H */
