/*
 * video_cli.h - the options of the video mode (--start, --end, --step, --swap, --jobs,
 * --gpus, --decode). The match mode's parser (match_cli.c) puts GHM_VIDEO_LONG_OPTIONS in its
 * table and hands every option it does not know to ghm_video_cli_option(), as it does with the
 * common ones; the values travel to ghm_cmd_video() (cmd_video.h) when QUERY turns out to be
 * a video.
 */
#ifndef GHM_VIDEO_CLI_H
#define GHM_VIDEO_CLI_H

#include <stdio.h>

#include "cli.h"
#include "ghm_video.h"

enum {
    GHM_OPT_VIDEO_START = GHM_OPT_FIRST_COMMAND + 80,
    GHM_OPT_VIDEO_END,
    GHM_OPT_VIDEO_STEP,
    GHM_OPT_VIDEO_SWAP,
    GHM_OPT_VIDEO_JOBS,
    GHM_OPT_VIDEO_GPUS,
    GHM_OPT_VIDEO_DECODE
};

#define GHM_VIDEO_LONG_OPTIONS                                                               \
    {"start", required_argument, NULL, GHM_OPT_VIDEO_START},                                 \
        {"end", required_argument, NULL, GHM_OPT_VIDEO_END},                                 \
        {"step", required_argument, NULL, GHM_OPT_VIDEO_STEP},                               \
        {"swap", no_argument, NULL, GHM_OPT_VIDEO_SWAP},                                     \
        {"jobs", required_argument, NULL, GHM_OPT_VIDEO_JOBS},                               \
        {"gpus", required_argument, NULL, GHM_OPT_VIDEO_GPUS},                               \
        {"decode", required_argument, NULL, GHM_OPT_VIDEO_DECODE}

typedef struct GhmVideoOptions {
    long start; /* first frame number (default 0) */
    long end;   /* last frame number, inclusive; -1 = to the end */
    long step;  /* every step-th frame from start (default 1) */
    int swap;   /* frames are the references, the image the query */
    int jobs;   /* frames matched at once, by as many workers; 0 = ghm_video_match_default_jobs */
    int gpus;   /* CUDA devices the workers are dealt across; 0 = one, GHM_CLI_ALL_GPUS */
    int decode_gpu; /* --decode gpu: frames decoded by the GPUs' video engines (NVDEC) */
} GhmVideoOptions;


GhmVideoOptions ghm_video_cli_defaults(void);

/* Applies one video option: 1 when id was one and was applied, 0 when id is not a video
 * option, -1 after printing an error line for a bad value. */
int ghm_video_cli_option(GhmVideoOptions *opt, int id, const char *arg);

/* Where the user gave --threads (threads > 0), the video's decoder gets as many threads (else
 * the library's fixed count). On failure prints an error line naming subject, frees *v and
 * returns -1; else 0. */
int ghm_video_cli_decode_threads(GhmVideo **v, int threads, const char *subject);

/* The help text of the video options, for the command's --help. */
void ghm_video_cli_help(FILE *f);

#endif /* GHM_VIDEO_CLI_H */
