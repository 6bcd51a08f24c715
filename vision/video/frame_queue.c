/*
 * frame_queue.c - a bounded ring of decoded frames between the decoding thread and the matcher
 * (see ghm_frame_queue.h). One mutex and two condition variables; close() is what makes every
 * wait finite: the consumer closes when it stops early, and the producer always ends the
 * stream with a final item (END or an error) that the consumer sees.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_frame_queue.h"

struct GhmFrameQueue {
    pthread_mutex_t lock;
    pthread_cond_t not_full;
    pthread_cond_t not_empty;
    GhmQueuedFrame *items;
    int capacity;
    int head;  /* oldest item */
    int count;
    int closed;
};

int ghm_frame_queue_create(int capacity, GhmFrameQueue **out)
{
    if (!out || capacity < 1 || capacity > GHM_FRAME_QUEUE_MAX_CAPACITY)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmFrameQueue *q = calloc(1, sizeof *q);
    if (!q)
        return GHM_ERR_NOMEM;
    if (!(q->items = calloc((size_t)capacity, sizeof *q->items))) {
        free(q);
        return GHM_ERR_NOMEM;
    }
    q->capacity = capacity;
    if (pthread_mutex_init(&q->lock, NULL) != 0) {
        free(q->items);
        free(q);
        return GHM_ERR_EXTERNAL;
    }
    if (pthread_cond_init(&q->not_full, NULL) != 0) {
        pthread_mutex_destroy(&q->lock);
        free(q->items);
        free(q);
        return GHM_ERR_EXTERNAL;
    }
    if (pthread_cond_init(&q->not_empty, NULL) != 0) {
        pthread_cond_destroy(&q->not_full);
        pthread_mutex_destroy(&q->lock);
        free(q->items);
        free(q);
        return GHM_ERR_EXTERNAL;
    }
    *out = q;
    return GHM_OK;
}

int ghm_frame_queue_push(GhmFrameQueue *q, const GhmQueuedFrame *item)
{
    if (!q || !item)
        return GHM_ERR_INVALID;
    pthread_mutex_lock(&q->lock);
    while (q->count == q->capacity && !q->closed)
        pthread_cond_wait(&q->not_full, &q->lock);
    if (q->closed) {
        pthread_mutex_unlock(&q->lock);
        return 1;
    }
    q->items[(q->head + q->count) % q->capacity] = *item;
    q->count++;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
    return GHM_OK;
}

int ghm_frame_queue_pop(GhmFrameQueue *q, GhmQueuedFrame *item)
{
    if (!q || !item)
        return GHM_ERR_INVALID;
    pthread_mutex_lock(&q->lock);
    while (q->count == 0 && !q->closed)
        pthread_cond_wait(&q->not_empty, &q->lock);
    if (q->count == 0) {
        pthread_mutex_unlock(&q->lock);
        return 1;
    }
    *item = q->items[q->head];
    memset(&q->items[q->head], 0, sizeof q->items[q->head]);
    q->head = (q->head + 1) % q->capacity;
    q->count--;
    pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->lock);
    return GHM_OK;
}

void ghm_frame_queue_close(GhmFrameQueue *q)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->lock);
    q->closed = 1;
    pthread_cond_broadcast(&q->not_full);
    pthread_cond_broadcast(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

void ghm_frame_queue_free(GhmFrameQueue **q)
{
    if (!q || !*q)
        return;
    GhmFrameQueue *p = *q;
    for (int i = 0; i < p->count; i++)
        ghm_image_free(&p->items[(p->head + i) % p->capacity].frame.image);
    pthread_cond_destroy(&p->not_empty);
    pthread_cond_destroy(&p->not_full);
    pthread_mutex_destroy(&p->lock);
    free(p->items);
    free(p);
    *q = NULL;
}

struct GhmVideoReader {
    GhmVideo *video;
    GhmFrameQueue *queue;
    pthread_t thread;
    int final_seen;         /* the consumer has taken the END or error item */
    GhmQueuedFrame final;   /* that item, to repeat (without image) */
};

static void *reader_main(void *arg)
{
    GhmVideoReader *r = arg;
    for (;;) {
        GhmQueuedFrame item;
        memset(&item, 0, sizeof item);
        item.status = ghm_video_read(r->video, &item.frame, item.why, sizeof item.why);
        if (ghm_frame_queue_push(r->queue, &item) != GHM_OK) {
            ghm_image_free(&item.frame.image); /* the consumer stopped listening */
            break;
        }
        if (item.status == GHM_VIDEO_END || item.status < 0)
            break;
    }
    return NULL;
}

int ghm_video_reader_start(GhmVideo *video, int capacity, GhmVideoReader **out)
{
    if (!video || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmVideoReader *r = calloc(1, sizeof *r);
    if (!r)
        return GHM_ERR_NOMEM;
    r->video = video;
    int ret = ghm_frame_queue_create(capacity, &r->queue);
    if (ret < 0) {
        free(r);
        return ret;
    }
    if (pthread_create(&r->thread, NULL, reader_main, r) != 0) {
        ghm_frame_queue_free(&r->queue);
        free(r);
        return GHM_ERR_EXTERNAL;
    }
    *out = r;
    return GHM_OK;
}

int ghm_video_reader_next(GhmVideoReader *r, GhmQueuedFrame *item)
{
    if (!r || !item)
        return GHM_ERR_INVALID;
    if (r->final_seen) {
        *item = r->final;
        return item->status;
    }
    if (ghm_frame_queue_pop(r->queue, item) != GHM_OK) {
        /* Only reachable if someone closed the queue under us: report it, do not wait. */
        memset(item, 0, sizeof *item);
        item->status = GHM_ERR_INVALID;
        snprintf(item->why, sizeof item->why, "the frame queue was closed");
    }
    if (item->status == GHM_VIDEO_END || item->status < 0) {
        r->final_seen = 1;
        r->final = *item;
    }
    return item->status;
}

void ghm_video_reader_cancel(GhmVideoReader *r)
{
    if (r)
        ghm_frame_queue_close(r->queue);
}

void ghm_video_reader_stop(GhmVideoReader **r)
{
    if (!r || !*r)
        return;
    ghm_frame_queue_close((*r)->queue);
    pthread_join((*r)->thread, NULL);
    ghm_frame_queue_free(&(*r)->queue);
    free(*r);
    *r = NULL;
}
