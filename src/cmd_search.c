/*
 * cmd_search.c - `geohash-match --search QUERY REFERENCE...`: which of these references holds
 * the query? The query image is decoded once; each reference's tables are built in turn (or
 * loaded from a saved reference file), the query matched against them, and the tables freed
 * before the next, so memory stays at one reference's worth. Results are printed only once all
 * are in, ranked: found ones first, each group by confidence, ties in command-line order. A
 * reference that cannot be read gets its error line and the search goes on (exit 2 at the end).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ghm_file_io.h"
#include "ghm_image.h"
#include "ghm_match.h"
#include "json_out.h"
#include "match_cli.h"
#include "query_files.h"

typedef struct Hit {
    char *path; /* the reference, owned */
    int width, height;
    size_t order; /* place on the command line (directories expanded), for ties */
    GhmMatchResult res;
} Hit;

typedef struct Search {
    const GhmMatchOptions *o;
    GhmContext *ctx;
    const GhmImage *query;
    Hit *hits;
    size_t n, cap;
    int failed; /* some reference gave an error line */
} Search;

/* Builds (or loads) the reference at path into *m; fills why on failure. */
static int open_reference(Search *s, const char *path, GhmMatcher **m, char *why, size_t n)
{
    GhmFileKind kind = GHM_FILE_UNKNOWN;
    if (ghm_file_sniff_path(path, &kind, NULL, 0) == GHM_OK && kind == GHM_FILE_REFERENCE)
        return ghm_matcher_load_for_one_query(s->ctx, path, &s->o->params, m, why, n);
    /* Anything else is for the image loader, whose message says what is wrong with it. */
    GhmImage *img = NULL;
    int ret = ghm_image_load(path, &img, why, n);
    if (ret < 0)
        return ret;
    /* the query is each reference's only one */
    if ((ret = ghm_matcher_create_for_one_query(s->ctx, img, &s->o->params, m)) ==
        GHM_ERR_TOO_LARGE)
        snprintf(why, n, "%dx%d is larger than image matching takes (16 megapixels)",
                 img->width, img->height);
    else if (ret < 0)
        snprintf(why, n, "cannot build the reference tables: %s", ghm_strerror(ret));
    ghm_image_free(&img);
    return ret;
}

static int add_hit(Search *s, const char *path, const GhmMatcher *m, const GhmMatchResult *res)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        Hit *h = realloc(s->hits, cap * sizeof *h);
        if (!h)
            return GHM_ERR_NOMEM;
        s->hits = h;
        s->cap = cap;
    }
    Hit *h = &s->hits[s->n];
    if (!(h->path = strdup(path)))
        return GHM_ERR_NOMEM;
    ghm_matcher_size(m, &h->width, &h->height);
    h->order = s->n++;
    h->res = *res;
    return GHM_OK;
}

/* One reference: its tables, the query against them, the result kept for the ranking. */
static void search_one(Search *s, const char *path)
{
    char why[512] = "";
    GhmMatcher *m = NULL;
    GhmMatchResult res;
    double t0 = ghm_now();
    int ret = open_reference(s, path, &m, why, sizeof why);
    double build_ms = 1e3 * (ghm_now() - t0);
    if (ret == GHM_OK && (ret = ghm_matcher_match(m, s->query, &res)) < 0)
        snprintf(why, sizeof why, "matching failed: %s", ghm_strerror(ret));
    if (ret == GHM_OK && (ret = add_hit(s, path, m, &res)) < 0)
        snprintf(why, sizeof why, "%s", ghm_strerror(ret));
    if (ret < 0) {
        ghm_cli_error(path, "%s", why);
        s->failed = 1;
    } else if (s->o->common.verbose) {
        fprintf(stderr, "%s:\n", path);
        ghm_match_print_verbose(&res, build_ms);
    }
    ghm_matcher_free(&m);
}

/* Found first, then higher confidence, then command-line order (qsort is not stable). */
static int by_rank(const void *pa, const void *pb)
{
    const Hit *a = pa, *b = pb;
    if (a->res.found != b->res.found)
        return a->res.found ? -1 : 1;
    if (a->res.confidence != b->res.confidence)
        return a->res.confidence > b->res.confidence ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int print_hit(const Search *s, const Hit *h, size_t rank)
{
    const GhmMatchOptions *o = s->o;
    if (!o->common.json)
        return ghm_match_print_line(stdout, &h->res, h->path);
    json_t *obj = ghm_match_result_json(&h->res, s->query->width, s->query->height);
    if (!obj)
        return -1;
    json_object_set_new(obj, "rank", json_integer((json_int_t)rank));
    json_object_set_new(obj, "reference", ghm_match_side_json(h->path, h->width, h->height));
    json_object_set_new(obj, "query",
                        ghm_match_side_json(o->search, s->query->width, s->query->height));
    json_object_set_new(obj, "backend", json_string(ghm_context_backend_name(s->ctx)));
    int ret = ghm_json_print(stdout, obj); /* it keeps the reason for the caller */
    json_decref(obj);
    return ret;
}

static void search_all(Search *s)
{
    GhmQueryList list;
    if (ghm_query_list_build(s->o->queries, s->o->n_queries, &list) < 0) {
        ghm_cli_error(NULL, "cannot list the references: %s", ghm_strerror(GHM_ERR_NOMEM));
        s->failed = 1;
        return;
    }
    for (size_t i = 0; i < list.n; i++) {
        const GhmQueryEntry *e = &list.entries[i];
        if (e->kind == GHM_QUERY_BAD) {
            ghm_cli_error(e->path, "%s", e->why);
            s->failed = 1;
        } else {
            search_one(s, e->path); /* a video gets the image loader's word for it */
        }
    }
    ghm_query_list_free(&list);
}

/* Ranks and prints the hits; returns the run's GHM_EXIT_* status. */
static int report(Search *s)
{
    int found = 0;
    qsort(s->hits, s->n, sizeof *s->hits, by_rank);
    for (size_t i = 0; i < s->n; i++) {
        found |= s->hits[i].res.found;
        errno = 0;
        if (!s->o->common.quiet && print_hit(s, &s->hits[i], i + 1) < 0) {
            ghm_cli_stdout_error(s->o->common.json ? 0 : errno); /* 0: ghm_json_print's */
            return GHM_EXIT_ERROR;
        }
    }
    if (s->failed)
        return GHM_EXIT_ERROR;
    return found ? GHM_EXIT_FOUND : GHM_EXIT_NOT_FOUND;
}

int ghm_cmd_search(const GhmMatchOptions *opt)
{
    char why[512] = "";
    Search s = {.o = opt};
    GhmImage *query = NULL;
    ghm_cli_prestart(opt->common.backend); /* overlaps decoding the query */
    if (ghm_image_load(opt->search, &query, why, sizeof why) < 0) {
        ghm_cli_error(opt->search, "%s", why);
        return GHM_EXIT_ERROR;
    }
    int status = GHM_EXIT_ERROR;
    if (ghm_cli_context(&opt->common, &s.ctx) == GHM_OK) {
        s.query = query;
        search_all(&s);
        status = report(&s);
    }
    for (size_t i = 0; i < s.n; i++)
        free(s.hits[i].path);
    free(s.hits);
    ghm_context_free(&s.ctx);
    ghm_image_free(&query);
    return status;
}
