/* match_output.c - text, JSON and overlay output of the match mode; see match_cli.h. */
#include <math.h>
#include <stdlib.h>

#include "json_out.h"
#include "match_cli.h"

void ghm_match_corners(const GhmMatchResult *res, int query_w, int query_h, double c[4][2])
{
    double q[4][2] = {{0, 0}, {query_w - 1, 0}, {query_w - 1, query_h - 1}, {0, query_h - 1}};
    for (int i = 0; i < 4; i++) {
        c[i][0] = res->matrix[0][0] * q[i][0] + res->matrix[0][1] * q[i][1] + res->matrix[0][2];
        c[i][1] = res->matrix[1][0] * q[i][0] + res->matrix[1][1] * q[i][1] + res->matrix[1][2];
    }
}

/* Rounds to 1e-6 so that printed numbers stay short but lose nothing that matters. */
static json_t *num(double v)
{
    return json_real(round(v * 1e6) / 1e6);
}

static json_t *transform_json(const GhmMatchResult *res)
{
    json_t *m = json_pack("[[o,o,o],[o,o,o]]", num(res->matrix[0][0]), num(res->matrix[0][1]),
                          num(res->matrix[0][2]), num(res->matrix[1][0]), num(res->matrix[1][1]),
                          num(res->matrix[1][2]));
    return json_pack("{s:o,s:o,s:o,s:o,s:o}", "scale", num(res->scale), "rotation_deg",
                     num(res->rotation_deg), "tx", num(res->tx), "ty", num(res->ty), "matrix", m);
}

static json_t *corners_json(const GhmMatchResult *res, int w, int h)
{
    double c[4][2];
    ghm_match_corners(res, w, h, c);
    return json_pack("[[o,o],[o,o],[o,o],[o,o]]", num(c[0][0]), num(c[0][1]), num(c[1][0]),
                     num(c[1][1]), num(c[2][0]), num(c[2][1]), num(c[3][0]), num(c[3][1]));
}

json_t *ghm_match_result_json(const GhmMatchResult *res, int query_w, int query_h)
{
    const GhmMatchTimings *t = &res->time;
    json_t *timings = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "edges", num(t->edges_ms), "bases",
                                num(t->bases_ms), "signatures", num(t->signatures_ms), "voting",
                                num(t->voting_ms), "verification", num(t->verification_ms),
                                "total", num(t->total_ms));
    json_t *tables = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "reference_edge_points",
        (json_int_t)res->ref_edge_points, "reference_basis_points",
        (json_int_t)res->ref_basis_points, "reference_coded_points",
        (json_int_t)res->ref_coded_points, "reference_bases", (json_int_t)res->ref_bases,
        "signatures", (json_int_t)res->ref_entries, "signature_keys", (json_int_t)res->ref_keys,
        "query_edge_points", (json_int_t)res->query_edge_points, "query_basis_points",
        (json_int_t)res->query_basis_points, "query_coded_points",
        (json_int_t)res->query_coded_points, "query_bases", (json_int_t)res->query_bases,
        "lookups", (json_int_t)res->lookups, "votes_cast", (json_int_t)res->votes_cast,
        "candidates", (json_int_t)res->candidates);
    json_t *o = json_pack("{s:b,s:I,s:o,s:o,s:o,s:I}", "found", res->found, "votes",
                          (json_int_t)res->votes, "confidence", num(res->confidence),
                          "forward_share", num(res->forward_share), "backward_share",
                          num(res->backward_share), "inliers", (json_int_t)res->inliers);
    if (!o || !timings || !tables) {
        json_decref(o);
        json_decref(timings);
        json_decref(tables);
        return NULL;
    }
    json_object_set_new(o, "transform", res->found ? transform_json(res) : json_null());
    json_object_set_new(o, "corners", res->found ? corners_json(res, query_w, query_h)
                                                 : json_null());
    json_object_set_new(o, "timings_ms", timings);
    json_object_set_new(o, "tables", tables);
    return o;
}

json_t *ghm_match_side_json(const char *path, int width, int height)
{
    json_t *o = json_pack("{s:o,s:i,s:i}", "path", ghm_json_string_lossy(path), "width", width,
                          "height", height);
    return o ? o : json_null();
}

int ghm_match_print_line(FILE *f, const GhmMatchResult *res, const char *name)
{
    int n;
    if (res->found)
        n = fprintf(f, "%s: found, confidence %.3f, %u votes, scale %.5f, rotation %.3f deg, "
                       "translation (%.3f, %.3f)\n",
                    name, res->confidence, res->votes, res->scale, res->rotation_deg, res->tx,
                    res->ty);
    else
        n = fprintf(f, "%s: no match (best confidence %.3f, %u votes)\n", name, res->confidence,
                    res->votes);
    return n < 0 ? -1 : 0;
}

void ghm_match_print_text(FILE *f, const GhmMatchResult *res, const char *query, int query_w,
                          int query_h)
{
    if (!res->found) {
        fprintf(f, "%s: no match (best confidence %.3f, %u votes)\n", query, res->confidence,
                res->votes);
        return;
    }
    double c[4][2];
    ghm_match_corners(res, query_w, query_h, c);
    fprintf(f,
            "%s: found, confidence %.3f, %u votes, %zu of %zu edge points on reference edges, "
            "%.0f %% of the reference edges under it explained\n",
            query, res->confidence, res->votes, res->inliers, res->query_edges,
            100.0 * res->backward_share);
    fprintf(f, "  scale %.5f  rotation %.3f deg  translation (%.3f, %.3f)\n", res->scale,
            res->rotation_deg, res->tx, res->ty);
    fprintf(f, "  matrix [[%.6f, %.6f, %.4f], [%.6f, %.6f, %.4f]]\n", res->matrix[0][0],
            res->matrix[0][1], res->matrix[0][2], res->matrix[1][0], res->matrix[1][1],
            res->matrix[1][2]);
    fprintf(f, "  query corners in reference: (%.1f, %.1f) (%.1f, %.1f) (%.1f, %.1f) (%.1f, %.1f)\n",
            c[0][0], c[0][1], c[1][0], c[1][1], c[2][0], c[2][1], c[3][0], c[3][1]);
}

void ghm_match_print_verbose(const GhmMatchResult *res, double build_ms)
{
    const GhmMatchTimings *t = &res->time;
    fprintf(stderr,
            "reference: build %.1f ms; %zu edge points, %zu basis points, %zu coded points, "
            "%zu bases, %zu signatures under %zu keys%s\n",
            build_ms, res->ref_edge_points, res->ref_basis_points, res->ref_coded_points,
            res->ref_bases, res->ref_entries, res->ref_keys,
            res->ref_scanned ? " (for one query: no table, the signatures made while voting)"
                             : "");
    fprintf(stderr,
            "query: %zu edge points, %zu basis points, %zu coded points, %zu bases, %zu "
            "look-ups, %llu votes, %zu candidates\n",
            res->query_edge_points, res->query_basis_points, res->query_coded_points,
            res->query_bases, res->lookups, (unsigned long long)res->votes_cast, res->candidates);
    fprintf(stderr,
            "time (ms): edges %.2f, bases %.2f, signatures %.2f, voting %.2f, verification "
            "%.2f, total %.2f\n",
            t->edges_ms, t->bases_ms, t->signatures_ms, t->voting_ms, t->verification_ms,
            t->total_ms);
}

/* The background: the reference image, or its edges in grey when only a saved reference is
 * at hand. */
static int background(const GhmImage *ref, const GhmMatcher *m, GhmRgbImage **out)
{
    if (ref)
        return ghm_rgb_image_from_grey(ref, out);
    int w, h;
    ghm_matcher_size(m, &w, &h);
    int ret = ghm_rgb_image_create(w, h, out);
    if (ret < 0)
        return ret;
    const GhmEdgePoint *e;
    size_t n;
    ghm_matcher_reference_edges(m, &e, &n);
    for (size_t i = 0; i < n; i++)
        ghm_rgb_image_draw_point(*out, e[i].x, e[i].y, 0, 110, 110, 110);
    return GHM_OK;
}

int ghm_match_write_overlay(const char *path, const GhmImage *ref, const GhmMatcher *m,
                            const GhmMatchResult *res, int query_w, int query_h)
{
    GhmRgbImage *img = NULL;
    char why[512] = "";
    int ret = background(ref, m, &img);
    if (ret < 0) {
        ghm_cli_error(path, "cannot draw the overlay: %s", ghm_strerror(ret));
        return ret;
    }
    if (res->found) {
        const float(*xy)[2];
        size_t n;
        ghm_matcher_inliers(m, &xy, &n);
        for (size_t i = 0; i < n; i++) /* matched query edges, in red */
            ghm_rgb_image_draw_point(img, xy[i][0], xy[i][1], 0, 255, 40, 40);
        double c[4][2];
        ghm_match_corners(res, query_w, query_h, c);
        for (int i = 0; i < 4; i++) /* the outline, green, three pixels wide */
            for (int d = -1; d <= 1; d++) {
                int j = (i + 1) % 4;
                ghm_rgb_image_draw_line(img, c[i][0] + d, c[i][1], c[j][0] + d, c[j][1], 40, 230, 40);
                ghm_rgb_image_draw_line(img, c[i][0], c[i][1] + d, c[j][0], c[j][1] + d, 40, 230, 40);
            }
    }
    if ((ret = ghm_rgb_image_save_png(img, path, why, sizeof why)) < 0)
        ghm_cli_error(path, "%s", why);
    ghm_rgb_image_free(&img);
    return ret;
}
