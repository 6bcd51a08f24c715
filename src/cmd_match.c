/*
 * cmd_match.c - `geohash-match [OPTIONS] REFERENCE QUERY`: the image mode. Options are parsed by
 * match_cli.c (shared with the video mode), the pipeline lives in vision/match/ghm_match.h, output in
 * match_output.c. Exit status: 0 found, 1 no match, 2 error.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "cmd_video.h"
#include "ghm_image.h"
#include "ghm_match.h"
#include "ghm_video.h"
#include "json_out.h"
#include "match_cli.h"

static int print_result(const GhmMatchOptions *o, GhmContext *ctx, const GhmMatcher *m,
                        const GhmMatchResult *res, const GhmImage *query)
{
    if (o->common.json) {
        int w, h;
        ghm_matcher_size(m, &w, &h);
        json_t *obj = ghm_match_result_json(res, query->width, query->height);
        if (!obj)
            return GHM_ERR_NOMEM;
        json_t *refj = json_pack("{s:o,s:i,s:i}", "path",
                                 o->reference ? ghm_json_string_lossy(o->reference)
                                              : ghm_json_string_lossy(o->load_ref),
                                 "width", w, "height", h);
        json_t *qj = json_pack("{s:o,s:i,s:i}", "path", ghm_json_string_lossy(o->query), "width",
                               query->width, "height", query->height);
        json_object_set_new(obj, "reference", refj ? refj : json_null());
        json_object_set_new(obj, "query", qj ? qj : json_null());
        json_object_set_new(obj, "backend", json_string(ghm_context_backend_name(ctx)));
        int bad = ghm_json_print(stdout, obj) < 0;
        json_decref(obj);
        return bad ? GHM_ERR_IO : GHM_OK;
    }
    if (!o->common.quiet)
        ghm_match_print_text(stdout, res, o->query, query->width, query->height);
    return GHM_OK;
}

/* Matches one query image against the reference and reports. Returns a GHM_EXIT_* status. */
static int match_image(const GhmMatchOptions *o, GhmContext *ctx, GhmMatcher *m,
                       const GhmImage *ref, double build_ms)
{
    char why[512] = "";
    GhmImage *query = NULL;
    GhmMatchResult res;
    int ret = ghm_image_load(o->query, &query, why, sizeof why);
    if (ret < 0) {
        ghm_cli_error(o->query, "%s", why);
        return GHM_EXIT_ERROR;
    }
    int status = GHM_EXIT_ERROR;
    if ((ret = ghm_matcher_match(m, query, &res)) < 0) {
        if (ret == GHM_ERR_TOO_LARGE)
            ghm_cli_error(o->query, "%dx%d is larger than image matching takes (16 megapixels)",
                          query->width, query->height);
        else
            ghm_cli_error(o->query, "matching failed: %s", ghm_strerror(ret));
        goto done;
    }
    if (o->common.verbose)
        ghm_match_print_verbose(&res, build_ms);
    if (o->overlay &&
        ghm_match_write_overlay(o->overlay, ref, m, &res, query->width, query->height) < 0)
        goto done;
    if ((ret = print_result(o, ctx, m, &res, query)) < 0) {
        ghm_cli_error(NULL, "cannot write the result: %s", ghm_strerror(ret));
        goto done;
    }
    status = res.found ? GHM_EXIT_FOUND : GHM_EXIT_NOT_FOUND;
done:
    ghm_image_free(&query);
    return status;
}

int ghm_cmd_match(int argc, char **argv)
{
    GhmMatchOptions o;
    int parsed = ghm_match_parse_options(argc, argv, &o);
    if (parsed != 0)
        return parsed > 0 ? GHM_EXIT_FOUND : GHM_EXIT_ERROR;
    /* VIDEO BRANCH: a QUERY that is "-" or not a PNG/JPEG by content is a video; the video
     * mode (src/cmd_video.c) takes the same options and returns a GHM_EXIT_* status.
     * ghm_video_is_video_path sniffs the content (ghm_file_io.h) and also keeps foreign files
     * with the image loader in a build without FFmpeg. */
    int video = o.query && ghm_video_is_video_path(o.query);
    GhmContext *ctx = NULL;
    if (ghm_cli_context(&o.common, &ctx) < 0)
        return GHM_EXIT_ERROR;
    GhmMatcher *m = NULL;
    GhmImage *ref = NULL;
    int status = GHM_EXIT_ERROR;
    double t0 = ghm_now();
    if (ghm_match_open_reference(ctx, &o, &m, &ref) < 0)
        goto done;
    double build_ms = 1e3 * (ghm_now() - t0);
    if (!o.query) { /* --save-ref REFERENCE alone: the reference file was the job */
        if (o.common.verbose)
            fprintf(stderr, "reference: built and saved in %.1f ms\n", build_ms);
        status = GHM_EXIT_FOUND;
        goto done;
    }
    status = video ? ghm_cmd_video(&o, &o.video, ctx, m, ref)
                   : match_image(&o, ctx, m, ref, build_ms);
done:
    ghm_matcher_free(&m);
    ghm_image_free(&ref);
    ghm_context_free(&ctx);
    return status;
}
