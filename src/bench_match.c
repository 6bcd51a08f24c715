/*
 * bench_match.c - `geohash-match bench match`: time per query of image matching with the
 * reference tables already built, end to end from decoded pixels to the reported transform,
 * split into the stages (edges, bases, signatures, voting, verification), with table sizes.
 *
 * Cases: a 640x480 photo pair (Blender_Suzanne2 in Suzanne1, a real match), a dense reference
 * (box.png in box_in_scene.png, the most votes per query), and 1920x1080: rubberwhale1.png
 * enlarged to 1920x1080 as the reference and, as the query, that reference seen through a known
 * similarity (scale 0.6, 15 degrees), also 1920x1080. When the chosen backend is not the CPU,
 * the CPU backend runs the same cases in the same run as the baseline.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "ghm_match.h"
#include "json_out.h"

enum { OPT_JSON_OUT = GHM_OPT_FIRST_COMMAND, OPT_REPS, OPT_DATA, OPT_NO_BASELINE };

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    {"json-out", required_argument, NULL, OPT_JSON_OUT},
    {"reps", required_argument, NULL, OPT_REPS},
    {"data", required_argument, NULL, OPT_DATA},
    {"no-baseline", no_argument, NULL, OPT_NO_BASELINE},
    {NULL, 0, NULL, 0}};

typedef struct MatchBenchArgs {
    GhmCommonOptions common;
    const char *json_out;
    const char *data;
    long reps;
    int no_baseline;
} MatchBenchArgs;

enum { STAGES = 6, CASES = 3 };
static const char *const stage_names[STAGES] = {"edges",  "bases",        "signatures",
                                                "voting", "verification", "total"};

typedef struct CaseResult {
    const char *name;
    int width, height;  /* query size */
    int found;
    double median[STAGES], best[STAGES];
    GhmMatchResult last; /* table sizes of the last run */
} CaseResult;

static void print_help(void)
{
    printf("Usage: geohash-match bench match [OPTIONS]\n\n"
           "Time per query of image matching, reference tables built once: 640x480 photo pair,\n"
           "dense reference (box in scene), 1920x1080 known-transform pair. Per-stage medians.\n"
           "  --reps N          queries per case; best and median are reported (default 20)\n"
           "  --data DIR        the sample data folder (default data)\n"
           "  --no-baseline     do not also run the CPU backend when the backend is CUDA\n"
           "  --json-out FILE   also write the measurements as JSON\n"
           "  --backend, --threads, --seed as everywhere\n");
}

static int parse_args(int argc, char **argv, MatchBenchArgs *a)
{
    *a = (MatchBenchArgs){.common = ghm_cli_common_defaults(), .reps = 20, .data = "data"};
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used < 0)
            return -1;
        if (used > 0)
            continue;
        if (id == OPT_JSON_OUT)
            a->json_out = optarg;
        else if (id == OPT_DATA)
            a->data = optarg;
        else if (id == OPT_NO_BASELINE)
            a->no_baseline = 1;
        else if (id == OPT_REPS) {
            if (ghm_cli_parse_long("--reps", optarg, 1, 10000, &a->reps) < 0)
                return -1;
        } else {
            ghm_cli_usage_hint("bench match");
            return -1;
        }
    }
    if (optind != argc) {
        ghm_cli_error("bench match", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

static int load_image(const MatchBenchArgs *a, const char *name, GhmImage **out)
{
    char path[4096], why[256];
    snprintf(path, sizeof path, "%s/%s", a->data, name);
    int ret = ghm_image_load(path, out, why, sizeof why);
    if (ret < 0)
        ghm_cli_error(path, "%s", why);
    return ret;
}

/* The similarity of `scale` and `deg` that maps the query centre to the reference centre. */
static void centred_similarity(int qw, int qh, int rw, int rh, double scale, double deg,
                               double t[2][3])
{
    double c = scale * cos(deg * M_PI / 180.0), s = scale * sin(deg * M_PI / 180.0);
    double qx = (qw - 1) / 2.0, qy = (qh - 1) / 2.0;
    t[0][0] = c, t[0][1] = -s, t[0][2] = (rw - 1) / 2.0 - (c * qx - s * qy);
    t[1][0] = s, t[1][1] = c, t[1][2] = (rh - 1) / 2.0 - (s * qx + c * qy);
}

/* The reference and query of case k. The 1080p pair is made from rubberwhale1.png. */
static int case_images(const MatchBenchArgs *a, int k, GhmImage **ref, GhmImage **query)
{
    if (k == 0) {
        int ret = load_image(a, "images/Blender_Suzanne1.jpg", ref);
        return ret < 0 ? ret : load_image(a, "images/Blender_Suzanne2.jpg", query);
    }
    if (k == 1) {
        int ret = load_image(a, "images/box_in_scene.png", ref);
        return ret < 0 ? ret : load_image(a, "images/box.png", query);
    }
    GhmImage *photo = NULL;
    int ret = load_image(a, "images/rubberwhale1.png", &photo);
    if (ret < 0)
        return ret;
    double enlarge[2][3], view[2][3];
    double s = fmin((double)photo->width / 1920.0, (double)photo->height / 1080.0);
    centred_similarity(1920, 1080, photo->width, photo->height, s, 0.0, enlarge);
    centred_similarity(1920, 1080, 1920, 1080, 0.6, 15.0, view);
    ret = ghm_image_warp_affine(photo, 1920, 1080, enlarge, ref);
    if (ret >= 0)
        ret = ghm_image_warp_affine(*ref, 1920, 1080, view, query);
    ghm_image_free(&photo);
    return ret;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static int run_case(GhmContext *ctx, const MatchBenchArgs *a, int k, CaseResult *out)
{
    static const char *const names[CASES] = {"640x480 pair", "dense reference", "1920x1080"};
    GhmImage *ref = NULL, *query = NULL;
    GhmMatcher *m = NULL;
    double *t = calloc((size_t)a->reps * STAGES, sizeof *t);
    int ret = t ? case_images(a, k, &ref, &query) : GHM_ERR_NOMEM;
    GhmMatchParams p = ghm_match_defaults();
    if (ret >= 0)
        ret = ghm_matcher_create(ctx, ref, &p, &m);
    if (ret >= 0) /* one warm-up query: first-touch allocations and CUDA module loading */
        ret = ghm_matcher_match(m, query, &out->last);
    for (long r = 0; r < a->reps && ret >= 0; r++) {
        double t0 = ghm_now();
        ret = ghm_matcher_match(m, query, &out->last);
        const GhmMatchTimings *tm = &out->last.time;
        double v[STAGES] = {tm->edges_ms,  tm->bases_ms,        tm->signatures_ms,
                            tm->voting_ms, tm->verification_ms, 1e3 * (ghm_now() - t0)};
        for (int s = 0; s < STAGES; s++)
            t[(size_t)s * (size_t)a->reps + (size_t)r] = v[s];
    }
    if (ret >= 0) {
        out->name = names[k];
        out->width = query->width;
        out->height = query->height;
        out->found = out->last.found;
        for (int s = 0; s < STAGES; s++) {
            double *col = t + (size_t)s * (size_t)a->reps;
            qsort(col, (size_t)a->reps, sizeof *col, cmp_double);
            out->best[s] = col[0];
            out->median[s] = col[a->reps / 2];
        }
    }
    free(t);
    ghm_matcher_free(&m);
    ghm_image_free(&ref);
    ghm_image_free(&query);
    return ret;
}

static void print_case(const char *backend, const CaseResult *c)
{
    printf("%-5s %-16s %4dx%-4d %-5s", backend, c->name, c->width, c->height,
           c->found ? "found" : "none");
    for (int s = 0; s < STAGES; s++)
        printf(" %s %7.2f", stage_names[s], c->median[s]);
    printf(" ms (median; best total %.2f)  bases %zu/%zu  entries %zu  votes %llu\n", c->best[5],
           c->last.ref_bases, c->last.query_bases, c->last.ref_entries,
           (unsigned long long)c->last.votes_cast);
}

static json_t *case_json(const char *backend, const CaseResult *c)
{
    json_t *o = json_object(), *med = json_object(), *best = json_object();
    json_object_set_new(o, "backend", json_string(backend));
    json_object_set_new(o, "case", json_string(c->name));
    json_object_set_new(o, "query_size", json_pack("[ii]", c->width, c->height));
    json_object_set_new(o, "found", json_boolean(c->found));
    for (int s = 0; s < STAGES; s++) {
        json_object_set_new(med, stage_names[s], json_real(c->median[s]));
        json_object_set_new(best, stage_names[s], json_real(c->best[s]));
    }
    json_object_set_new(o, "median_ms", med);
    json_object_set_new(o, "best_ms", best);
    json_object_set_new(
        o, "tables",
        json_pack("{sIsIsIsIsI}", "reference_bases", (json_int_t)c->last.ref_bases,
                  "reference_entries", (json_int_t)c->last.ref_entries, "query_bases",
                  (json_int_t)c->last.query_bases, "lookups", (json_int_t)c->last.lookups,
                  "votes_cast", (json_int_t)c->last.votes_cast));
    return o;
}

/* Runs every case on one backend, printing rows and appending them to rows (JSON). */
static int run_backend(const MatchBenchArgs *a, GhmBackendKind kind, json_t *rows)
{
    GhmCommonOptions common = a->common;
    common.backend = kind;
    GhmContext *ctx = NULL;
    if (ghm_cli_context(&common, &ctx) < 0)
        return -1;
    char device[256];
    ghm_context_describe(ctx, device, sizeof device);
    printf("bench match: %s (%s), %ld queries per case\n", ghm_context_backend_name(ctx), device,
           a->reps);
    int ret = GHM_OK;
    for (int k = 0; k < CASES && ret >= 0; k++) {
        CaseResult c = {0};
        if ((ret = run_case(ctx, a, k, &c)) < 0) {
            ghm_cli_error("bench match", "case %d: %s", k, ghm_strerror(ret));
            break;
        }
        print_case(ghm_context_backend_name(ctx), &c);
        json_t *row = case_json(ghm_context_backend_name(ctx), &c);
        json_object_set_new(row, "device", json_string(device));
        json_array_append_new(rows, row);
    }
    ghm_context_free(&ctx);
    return ret < 0 ? -1 : 0;
}

static int write_json(const char *path, json_t *rows)
{
    return ghm_json_write_file(path, json_pack("{s:s,s:O}", "bench", "match", "rows", rows));
}

int ghm_bench_match(int argc, char **argv)
{
    MatchBenchArgs a;
    if (parse_args(argc, argv, &a) < 0)
        return GHM_EXIT_ERROR;
    if (a.common.help) {
        print_help();
        return GHM_EXIT_FOUND;
    }
    json_t *rows = json_array();
    int ret = run_backend(&a, a.common.backend, rows);
    int on_cpu = a.common.backend == GHM_BACKEND_CPU ||
                 (a.common.backend == GHM_BACKEND_AUTO && !ghm_cuda_available());
    if (ret == 0 && !on_cpu && !a.no_baseline)
        ret = run_backend(&a, GHM_BACKEND_CPU, rows);
    if (ret == 0 && a.json_out)
        ret = write_json(a.json_out, rows);
    json_decref(rows);
    return ret == 0 ? GHM_EXIT_FOUND : GHM_EXIT_ERROR;
}
