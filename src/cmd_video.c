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
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ghm_frame_queue.h"
#include "ghm_video_match.h"
#include "ranks.h"
#include "video_run.h"

/* Frames decoded ahead of the matcher: enough to hide a slow frame, few enough for memory; at
 * least one per worker, so that workers that finish together all find a frame waiting. */
#define QUEUE_FRAMES 4

/* Parts of a video per device with --decode gpu: a GPU has several video engines, and one
 * stream keeps one busy (1080p H.264 on an H200: one stream ~690 frames/s, four at once ~2650
 * together, docs/BENCHMARKS.md). */
#define GPU_DECODERS_PER_DEVICE 4


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
    case GHM_OPT_VIDEO_GPUS:
        return ghm_cli_parse_gpus(arg, GHM_VIDEO_MATCH_MAX_JOBS, &opt->gpus) < 0 ? -1 : 1;
    case GHM_OPT_VIDEO_DECODE:
        if (strcmp(arg, "cpu") != 0 && strcmp(arg, "gpu") != 0) {
            ghm_cli_error("--decode", "'%s': expected cpu or gpu", arg);
            return -1;
        }
        opt->decode_gpu = strcmp(arg, "gpu") == 0;
        return 1;
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
          "  --gpus N    CUDA devices to match on (default 1; \"all\": every device there\n"
          "              is), each with its own copy of the reference tables and, by\n"
          "              default, 4 workers; a file whose timestamps number its frames is\n"
          "              cut in N parts, each with its own decoder (--verbose says so); the\n"
          "              output is that of one device, byte for byte apart from timings\n"
          "  --decode cpu|gpu  where frames are decoded (default cpu: FFmpeg's threads);\n"
          "              gpu: the video engines (NVDEC) of the devices that match them, a\n"
          "              file whose timestamps number its frames cut in 4 parts per device,\n"
          "              each with its own decoder. Needs the CUDA backend. Frames as the\n"
          "              CPU's for H.264, HEVC, VP9 and AV1 (not where data is damaged:\n"
          "              NVDEC conceals otherwise). Pays where the CPU has few cores (1080p\n"
          "              H.264 on an H200: 1.2x on 8 cores, 1.5x on 4; slower on 32)\n"
          "  Under mpirun -n R (a build with MPI) the selected frames of a video file are\n"
          "  split in R ranges, one per process (machines included); rank 0 prints them all.\n"
          "  Without --swap the matrix maps FRAME pixels into REFERENCE, whose tables are built\n"
          "  once. Output: one line per frame (JSON Lines with --json: the image fields plus\n"
          "  \"frame\" and \"pts\"); the summary ends the text output (with --json it goes to\n"
          "  stderr when that is a terminal or with --verbose).\n",
          f);
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
static int handle_item(const GhmVideoRun *run, const GhmMatchedFrame *mf, GhmVideoStats *s,
                       GhmVideoProgress *p)
{
    const GhmCommonOptions *c = run->common;
    const GhmQueuedFrame *item = &mf->item;
    if (item->status == GHM_VIDEO_END)
        return 1;
    if (item->status < 0) {
        ghm_video_progress_clear(p);
        ghm_cli_error(run->subject, "%s", item->why);
        return -1;
    }
    if (item->status == GHM_VIDEO_DAMAGED) {
        int64_t i = item->frame.index;
        if (i >= run->warn_from) {
            ghm_video_progress_clear(p);
            ghm_cli_warn(run->subject, "%s", item->why);
        }
        if (i >= run->from && (run->to < 0 || i <= run->to) &&
            (i - run->from) % run->video->step == 0) {
            s->damaged++;
            if (ghm_video_print_damaged(run, item) < 0)
                return -1;
        }
        return 0;
    }
    const GhmMatchResult *res = &mf->res;
    double ms = mf->match_ms;
    if (mf->ret < 0) {
        ghm_video_progress_clear(p);
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
        errno = 0;
        int out = ghm_video_print_frame(run, &item->frame, res), err = errno;
        if (out < 0) {
            ghm_video_progress_clear(p);
            ghm_cli_stdout_error(err);
            return -1;
        }
    }
    ghm_video_progress_draw(p, s->frames + s->damaged, 0);
    return 0;
}

/* The number of devices --gpus asks for in ctx (1 without it); -1 after an error line. */
static int resolve_gpus(const GhmVideoOptions *o, const GhmContext *ctx)
{
    int gpus = ghm_cli_resolve_gpus(o->gpus, ctx);
    if (gpus > 1 && o->jobs && o->jobs < o->gpus) {
        ghm_cli_error("--jobs", "%d is fewer than --gpus %d: each device needs a worker",
                      o->jobs, o->gpus);
        return -1;
    }
    return gpus;
}

static int check_options(const GhmMatchOptions *opt, const GhmVideoOptions *o,
                         const GhmContext *ctx, const GhmImage *ref_img)
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
    if (o->decode_gpu && ghm_context_backend(ctx) != GHM_BACKEND_CUDA) {
        ghm_cli_error("--decode", "gpu needs the CUDA backend (this run uses the CPU%s)",
                      ghm_cuda_available() ? "" : ": no usable CUDA device");
        return -1;
    }
    return 0;
}

/* The CUDA device of a run's (or a part's) first worker, which decodes with --decode gpu. */
static int decode_device(const GhmVideoRun *run)
{
    int first = ghm_context_device(run->ctx);
    return (first < 0 ? 0 : first) + run->first_gpu;
}

/* Opens the video, applies the selection and the decoder's options; prints the error line on
 * failure. */
static int open_video(const GhmVideoRun *run, GhmVideo **out)
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
    if (o->decode_gpu && ghm_video_set_gpu_decoding(*out, decode_device(run), why,
                                                    sizeof why) < 0) {
        ghm_cli_error(run->subject, "%s", why);
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
static int run_frames(const GhmVideoRun *run, GhmVideoMatch *vm, GhmVideoStats *s,
                      GhmVideoProgress *p)
{
    GhmMatchedFrame mf;
    int r = 0;
    while (r == 0) {
        ghm_video_match_next(vm, &mf);
        r = handle_item(run, &mf, s, p);
        ghm_image_free(&mf.item.frame.image);
    }
    ghm_video_progress_clear(p);
    return r;
}

/* Starts the matching workers on reader; prints the error line on failure. */
static int start_matching(const GhmVideoRun *run, GhmVideoReader *reader, GhmVideoMatch **vm)
{
    GhmVideoMatchOptions mo = {.jobs = run->jobs,
                               .swap_query = run->video->swap ? run->reference : NULL,
                               .params = run->params,
                               .gpus = run->gpus,
                               .first_gpu = run->first_gpu,
                               .threads = run->threads};
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

/* Selects the frames k0 .. k1 - 1 of the selection (counted in selected frames) for this run:
 * a rank's or a part's, which warns only about damaged frames in its own range. */
static int select_counted(GhmVideoRun *run, GhmVideo *v, int64_t k0, int64_t k1)
{
    const GhmVideoOptions *o = run->video;
    run->from = o->start + k0 * o->step;
    run->to = o->start + (k1 - 1) * o->step;
    if (k0 > 0)
        run->warn_from = run->from;
    if (ghm_video_select(v, run->from, run->to, o->step) < 0) {
        ghm_cli_error(NULL, "bad frame selection");
        return -1;
    }
    return 0;
}

/* This rank's range of the selected frames, k0 .. k1 - 1 of total: the selection cut in
 * ghm_ranks_size() consecutive ranges, so that each rank decodes only its own (its reader enters
 * the file at the key frame before it where it can, else decodes from the start up to its end).
 * Rank 0 takes them all when the video's length is unknown. 0 when the rank has frames, 1 when
 * it has none, -1 after an error line. */
static int select_rank_share(GhmVideoRun *run, GhmVideo *v, int64_t total, int64_t *k0,
                             int64_t *k1)
{
    int64_t ranks = ghm_ranks_size(), r = ghm_ranks_rank();
    if (total < 0)
        return r == 0 ? 0 : 1;
    *k0 = total * r / ranks;
    *k1 = total * (r + 1) / ranks;
    if (*k1 <= *k0)
        return 1;
    return select_counted(run, v, *k0, *k1);
}

enum { STAT_FRAMES, STAT_FOUND, STAT_DAMAGED, STAT_SUM, STAT_WORST, STAT_WORST_FRAME, STATS };

/* The ranks' counts added up on rank 0 (s is rank 0's own before). Every rank calls it. */
static void merge_stats(GhmVideoStats *s)
{
    double mine[STATS] = {(double)s->frames, (double)s->found,  (double)s->damaged,
                          s->match_ms_sum,   s->match_ms_worst, (double)s->worst_frame};
    double *all = ghm_ranks_rank() == 0 ? calloc((size_t)ghm_ranks_size(), sizeof mine) : NULL;
    ghm_ranks_gather_doubles(mine, STATS, all);
    for (int r = 1; all && r < ghm_ranks_size(); r++) {
        const double *t = all + (size_t)r * STATS;
        GhmVideoStats theirs = {(int64_t)t[STAT_FRAMES], (int64_t)t[STAT_FOUND],
                                (int64_t)t[STAT_DAMAGED], t[STAT_SUM], t[STAT_WORST],
                                (int64_t)t[STAT_WORST_FRAME], 0.0};
        ghm_video_add_stats(s, &theirs);
    }
    free(all);
}

/* The end of a split run, on every rank: rank 0 prints the other ranks' lines after its own,
 * in rank order (so in frame order), then the summary of all. With run NULL (a rank that
 * failed before it could match) the rank sends nothing, and rank 0 prints nothing more. */
static int finish_split(GhmVideoRun *run, GhmVideoStats *s, int status, char *text, size_t len)
{
    int printing = run && ghm_ranks_rank() == 0;
    if (ghm_ranks_gather_text(text, len, printing ? stdout : NULL) < 0)
        status = GHM_EXIT_ERROR;
    GhmVideoStats none = {.worst_frame = -1};
    merge_stats(s ? s : &none);
    if (printing && status != GHM_EXIT_ERROR)
        ghm_video_print_summary(run, s);
    return status;
}

void ghm_video_cli_split_abandon(void) { (void)finish_split(NULL, NULL, GHM_EXIT_ERROR, NULL, 0); }

/* ------------------------------------------------------------------------ the video mode */

/* Matches the selected frames of v (opened by open_video) and prints them; the summary is the
 * caller's. A GHM_EXIT_* status. */
static int match_video(const GhmVideoRun *run, GhmVideo *v, GhmVideoStats *s, int progress)
{
    int status = GHM_EXIT_ERROR;
    GhmVideoReader *reader = NULL;
    GhmVideoMatch *vm = NULL;
    if (ghm_video_reader_start(v, run->jobs > QUEUE_FRAMES ? run->jobs : QUEUE_FRAMES, &reader) <
        0) {
        ghm_cli_error(NULL, "cannot start the decoding thread");
    } else if (start_matching(run, reader, &vm) == 0) {
        const GhmCommonOptions *c = run->common;
        GhmVideoProgress p = {.active = progress && !c->quiet && isatty(2), .t0 = s->t0,
                              .total = selected_total(run->video, ghm_video_info(v))};
        if (run_frames(run, vm, s, &p) > 0)
            status = s->found > 0 ? GHM_EXIT_FOUND : GHM_EXIT_NOT_FOUND;
    }
    ghm_video_match_stop(&vm);      /* before the reader: the workers read from it */
    ghm_video_reader_stop(&reader); /* before the video: the thread reads it */
    return status;
}

/* ------------------------------------------------------- one video file over several GPUs */

/* With --gpus N and a file that a reader can enter at key frames (ghm_video.h), the frames (this
 * rank's, under MPI) are cut in N consecutive parts, each with its own reader and decoder and
 * its own workers on its own device: one stream's decoder is about as fast as one GPU's matching
 * (1080p H.264 on the H200 machines, docs/BENCHMARKS.md), so one reader dealing its frames to N
 * GPUs kept N - 1 of them waiting. Part 0 prints as it goes; the others write their lines into
 * memory, printed in order after it (the output is the one of one GPU, byte for byte). */
typedef struct Part {
    GhmVideoRun run;        /* the run's, with this part's device, jobs and output */
    GhmVideoStats stats;
    int64_t k0, k1; /* its frames, counted in the selection */
    GhmVideo *video; /* part 0: the run's, opened already; the others open their own */
    int status;
    char *text;
    size_t len;
    pthread_t thread;
    int started;
} Part;

static void *part_main(void *arg)
{
    Part *part = arg;
    part->status = GHM_EXIT_ERROR;
    GhmVideo *v = part->video;
    if (!(part->run.out = open_memstream(&part->text, &part->len))) {
        ghm_cli_error(NULL, "out of memory");
        return NULL;
    }
    if (v || (open_video(&part->run, &v) == 0 &&
              select_counted(&part->run, v, part->k0, part->k1) == 0))
        part->status = match_video(&part->run, v, &part->stats, 0);
    if (v != part->video)
        ghm_video_free(&v);
    if (fclose(part->run.out) != 0)
        part->status = GHM_EXIT_ERROR;
    return NULL;
}

/* The parts' statuses and counts put together, their lines after part 0's, in order, up to the
 * first part that failed (as one reader stops at its error). */
static int join_parts(Part *parts, int n, FILE *out, GhmVideoStats *s)
{
    int status = GHM_EXIT_NOT_FOUND, failed = 0;
    for (int g = 0; g < n; g++) {
        if (parts[g].started)
            pthread_join(parts[g].thread, NULL);
        errno = 0;
        if (g > 0 && !failed && parts[g].len > 0 &&
            fwrite(parts[g].text, 1, parts[g].len, out) != parts[g].len) {
            ghm_cli_stdout_error(errno);
            parts[g].status = GHM_EXIT_ERROR;
        }
        failed |= parts[g].status == GHM_EXIT_ERROR;
        ghm_video_add_stats(s, &parts[g].stats);
        free(parts[g].text);
        if (parts[g].status == GHM_EXIT_FOUND && status == GHM_EXIT_NOT_FOUND)
            status = GHM_EXIT_FOUND;
    }
    return failed ? GHM_EXIT_ERROR : status;
}

/* The parts a video file is cut in where it can be: one per device, or with --decode gpu as
 * many as keep a device's video engines busy. */
static int part_count(const GhmVideoRun *run)
{
    return run->gpus * (run->video->decode_gpu ? GPU_DECODERS_PER_DEVICE : 1);
}

/* Frames k0 .. k1 - 1 of the selection in part_count() parts, dealt to the devices in turn,
 * each with the default workers unless --jobs was given (then shared); v is the run's video,
 * not read yet. */
static int run_parts(const GhmVideoRun *run, GhmVideo *v, int64_t k0, int64_t k1, GhmVideoStats *s)
{
    int n = part_count(run);
    Part *parts = calloc((size_t)n, sizeof *parts);
    if (!parts) {
        ghm_cli_error(NULL, "out of memory");
        return GHM_EXIT_ERROR;
    }
    int jobs = !run->video->jobs ? ghm_video_match_default_jobs(run->ctx)
               : run->jobs / n > 1 ? run->jobs / n : 1;
    int threads = ghm_context_threads(run->ctx) / n > 1 ? ghm_context_threads(run->ctx) / n : 1;
    if (run->common->verbose)
        fprintf(stderr, "video: %d parts on %d CUDA device%s, each with its own %s decoder and %d "
                "matching worker%s\n", n, run->gpus, run->gpus == 1 ? "" : "s",
                run->video->decode_gpu ? "GPU" : "CPU", jobs, jobs == 1 ? "" : "s");
    for (int g = 0; g < n; g++) {
        Part *part = &parts[g];
        part->run = *run;
        part->run.gpus = 1;
        part->run.first_gpu = g % run->gpus;
        part->run.jobs = jobs;
        part->run.threads = threads;
        part->k0 = k0 + (k1 - k0) * g / n;
        part->k1 = k0 + (k1 - k0) * (g + 1) / n;
        part->stats = (GhmVideoStats){.worst_frame = -1, .t0 = s->t0};
        part->status = GHM_EXIT_ERROR;
        if (g == 0)
            continue;
        part->started = pthread_create(&part->thread, NULL, part_main, part) == 0;
        if (!part->started)
            ghm_cli_error(NULL, "cannot start the thread of part %d of the video", g);
    }
    parts[0].status = select_counted(&parts[0].run, v, parts[0].k0, parts[0].k1) < 0
                          ? GHM_EXIT_ERROR
                          : match_video(&parts[0].run, v, &parts[0].stats, 0);
    int status = join_parts(parts, n, run->out, s);
    free(parts);
    return status;
}

/* ------------------------------------------------------------------------ the video mode */

/* Opens the video, takes this rank's share, matches (in parts with --gpus on a file that can be
 * entered at key frames) and prints; the summary unless split between ranks. */
static int run_video(GhmVideoRun *run, GhmVideoStats *s)
{
    GhmVideo *v = NULL;
    if (open_video(run, &v) < 0)
        return GHM_EXIT_ERROR;
    int64_t total = selected_total(run->video, ghm_video_info(v)), k0 = 0, k1 = total;
    int share = run->split ? select_rank_share(run, v, total, &k0, &k1) : 0;
    int status = share > 0 ? GHM_EXIT_NOT_FOUND : GHM_EXIT_ERROR;
    if (share == 0 && part_count(run) > 1 && total > 0 && k1 - k0 >= 2 * part_count(run) &&
        ghm_video_enters_at_key_frames(v))
        status = run_parts(run, v, k0, k1, s);
    else if (share == 0)
        status = match_video(run, v, s, !run->split);
    if (share == 0 && status != GHM_EXIT_ERROR && !run->split)
        ghm_video_print_summary(run, s);
    ghm_video_free(&v);
    return status;
}

int ghm_cmd_video(const GhmMatchOptions *opt, const GhmVideoOptions *video, GhmContext *ctx,
                  GhmMatcher *matcher, const GhmImage *ref_img)
{
    int split = ghm_video_cli_split(opt);
    int gpus = check_options(opt, video, ctx, ref_img) < 0 ? -1 : resolve_gpus(video, ctx);
    if (gpus < 0) {
        if (split)
            ghm_video_cli_split_abandon();
        return GHM_EXIT_ERROR;
    }
    int stdin_video = strcmp(opt->query, "-") == 0;
    GhmVideoRun run = {.common = &opt->common, .video = video, .params = &opt->params, .ctx = ctx,
               .video_path = opt->query, .subject = stdin_video ? "standard input" : opt->query,
               .matcher = matcher, .reference = ref_img, .name_query = opt->one_line,
               .gpus = gpus,
               .jobs = video->jobs ? video->jobs : ghm_video_match_default_jobs(ctx) * gpus,
               .split = split, .out = stdout, .from = video->start, .to = video->end};
    char *text = NULL;
    size_t len = 0;
    if (split && ghm_ranks_rank() > 0 && !(run.out = open_memstream(&text, &len)))
        ghm_cli_error(NULL, "out of memory");
    GhmVideoStats s = {.worst_frame = -1, .t0 = ghm_video_now_s()};
    int status = run.out ? run_video(&run, &s) : GHM_EXIT_ERROR;
    if (!split)
        return status;
    if (run.out != stdout && run.out && fclose(run.out) != 0)
        status = GHM_EXIT_ERROR;
    status = finish_split(&run, &s, status, text, len);
    free(text);
    return status;
}
