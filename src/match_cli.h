/*
 * match_cli.h - the options of the image (and video) mode, `geohash-match [OPTIONS] REFERENCE
 * QUERY`, parsed once for both: the video mode (src/cmd_video.c) receives the same struct and
 * prints its per-frame results with the same output helpers.
 */
#ifndef GHM_MATCH_CLI_H
#define GHM_MATCH_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "cli.h"
#include "ghm_image.h"
#include "ghm_match.h"
#include "video_cli.h"

typedef struct GhmMatchOptions {
    GhmCommonOptions common;
    GhmMatchParams params;
    const char *overlay;   /* --overlay FILE.png, or NULL */
    const char *save_ref;  /* --save-ref FILE, or NULL */
    const char *load_ref;  /* --load-ref FILE, or NULL */
    const char *ref_option; /* the last reference-side option given, without its "--" (a saved
                               reference keeps its own), or NULL */
    const char *reference; /* REFERENCE (NULL when --load-ref is given without it) */
    const char *query;     /* the query at hand: QUERY, or each of QUERY... in turn (NULL when
                              only --save-ref is asked for) */
    char **queries;        /* QUERY... as given (files, directories, videos); with --search,
                              the REFERENCE... */
    int n_queries;
    const char *search;    /* --search QUERY, or NULL */
    int one_line;          /* several queries: one line (or JSON object) each, naming it */
    GhmVideoOptions video; /* --start, --end, --step, --swap (video_cli.h) */
} GhmMatchOptions;

/* Parses the command line of the match mode into opt. Returns 0 to go on, 1 when --help or
 * --version was printed (exit 0), or -1 after printing one error line (exit 2). */
int ghm_match_parse_options(int argc, char **argv, GhmMatchOptions *opt);

/* `--search QUERY REFERENCE...` (cmd_search.c): matches the QUERY image against every
 * REFERENCE (an image, a saved reference file, or a directory of images) and prints them
 * ranked: found ones first, each group by confidence. Returns a GHM_EXIT_* status: 2 when
 * any reference (or the query) failed, after the others were reported, else 0 when some
 * reference holds the query, else 1. */
int ghm_cmd_search(const GhmMatchOptions *opt);

/* The top-level help followed by this mode's options. */
void ghm_match_print_help(FILE *f);

/* Decodes the REFERENCE image into *ref_img (owned by the caller) unless the run needs none
 * (--load-ref without --overlay: *ref_img stays NULL). Prints one error line on failure and
 * returns the GHM_ERR_* code. Needs no context, so that it overlaps CUDA's start-up. */
int ghm_match_read_reference(const GhmMatchOptions *opt, GhmImage **ref_img);

/* Builds the matcher for opt: from --load-ref or from ref_img (ghm_match_read_reference); for
 * one query (one_query) as ghm_matcher_create_for_one_query makes it. Then writes --save-ref
 * if asked. Prints one error line on failure and returns the GHM_ERR_* code. */
int ghm_match_open_reference(GhmContext *ctx, const GhmMatchOptions *opt,
                             const GhmImage *ref_img, int one_query, GhmMatcher **out);

/* The result as a JSON object (new reference, NULL when out of memory): found, votes,
 * confidence, transform, corners, inliers, timings_ms, tables. The caller adds "reference",
 * "query", "backend" (and "frame", "pts" for video). */
json_t *ghm_match_result_json(const GhmMatchResult *res, int query_w, int query_h);

/* {"path": path, "width": w, "height": h}: how the JSON output names the reference or the
 * query. Never NULL: json_null() when out of memory. */
json_t *ghm_match_side_json(const char *path, int width, int height);

/* The result in one line on f, naming it "name: " (several queries, --search). Returns 0, or
 * -1 on a write error. */
int ghm_match_print_line(FILE *f, const GhmMatchResult *res, const char *name);

/* The readable summary of a result (several lines) on f. */
void ghm_match_print_text(FILE *f, const GhmMatchResult *res, const char *query, int query_w,
                          int query_h);

/* Timings and table sizes on stderr (--verbose). */
void ghm_match_print_verbose(const GhmMatchResult *res, double build_ms);

/* Draws the reference (ref, or its edges in grey when ref is NULL) with the query outline and
 * the matched edge points; writes PNG atomically. Prints one error line and returns the error
 * on failure. */
int ghm_match_write_overlay(const char *path, const GhmImage *ref, const GhmMatcher *m,
                            const GhmMatchResult *res, int query_w, int query_h);

/* The four query corners (0,0), (w-1,0), (w-1,h-1), (0,h-1) mapped by the result's matrix. */
void ghm_match_corners(const GhmMatchResult *res, int query_w, int query_h, double c[4][2]);

#endif /* GHM_MATCH_CLI_H */
