/*
 * video_run.h - what one run of the video mode carries, shared by its flow (cmd_video.c: the
 * reader, the workers, MPI ranks and parts on several GPUs) and its lines (video_output.c: one
 * per frame, the damaged frames, the summary, the progress bar).
 */
#ifndef GHM_VIDEO_RUN_H
#define GHM_VIDEO_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "ghm_frame_queue.h"
#include "ghm_match.h"
#include "match_cli.h"
#include "video_cli.h"

/* Everything one run (or one part of a run) uses, gathered from ghm_cmd_video's arguments. */
typedef struct GhmVideoRun {
    const GhmCommonOptions *common;
    const GhmVideoOptions *video;
    const GhmMatchParams *params; /* for the per-frame matchers of --swap */
    GhmContext *ctx;
    const char *video_path;    /* a file, or "-" */
    const char *subject;       /* how errors name it: the path, or "standard input" */
    GhmMatcher *matcher;       /* the reference's */
    const GhmImage *reference; /* the reference image (--swap) */
    int name_query;            /* one of several queries: every line names the video */
    int gpus;                  /* CUDA devices the workers are dealt across (resolve_gpus) */
    int first_gpu;             /* a part's device, from ctx's (run_parts) */
    int threads;               /* CPU threads its workers share (a part's share; 0: ctx's) */
    int jobs;                  /* matching workers (--jobs, or the default for ctx and gpus) */
    int split;                 /* the frames are split between MPI ranks (ghm_video_cli_split) */
    /* The frames this run (this rank's, this part's) prints: from..to (to < 0: to the last), every
     * video->step-th; damaged frames before warn_from are another's to warn about. */
    int64_t from, to, warn_from;
    FILE *out;                 /* stdout; on ranks after the first, their text for rank 0 */
} GhmVideoRun;

/* The progress bar on stderr. */
typedef struct GhmVideoProgress {
    int active;     /* stderr is a terminal and not --quiet */
    int drawn;      /* a bar is on the screen (cleared before any other stderr line) */
    double t0, last_draw;
    int64_t total;  /* selected frames, -1 when unknown */
} GhmVideoProgress;

/* The counts behind the summary line. */
typedef struct GhmVideoStats {
    int64_t frames;  /* matched frames */
    int64_t found;
    int64_t damaged; /* selected frames that could not be decoded */
    double match_ms_sum, match_ms_worst;
    int64_t worst_frame;
    double t0;
} GhmVideoStats;

/* Seconds on the monotonic clock. */
double ghm_video_now_s(void);

/* Clears the bar from the screen (before any other stderr line), if drawn. */
void ghm_video_progress_clear(GhmVideoProgress *p);

/* Draws the bar for `done` frames, at most ten times a second unless force. */
void ghm_video_progress_draw(GhmVideoProgress *p, int64_t done, int force);

/* A matched frame's line (a JSON object with --json) on run->out. 0, or -1 when it cannot be
 * written. */
int ghm_video_print_frame(const GhmVideoRun *run, const GhmVideoFrame *f,
                          const GhmMatchResult *res);

/* A damaged frame's line (none with --quiet). 0 or -1 as above. */
int ghm_video_print_damaged(const GhmVideoRun *run, const GhmQueuedFrame *item);

/* The summary: the last text line on run->out, or on stderr with --json (only on a terminal or
 * with --verbose); none with --quiet. */
void ghm_video_print_summary(const GhmVideoRun *run, const GhmVideoStats *s);

/* The counts of another part of the frames (a rank's, a GPU's) added to s. */
void ghm_video_add_stats(GhmVideoStats *s, const GhmVideoStats *t);

#endif /* GHM_VIDEO_RUN_H */
