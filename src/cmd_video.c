/*
 * cmd_video.c - `geohash-match [OPTIONS] REFERENCE VIDEO`: every selected frame matched against
 * the reference (see cmd_video.h for which way round, and --swap).
 *
 * Frames are decoded on their own thread into a small bounded queue (vision/video/frame_queue.c)
 * and matched by --jobs workers at once (vision/video/video_match.c: each with its own context and
 * clone of the reference's matcher), which hand the results back in frame order; this thread
 * prints them. Decoding overlaps matching, and memory stays at a few frames per worker however
 * long the video is. The output does not depend on the number of workers (timings aside); with
 * --jobs 1 the frames are matched on this thread, one after another.
 *
 * Output: one line per selected frame on stdout, in frame order; with --json one JSON object
 * per line (JSON Lines): the image mode's fields plus "frame" (from 0) and "pts" (seconds from
 * the first frame, null when unknown). A damaged frame gets a line too, with "found": false and
 * "damaged": the reason, and a warning on stderr, so that the numbering is never ambiguous.
 * The summary (frames, found, damaged, average and worst matching time) ends the text output
 * on stdout; with --json it goes to stderr, and only when stderr is a terminal or with
 * --verbose, so that stdout stays pure JSON Lines and a script's stderr holds nothing but
 * warnings and errors. The progress bar is drawn on stderr only when it is a terminal. When the
 * video is one of several queries, every line names it (text: "VIDEO: " before it; JSON: a
 * "query" object with its "path"), so the lines of different queries can be told apart.
 */
#include "cmd_video.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ghm_frame_queue.h"
#include "ghm_video_match.h"
#include "json_out.h"
#include "ranks.h"

/* Frames decoded ahead of the matcher: enough to hide a slow frame, few enough for memory; at
 * least one per worker, so that workers that finish together all find a frame waiting. */
#define QUEUE_FRAMES 4

/* Everything one run uses, gathered from ghm_cmd_video's arguments. */
typedef struct Run {
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
    int jobs;                  /* matching workers (--jobs, or the default for ctx and gpus) */
    int split;                 /* the frames are split between MPI ranks (ghm_video_cli_split) */
    FILE *out;                 /* stdout; on ranks after the first, their text for rank 0 */
} Run;

GhmVideoOptions ghm_video_cli_defaults(void)
{
    GhmVideoOptions opt = {.start = 0, .end = -1, .step = 1, .swap = 0, .jobs = 0, .gpus = 0};
    return opt;
}

int ghm_video_cli_option(GhmVideoOptions *opt, int id, const char *arg)
{
    switch (id) {
    case GHM_OPT_VIDEO_START:
        return ghm_cli_parse_long("--start", arg, 0, LONG_MAX, &opt->start) < 0 ? -1 : 1;
    case GHM_OPT_VIDEO_END:
        return ghm_cli_parse_long("--end", arg, 0, LONG_MAX, &opt->end) < 0 ? -1 : 1;
    case GHM_OPT_VIDEO_STEP:
        return ghm_cli_parse_long("--step", arg, 1, LONG_MAX, &opt->step) < 0 ? -1 : 1;
    case GHM_OPT_VIDEO_SWAP:
        opt->swap = 1;
        return 1;
    case GHM_OPT_VIDEO_JOBS: {
        long v;
        if (ghm_cli_parse_long("--jobs", arg, 0, GHM_VIDEO_MATCH_MAX_JOBS, &v) < 0)
            return -1;
        opt->jobs = (int)v;
        return 1;
    }
    case GHM_OPT_VIDEO_GPUS: {
        long v;
        if (strcmp(arg, "all") == 0)
            opt->gpus = GHM_VIDEO_ALL_GPUS;
        else if (ghm_cli_parse_long("--gpus", arg, 1, GHM_VIDEO_MATCH_MAX_JOBS, &v) < 0)
            return -1;
        else
            opt->gpus = (int)v;
        return 1;
    }
    default:
        return 0;
    }
}

void ghm_video_cli_help(FILE *f)
{
    fputs("Video options (VIDEO is any file FFmpeg decodes, or - for YUV4MPEG2 on stdin):\n"
          "  --start N   first frame number to match (frames count from 0; default 0)\n"
          "  --end N     last frame number to match, inclusive (default: the last frame)\n"
          "  --step N    match every N-th frame from --start (default 1)\n"
          "  --swap      each frame is the reference and REFERENCE the query: for finding a\n"
          "              small picture (a logo) in the frames; the matrix then maps REFERENCE\n"
          "              pixels into the frame, and tables are rebuilt per frame (slower)\n"
          "  --jobs N    frames matched at once, each by its own worker (default 0: one per\n"
          "              CPU thread, at most 16, each worker with one thread; 4 on CUDA, each\n"
          "              with its own stream); the output is the same for any N, in order.\n"
          "              Several image QUERYs are matched the same way, each worker decoding\n"
          "              the image it takes (default: one worker per 2 images, up to the\n"
          "              above; --overlay: one)\n"
          "  --gpus N    CUDA devices the workers are dealt across (default 1; \"all\":\n"
          "              every device there is), each with its own copy of the reference\n"
          "              tables and, by default, 4 workers; the output is that of one\n"
          "              device, byte for byte apart from timings\n"
          "  Under mpirun -n R (a build with MPI) the selected frames of a video file are\n"
          "  split in R ranges, one per process (machines included); rank 0 prints them all.\n"
          "  Without --swap the matrix maps FRAME pixels into REFERENCE, whose tables are built\n"
          "  once. Output: one line per frame (JSON Lines with --json: the image fields plus\n"
          "  \"frame\" and \"pts\"); the summary ends the text output (with --json it goes to\n"
          "  stderr when that is a terminal or with --verbose).\n",
          f);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------- progress bar */

typedef struct Progress {
    int active;     /* stderr is a terminal and not --quiet */
    int drawn;      /* a bar is on the screen (cleared before any other stderr line) */
    double t0, last_draw;
    int64_t total;  /* selected frames, -1 when unknown */
} Progress;

static void progress_clear(Progress *p)
{
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        p->drawn = 0;
    }
}

static void format_duration(double s, char *buf, size_t n)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

static void progress_draw(Progress *p, int64_t done, int force)
{
    if (!p->active)
        return;
    double t = now_s();
    if (!force && t - p->last_draw < 0.1)
        return;
    p->last_draw = t;
    double fps = t > p->t0 ? done / (t - p->t0) : 0.0;
    char line[160], left[32] = "?";
    if (p->total > 0 && fps > 0)
        format_duration((double)(p->total - done) / fps, left, sizeof left);
    if (p->total > 0) {
        enum { WIDTH = 30 };
        char bar[WIDTH + 1];
        int filled = (int)(WIDTH * (done > p->total ? 1.0 : (double)done / p->total));
        for (int i = 0; i < WIDTH; i++)
            bar[i] = i < filled ? '#' : '.';
        bar[WIDTH] = '\0';
        snprintf(line, sizeof line, "[%s] %lld/%lld frames  %.1f frames/s  %s left", bar,
                 (long long)done, (long long)p->total, fps, left);
    } else {
        snprintf(line, sizeof line, "%lld frames  %.1f frames/s", (long long)done, fps);
    }
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    p->drawn = 1;
}

/* ------------------------------------------------------------------------------ output */

typedef struct Stats {
    int64_t frames;  /* matched frames */
    int64_t found;
    int64_t damaged; /* selected frames that could not be decoded */
    double match_ms_sum, match_ms_worst;
    int64_t worst_frame;
    double t0;
} Stats;

static json_t *pts_json(double pts)
{
    return isnan(pts) ? json_null() : json_real(pts);
}

/* {"path": the video} for the lines of one of several queries; json_null() if out of memory. */
static json_t *query_json(const Run *run)
{
    json_t *q = json_pack("{s:o}", "path", ghm_json_string_lossy(run->subject));
    return q ? q : json_null();
}

/* "VIDEO: " before a text line when the video is one of several queries. */
static int print_prefix(const Run *run)
{
    return run->name_query && fprintf(run->out, "%s: ", run->subject) < 0 ? -1 : 0;
}

/* "frame" and "pts" first, then the image mode's fields for the same result; the query size
 * (for its corners) is the frame's, or the reference image's with --swap. */
static int print_frame_json(const Run *run, const GhmVideoFrame *f, const GhmMatchResult *res)
{
    const GhmImage *query = run->video->swap ? run->reference : f->image;
    json_t *fields = ghm_match_result_json(res, query->width, query->height);
    json_t *obj = json_object();
    if (!fields || !obj) {
        json_decref(fields);
        json_decref(obj);
        return -1;
    }
    json_object_set_new(obj, "frame", json_integer(f->index));
    json_object_set_new(obj, "pts", pts_json(f->pts));
    json_object_update(obj, fields);
    if (run->name_query)
        json_object_set_new(obj, "query", query_json(run));
    json_decref(fields);
    if (run->video->swap)
        json_object_set_new(obj, "swapped", json_true());
    int ret = ghm_json_print(run->out, obj);
    json_decref(obj);
    return ret;
}

static int print_frame_text(const Run *run, const GhmVideoFrame *f, const GhmMatchResult *res)
{
    int n;
    if (print_prefix(run) < 0)
        return -1;
    if (res->found)
        n = fprintf(run->out,
                    "frame %lld  %.3f s  found  scale %.4f  rotation %+.2f deg  translation "
                    "(%.2f, %.2f)  votes %u  confidence %.3f\n",
                    (long long)f->index, f->pts, res->scale, res->rotation_deg, res->tx, res->ty,
                    res->votes, res->confidence);
    else
        n = fprintf(run->out, "frame %lld  %.3f s  not found\n", (long long)f->index, f->pts);
    return n < 0 ? -1 : 0;
}

static int print_damaged(const Run *run, const GhmQueuedFrame *item)
{
    const GhmCommonOptions *common = run->common;
    if (common->quiet)
        return 0;
    if (!common->json) {
        if (print_prefix(run) < 0)
            return -1;
        return fprintf(run->out, "frame %lld  %.3f s  damaged: %s\n",
                       (long long)item->frame.index, item->frame.pts, item->why) < 0 ? -1 : 0;
    }
    json_t *obj = json_object();
    json_object_set_new(obj, "frame", json_integer(item->frame.index));
    json_object_set_new(obj, "pts", pts_json(item->frame.pts));
    json_object_set_new(obj, "found", json_false());
    json_object_set_new(obj, "damaged", ghm_json_string_lossy(item->why));
    if (run->name_query)
        json_object_set_new(obj, "query", query_json(run));
    int ret = ghm_json_print(run->out, obj);
    json_decref(obj);
    return ret;
}

static void print_summary(const Run *run, const Stats *s)
{
    const GhmCommonOptions *c = run->common;
    if (c->quiet || (c->json && !c->verbose && !isatty(2)))
        return;
    double wall = now_s() - s->t0;
    char line[512];
    snprintf(line, sizeof line,
             "%lld frames, %lld found, %lld damaged; matching %.1f ms per frame on average, "
             "worst %.1f ms (frame %lld); %.1f frames/s overall",
             (long long)s->frames, (long long)s->found, (long long)s->damaged,
             s->frames ? s->match_ms_sum / s->frames : 0.0, s->match_ms_worst,
             (long long)s->worst_frame, wall > 0 ? s->frames / wall : 0.0);
    if (c->json)
        fprintf(stderr, "%s: summary: %s\n", GHM_PROGRAM, line);
    else if (print_prefix(run) == 0)
        fprintf(run->out, "summary: %s\n", line);
}

/* ------------------------------------------------------------------------------ the run */

/* Selected frames in the video, -1 when its length is unknown and no --end was given. */
static int64_t selected_total(const GhmVideoOptions *o, const GhmVideoInfo *info)
{
    int64_t last = o->end;
    if (info->frames > 0 && (last < 0 || last > info->frames - 1))
        last = info->frames - 1;
    if (last < 0)
        return -1;
    return last < o->start ? 0 : (last - o->start) / o->step + 1;
}

/* One item, in frame order, as the workers matched it. Returns 0 to go on, 1 at the end, -1 on
 * an error (printed). */
static int handle_item(const Run *run, const GhmMatchedFrame *mf, Stats *s, Progress *p)
{
    const GhmCommonOptions *c = run->common;
    const GhmQueuedFrame *item = &mf->item;
    if (item->status == GHM_VIDEO_END)
        return 1;
    if (item->status < 0) {
        progress_clear(p);
        ghm_cli_error(run->subject, "%s", item->why);
        return -1;
    }
    if (item->status == GHM_VIDEO_DAMAGED) {
        progress_clear(p);
        ghm_cli_warn(run->subject, "%s", item->why);
        const GhmVideoOptions *o = run->video;
        int64_t i = item->frame.index;
        if (i >= o->start && (o->end < 0 || i <= o->end) && (i - o->start) % o->step == 0) {
            s->damaged++;
            if (print_damaged(run, item) < 0)
                return -1;
        }
        return 0;
    }
    const GhmMatchResult *res = &mf->res;
    double ms = mf->match_ms;
    if (mf->ret < 0) {
        progress_clear(p);
        ghm_cli_error(run->subject, "frame %lld: matching failed: %s",
                      (long long)item->frame.index, ghm_strerror(mf->ret));
        return -1;
    }
    s->frames++;
    s->found += res->found != 0;
    s->match_ms_sum += ms;
    if (ms > s->match_ms_worst) {
        s->match_ms_worst = ms;
        s->worst_frame = item->frame.index;
    }
    if (!c->quiet) {
        int out = c->json ? print_frame_json(run, &item->frame, res)
                          : print_frame_text(run, &item->frame, res);
        if (out < 0) {
            progress_clear(p);
            ghm_cli_error(NULL, "cannot write to standard output");
            return -1;
        }
    }
    progress_draw(p, s->frames + s->damaged, 0);
    return 0;
}

/* The number of devices --gpus asks for in ctx (1 without it); -1 after an error line. */
static int resolve_gpus(const GhmVideoOptions *o, const GhmContext *ctx)
{
    int cuda = ghm_context_backend(ctx) == GHM_BACKEND_CUDA;
    int have = cuda ? ghm_cuda_device_count() : 0;
    if (o->gpus == GHM_VIDEO_ALL_GPUS)
        return have > 1 ? have : 1;
    if (o->gpus <= 1)
        return 1;
    if (!cuda) {
        ghm_cli_error("--gpus", "%d needs the CUDA backend (this run uses the CPU%s)", o->gpus,
                      ghm_cuda_available() ? "" : ": no usable CUDA device");
        return -1;
    }
    if (ghm_context_device(ctx) + o->gpus > have) {
        ghm_cli_error("--gpus", "%d: this machine has %d CUDA device%s", o->gpus, have,
                      have == 1 ? "" : "s");
        return -1;
    }
    if (o->jobs && o->jobs < o->gpus) {
        ghm_cli_error("--jobs", "%d is fewer than --gpus %d: each device needs a worker",
                      o->jobs, o->gpus);
        return -1;
    }
    return o->gpus;
}

static int check_options(const GhmMatchOptions *opt, const GhmVideoOptions *o,
                         const GhmImage *ref_img)
{
    if (opt->overlay) {
        ghm_cli_error("--overlay", "draws one query; it is not available for a video");
        return -1;
    }
    if (o->end >= 0 && o->end < o->start) {
        ghm_cli_error("--end", "%ld is before --start %ld", o->end, o->start);
        return -1;
    }
    if (o->swap && !ref_img) {
        ghm_cli_error("--swap", "needs a REFERENCE image (PNG or JPEG), not only --load-ref");
        return -1;
    }
    return 0;
}

/* Opens the video and applies the selection; prints the error line on failure. */
static int open_video(const Run *run, GhmVideo **out)
{
    char why[256] = "";
    if (strcmp(run->video_path, "-") == 0 && isatty(0)) {
        /* Reading would wait for typing that never comes as YUV4MPEG2. */
        ghm_cli_error(run->subject, "is a terminal: pipe a YUV4MPEG2 stream into it (ffmpeg -i "
                                    "FILE -f yuv4mpegpipe - | geohash-match REFERENCE -)");
        return -1;
    }
    if (ghm_video_open(run->video_path, out, why, sizeof why) < 0) {
        ghm_cli_error(run->subject, "%s", why);
        return -1;
    }
    const GhmVideoOptions *o = run->video;
    if (ghm_video_select(*out, o->start, o->end, o->step) < 0) {
        ghm_cli_error(NULL, "bad frame selection");
        ghm_video_free(out);
        return -1;
    }
    return ghm_video_cli_decode_threads(out, run->common->threads, run->subject);
}

int ghm_video_cli_decode_threads(GhmVideo **v, int threads, const char *subject)
{
    if (threads > 0 && ghm_video_set_decode_threads(*v, threads) < 0) {
        ghm_cli_error(subject, "cannot start its decoder's threads");
        ghm_video_free(v);
        return -1;
    }
    return 0;
}

/* Takes the matched frames in order until the end or an error. Returns 1 at the end, -1
 * after an error line. */
static int run_frames(const Run *run, GhmVideoMatch *vm, Stats *s, Progress *p)
{
    GhmMatchedFrame mf;
    int r = 0;
    while (r == 0) {
        ghm_video_match_next(vm, &mf);
        r = handle_item(run, &mf, s, p);
        ghm_image_free(&mf.item.frame.image);
    }
    progress_clear(p);
    return r;
}

/* Starts the matching workers on reader; prints the error line on failure. */
static int start_matching(const Run *run, GhmVideoReader *reader, GhmVideoMatch **vm)
{
    GhmVideoMatchOptions mo = {.jobs = run->jobs,
                               .swap_query = run->video->swap ? run->reference : NULL,
                               .params = run->params,
                               .gpus = run->gpus};
    int ret = ghm_video_match_start(reader, run->ctx, run->matcher, &mo, vm);
    int jobs = run->jobs;
    if (ret < 0) {
        ghm_cli_error(NULL, "cannot start %d matching worker%s: %s", jobs, jobs == 1 ? "" : "s",
                      ghm_strerror(ret));
        return -1;
    }
    if (run->common->verbose && run->gpus > 1)
        fprintf(stderr, "video: %d matching workers on %d CUDA devices\n", jobs, run->gpus);
    else if (run->common->verbose)
        fprintf(stderr, "video: %d matching worker%s\n", jobs, jobs == 1 ? "" : "s");
    return 0;
}

/* ------------------------------------------------------------------ several MPI ranks */

int ghm_video_cli_split(const GhmMatchOptions *opt)
{
    return ghm_ranks_size() > 1 && !opt->one_line && opt->query && strcmp(opt->query, "-") != 0;
}

/* This rank's range of the selected frames: the selection cut in ghm_ranks_size() consecutive
 * ranges, so that each rank decodes only up to the end of its own (a video's frames are decoded
 * in order). Rank 0 takes them all when the video's length is unknown. 0 when the rank has
 * frames, 1 when it has none, -1 after an error line. */
static int select_rank_share(const Run *run, GhmVideo *v)
{
    const GhmVideoOptions *o = run->video;
    int64_t total = selected_total(o, ghm_video_info(v));
    int64_t ranks = ghm_ranks_size(), r = ghm_ranks_rank();
    if (total < 0)
        return r == 0 ? 0 : 1;
    int64_t k0 = total * r / ranks, k1 = total * (r + 1) / ranks;
    if (k1 <= k0)
        return 1;
    if (ghm_video_select(v, o->start + k0 * o->step, o->start + (k1 - 1) * o->step, o->step) < 0) {
        ghm_cli_error(NULL, "bad frame selection");
        return -1;
    }
    return 0;
}

enum { STAT_FRAMES, STAT_FOUND, STAT_DAMAGED, STAT_SUM, STAT_WORST, STAT_WORST_FRAME, STATS };

/* The ranks' counts added up on rank 0 (s is rank 0's own before). Every rank calls it. */
static void merge_stats(Stats *s)
{
    double mine[STATS] = {(double)s->frames, (double)s->found,  (double)s->damaged,
                          s->match_ms_sum,   s->match_ms_worst, (double)s->worst_frame};
    double *all = ghm_ranks_rank() == 0 ? calloc((size_t)ghm_ranks_size(), sizeof mine) : NULL;
    ghm_ranks_gather_doubles(mine, STATS, all);
    for (int r = 1; all && r < ghm_ranks_size(); r++) {
        const double *t = all + (size_t)r * STATS;
        s->frames += (int64_t)t[STAT_FRAMES];
        s->found += (int64_t)t[STAT_FOUND];
        s->damaged += (int64_t)t[STAT_DAMAGED];
        s->match_ms_sum += t[STAT_SUM];
        if (t[STAT_WORST] > s->match_ms_worst) {
            s->match_ms_worst = t[STAT_WORST];
            s->worst_frame = (int64_t)t[STAT_WORST_FRAME];
        }
    }
    free(all);
}

/* The end of a split run, on every rank: rank 0 prints the other ranks' lines after its own,
 * in rank order (so in frame order), then the summary of all. With run NULL (a rank that
 * failed before it could match) the rank sends nothing, and rank 0 prints nothing more. */
static int finish_split(Run *run, Stats *s, int status, char *text, size_t len)
{
    int printing = run && ghm_ranks_rank() == 0;
    if (ghm_ranks_gather_text(text, len, printing ? stdout : NULL) < 0)
        status = GHM_EXIT_ERROR;
    Stats none = {.worst_frame = -1};
    merge_stats(s ? s : &none);
    if (printing && status != GHM_EXIT_ERROR)
        print_summary(run, s);
    return status;
}

void ghm_video_cli_split_abandon(void) { (void)finish_split(NULL, NULL, GHM_EXIT_ERROR, NULL, 0); }

/* ------------------------------------------------------------------------ the video mode */

/* Opens the video, takes this rank's share, matches and prints; the summary unless split. */
static int run_video(Run *run, Stats *s)
{
    GhmVideo *v = NULL;
    if (open_video(run, &v) < 0)
        return GHM_EXIT_ERROR;
    int share = run->split ? select_rank_share(run, v) : 0;
    if (share != 0) {
        ghm_video_free(&v);
        return share > 0 ? GHM_EXIT_NOT_FOUND : GHM_EXIT_ERROR;
    }
    int status = GHM_EXIT_ERROR;
    GhmVideoReader *reader = NULL;
    GhmVideoMatch *vm = NULL;
    if (ghm_video_reader_start(v, run->jobs > QUEUE_FRAMES ? run->jobs : QUEUE_FRAMES, &reader) <
        0) {
        ghm_cli_error(NULL, "cannot start the decoding thread");
    } else if (start_matching(run, reader, &vm) == 0) {
        const GhmCommonOptions *c = run->common;
        Progress p = {.active = !c->quiet && isatty(2) && !run->split, .t0 = s->t0,
                      .total = selected_total(run->video, ghm_video_info(v))};
        if (run_frames(run, vm, s, &p) > 0) {
            if (!run->split)
                print_summary(run, s);
            status = s->found > 0 ? GHM_EXIT_FOUND : GHM_EXIT_NOT_FOUND;
        }
    }
    ghm_video_match_stop(&vm);      /* before the reader: the workers read from it */
    ghm_video_reader_stop(&reader); /* before the video: the thread reads it */
    ghm_video_free(&v);
    return status;
}

int ghm_cmd_video(const GhmMatchOptions *opt, const GhmVideoOptions *video, GhmContext *ctx,
                  GhmMatcher *matcher, const GhmImage *ref_img)
{
    int split = ghm_video_cli_split(opt);
    int gpus = check_options(opt, video, ref_img) < 0 ? -1 : resolve_gpus(video, ctx);
    if (gpus < 0) {
        if (split)
            ghm_video_cli_split_abandon();
        return GHM_EXIT_ERROR;
    }
    int stdin_video = strcmp(opt->query, "-") == 0;
    Run run = {.common = &opt->common, .video = video, .params = &opt->params, .ctx = ctx,
               .video_path = opt->query, .subject = stdin_video ? "standard input" : opt->query,
               .matcher = matcher, .reference = ref_img, .name_query = opt->one_line,
               .gpus = gpus,
               .jobs = video->jobs ? video->jobs : ghm_video_match_default_jobs(ctx) * gpus,
               .split = split, .out = stdout};
    char *text = NULL;
    size_t len = 0;
    if (split && ghm_ranks_rank() > 0 && !(run.out = open_memstream(&text, &len)))
        ghm_cli_error(NULL, "out of memory");
    Stats s = {.worst_frame = -1, .t0 = now_s()};
    int status = run.out ? run_video(&run, &s) : GHM_EXIT_ERROR;
    if (!split)
        return status;
    if (run.out != stdout && run.out && fclose(run.out) != 0)
        status = GHM_EXIT_ERROR;
    status = finish_split(&run, &s, status, text, len);
    free(text);
    return status;
}
