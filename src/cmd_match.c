/*
 * cmd_match.c - `geohash-match [OPTIONS] REFERENCE QUERY...`: the image mode. Options are parsed
 * by match_cli.c (shared with the video mode), the pipeline lives in vision/match/ghm_match.h,
 * output in match_output.c; `--search QUERY REFERENCE...` goes to cmd_search.c.
 *
 * The reference's tables are built once and every QUERY is matched against them in turn: an
 * image, a directory (its images, sorted by name) or a video (cmd_video.c). A single image
 * QUERY keeps the readable several-line summary; several queries print one line (or one JSON
 * object) each, naming it, in order; the images between two videos are decoded and matched by
 * the video mode's workers (query_source.h, ghm_video_match.h: --jobs of them, each decoding
 * the query it takes and matching it with its own clone of the reference's tables). A query
 * that cannot be read gets its error line and the run goes on. Exit status: 2 when any query
 * (or the reference) failed, else 0 when any was found, else 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmd_video.h"
#include "ghm_image.h"
#include "ghm_match.h"
#include "ghm_video.h"
#include "json_out.h"
#include "match_cli.h"
#include "query_files.h"
#include "query_source.h"
#include "ranks.h"

static int print_result(const GhmMatchOptions *o, GhmContext *ctx, const GhmMatcher *m,
                        const GhmMatchResult *res, const GhmImage *query)
{
    if (o->common.json) {
        int w, h;
        ghm_matcher_size(m, &w, &h);
        json_t *obj = ghm_match_result_json(res, query->width, query->height);
        if (!obj)
            return GHM_ERR_NOMEM;
        json_object_set_new(obj, "reference",
                            ghm_match_side_json(o->reference ? o->reference : o->load_ref, w, h));
        json_object_set_new(obj, "query",
                            ghm_match_side_json(o->query, query->width, query->height));
        json_object_set_new(obj, "backend", json_string(ghm_context_backend_name(ctx)));
        int bad = ghm_json_print(stdout, obj) < 0; /* it keeps the reason for the caller */
        json_decref(obj);
        return bad ? GHM_ERR_IO : GHM_OK;
    }
    if (o->common.quiet)
        return GHM_OK;
    errno = 0;
    if (o->one_line)
        return ghm_match_print_line(stdout, res, o->query) < 0 ? GHM_ERR_IO : GHM_OK;
    ghm_match_print_text(stdout, res, o->query, query->width, query->height);
    return GHM_OK;
}

/* Reports query o->query's match (ret: its status; res: its result where ret is GHM_OK; m: the
 * matcher that made it, for the overlay). Returns a GHM_EXIT_* status. */
static int report_match(const GhmMatchOptions *o, GhmContext *ctx, const GhmMatcher *m,
                        const GhmImage *ref, double build_ms, int ret, const GhmMatchResult *res,
                        const GhmImage *query)
{
    if (ret < 0) {
        if (ret == GHM_ERR_TOO_LARGE)
            ghm_cli_error(o->query, "%dx%d is larger than image matching takes (16 megapixels)",
                          query->width, query->height);
        else
            ghm_cli_error(o->query, "matching failed: %s", ghm_strerror(ret));
        return GHM_EXIT_ERROR;
    }
    if (o->common.verbose)
        ghm_match_print_verbose(res, build_ms);
    if (o->overlay &&
        ghm_match_write_overlay(o->overlay, ref, m, res, query->width, query->height) < 0)
        return GHM_EXIT_ERROR;
    if ((ret = print_result(o, ctx, m, res, query)) < 0) {
        if (ret == GHM_ERR_IO)
            ghm_cli_stdout_error(o->common.json ? 0 : errno); /* 0: ghm_json_print's reason */
        else
            ghm_cli_error(NULL, "cannot write the result: %s", ghm_strerror(ret));
        return GHM_EXIT_ERROR;
    }
    return res->found ? GHM_EXIT_FOUND : GHM_EXIT_NOT_FOUND;
}

/* Matches one decoded query image (taken: freed here) against the reference and reports.
 * Returns a GHM_EXIT_* status. */
static int match_decoded(const GhmMatchOptions *o, GhmContext *ctx, GhmMatcher *m,
                         const GhmImage *ref, double build_ms, GhmImage *query)
{
    GhmMatchResult res;
    int ret = ghm_matcher_match(m, query, &res);
    int status = report_match(o, ctx, m, ref, build_ms, ret, &res, query);
    int w, h;
    ghm_matcher_size(m, &w, &h);
    /* the picture looked for comes second: one not found that is larger each way and twice the
     * area suggests the order was swapped (the video mode has --swap for a logo in frames) */
    if (status == GHM_EXIT_NOT_FOUND && !o->common.quiet && query->width > w &&
        query->height > h && (double)query->width * query->height >= 2.0 * w * h)
        ghm_cli_warn(o->query, "not found, and larger (%dx%d) than the reference (%dx%d): QUERY "
                     "is looked for inside REFERENCE; give them the other way round to find "
                     "the smaller picture in the larger", query->width, query->height, w, h);
    ghm_image_free(&query);
    return status;
}

/* Whether the one QUERY of a plain REFERENCE QUERY run is a video: "-" or not a PNG/JPEG by
 * content (ghm_video_is_video_path sniffs, and keeps foreign files with the image loader in a
 * build without FFmpeg); else it is an image, decoded by read_single_query. */
static int single_is_video(const GhmMatchOptions *o)
{
    return !o->one_line && o->query && ghm_video_is_video_path(o->query);
}

/* The one image QUERY of a plain run, decoded before the context exists (NULL for any other
 * run, video: single_is_video's answer). -1 after its error line. */
static int read_single_query(const GhmMatchOptions *o, int video, GhmImage **query)
{
    char why[512] = "";
    *query = NULL;
    if (o->one_line || !o->query || video)
        return 0;
    if (ghm_image_load(o->query, query, why, sizeof why) < 0) {
        ghm_cli_error(o->query, "%s", why);
        return -1;
    }
    return 0;
}

/* The run's status after one more query's: an error anywhere makes it 2 (reported once every
 * query was answered), else a match anywhere makes it 0. */
static int fold_status(int run, int one)
{
    if (run == GHM_EXIT_ERROR || one == GHM_EXIT_ERROR)
        return GHM_EXIT_ERROR;
    return run == GHM_EXIT_FOUND || one == GHM_EXIT_FOUND ? GHM_EXIT_FOUND : GHM_EXIT_NOT_FOUND;
}

/* Images per worker, at least, when --jobs is not given. A worker costs its context and a clone
 * of the reference's matcher (its tables copied: about 1 ms), so from a few queries up several
 * one-thread workers answer sooner than one worker with every thread. Measured on the H100
 * machine's 16 cores (2026-11-28, docs/BENCHMARKS.md), 151x142 queries, ms for 1 / 2 / 4 / 8 /
 * 16 workers (best of 3): 4 queries 38 / 45 / 39 / 41 / 54, 8 queries 63 / 61 / 46 / 44 / 54,
 * 32 queries 207 / 141 / 97 / 76 / 70, 100 queries 511 / 393 / 246 / 179 / 159. */
#define IMAGES_PER_WORKER 2

/* The workers for the images of qs: --jobs, or one per IMAGES_PER_WORKER images up to the
 * video mode's default; one under --overlay (it draws the inliers of m, the caller's). */
static int image_jobs(const GhmMatchOptions *o, const GhmContext *ctx, const GhmQuerySource *qs)
{
    if (o->overlay)
        return 1;
    if (o->video.jobs)
        return o->video.jobs;
    size_t images = 0;
    for (size_t i = qs->next; i < qs->end; i++)
        images += qs->list->entries[i].kind == GHM_QUERY_IMAGE;
    size_t jobs = images / IMAGES_PER_WORKER, most = (size_t)ghm_video_match_default_jobs(ctx);
    return jobs < 1 ? 1 : jobs > most ? (int)most : (int)jobs;
}

/* The entries from first up to the next video (images, and directories that hold none),
 * matched by the video mode's workers (image_jobs) and reported in order. Returns the entry
 * after them. */
static size_t match_images(GhmMatchOptions *o, GhmContext *ctx, GhmMatcher *m,
                           const GhmImage *ref, double build_ms, const GhmQueryList *list,
                           size_t first, int *status)
{
    GhmQuerySource qs;
    ghm_query_source_init(&qs, list, first);
    GhmVideoMatchSource source = ghm_query_source(&qs);
    GhmVideoMatchOptions mo = {.jobs = image_jobs(o, ctx, &qs)};
    GhmVideoMatch *vm = NULL;
    int ret = ghm_video_match_start_source(&source, ctx, m, &mo, &vm);
    if (ret < 0) {
        ghm_cli_error(NULL, "cannot start matching the queries: %s", ghm_strerror(ret));
        *status = GHM_EXIT_ERROR;
        return qs.end;
    }
    GhmMatchedFrame mf;
    for (;;) {
        int item = ghm_video_match_next(vm, &mf);
        if (item != GHM_VIDEO_FRAME && item != GHM_VIDEO_DAMAGED)
            break; /* the end: the source makes no errors of its own */
        o->query = list->entries[mf.item.frame.index].path;
        int one = GHM_EXIT_ERROR;
        if (item == GHM_VIDEO_DAMAGED)
            ghm_cli_error(o->query, "%s", mf.item.why);
        else
            one = report_match(o, ctx, m, ref, build_ms, mf.ret, &mf.res, mf.item.frame.image);
        *status = fold_status(*status, one);
        ghm_image_free(&mf.item.frame.image);
        if (ferror(stdout))
            break; /* its one error line is out; the rest would only repeat it */
    }
    ghm_video_match_stop(&vm);
    return qs.end;
}

/* Every QUERY in order (list: what they stand for, in a run of several), a directory's images
 * in name order; a plain run's one image comes decoded (query). */
static int match_queries(GhmMatchOptions *o, GhmContext *ctx, GhmMatcher *m,
                         const GhmImage *ref, double build_ms, GhmImage *query,
                         const GhmQueryList *list)
{
    if (query)
        return match_decoded(o, ctx, m, ref, build_ms, query);
    if (!o->one_line)
        return ghm_cmd_video(o, &o->video, ctx, m, ref);
    int status = GHM_EXIT_NOT_FOUND;
    for (size_t i = 0; i < list->n && !ferror(stdout);) {
        if (list->entries[i].kind == GHM_QUERY_VIDEO) {
            o->query = list->entries[i++].path;
            status = fold_status(status, ghm_cmd_video(o, &o->video, ctx, m, ref));
        } else {
            i = match_images(o, ctx, m, ref, build_ms, list, i, &status);
        }
    }
    return status;
}

/* --backend auto picks the CPU for image queries where its workers answer them sooner than
 * CUDA would. Measured on the H100 machine (16 cores; 2026-11-24 and 2026-11-28,
 * docs/BENCHMARKS.md), 640x480 queries, process start to exit: one pair 36 ms on the CPU
 * against 378 ms with CUDA; 10, 100 and 1000 queries in one run 0.12, 0.24 and 1.26 s on the
 * CPU's 16 workers against 0.44, 0.49 and 1.13 s with CUDA. That is about 110 ms and then 18 ms
 * of one thread a query on the CPU, 420 ms and then 0.71 ms a query on CUDA (4 streams). So the
 * CPU while 110 + 18 n / threads <= 420 + 0.71 n: up to about 750 queries on 16 threads, 37 on
 * 2, 17 on 1. A video keeps CUDA. */
static void pick_auto_backend(GhmMatchOptions *o, int video, const GhmQueryList *list)
{
    if (o->common.backend != GHM_BACKEND_AUTO || (!o->one_line && (!o->query || video)))
        return;
    if (!o->one_line) {
        ghm_cli_auto_on_cpu(&o->common, "one image pair");
        return;
    }
    for (size_t i = 0; i < list->n; i++)
        if (list->entries[i].kind == GHM_QUERY_VIDEO)
            return;
    int threads = o->common.threads ? o->common.threads : ghm_context_default_threads();
    double n = (double)ghm_query_list_images(list);
    if (110.0 + 18.0 * n / (double)threads <= 420.0 + 0.71 * n)
        ghm_cli_auto_on_cpu(&o->common, "a run of image queries");
}

int ghm_cmd_match(int argc, char **argv)
{
    GhmMatchOptions o;
    int parsed = ghm_match_parse_options(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? GHM_EXIT_FOUND : GHM_EXIT_ERROR;
    if (o.search) /* under mpirun, rank 0's alone (ranks.h) */
        return ghm_ranks_rank() > 0 ? GHM_EXIT_SKIPPED : ghm_cmd_search(&o);
    /* One line per query unless the command line names exactly one image or video. */
    o.one_line = o.n_queries > 1 || (o.query && ghm_query_is_dir(o.query));
    int video = single_is_video(&o); /* sniffs the file: once */
    int split = video && ghm_video_cli_split(&o);
    if (ghm_ranks_rank() > 0 && !split)
        return GHM_EXIT_SKIPPED;
    GhmQueryList list = {0}; /* what the QUERYs of a run of several stand for */
    if (o.one_line && ghm_query_list_build(o.queries, o.n_queries, &list) < 0) {
        ghm_cli_error(NULL, "out of memory");
        return GHM_EXIT_ERROR;
    }
    pick_auto_backend(&o, video, &list);
    /* CUDA starts on its own thread while the images are decoded (main.c waits for it). */
    ghm_cli_prestart(o.common.backend);
    GhmImage *ref = NULL, *query = NULL;
    GhmContext *ctx = NULL;
    GhmMatcher *m = NULL;
    int status = GHM_EXIT_ERROR;
    if (ghm_match_read_reference(&o, &ref) < 0 || read_single_query(&o, video, &query) < 0 ||
        ghm_cli_context(&o.common, &ctx) < 0)
        goto done;
    double t0 = ghm_now();
    /* a plain run's one image (decoded already) is the reference's only query */
    if (ghm_match_open_reference(ctx, &o, ref, query != NULL, &m) < 0)
        goto done;
    double build_ms = 1e3 * (ghm_now() - t0);
    if (!o.query) { /* --save-ref REFERENCE alone: the reference file was the job */
        if (o.common.verbose)
            fprintf(stderr, "reference: built and saved in %.1f ms\n", build_ms);
        status = GHM_EXIT_FOUND;
        goto done;
    }
    status = match_queries(&o, ctx, m, ref, build_ms, query, &list);
    query = NULL; /* match_decoded freed it */
    split = 0;    /* the video mode met the other ranks */
done:
    if (split)
        ghm_video_cli_split_abandon();
    ghm_image_free(&query);
    ghm_matcher_free(&m);
    ghm_image_free(&ref);
    ghm_context_free(&ctx);
    ghm_query_list_free(&list);
    return status;
}
