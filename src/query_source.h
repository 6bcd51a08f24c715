/*
 * query_source.h - a run of image queries as the items of the matching workers
 * (ghm_video_match.h, the video mode's pool): the entries of a GhmQueryList from one entry up
 * to the next video, in list order, each image decoded by the worker that takes it, so that as
 * many decode at once as match; an entry that is not a readable image comes back as a damaged
 * item whose why says what is wrong with it.
 *
 * Usage:
 *     GhmQuerySource qs;
 *     ghm_query_source_init(&qs, &list, first);            // entries [first, qs.end)
 *     GhmVideoMatchSource src = ghm_query_source(&qs);
 *     if ((ret = ghm_video_match_start_source(&src, ctx, matcher, &mo, &vm)) < 0) goto fail;
 *     while (ghm_video_match_next(vm, &mf) != GHM_VIDEO_END)   // FRAME or DAMAGED items
 *         report(&list.entries[mf.item.frame.index], &mf);     // frame.index: the entry
 *     ghm_video_match_stop(&vm);                            // before qs and the list go
 */
#ifndef GHM_QUERY_SOURCE_H
#define GHM_QUERY_SOURCE_H

#include <stddef.h>

#include "ghm_video_match.h"
#include "query_files.h"

typedef struct GhmQuerySource {
    const GhmQueryList *list;
    size_t end;  /* the run's end: the next video entry, or list->n */
    size_t next; /* the entry next() hands out next */
} GhmQuerySource;

/* The run of entries that starts at first and ends before the next video entry. */
void ghm_query_source_init(GhmQuerySource *s, const GhmQueryList *list, size_t first);

/* s as a source (s must outlive the workers that take from it). */
GhmVideoMatchSource ghm_query_source(GhmQuerySource *s);

#endif /* GHM_QUERY_SOURCE_H */
