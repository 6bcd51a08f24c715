/*
 * ghm_frame_queue.h - decoding on its own thread while earlier frames are matched, through a
 * bounded queue, so that memory stays at (capacity + 2) frames however long the video is.
 *
 * Usage:
 *     GhmVideoReader *r = NULL;
 *     if ((ret = ghm_video_reader_start(video, 4, &r)) < 0) goto fail;
 *     GhmQueuedFrame item;
 *     for (;;) {
 *         ghm_video_reader_next(r, &item);          // blocks until the decoder has something
 *         if (item.status == GHM_VIDEO_END || item.status < 0) break;   // item.why says why
 *         if (item.status == GHM_VIDEO_DAMAGED) { warn(item.why); continue; }
 *         match(item.frame.image);
 *         ghm_image_free(&item.frame.image);
 *     }
 *     ghm_video_reader_stop(&r);   // also fine in the middle: the thread stops, frames freed
 *
 * The queue itself (ghm_frame_queue_*) is usable alone: any number of producers and consumers,
 * blocking push and pop, and a close that wakes everyone so that neither side can wait for
 * ever on a partner that has stopped.
 */
#ifndef GHM_FRAME_QUEUE_H
#define GHM_FRAME_QUEUE_H

#include "ghm_video.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHM_FRAME_QUEUE_MAX_CAPACITY 1024

/* One result of ghm_video_read(), as it travels from the decoding thread. */
typedef struct GhmQueuedFrame {
    int status;          /* GHM_VIDEO_FRAME, _DAMAGED, _END, or a negative GHM_ERR_* */
    GhmVideoFrame frame; /* image set only for GHM_VIDEO_FRAME; the holder of the item owns it */
    char why[256];       /* for _DAMAGED and errors: one line, without the file name */
} GhmQueuedFrame;

typedef struct GhmFrameQueue GhmFrameQueue;

/* Creates an open queue holding at most capacity items (1 to GHM_FRAME_QUEUE_MAX_CAPACITY;
 * else GHM_ERR_INVALID). GHM_ERR_NOMEM, GHM_ERR_EXTERNAL (pthread) on failure. */
GHM_API int ghm_frame_queue_create(int capacity, GhmFrameQueue **out);

/* Appends *item, waiting while the queue is full. On GHM_OK the queue owns the item's image.
 * Returns 1 when the queue is (or becomes, while waiting) closed: the item was not taken and
 * its image is still the caller's. */
GHM_API int ghm_frame_queue_push(GhmFrameQueue *q, const GhmQueuedFrame *item);

/* Takes the oldest item into *item (its image becomes the caller's), waiting while the queue is
 * empty and open. Returns GHM_OK, or 1 when the queue is closed and empty. */
GHM_API int ghm_frame_queue_pop(GhmFrameQueue *q, GhmQueuedFrame *item);

/* Closes the queue: pushes are refused from now on, pops drain what is left, and every waiting
 * thread wakes up. Idempotent. */
GHM_API void ghm_frame_queue_close(GhmFrameQueue *q);

/* Frees the queue and the images of items still in it; sets *q to NULL. No thread may be using
 * it. Accepts NULL and a pointer to NULL. */
GHM_API void ghm_frame_queue_free(GhmFrameQueue **q);

typedef struct GhmVideoReader GhmVideoReader;

/* Starts a thread that reads every frame of video (which stays the caller's and must not be
 * used elsewhere until ghm_video_reader_stop) into a queue of the given capacity. */
GHM_API int ghm_video_reader_start(GhmVideo *video, int capacity, GhmVideoReader **out);

/* Waits for the next result in stream order. After GHM_VIDEO_END or an error it returns that
 * same final item again (with no image). Returns item->status. */
GHM_API int ghm_video_reader_next(GhmVideoReader *r, GhmQueuedFrame *item);

/* Closes the reader's queue without waiting for the thread: it stops at its next push, and
 * next() gives the items already queued, then an error item ("the frame queue was closed"),
 * at once. For a consumer that gives up while another of its threads may be waiting in
 * next(); ghm_video_reader_stop() must still follow. Accepts NULL. */
GHM_API void ghm_video_reader_cancel(GhmVideoReader *r);

/* Stops the thread (at once if it waits on a full queue, after the frame it is decoding
 * otherwise), frees frames not taken yet and the reader; sets *r to NULL. Accepts NULL. */
GHM_API void ghm_video_reader_stop(GhmVideoReader **r);

#ifdef __cplusplus
}
#endif

#endif /* GHM_FRAME_QUEUE_H */
