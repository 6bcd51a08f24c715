/* match_cli.c - options, help and reference set-up of the match mode; see match_cli.h. */
#include "match_cli.h"

#include <stdlib.h>
#include <string.h>

enum {
    OPT_OVERLAY = GHM_OPT_FIRST_COMMAND,
    OPT_SAVE_REF,
    OPT_LOAD_REF,
    OPT_MAX_POINTS,
    OPT_CORNERS,
    OPT_BASIS_PROB,
    OPT_MIN_DIST,
    OPT_MAX_DIST,
    OPT_QUANT,
    OPT_ANGLE_BINS,
    OPT_QUERY_BASES,
    OPT_MIN_CONFIDENCE,
    OPT_TOP_CANDIDATES,
    OPT_SEARCH
};

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    {"overlay", required_argument, NULL, OPT_OVERLAY},
    {"save-ref", required_argument, NULL, OPT_SAVE_REF},
    {"load-ref", required_argument, NULL, OPT_LOAD_REF},
    {"max-points", required_argument, NULL, OPT_MAX_POINTS},
    {"corners", required_argument, NULL, OPT_CORNERS},
    {"basis-prob", required_argument, NULL, OPT_BASIS_PROB},
    {"min-dist", required_argument, NULL, OPT_MIN_DIST},
    {"max-dist", required_argument, NULL, OPT_MAX_DIST},
    {"quant", required_argument, NULL, OPT_QUANT},
    {"angle-bins", required_argument, NULL, OPT_ANGLE_BINS},
    {"query-bases", required_argument, NULL, OPT_QUERY_BASES},
    {"min-confidence", required_argument, NULL, OPT_MIN_CONFIDENCE},
    {"top-candidates", required_argument, NULL, OPT_TOP_CANDIDATES},
    {"search", required_argument, NULL, OPT_SEARCH},
    GHM_VIDEO_LONG_OPTIONS,
    {NULL, 0, NULL, 0}};

void ghm_match_print_help(FILE *f)
{
    ghm_cli_print_help(f);
    fputs(
        "\n"
        "Image matching options (geohash-match [OPTIONS] REFERENCE QUERY...):\n"
        "  --search QUERY           match QUERY against every REFERENCE given (images, saved\n"
        "                           reference files, directories of images) and rank them:\n"
        "                           found ones first, each group by confidence (--json adds\n"
        "                           \"rank\" from 1)\n"
        "  --overlay FILE.png       draw the query outline and matched edges on the reference\n"
        "  --save-ref FILE          save the analysed reference (versioned, checksummed); with\n"
        "                           no QUERY, only build and save it\n"
        "  --load-ref FILE          use a saved reference; REFERENCE may then be omitted before\n"
        "                           a single QUERY (geohash-match --load-ref ref.ghm QUERY); if\n"
        "                           it is given it only serves as the overlay's background\n"
        "  --max-points N           edge points hashed per pyramid level (default 12000)\n"
        "  --corners N              reference basis points per pyramid level (default 20000)\n"
        "  --basis-prob P           keep each reference basis with probability P (default 1)\n"
        "  --min-dist F, --max-dist F  basis length band, fractions of the reference diagonal\n"
        "                           (defaults 0 and 0.35)\n"
        "  --quant Q                signature bin size in basis lengths (default 0.05)\n"
        "  --angle-bins N           edge-direction bins in signatures, 0 = off (default 32)\n"
        "  --query-bases N          query bases that vote, at most (default 600)\n"
        "  --top-candidates N       best voted transforms that are verified (default 96)\n"
        "  --min-confidence C       share of query edges on reference edges needed for a\n"
        "                           match, in [0,1] (default 0.25)\n"
        "Reference-side options (--max-points, --corners, --basis-prob, --min-dist, --max-dist,\n"
        "--quant, --angle-bins) are stored in a saved reference and taken from it on loading.\n",
        f);
    fputc('\n', f);
    ghm_video_cli_help(f);
}

/* Applies one match-mode option; returns 1 if applied, 0 if unknown, -1 on a bad value. */
static int match_option(GhmMatchOptions *o, int id, const char *arg)
{
    GhmMatchParams *p = &o->params;
    long v = 0;
    double d = 0.0;
    for (const struct option *op = long_options; op->name; op++)
        if (op->val == id && id >= OPT_MAX_POINTS && id <= OPT_ANGLE_BINS)
            o->ref_option = op->name; /* the reference-side options, in the table's order */
    switch (id) {
    case OPT_OVERLAY: o->overlay = arg; return 1;
    case OPT_SAVE_REF: o->save_ref = arg; return 1;
    case OPT_LOAD_REF: o->load_ref = arg; return 1;
    case OPT_SEARCH: o->search = arg; return 1;
    case OPT_MAX_POINTS:
        if (ghm_cli_parse_long("--max-points", arg, 8, 1000000, &v) < 0)
            return -1;
        p->max_points = (size_t)v;
        return 1;
    case OPT_CORNERS:
        if (ghm_cli_parse_long("--corners", arg, 2, 65535, &v) < 0)
            return -1;
        p->corners.max_corners = (size_t)v;
        return 1;
    case OPT_BASIS_PROB:
        if (ghm_cli_parse_double("--basis-prob", arg, 1e-6, 1.0, &d) < 0)
            return -1;
        p->geo.basis_prob = d;
        return 1;
    case OPT_MIN_DIST:
        if (ghm_cli_parse_double("--min-dist", arg, 1e-4, 2.0, &d) < 0)
            return -1;
        p->geo.min_dist = d;
        return 1;
    case OPT_MAX_DIST:
        if (ghm_cli_parse_double("--max-dist", arg, 1e-4, 2.0, &d) < 0)
            return -1;
        p->geo.max_dist = d;
        return 1;
    case OPT_QUANT:
        if (ghm_cli_parse_double("--quant", arg, 2.0 * p->geo.window / 255.0, 2.0, &d) < 0)
            return -1;
        p->geo.quant = d;
        return 1;
    case OPT_ANGLE_BINS:
        if (ghm_cli_parse_long("--angle-bins", arg, 0, 64, &v) < 0)
            return -1;
        p->geo.angle_bins = (int)v;
        return 1;
    case OPT_QUERY_BASES:
        if (ghm_cli_parse_long("--query-bases", arg, 1, 1000000, &v) < 0)
            return -1;
        p->geo.query_bases = (size_t)v;
        return 1;
    case OPT_MIN_CONFIDENCE:
        if (ghm_cli_parse_double("--min-confidence", arg, 0.0, 1.0, &d) < 0)
            return -1;
        p->min_confidence = d;
        return 1;
    case OPT_TOP_CANDIDATES:
        if (ghm_cli_parse_long("--top-candidates", arg, 1, 100000, &v) < 0)
            return -1;
        p->top_candidates = (size_t)v;
        return 1;
    default:
        return 0;
    }
}

/* --search QUERY REFERENCE...: the references stand where the queries do, since each is
 * matched in turn; the options that name one reference have no meaning there. */
static int search_positionals(int n, char **args, GhmMatchOptions *o)
{
    const char *clash = o->overlay ? "--overlay" : o->save_ref ? "--save-ref"
                      : o->load_ref ? "--load-ref" : o->video.swap ? "--swap" : NULL;
    if (clash) {
        ghm_cli_error("--search", "cannot be combined with %s", clash);
        return -1;
    }
    if (n < 1) {
        ghm_cli_error("--search", "missing REFERENCE arguments (--search QUERY REFERENCE...)");
        ghm_cli_usage_hint(NULL);
        return -1;
    }
    o->queries = args;
    o->n_queries = n;
    o->one_line = 1;
    return 0;
}

/* REFERENCE QUERY...; with --load-ref [REFERENCE] QUERY... (REFERENCE may be left out only
 * before a single QUERY, as before several queries the first would be ambiguous); with
 * --save-ref REFERENCE [QUERY...]. */
static int positionals(int n, char **args, GhmMatchOptions *o)
{
    if (o->search)
        return search_positionals(n, args, o);
    if (o->load_ref && n == 1) {
        o->queries = args;
        o->n_queries = 1;
    } else if (o->save_ref && !o->load_ref && n == 1) {
        o->reference = args[0];
    } else if (n >= 2) {
        o->reference = args[0];
        o->queries = args + 1;
        o->n_queries = n - 1;
    } else {
        ghm_cli_error(NULL, "missing REFERENCE and QUERY arguments");
        ghm_cli_usage_hint(NULL);
        return -1;
    }
    o->query = o->n_queries > 0 ? o->queries[0] : NULL;
    if (o->overlay && o->n_queries > 1) {
        ghm_cli_error("--overlay", "draws one query; give a single QUERY");
        return -1;
    }
    return 0;
}

/* Neither --overlay nor --save-ref may name one of the files read (ghm_cli_output_not_input):
 * REFERENCE, --load-ref, --search's QUERY and every QUERY (or REFERENCE) named. */
static int outputs_not_inputs(const GhmMatchOptions *o)
{
    const char *named[3] = {o->reference, o->load_ref, o->search};
    for (int i = 0; i < 3 + o->n_queries; i++) {
        const char *in = i < 3 ? named[i] : o->queries[i - 3];
        if (ghm_cli_output_not_input("--overlay", o->overlay, in) < 0 ||
            ghm_cli_output_not_input("--save-ref", o->save_ref, in) < 0)
            return -1;
    }
    return 0;
}

static int parse_options(int argc, char **argv, GhmMatchOptions *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->common = ghm_cli_common_defaults();
    opt->params = ghm_match_defaults();
    opt->video = ghm_video_cli_defaults();
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&opt->common, id, optarg);
        if (used == 0)
            used = match_option(opt, id, optarg);
        if (used == 0)
            used = ghm_video_cli_option(&opt->video, id, optarg);
        if (used < 0)
            return -1;
        if (used == 0) {
            ghm_cli_usage_hint(NULL);
            return -1;
        }
    }
    if (opt->common.help) {
        if (!ghm_cli_quiet())
            ghm_match_print_help(stdout);
        return 1;
    }
    if (opt->common.version) {
        if (!ghm_cli_quiet())
            ghm_cli_print_version(stdout);
        return 1;
    }
    if (opt->params.geo.max_dist <= opt->params.geo.min_dist) {
        ghm_cli_error("--max-dist", "must be larger than --min-dist (%g)",
                      opt->params.geo.min_dist);
        return -1;
    }
    if (positionals(argc - optind, argv + optind, opt) < 0)
        return -1;
    return outputs_not_inputs(opt);
}

int ghm_match_parse_options(int argc, char **argv, GhmMatchOptions *opt)
{
    ghm_cli_options_quiet(1); /* every MPI rank parses the same arguments: rank 0 speaks */
    int ret = parse_options(argc, argv, opt);
    ghm_cli_options_quiet(0);
    return ret;
}

int ghm_match_read_reference(const GhmMatchOptions *opt, GhmImage **ref_img)
{
    char why[512] = "";
    *ref_img = NULL;
    /* With --load-ref the image is only the overlay's background: skip decoding it otherwise. */
    if (!opt->reference || (opt->load_ref && !opt->overlay))
        return GHM_OK;
    int ret = ghm_image_load(opt->reference, ref_img, why, sizeof why);
    if (ret < 0)
        ghm_cli_error(opt->reference, "%s", why);
    return ret;
}

int ghm_match_open_reference(GhmContext *ctx, const GhmMatchOptions *opt,
                             const GhmImage *ref_img, int one_query, GhmMatcher **out)
{
    char why[512] = "";
    int ret;
    if (opt->load_ref) {
        ret = one_query ? ghm_matcher_load_for_one_query(ctx, opt->load_ref, &opt->params, out,
                                                         why, sizeof why)
                        : ghm_matcher_load(ctx, opt->load_ref, &opt->params, out, why, sizeof why);
        if (ret < 0)
            ghm_cli_error(opt->load_ref, "%s", why);
        else if (opt->ref_option)
            ghm_cli_warn(NULL, "--%s: has no effect with --load-ref: the saved reference "
                         "keeps the value it was built with (build it again to change it)",
                         opt->ref_option);
    } else {
        ret = one_query ? ghm_matcher_create_for_one_query(ctx, ref_img, &opt->params, out)
                        : ghm_matcher_create(ctx, ref_img, &opt->params, out);
        if (ret == GHM_ERR_TOO_LARGE)
            ghm_cli_error(opt->reference, "%dx%d is larger than image matching takes "
                          "(16 megapixels)", ref_img->width, ref_img->height);
        else if (ret < 0)
            ghm_cli_error(opt->reference, "cannot build the reference tables: %s",
                          ghm_strerror(ret));
    }
    if (ret == GHM_OK && opt->save_ref &&
        (ret = ghm_matcher_save(*out, opt->save_ref, why, sizeof why)) < 0)
        ghm_cli_error(opt->save_ref, "%s", why);
    if (ret < 0)
        ghm_matcher_free(out);
    return ret;
}
