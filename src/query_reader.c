/* query_reader.c - image queries decoded on their own thread; see query_reader.h. The queue
 * is the video pipeline's (ghm_frame_queue.h): blocking, bounded, closable. */
#include "query_reader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ghm_frame_queue.h"

struct GhmQueryReader {
    const GhmQueryList *list;
    GhmFrameQueue *queue;
    pthread_t thread;
};

static void *decode_all(void *arg)
{
    GhmQueryReader *r = arg;
    for (size_t i = 0; i < r->list->n; i++) {
        const GhmQueryEntry *e = &r->list->entries[i];
        if (e->kind != GHM_QUERY_IMAGE)
            continue;
        GhmQueuedFrame item = {.frame = {.index = (int64_t)i}};
        int ret = ghm_image_load(e->path, &item.frame.image, item.why, sizeof item.why);
        item.status = ret < 0 ? ret : GHM_VIDEO_FRAME;
        if (ghm_frame_queue_push(r->queue, &item) != GHM_OK) { /* closed: the run is over */
            ghm_image_free(&item.frame.image);
            break;
        }
    }
    return NULL;
}

int ghm_query_reader_start(const GhmQueryList *list, int capacity, GhmQueryReader **out)
{
    if (!list || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmQueryReader *r = calloc(1, sizeof *r);
    if (!r)
        return GHM_ERR_NOMEM;
    r->list = list;
    int ret = ghm_frame_queue_create(capacity, &r->queue);
    if (ret == GHM_OK && pthread_create(&r->thread, NULL, decode_all, r) != 0)
        ret = GHM_ERR_EXTERNAL;
    if (ret < 0) {
        ghm_frame_queue_free(&r->queue);
        free(r);
        return ret;
    }
    *out = r;
    return GHM_OK;
}

int ghm_query_reader_next(GhmQueryReader *r, GhmImage **img, char *why, size_t why_size)
{
    GhmQueuedFrame item;
    *img = NULL;
    if (ghm_frame_queue_pop(r->queue, &item) != GHM_OK) { /* only after a stop: a bug */
        snprintf(why, why_size, "the query queue was closed");
        return GHM_ERR_INVALID;
    }
    if (item.status < 0) {
        snprintf(why, why_size, "%s", item.why);
        return item.status;
    }
    *img = item.frame.image;
    return GHM_OK;
}

void ghm_query_reader_stop(GhmQueryReader **r)
{
    if (!r || !*r)
        return;
    ghm_frame_queue_close((*r)->queue); /* wakes the thread if it waits to push */
    pthread_join((*r)->thread, NULL);
    ghm_frame_queue_free(&(*r)->queue);
    free(*r);
    *r = NULL;
}
