/*
 * ghm_video_match.h - the frames of a video reader matched by several workers at once, handed
 * back in stream order, so that matching (what limits the video mode) uses the whole machine
 * while the output stays exactly what one worker gives.
 *
 * Usage:
 *     GhmVideoMatchOptions o = {.jobs = 0};           // 0: ghm_video_match_default_jobs(ctx)
 *     GhmVideoMatch *vm = NULL;
 *     if ((ret = ghm_video_match_start(reader, ctx, matcher, &o, &vm)) < 0) goto fail;
 *     GhmMatchedFrame mf;
 *     for (;;) {
 *         ghm_video_match_next(vm, &mf);              // the next item in stream order
 *         if (mf.item.status == GHM_VIDEO_END || mf.item.status < 0) break;
 *         if (mf.item.status == GHM_VIDEO_FRAME && mf.ret == GHM_OK) use(&mf.res);
 *         ghm_image_free(&mf.item.frame.image);
 *     }
 *     ghm_video_match_stop(&vm);                      // then ghm_video_reader_stop(&reader)
 *
 * How: each worker is a thread with its own GhmContext (the caller's backend, seed and verbose
 * level, the caller's threads shared out among the workers; on CUDA its own stream, and with
 * `gpus` its own device) and its own clone of the reference's matcher (ghm_matcher_clone: same
 * seed, same answers), both made, used and freed on its thread. A worker
 * takes the next item from the reader (one worker at a time, so items keep their order),
 * matches it, and leaves the result in a ring of 2 * jobs slots; next() hands the slots back in
 * order. A worker does not take an item while the ring is full, so at most 2 * jobs frames are
 * in the pool (plus the reader's queue) however long the video is, and one slow frame delays
 * the output, never the order. With jobs == 1 there is no thread: next() reads and matches on
 * the caller's thread with the caller's context and matcher, as the video mode always did.
 */
#ifndef GHM_VIDEO_MATCH_H
#define GHM_VIDEO_MATCH_H

#include "ghm_frame_queue.h"
#include "ghm_match.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHM_VIDEO_MATCH_MAX_JOBS 256

typedef struct GhmVideoMatchOptions {
    int jobs; /* workers, 1 to GHM_VIDEO_MATCH_MAX_JOBS; 0 = ghm_video_match_default_jobs() */
    /* --swap: when set, each frame becomes the reference of a matcher built from it with
     * params (in the worker's context), and swap_query is matched against it. */
    const GhmImage *swap_query;
    const GhmMatchParams *params;
    /* CUDA devices the workers are dealt across: worker i runs on device d + i % gpus, where d
     * is ctx's device, each with its own copy of the reference tables. 0 or 1: ctx's device.
     * More than one needs a CUDA ctx (GHM_ERR_INVALID), devices d to d + gpus - 1
     * (GHM_ERR_NO_DEVICE) and at least as many jobs as devices (GHM_ERR_INVALID); jobs 0 then
     * means the CUDA default per device. */
    int gpus;
    /* Where those devices start: ctx's device + first_gpu (0: ctx's own). Workers on another
     * device than ctx's have threads of their own, also with one job (GHM_ERR_INVALID without
     * a CUDA ctx, GHM_ERR_NO_DEVICE past the last device). Several readers of one video can so
     * each take a device: the video mode's --gpus on a file it can enter at key frames. */
    int first_gpu;
    /* The CPU threads the workers share out (0: ctx's): several readers' workers at once each
     * take a part of the machine, so that together they do not ask for more than it has. */
    int threads;
} GhmVideoMatchOptions;

/* One reader item with its match, as next() hands it back. */
typedef struct GhmMatchedFrame {
    GhmQueuedFrame item; /* as the reader gave it; item.frame.image is the caller's to free */
    int ret;             /* GHM_VIDEO_FRAME items: the match's status (GHM_OK or an error) */
    GhmMatchResult res;  /* GHM_VIDEO_FRAME items with ret == GHM_OK */
    double match_ms;     /* wall time of this frame's match, on its worker */
} GhmMatchedFrame;

typedef struct GhmVideoMatch GhmVideoMatch;

/* The workers the video mode uses when not told: on the CPU backend one per thread of ctx
 * (each worker then runs one thread: a frame of a few hundred thousand pixels keeps one core
 * busier than it keeps several, and the frames are independent), at most 16; on CUDA 4, each
 * with its own stream, so that one frame's host stages (corners, scoring) and another's
 * kernels overlap, with ctx's threads shared among them. */
GHM_API int ghm_video_match_default_jobs(const GhmContext *ctx);

/* Where the workers take their items from, one worker at a time and in order: next() gives
 * the next item (GHM_VIDEO_END after the last, and again after that); cancel() makes a next()
 * that waits return at once (stop calls it; NULL when next() never waits). load, where not NULL,
 * makes the image of a GHM_VIDEO_FRAME item that next() gave without one, on the worker that
 * took it and outside the turn, so that several load at once (a list of image files: decoding
 * each is as long as a fifth of its match); it sets item->frame.image, or item->status to
 * GHM_VIDEO_DAMAGED with item->why. A GhmVideoReader is one source (ghm_video_match_start). */
typedef struct GhmVideoMatchSource {
    void *user;
    int (*next)(void *user, GhmQueuedFrame *item);
    void (*cancel)(void *user);
    void (*load)(void *user, GhmQueuedFrame *item);
} GhmVideoMatchSource;

/* ghm_video_match_start with the items of source (copied; its user stays the caller's and must
 * outlive vm). GHM_ERR_INVALID also without source->next. */
GHM_API int ghm_video_match_start_source(const GhmVideoMatchSource *source, GhmContext *ctx,
                                         GhmMatcher *matcher, const GhmVideoMatchOptions *opt,
                                         GhmVideoMatch **out);

/* Starts matching the items of reader (which stays the caller's; stop this first) against
 * matcher (the reference's, built in ctx; used as it is with one job, only cloned with more,
 * and not to be used elsewhere until ghm_video_match_stop). With more than one job, the
 * workers' contexts and clones are ready when this returns. GHM_ERR_INVALID (NULL arguments,
 * jobs out of range, swap_query without params, gpus as above), GHM_ERR_NO_DEVICE (gpus),
 * GHM_ERR_NOMEM, GHM_ERR_EXTERNAL (a thread could not start), and the errors of
 * ghm_context_create and ghm_matcher_clone. */
GHM_API int ghm_video_match_start(GhmVideoReader *reader, GhmContext *ctx, GhmMatcher *matcher,
                                  const GhmVideoMatchOptions *opt, GhmVideoMatch **out);

/* The number of workers in use (after 0 was resolved). */
GHM_API int ghm_video_match_jobs(const GhmVideoMatch *vm);

/* The number of devices the workers run on (1 unless opt->gpus asked for more). */
GHM_API int ghm_video_match_gpus(const GhmVideoMatch *vm);

/* Waits for the next item in stream order and moves it into *out: damaged frames, the end and
 * errors as the reader gave them (ret GHM_OK, no match), frames with their match. After the
 * final item (GHM_VIDEO_END or an error) it returns that item again, without an image.
 * Returns out->item.status. */
GHM_API int ghm_video_match_next(GhmVideoMatch *vm, GhmMatchedFrame *out);

/* Stops the workers, also in the middle of the video (each finishes the frame it is on;
 * the reader's queue is closed so that none waits on the decoder), frees the frames not handed
 * back, the workers' matchers and contexts and vm; sets *vm to NULL. Accepts NULL. */
GHM_API void ghm_video_match_stop(GhmVideoMatch **vm);

#ifdef __cplusplus
}
#endif

#endif /* GHM_VIDEO_MATCH_H */
