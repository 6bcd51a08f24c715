/* check_edges.c - the matcher's building blocks: Sobel edges thinned by non-maximum
 * suppression, grid sampling, Harris corners, the exact distance transform and similarity
 * fits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_distance.h"
#include "ghm_edges.h"
#include "ghm_similarity.h"
#include "test_support.h"

static GhmImage *make_image(int w, int h)
{
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_create(w, h, &img), GHM_OK);
    return img;
}

/* A vertical step between columns 39 and 40: dark on the left, bright on the right. */
START_TEST(test_step_edge_is_one_pixel_wide)
{
    GhmImage *img = make_image(80, 60);
    for (int y = 0; y < 60; y++)
        for (int x = 0; x < 80; x++)
            img->pixels[y * img->stride + x] = x < 40 ? 50 : 150;
    GhmEdgeParams ep = ghm_edge_defaults();
    GhmEdges *e = NULL;
    ck_assert_int_eq(ghm_edges_detect(img, &ep, &e), GHM_OK);
    ck_assert_uint_gt(e->count, 40);
    int per_row[60] = {0};
    for (size_t i = 0; i < e->count; i++) {
        const GhmEdgePoint *p = &e->points[i];
        /* the step lies half-way between pixel centres 39 and 40 */
        ck_assert_msg(fabsf(p->x - 39.5f) < 0.2f, "edge at x=%f", p->x);
        ck_assert_msg(fabsf(p->angle) < 0.05f, "gradient direction %f", p->angle);
        per_row[(int)lrintf(p->y)]++;
    }
    for (int y = 2; y < 58; y++)
        ck_assert_int_eq(per_row[y], 1); /* thinned: exactly one point per row */
    ghm_edges_free(&e);
    ck_assert_ptr_null(e);
    ghm_image_free(&img);
}
END_TEST

/* A bright disc: the thinned contour is a closed line near the true circle with outward
 * gradients, and no pixel of it has a neighbour across the contour (one pixel wide). */
START_TEST(test_disc_contour)
{
    GhmImage *img = make_image(100, 100);
    for (int y = 0; y < 100; y++)
        for (int x = 0; x < 100; x++)
            img->pixels[y * img->stride + x] = hypot(x - 50.0, y - 50.0) < 30.0 ? 200 : 40;
    GhmEdgeParams ep = ghm_edge_defaults();
    GhmEdges *e = NULL;
    ck_assert_int_eq(ghm_edges_detect(img, &ep, &e), GHM_OK);
    ck_assert_uint_gt(e->count, 150); /* circumference ~ 188 pixels */
    ck_assert_uint_lt(e->count, 260);
    for (size_t i = 0; i < e->count; i++) {
        const GhmEdgePoint *p = &e->points[i];
        double r = hypot(p->x - 50.0, p->y - 50.0);
        ck_assert_msg(fabs(r - 29.6) < 0.8, "radius %f", r);
        double inward = atan2(50.0 - p->y, 50.0 - p->x);
        double d = fabs(remainder(p->angle - inward, 2 * 3.14159265358979));
        ck_assert_msg(d < 0.2, "gradient points inward (dark to bright)");
    }
    ghm_edges_free(&e);
    ghm_image_free(&img);
}
END_TEST

START_TEST(test_uniform_and_tiny_images)
{
    GhmEdgeParams ep = ghm_edge_defaults();
    int sizes[][2] = {{1, 1}, {2, 3}, {64, 48}};
    for (int k = 0; k < 3; k++) {
        GhmImage *img = make_image(sizes[k][0], sizes[k][1]);
        memset(img->pixels, 128, (size_t)img->stride * img->height);
        GhmEdges *e = NULL;
        ck_assert_int_eq(ghm_edges_detect(img, &ep, &e), GHM_OK);
        ck_assert_uint_eq(e->count, 0);
        GhmCornerParams cp = ghm_corner_defaults();
        GhmCorner *c = NULL;
        size_t nc = 7;
        ck_assert_int_eq(ghm_corners_detect(e, &cp, &c, &nc), GHM_OK);
        ck_assert_uint_eq(nc, 0);
        free(c);
        ghm_edges_free(&e);
        ghm_image_free(&img);
    }
    ck_assert_int_eq(ghm_edges_detect(NULL, &ep, NULL), GHM_ERR_INVALID);
    /* An image made by hand past the library's limit is refused before a pixel is read. */
    uint8_t pixel = 0;
    GhmImage huge = {20000, 6000, 20000, &pixel};
    GhmEdges *e = NULL;
    ck_assert_int_eq(ghm_edges_detect(&huge, &ep, &e), GHM_ERR_TOO_LARGE);
    ck_assert_ptr_null(e);
}
END_TEST

START_TEST(test_grid_sample)
{
    GhmEdgePoint pts[6] = {{1, 1, 0, 5}, {2, 2, 0, 9}, {12, 1, 0, 1},
                           {13, 2, 0, 2}, {1, 12, 0, 3}, {25, 25, 0, 4}};
    uint32_t idx[6];
    size_t k = 0;
    ck_assert_int_eq(ghm_edges_grid_sample(pts, 6, 30, 30, 10.0, idx, &k), GHM_OK);
    ck_assert_uint_eq(k, 4); /* cells (0,0) (1,0) (0,1) (2,2); the strongest of each */
    uint32_t want[4] = {1, 3, 4, 5};
    for (size_t i = 0; i < k; i++)
        ck_assert_uint_eq(idx[i], want[i]);
    double cell = 0.0;
    ck_assert_int_eq(ghm_edges_sample_capped(pts, 6, 30, 30, 1.0, 2, idx, &k, &cell), GHM_OK);
    ck_assert_uint_le(k, 2);
    ck_assert(cell > 1.0);
}
END_TEST

/* Strength a beats strength b: a NaN is weaker than any number (ghm_edges.h). */
static int stronger(float a, float b)
{
    return !isnan(a) && (isnan(b) || a > b);
}

/* Kept by the rule itself: no point of its cell is stronger, and none before it as strong. */
static int kept_by_rule(const GhmEdgePoint *p, size_t n, size_t i, double cell)
{
    int cx = (int)((p[i].x + 0.5f) / cell), cy = (int)((p[i].y + 0.5f) / cell);
    for (size_t j = 0; j < n; j++)
        if (j != i && (int)((p[j].x + 0.5f) / cell) == cx &&
            (int)((p[j].y + 0.5f) / cell) == cy &&
            (stronger(p[j].strength, p[i].strength) ||
             (!stronger(p[i].strength, p[j].strength) && j < i)))
            return 0;
    return 1;
}

/* The kept indices of a sampling are exactly the rule's, ascending. */
static int wrong_samples(const GhmEdgePoint *pts, size_t n, double cell, const uint32_t *idx,
                         size_t k)
{
    int wrong = 0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        if (kept_by_rule(pts, n, i, cell))
            wrong += at >= k || idx[at++] != i;
    return wrong + (at != k);
}

/* Many points, few strengths (ties), a few cells of many points: the kept indices are exactly
 * the rule's, ascending, at several cell sizes; the capped search's answer is the sampling at
 * its cell. */
START_TEST(test_grid_sample_matches_rule)
{
    enum { N = 3000 };
    GhmEdgePoint *pts = malloc(N * sizeof *pts);
    uint32_t *idx = malloc(N * sizeof *idx), *again = malloc(N * sizeof *again);
    ck_assert(pts && idx && again);
    uint32_t r = 12345;
    for (size_t i = 0; i < N; i++) {
        r = r * 1664525u + 1013904223u;
        pts[i].x = (float)(r >> 8 & 0xFFFF) / 65536.0f * 119.0f;
        r = r * 1664525u + 1013904223u;
        pts[i].y = (float)(r >> 8 & 0xFFFF) / 65536.0f * 79.0f;
        pts[i].angle = 0.0f;
        pts[i].strength = (float)(r >> 28); /* 16 values: many ties */
    }
    const double cells[3] = {1.0, 2.5, 7.0};
    int wrong = 0;
    for (int c = 0; c < 3; c++) {
        size_t k = 0;
        ck_assert_int_eq(ghm_edges_grid_sample(pts, N, 120, 80, cells[c], idx, &k), GHM_OK);
        wrong += wrong_samples(pts, N, cells[c], idx, k);
    }
    ck_assert_int_eq(wrong, 0);
    size_t k = 0, k2 = 0;
    double cell = 0.0;
    ck_assert_int_eq(ghm_edges_sample_capped(pts, N, 120, 80, 1.0, 500, idx, &k, &cell), GHM_OK);
    ck_assert_uint_le(k, 500);
    ck_assert_int_eq(ghm_edges_grid_sample(pts, N, 120, 80, cell, again, &k2), GHM_OK);
    ck_assert_uint_eq(k, k2);
    ck_assert_int_eq(memcmp(idx, again, k * sizeof *idx), 0);
    free(pts), free(idx), free(again);
}
END_TEST

/* Strengths of every sign, both zeros (equal) and NaN (weaker than any number), in cells of a
 * few points: the rule holds for points made by hand, not only by the detector. */
START_TEST(test_grid_sample_any_strength)
{
    enum { N = 400 };
    const float values[8] = {-3.0f, -0.0f, 0.0f, 2.0f, NAN, -INFINITY, INFINITY, -1e-30f};
    GhmEdgePoint pts[N];
    uint32_t idx[N];
    uint32_t r = 777;
    for (size_t i = 0; i < N; i++) {
        r = r * 1664525u + 1013904223u;
        pts[i].x = (float)(r >> 20 & 31);
        pts[i].y = (float)(r >> 12 & 31);
        pts[i].angle = 0.0f;
        pts[i].strength = values[r >> 29];
    }
    int wrong = 0;
    for (double cell = 2.0; cell <= 16.0; cell *= 2.0) {
        size_t k = 0;
        ck_assert_int_eq(ghm_edges_grid_sample(pts, N, 32, 32, cell, idx, &k), GHM_OK);
        wrong += wrong_samples(pts, N, cell, idx, k);
    }
    ck_assert_int_eq(wrong, 0);
}
END_TEST

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* The threshold is the asked quantile of the maxima's strengths, at most half their 90 %
 * quantile, at least the noise floor: with percentile 0 every maximum above the floor is a
 * point, so their sorted strengths give the expected threshold for other percentiles, on
 * either side of 0.9. */
START_TEST(test_threshold_is_the_quantile)
{
    GhmImage *img = ghm_test_load_image("images/rubberwhale1.png");
    GhmEdgeParams ep = ghm_edge_defaults();
    GhmEdges *all = NULL, *e = NULL;
    ep.percentile = 0.0;
    ck_assert_int_eq(ghm_edges_detect(img, &ep, &all), GHM_OK);
    size_t n = all->count;
    ck_assert_uint_gt(n, 1000);
    float *v = malloc(n * sizeof *v), floor_mag = all->threshold;
    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < n; i++)
        v[i] = all->points[i].strength;
    qsort(v, n, sizeof *v, cmp_float);
    const double percentiles[3] = {0.35, 0.9, 0.97};
    for (int t = 0; t < 3; t++) {
        ep.percentile = percentiles[t];
        ck_assert_int_eq(ghm_edges_detect(img, &ep, &e), GHM_OK);
        float q = v[(size_t)(percentiles[t] * (double)(n - 1))];
        float strong = 0.5f * v[(size_t)(0.9 * (double)(n - 1))];
        float want = q > strong ? strong : q;
        ck_assert_float_eq(e->threshold, want > floor_mag ? want : floor_mag);
        ghm_edges_free(&e);
    }
    free(v);
    ghm_edges_free(&all);
    ghm_image_free(&img);
}
END_TEST

/* A bright square: its four corners are the strongest Harris responses. */
START_TEST(test_corners_of_square)
{
    GhmImage *img = make_image(120, 100);
    for (int y = 0; y < 100; y++)
        for (int x = 0; x < 120; x++)
            img->pixels[y * img->stride + x] = (x >= 30 && x < 90 && y >= 20 && y < 70) ? 220 : 30;
    GhmEdgeParams ep = ghm_edge_defaults();
    GhmEdges *e = NULL;
    ck_assert_int_eq(ghm_edges_detect(img, &ep, &e), GHM_OK);
    GhmCornerParams cp = ghm_corner_defaults();
    cp.max_corners = 4;
    GhmCorner *c = NULL;
    size_t nc = 0;
    ck_assert_int_eq(ghm_corners_detect(e, &cp, &c, &nc), GHM_OK);
    ck_assert_uint_eq(nc, 4);
    double truth[4][2] = {{29.5, 19.5}, {89.5, 19.5}, {29.5, 69.5}, {89.5, 69.5}};
    for (int t = 0; t < 4; t++) {
        double best = 1e9;
        for (size_t i = 0; i < nc; i++)
            best = fmin(best, hypot(c[i].x - truth[t][0], c[i].y - truth[t][1]));
        ck_assert_msg(best < 2.5, "corner %d missed by %f", t, best);
    }
    free(c);
    ghm_edges_free(&e);
    ghm_image_free(&img);
}
END_TEST

/* The distance transform against brute force on random seeds, including an empty image. */
START_TEST(test_distance_transform_exact)
{
    int w = 57, h = 43;
    size_t npix = (size_t)w * h;
    int32_t *seeds = malloc(npix * sizeof *seeds), *near = malloc(npix * sizeof *near);
    float *d2 = malloc(npix * sizeof *d2);
    uint64_t r = 12345;
    for (int trial = 0; trial < 4; trial++) {
        size_t ns = 0;
        for (size_t i = 0; i < npix; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            int on = (int)((r >> 33) % 1000) < (trial == 0 ? 0 : trial == 1 ? 2 : 40);
            seeds[i] = on ? (int32_t)i : -1;
            ns += on;
        }
        ck_assert_int_eq(ghm_distance_transform(w, h, seeds, near, d2), GHM_OK);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                size_t i = (size_t)y * w + x;
                double best = INFINITY;
                for (size_t j = 0; j < npix; j++)
                    if (seeds[j] >= 0) {
                        double dx = x - (int)(j % w), dy = y - (int)(j / w);
                        best = fmin(best, dx * dx + dy * dy);
                    }
                if (ns == 0) {
                    ck_assert_int_eq(near[i], -1);
                    continue;
                }
                ck_assert_int_ge(near[i], 0);
                ck_assert_int_ge(seeds[near[i]], 0);
                double dx = x - near[i] % w, dy = y - near[i] / w;
                ck_assert_msg(fabs(dx * dx + dy * dy - best) < 1e-6, "pixel %d,%d", x, y);
                ck_assert(fabs(d2[i] - best) < 1e-3);
            }
    }
    free(seeds);
    free(near);
    free(d2);
}
END_TEST

START_TEST(test_similarity_fits_exact)
{
    GhmSimilarity t = {0.9 * cos(0.7), 0.9 * sin(0.7), 31.0, -12.5};
    enum { N = 40 };
    double q[N][2], r[N][2], nrm[N][2];
    for (int i = 0; i < N; i++) {
        q[i][0] = 10.0 * cos(i * 0.9) + i;
        q[i][1] = 7.0 * sin(i * 1.3) - 0.5 * i;
        ghm_similarity_apply(&t, q[i][0], q[i][1], &r[i][0], &r[i][1]);
        nrm[i][0] = cos(i * 0.37);
        nrm[i][1] = sin(i * 0.37);
    }
    GhmSimilarity s;
    ck_assert_int_eq(ghm_similarity_from_bases(q[0], q[5], r[0], r[5], &s), GHM_OK);
    ck_assert(fabs(s.a - t.a) < 1e-9 && fabs(s.b - t.b) < 1e-9 && fabs(s.tx - t.tx) < 1e-9);
    ck_assert_int_eq(ghm_similarity_fit_points((const double(*)[2])q, (const double(*)[2])r,
                                               NULL, N, &s),
                     GHM_OK);
    ck_assert(fabs(s.a - t.a) < 1e-9 && fabs(s.b - t.b) < 1e-9 && fabs(s.ty - t.ty) < 1e-9);
    /* point to line: slide each target along its line; the fit must not notice */
    double rs[N][2];
    for (int i = 0; i < N; i++) {
        rs[i][0] = r[i][0] - 3.0 * nrm[i][1];
        rs[i][1] = r[i][1] + 3.0 * nrm[i][0];
    }
    ck_assert_int_eq(ghm_similarity_fit_lines((const double(*)[2])q, (const double(*)[2])rs,
                                              (const double(*)[2])nrm, NULL, N, 0.0, &s),
                     GHM_OK);
    ck_assert(fabs(s.a - t.a) < 1e-9 && fabs(s.b - t.b) < 1e-9 && fabs(s.tx - t.tx) < 1e-7);
    ck_assert(fabs(ghm_similarity_scale(&s) - 0.9) < 1e-9);
    ck_assert(fabs(ghm_similarity_rotation_deg(&s) - 0.7 * 180.0 / 3.14159265358979) < 1e-7);
    GhmSimilarity inv;
    ck_assert_int_eq(ghm_similarity_invert(&t, &inv), GHM_OK);
    double x, y;
    ghm_similarity_apply(&t, 3.0, 4.0, &x, &y);
    ghm_similarity_apply(&inv, x, y, &x, &y);
    ck_assert(fabs(x - 3.0) < 1e-9 && fabs(y - 4.0) < 1e-9);
    /* degenerate inputs are refused */
    ck_assert_int_eq(ghm_similarity_from_bases(q[0], q[0], r[0], r[1], &s), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_similarity_fit_points((const double(*)[2])q, (const double(*)[2])r,
                                               NULL, 0, &s),
                     GHM_ERR_INVALID);
}
END_TEST

static Suite *edges_suite(void)
{
    Suite *s = suite_create("edges");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_step_edge_is_one_pixel_wide);
    tcase_add_test(core, test_disc_contour);
    tcase_add_test(core, test_uniform_and_tiny_images);
    tcase_add_test(core, test_grid_sample);
    tcase_add_test(core, test_grid_sample_matches_rule);
    tcase_add_test(core, test_grid_sample_any_strength);
    tcase_add_test(core, test_threshold_is_the_quantile);
    tcase_add_test(core, test_corners_of_square);
    suite_add_tcase(s, core);
    TCase *geometry = tcase_create("geometry");
    tcase_add_test(geometry, test_distance_transform_exact);
    tcase_add_test(geometry, test_similarity_fits_exact);
    suite_add_tcase(s, geometry);
    return s;
}

int main(void)
{
    return ghm_test_main(edges_suite());
}
