/*
 * bench_video.c - `geohash-match bench video`: how fast frames are decoded, how fast they are
 * matched, and what the two give together through the decoding thread, measured separately
 * so that a slow run says which side to blame.
 *
 *   decode      every frame of VIDEO decoded and turned grey, nothing else
 *   match       the first N selected frames, already in memory, matched one after another
 *   end-to-end  the same N frames read through the frame queue (decoding on its own thread)
 *               and matched, as the video mode runs them: once with one job (matching on
 *               this thread) and once with --jobs workers (the video mode's default unless
 *               told), so that the gain of matching several frames at once shows; the
 *               workers' set-up (contexts, reference clones) is timed apart, as it is paid
 *               once per run, not per frame
 *
 * Prints one table; --json-out FILE also writes the numbers as JSON (atomically).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "ghm_frame_queue.h"
#include "ghm_match.h"
#include "ghm_video.h"
#include "ghm_video_match.h"
#include "json_out.h"
#include "video_cli.h"

enum {
    OPT_VIDEO = GHM_OPT_FIRST_COMMAND,
    OPT_REFERENCE,
    OPT_START,
    OPT_FRAMES,
    OPT_JOBS,
    OPT_JSON_OUT
};

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    {"video", required_argument, NULL, OPT_VIDEO},
    {"reference", required_argument, NULL, OPT_REFERENCE},
    {"start", required_argument, NULL, OPT_START},
    {"frames", required_argument, NULL, OPT_FRAMES},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"json-out", required_argument, NULL, OPT_JSON_OUT},
    {NULL, 0, NULL, 0}};

typedef struct BenchArgs {
    GhmCommonOptions common;
    const char *video;
    const char *reference;
    long start;
    long frames;
    long jobs; /* of the parallel end-to-end run; 0 = the video mode's default */
    const char *json_out;
} BenchArgs;

typedef struct BenchResult {
    int width, height;
    long decoded;
    double decode_s, decode_cpu;
    long matched, found;
    double match_s, match_cpu;
    long e2e_frames;
    double e2e_s, e2e_cpu;
    int jobs;             /* workers of the parallel run */
    long par_frames;
    double par_s, par_cpu, par_setup_s;
} BenchResult;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CPU seconds of all our threads: next to the wall clock it shows whether a slow run was
 * slow or only starved by other processes on the machine. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void print_help(void)
{
    printf("Usage: geohash-match bench video [OPTIONS]\n\n"
           "Measures video decoding, matching and both together (decoding on its own thread).\n"
           "  --video FILE       video to decode (default data/video/Megamind.avi)\n"
           "  --reference FILE   reference image (default data/video/megamind_frame050.png)\n"
           "  --start N          first frame of the match and end-to-end runs (default 30)\n"
           "  --frames N         frames matched in the match and end-to-end runs (default 40)\n"
           "  --jobs N           workers of the second end-to-end run (default 0: as the video\n"
           "                     mode, one per CPU thread up to 16, or 4 on CUDA)\n"
           "  --json-out FILE    also write the measurements as JSON\n"
           "  --backend, --threads, --seed as everywhere\n");
}

static int parse_args(int argc, char **argv, BenchArgs *a)
{
    a->common = ghm_cli_common_defaults();
    a->video = "data/video/Megamind.avi";
    a->reference = "data/video/megamind_frame050.png";
    a->start = 30; /* past Megamind's black first frame and dim opening */
    a->frames = 40;
    a->jobs = 0;
    a->json_out = NULL;
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used < 0)
            return -1;
        if (used > 0)
            continue;
        if (id == OPT_VIDEO)
            a->video = optarg;
        else if (id == OPT_REFERENCE)
            a->reference = optarg;
        else if (id == OPT_START) {
            if (ghm_cli_parse_long("--start", optarg, 0, 100000000, &a->start) < 0)
                return -1;
        } else if (id == OPT_FRAMES) {
            if (ghm_cli_parse_long("--frames", optarg, 1, 100000, &a->frames) < 0)
                return -1;
        } else if (id == OPT_JOBS) {
            if (ghm_cli_parse_long("--jobs", optarg, 0, GHM_VIDEO_MATCH_MAX_JOBS, &a->jobs) < 0)
                return -1;
        } else if (id == OPT_JSON_OUT)
            a->json_out = optarg;
        else {
            ghm_cli_usage_hint("bench video");
            return -1;
        }
    }
    if (optind != argc) {
        ghm_cli_error("bench video", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

/* Opened as the video mode opens it: a --threads given bounds the decoder's threads. */
static int open_video(const BenchArgs *a, GhmVideo **v)
{
    char why[256] = "";
    if (ghm_video_open(a->video, v, why, sizeof why) < 0) {
        ghm_cli_error(a->video, "%s", why);
        return -1;
    }
    return ghm_video_cli_decode_threads(v, a->common.threads, a->video);
}

/* Decodes every frame; damaged ones count as decoded (the decoder did the work). */
static int bench_decode(const BenchArgs *a, BenchResult *r)
{
    GhmVideo *v = NULL;
    if (open_video(a, &v) < 0)
        return -1;
    r->width = ghm_video_info(v)->width;
    r->height = ghm_video_info(v)->height;
    GhmVideoFrame f;
    char why[256] = "";
    int ret;
    double t = now_s(), c = cpu_s();
    while ((ret = ghm_video_read(v, &f, why, sizeof why)) == GHM_VIDEO_FRAME ||
           ret == GHM_VIDEO_DAMAGED) {
        r->decoded++;
        ghm_image_free(&f.image);
    }
    r->decode_s = now_s() - t;
    r->decode_cpu = cpu_s() - c;
    ghm_video_free(&v);
    if (ret < 0) {
        ghm_cli_error(a->video, "%s", why);
        return -1;
    }
    return 0;
}

/* The first n frames in memory, then matched back to back. */
static int bench_match(const BenchArgs *a, GhmMatcher *m, BenchResult *r)
{
    GhmVideo *v = NULL;
    if (open_video(a, &v) < 0)
        return -1;
    GhmImage **frames = calloc((size_t)a->frames, sizeof *frames);
    int status = frames && ghm_video_select(v, a->start, -1, 1) == GHM_OK ? 0 : -1;
    long n = 0;
    GhmVideoFrame f;
    int ret = GHM_VIDEO_FRAME;
    while (status == 0 && n < a->frames && (ret = ghm_video_read(v, &f, NULL, 0)) >= 0 &&
           ret != GHM_VIDEO_END)
        if (ret == GHM_VIDEO_FRAME)
            frames[n++] = f.image;
    double t = now_s(), c = cpu_s();
    for (long i = 0; status == 0 && i < n; i++) {
        GhmMatchResult res;
        if ((ret = ghm_matcher_match(m, frames[i], &res)) < 0) {
            ghm_cli_error(a->video, "matching failed: %s", ghm_strerror(ret));
            status = -1;
        }
        r->found += status == 0 && res.found;
    }
    r->match_s = now_s() - t;
    r->match_cpu = cpu_s() - c;
    r->matched = n;
    for (long i = 0; frames && i < n; i++)
        ghm_image_free(&frames[i]);
    free(frames);
    ghm_video_free(&v);
    return status;
}

/* As the video mode runs: decoding thread, queue, and matching by `jobs` workers (one job:
 * on this thread). The workers' set-up goes to *setup_s, outside the timed run. */
static int bench_end_to_end(const BenchArgs *a, GhmContext *ctx, GhmMatcher *m, int jobs,
                            long *frames, double *secs, double *cpu, double *setup_s)
{
    GhmVideo *v = NULL;
    if (open_video(a, &v) < 0)
        return -1;
    GhmVideoReader *reader = NULL;
    GhmVideoMatch *vm = NULL;
    GhmVideoMatchOptions mo = {.jobs = jobs};
    int status = 0, ret;
    double setup = 0.0, t = now_s(), c = cpu_s();
    if (ghm_video_select(v, a->start, a->start + a->frames - 1, 1) < 0 ||
        ghm_video_reader_start(v, 4, &reader) < 0) {
        ghm_cli_error(NULL, "cannot start the decoding thread");
        status = -1;
    } else {
        double t_setup = now_s(), c_setup = cpu_s();
        if ((ret = ghm_video_match_start(reader, ctx, m, &mo, &vm)) < 0) {
            ghm_cli_error(NULL, "cannot start %d matching workers: %s", jobs, ghm_strerror(ret));
            status = -1;
        }
        setup = now_s() - t_setup;
        t += setup;
        c += cpu_s() - c_setup;
    }
    GhmMatchedFrame mf;
    while (status == 0 && ghm_video_match_next(vm, &mf) != GHM_VIDEO_END) {
        if (mf.item.status < 0) {
            ghm_cli_error(a->video, "%s", mf.item.why);
            status = -1;
        } else if (mf.item.status == GHM_VIDEO_FRAME) {
            if (mf.ret < 0) {
                ghm_cli_error(a->video, "matching failed: %s", ghm_strerror(mf.ret));
                status = -1;
            }
            ++*frames;
        }
        ghm_image_free(&mf.item.frame.image);
    }
    *secs = now_s() - t;
    *cpu = cpu_s() - c;
    *setup_s = setup;
    ghm_video_match_stop(&vm);
    ghm_video_reader_stop(&reader);
    ghm_video_free(&v);
    return status;
}

static double rate(double n, double s)
{
    return s > 0 ? n / s : 0.0;
}

static int write_json(const BenchArgs *a, const BenchResult *r, const GhmContext *ctx)
{
    char device[128];
    ghm_context_describe(ctx, device, sizeof device);
    json_t *obj = json_pack(
        "{s:s,s:s,s:s,s:s,s:i,s:i,s:{s:I,s:f,s:f,s:f},s:{s:I,s:I,s:f,s:f,s:f},"
        "s:{s:I,s:f,s:f,s:f},s:{s:i,s:I,s:f,s:f,s:f,s:f}}",
        "bench", "video", "backend", ghm_context_backend_name(ctx), "device", device, "video",
        a->video, "width", r->width, "height", r->height, "decode", "frames",
        (json_int_t)r->decoded, "seconds", r->decode_s, "cpu_seconds", r->decode_cpu,
        "frames_per_s", rate(r->decoded, r->decode_s), "match", "frames", (json_int_t)r->matched,
        "found", (json_int_t)r->found, "seconds", r->match_s, "cpu_seconds", r->match_cpu,
        "frames_per_s", rate(r->matched, r->match_s), "end_to_end", "frames",
        (json_int_t)r->e2e_frames, "seconds", r->e2e_s, "cpu_seconds", r->e2e_cpu,
        "frames_per_s", rate(r->e2e_frames, r->e2e_s), "end_to_end_jobs", "jobs", r->jobs,
        "frames", (json_int_t)r->par_frames, "seconds", r->par_s, "cpu_seconds", r->par_cpu,
        "frames_per_s", rate(r->par_frames, r->par_s), "setup_seconds", r->par_setup_s);
    return ghm_json_write_file(a->json_out, obj);
}

int ghm_bench_video(int argc, char **argv)
{
    BenchArgs a;
    if (parse_args(argc, argv, &a) < 0)
        return GHM_EXIT_ERROR;
    if (a.common.help) {
        print_help();
        return GHM_EXIT_FOUND;
    }
    GhmContext *ctx = NULL;
    GhmImage *ref = NULL;
    GhmMatcher *m = NULL;
    int status = GHM_EXIT_ERROR;
    char why[256] = "";
    if (ghm_cli_context(&a.common, &ctx) < 0)
        return GHM_EXIT_ERROR;
    if (ghm_image_load(a.reference, &ref, why, sizeof why) < 0) {
        ghm_cli_error(a.reference, "%s", why);
        goto done;
    }
    GhmMatchParams mp = ghm_match_defaults();
    int ret = ghm_matcher_create(ctx, ref, &mp, &m);
    if (ret < 0) {
        ghm_cli_error(a.reference, "cannot build the reference tables: %s", ghm_strerror(ret));
        goto done;
    }
    BenchResult r = {0};
    double no_setup;
    r.jobs = a.jobs ? (int)a.jobs : ghm_video_match_default_jobs(ctx);
    if (bench_decode(&a, &r) < 0 || bench_match(&a, m, &r) < 0 ||
        bench_end_to_end(&a, ctx, m, 1, &r.e2e_frames, &r.e2e_s, &r.e2e_cpu, &no_setup) < 0 ||
        bench_end_to_end(&a, ctx, m, r.jobs, &r.par_frames, &r.par_s, &r.par_cpu,
                         &r.par_setup_s) < 0)
        goto done;
    char device[128];
    ghm_context_describe(ctx, device, sizeof device);
    printf("video %s (%dx%d), reference %s, backend %s (%s)\n", a.video, r.width, r.height,
           a.reference, ghm_context_backend_name(ctx), device);
    printf("  %-11s %6s %9s %9s %10s\n", "stage", "frames", "seconds", "cpu s", "frames/s");
    printf("  %-11s %6ld %9.3f %9.3f %10.1f\n", "decode", r.decoded, r.decode_s, r.decode_cpu,
           rate(r.decoded, r.decode_s));
    printf("  %-11s %6ld %9.3f %9.3f %10.1f   (%ld found)\n", "match", r.matched, r.match_s,
           r.match_cpu, rate(r.matched, r.match_s), r.found);
    printf("  %-11s %6ld %9.3f %9.3f %10.1f   (1 job)\n", "end-to-end", r.e2e_frames, r.e2e_s,
           r.e2e_cpu, rate(r.e2e_frames, r.e2e_s));
    printf("  %-11s %6ld %9.3f %9.3f %10.1f   (%d job%s, set up in %.0f ms; %.2fx 1 job)\n",
           "end-to-end", r.par_frames, r.par_s, r.par_cpu, rate(r.par_frames, r.par_s), r.jobs,
           r.jobs == 1 ? "" : "s", 1e3 * r.par_setup_s,
           rate(r.par_frames, r.par_s) / (rate(r.e2e_frames, r.e2e_s) > 0 ? rate(r.e2e_frames, r.e2e_s) : 1.0));
    status = a.json_out && write_json(&a, &r, ctx) < 0 ? GHM_EXIT_ERROR : GHM_EXIT_FOUND;
done:
    ghm_matcher_free(&m);
    ghm_image_free(&ref);
    ghm_context_free(&ctx);
    return status;
}
