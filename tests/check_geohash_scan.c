/* check_geohash_scan.c - a reference built for one query, whose votes are counted by scanning
 * its bases without the signature table (vision/match/geohash_scan.c), against the table: the
 * same candidates and counts on point sets, and every result field of the matcher, made from
 * an image or loaded from a file (CPU backend). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geohash_internal.h"
#include "ghm_geohash.h"
#include "ghm_match.h"
#include "test_support.h"

/* --- points: the geometric hashing layer ------------------------------------------------- */

/* A reference built without its table (for one query) is scanned: the same candidates and
 * counts as the table gives, for a query of every basis point and for one of two (a query
 * basis or two, each of which a matching reference basis votes for many times over). */
static void scan_as_table(GhmContext *ctx, const GhmGeoPoint *rb, size_t nb,
                          const GhmGeoPoint *rc, size_t nc, const GhmGeoPoint *qb, size_t nqb,
                          const GhmGeoPoint *qc, size_t nqc)
{
    GhmGeoParams gp = ghm_geo_defaults();
    GhmGeoRef *refs[2] = {NULL, NULL};
    GhmGeoCandidate cand[2][64];
    size_t n[2] = {0, 0}, entries = 0, keys = 0;
    GhmGeoStats st[2];
    for (int k = 0; k < 2; k++) {
        GhmGeoVoter *v = NULL;
        ck_assert_int_eq(ghmi_geo_ref_build(ctx, rb, nb, rc, nc, NULL, 0, hypot(500, 380), &gp,
                                            k == 0, &refs[k]),
                         GHM_OK);
        ck_assert_int_eq(ghm_geo_voter_create(refs[k], &v), GHM_OK);
        ck_assert_int_eq(ghm_geo_vote(v, qb, nqb, qc, nqc, &gp, 1, cand[k], 64, &n[k], &st[k]),
                         GHM_OK);
        ck_assert_int_eq(st[k].scanned, k);
        ghm_geo_voter_free(&v);
    }
    ghm_geo_ref_sizes(refs[0], NULL, &entries, &keys);
    ck_assert_uint_gt(n[0], 0);
    ck_assert_uint_eq(n[0], n[1]);
    ck_assert_mem_eq(cand[0], cand[1], n[0] * sizeof cand[0][0]);
    ck_assert_uint_eq(st[0].votes, st[1].votes);
    ck_assert_uint_eq(st[0].lookups, st[1].lookups);
    ck_assert_uint_eq(st[1].ref_entries, entries);
    ck_assert_uint_eq(st[1].ref_keys, keys);
    ghm_geo_ref_free(&refs[0]);
    ghm_geo_ref_free(&refs[1]);
}

START_TEST(test_scan_votes_as_table)
{
    enum { NB = 40, NC = 400 };
    GhmGeoPoint rb[NB], rc[NC];
    uint64_t r = 7;
    for (int i = 0; i < NB + NC; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        GhmGeoPoint p = {20.0f + (float)((r >> 20) % 4600) / 10.0f,
                         20.0f + (float)((r >> 40) % 3400) / 10.0f,
                         (float)((r >> 8) % 628) / 100.0f - 3.14f};
        if (i < NB)
            rb[i] = p;
        else
            rc[i - NB] = p;
    }
    for (int threads = 1; threads <= 3; threads += 2) {
        GhmContextOptions opt = ghm_context_defaults();
        opt.backend = GHM_BACKEND_CPU;
        opt.threads = threads;
        GhmContext *ctx = ghm_test_context_opt(opt);
        scan_as_table(ctx, rb, NB, rc, NC, rb, NB, rc, NC);
        /* the two nearest basis points of rb[0], so that they pair as in the reference */
        GhmGeoPoint two[2] = {rb[0], rb[1]};
        double best = INFINITY;
        for (int i = 1; i < NB; i++) {
            double d = hypot(rb[i].x - rb[0].x, rb[i].y - rb[0].y);
            if (d < best && d > 30.0) {
                best = d;
                two[1] = rb[i];
            }
        }
        scan_as_table(ctx, rb, NB, rc, NC, two, 2, rc, NC);
        /* Coded points symmetric about the middle of two basis points (each mirrored, its
         * direction turned half way round): the query's two bases, one each way, have the
         * same signatures, so one reference basis votes for every query basis, many times. */
        GhmGeoPoint ab[2] = {{200.0f, 200.0f, 0.0f}, {260.0f, 200.0f, 0.0f}}, sym[2 * 60];
        for (int i = 0; i < 60; i++) {
            sym[2 * i] = rc[i];
            sym[2 * i].x = 170.0f + (float)(i % 10) * 12.0f;
            sym[2 * i].y = 170.0f + (float)(i / 10) * 11.0f;
            sym[2 * i + 1].x = 460.0f - sym[2 * i].x;
            sym[2 * i + 1].y = 400.0f - sym[2 * i].y;
            sym[2 * i + 1].angle = sym[2 * i].angle + (sym[2 * i].angle < 0 ? 3.14159265f
                                                                            : -3.14159265f);
        }
        scan_as_table(ctx, ab, 2, sym, 120, ab, 2, sym, 120);
        ghm_context_free(&ctx);
    }
}
END_TEST

/* --- matcher: images and reference files ------------------------------------------------ */

static GhmMatcher *matcher_for(GhmContext *ctx, const GhmImage *ref)
{
    GhmMatchParams mp = ghm_match_defaults();
    GhmMatcher *m = NULL;
    int ret = ghm_matcher_create(ctx, ref, &mp, &m);
    ck_assert_msg(ret == GHM_OK, "matcher: %s", ghm_strerror(ret));
    return m;
}

/* Every field a table and a scan of the same reference both give alike. */
static void assert_same_result(const GhmMatchResult *a, const GhmMatchResult *b)
{
    ck_assert_int_eq(a->found, b->found);
    ck_assert_mem_eq(a->matrix, b->matrix, sizeof a->matrix);
    ck_assert_uint_eq(a->votes, b->votes);
    ck_assert_uint_eq(a->votes_cast, b->votes_cast);
    ck_assert_uint_eq(a->lookups, b->lookups);
    ck_assert_uint_eq(a->candidates, b->candidates);
    ck_assert_uint_eq(a->inliers, b->inliers);
    ck_assert_uint_eq(a->ref_bases, b->ref_bases);
    ck_assert_uint_eq(a->ref_entries, b->ref_entries);
    ck_assert_uint_eq(a->ref_keys, b->ref_keys);
    ck_assert(a->confidence == b->confidence);
}

/* A reference for one query (its votes counted by scanning its bases, without the table) gives
 * every result field a table gives, for one thread and three, queried twice, through a clone,
 * and its signatures are the table's. */
static void one_query_as_table(int threads, const char *ref_path, const char *query_path)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = GHM_BACKEND_CPU;
    opt.threads = threads;
    GhmContext *ctx = ghm_test_context_opt(opt);
    GhmImage *ref = ghm_test_load_image(ref_path), *q = ghm_test_load_image(query_path);
    GhmMatchParams mp = ghm_match_defaults();
    GhmMatcher *table = matcher_for(ctx, ref), *one = NULL, *clone = NULL;
    ck_assert_int_eq(ghm_matcher_create_for_one_query(ctx, ref, &mp, &one), GHM_OK);
    ck_assert_int_eq(ghm_matcher_clone(ctx, one, &clone), GHM_OK);
    GhmMatchResult want, got;
    ck_assert_int_eq(ghm_matcher_match(table, q, &want), GHM_OK);
    ck_assert_uint_gt(want.votes_cast, 0);
    ck_assert_uint_gt(want.ref_entries, 0);
    for (int again = 0; again < 2; again++) {
        ck_assert_int_eq(ghm_matcher_match(one, q, &got), GHM_OK);
        assert_same_result(&want, &got);
    }
    ck_assert_int_eq(ghm_matcher_match(clone, q, &got), GHM_OK);
    assert_same_result(&want, &got);
    uint32_t *ka = NULL, *kb = NULL;
    size_t na = 0, nb = 0;
    ck_assert_int_eq(ghm_matcher_signatures(table, &ka, &na), GHM_OK);
    ck_assert_int_eq(ghm_matcher_signatures(one, &kb, &nb), GHM_OK);
    ck_assert_uint_eq(na, nb);
    ck_assert_mem_eq(ka, kb, na * sizeof *ka);
    free(ka);
    free(kb);
    ghm_matcher_free(&clone);
    ghm_matcher_free(&one);
    ghm_matcher_free(&table);
    ghm_image_free(&ref);
    ghm_image_free(&q);
    ghm_context_free(&ctx);
}

START_TEST(test_one_query_same_as_table)
{
    for (int threads = 1; threads <= 3; threads += 2) {
        one_query_as_table(threads, "images/butterfly.jpg", "pairs/dev_00_query.png");
        one_query_as_table(threads, "images/box_in_scene.png", "images/box.png");
    }
}
END_TEST

/* A reference file loaded for one query is scanned and answers as the one loaded whole. */
START_TEST(test_one_query_from_file)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    GhmImage *ref = ghm_test_load_image("images/butterfly.jpg");
    GhmImage *q = ghm_test_load_image("pairs/dev_03_query.jpg");
    GhmMatcher *m = matcher_for(ctx, ref), *whole = NULL, *one = NULL;
    const char *path = ghm_test_tmp("butterfly.ghm");
    char why[256] = "";
    ck_assert_int_eq(ghm_matcher_save(m, path, why, sizeof why), GHM_OK);
    ck_assert_int_eq(ghm_matcher_load(ctx, path, NULL, &whole, why, sizeof why), GHM_OK);
    ck_assert_int_eq(ghm_matcher_load_for_one_query(ctx, path, NULL, &one, why, sizeof why),
                     GHM_OK);
    GhmMatchResult a, b;
    ck_assert_int_eq(ghm_matcher_match(whole, q, &a), GHM_OK);
    ck_assert_int_eq(ghm_matcher_match(one, q, &b), GHM_OK);
    ck_assert(a.found && b.ref_scanned && !a.ref_scanned);
    assert_same_result(&a, &b);
    ghm_matcher_free(&one);
    ghm_matcher_free(&whole);
    ghm_matcher_free(&m);
    ghm_image_free(&ref);
    ghm_image_free(&q);
    ghm_context_free(&ctx);
}
END_TEST

static Suite *geohash_scan_suite(void)
{
    Suite *s = suite_create("geohash_scan");
    TCase *points = tcase_create("points");
    tcase_add_test(points, test_scan_votes_as_table);
    suite_add_tcase(s, points);
    TCase *matcher = tcase_create("matcher");
    tcase_set_timeout(matcher, 120);
    tcase_add_checked_fixture(matcher, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_add_test(matcher, test_one_query_same_as_table);
    tcase_add_test(matcher, test_one_query_from_file);
    suite_add_tcase(s, matcher);
    return s;
}

int main(void)
{
    return ghm_test_main(geohash_scan_suite());
}
