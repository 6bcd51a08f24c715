/* query_source.c - a run of image queries as the matching workers' items; see query_source.h. */
#include "query_source.h"

#include <stdio.h>
#include <string.h>

#include "ghm_image.h"

void ghm_query_source_init(GhmQuerySource *s, const GhmQueryList *list, size_t first)
{
    s->list = list;
    s->next = first;
    s->end = first;
    while (s->end < list->n && list->entries[s->end].kind != GHM_QUERY_VIDEO)
        s->end++;
}

/* The next entry, without its image (the worker loads it): an image entry is a frame to load,
 * a directory that holds none a damaged item with its reason; GHM_VIDEO_END after the run. */
static int next_entry(void *user, GhmQueuedFrame *item)
{
    GhmQuerySource *s = user;
    memset(item, 0, sizeof *item);
    if (s->next >= s->end)
        return item->status = GHM_VIDEO_END;
    const GhmQueryEntry *e = &s->list->entries[s->next];
    item->frame.index = (int64_t)s->next++;
    item->status = e->kind == GHM_QUERY_IMAGE ? GHM_VIDEO_FRAME : GHM_VIDEO_DAMAGED;
    if (e->kind != GHM_QUERY_IMAGE)
        snprintf(item->why, sizeof item->why, "%s", e->why ? e->why : "not an image");
    return item->status;
}

/* Decodes the item's file on the worker that took it; a file that cannot be read becomes a
 * damaged item, so that the run goes on. */
static void load_entry(void *user, GhmQueuedFrame *item)
{
    const GhmQuerySource *s = user;
    const GhmQueryEntry *e = &s->list->entries[item->frame.index];
    if (ghm_image_load(e->path, &item->frame.image, item->why, sizeof item->why) < 0)
        item->status = GHM_VIDEO_DAMAGED;
}

GhmVideoMatchSource ghm_query_source(GhmQuerySource *s)
{
    GhmVideoMatchSource src = {.user = s, .next = next_entry, .cancel = NULL, .load = load_entry};
    return src;
}
