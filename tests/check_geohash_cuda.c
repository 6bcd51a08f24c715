/* check_geohash_cuda.c - geometric hashing on the CUDA backend against the CPU backend: the
 * device voting path is the one taken, its votes and candidates are identical to the CPU's (on
 * exact point sets, on real features, in several batches of query bases), the edge detector's
 * device stages give the CPU's edges bit for bit, and the image matcher gives the same
 * transforms (within a pixel at the query corners) and meets the corner criterion of
 * data/pairs/truth.json on CUDA. One TCase, "cuda"; without a device it skips. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_edges.h"
#include "ghm_geohash.h"
#include "ghm_match.h"
#include "ghm_similarity.h"
#include "test_support.h"
#include "edges_internal.h"
#include "vision_backend_internal.h"

/* A point set for geo_vote: basis and coded points on both sides. */
typedef struct Side {
    GhmGeoPoint *basis, *coded;
    size_t nb, nc;
} Side;

static void side_free(Side *s)
{
    free(s->basis);
    free(s->coded);
}

typedef struct Votes {
    GhmGeoCandidate *cand;
    size_t ncand;
    GhmGeoStats st;
    size_t bases, entries, keys;
} Votes;

/* Builds the reference tables on a context of the given backend and votes for the query once;
 * every candidate (max_cand of them at most) comes back. */
static Votes vote_on(GhmBackendKind backend, const Side *ref, const Side *q, double diag,
                     const GhmGeoParams *gp, size_t max_cand)
{
    GhmContext *ctx = ghm_test_context(backend);
    GhmGeoRef *r = NULL;
    GhmGeoVoter *v = NULL;
    Votes out = {0};
    out.cand = calloc(max_cand, sizeof *out.cand);
    ck_assert_ptr_nonnull(out.cand);
    ck_assert_int_eq(ghm_geo_ref_build(ctx, ref->basis, ref->nb, ref->coded, ref->nc, diag, gp, &r),
                     GHM_OK);
    ghm_geo_ref_sizes(r, &out.bases, &out.entries, &out.keys);
    ck_assert_int_eq(ghm_geo_voter_create(r, &v), GHM_OK);
    ck_assert_int_eq(ghm_geo_vote(v, q->basis, q->nb, q->coded, q->nc, gp, 3, out.cand, max_cand,
                                  &out.ncand, &out.st),
                     GHM_OK);
    ghm_geo_voter_free(&v);
    ghm_geo_ref_free(&r);
    ghm_context_free(&ctx);
    return out;
}

/* Every candidate, every count: the same on both backends. */
static void assert_same_votes(const Votes *cpu, const Votes *gpu, const char *what)
{
    ck_assert_uint_eq(cpu->bases, gpu->bases);
    ck_assert_uint_eq(cpu->entries, gpu->entries);
    ck_assert_uint_eq(cpu->keys, gpu->keys);
    ck_assert_uint_eq(cpu->st.query_bases, gpu->st.query_bases);
    ck_assert_msg(cpu->st.lookups == gpu->st.lookups, "%s: look-ups cpu %zu cuda %zu", what,
                  cpu->st.lookups, gpu->st.lookups);
    ck_assert_msg(cpu->st.votes == gpu->st.votes, "%s: votes cpu %llu cuda %llu", what,
                  (unsigned long long)cpu->st.votes, (unsigned long long)gpu->st.votes);
    ck_assert_msg(cpu->ncand == gpu->ncand, "%s: candidates cpu %zu cuda %zu", what, cpu->ncand,
                  gpu->ncand);
    for (size_t i = 0; i < cpu->ncand; i++) {
        const GhmGeoCandidate *a = &cpu->cand[i], *b = &gpu->cand[i];
        ck_assert_msg(a->votes == b->votes && a->ref_i == b->ref_i && a->ref_j == b->ref_j &&
                          a->q_k == b->q_k && a->q_l == b->q_l,
                      "%s: candidate %zu: cpu %u (%u,%u)<-(%u,%u), cuda %u (%u,%u)<-(%u,%u)", what,
                      i, a->votes, a->ref_i, a->ref_j, a->q_k, a->q_l, b->votes, b->ref_i,
                      b->ref_j, b->q_k, b->q_l);
    }
}

/* Random points and the same points under a similarity (as check_geohash.c's core test). */
static void random_sides(int nb, int nc, Side *ref, Side *q)
{
    GhmSimilarity s = {0.8 * cos(2.0), 0.8 * sin(2.0), 250.0, 40.0}, inv;
    ck_assert_int_eq(ghm_similarity_invert(&s, &inv), GHM_OK);
    ref->nb = q->nb = (size_t)nb;
    ref->nc = q->nc = (size_t)nc;
    ref->basis = malloc((size_t)nb * sizeof *ref->basis);
    q->basis = malloc((size_t)nb * sizeof *q->basis);
    ref->coded = malloc((size_t)nc * sizeof *ref->coded);
    q->coded = malloc((size_t)nc * sizeof *q->coded);
    ck_assert(ref->basis && q->basis && ref->coded && q->coded);
    uint64_t r = 99;
    for (int i = 0; i < nb + nc; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        double x = 20.0 + (double)((r >> 20) % 4600) / 10.0;
        double y = 20.0 + (double)((r >> 40) % 3400) / 10.0;
        GhmGeoPoint p = {(float)x, (float)y, (float)((r >> 8) % 628) / 100.0f - 3.14f};
        double qx, qy;
        ghm_similarity_apply(&inv, x, y, &qx, &qy);
        GhmGeoPoint pq = {(float)qx, (float)qy, p.angle - 2.0f};
        if (i < nb) {
            ref->basis[i] = p;
            q->basis[i] = pq;
        } else {
            ref->coded[i - nb] = p;
            q->coded[i - nb] = pq;
        }
    }
}

/* The matcher's features of an image: corners as basis points, grid-thinned edge points. */
static Side image_side(const char *rel, size_t max_corners)
{
    GhmImage *img = ghm_test_load_image(rel);
    GhmMatchParams mp = ghm_match_defaults();
    GhmEdges *e = NULL;
    GhmCorner *c = NULL;
    size_t ncorners = 0, kept = 0;
    ck_assert_int_eq(ghm_edges_detect(img, &mp.edges, &e), GHM_OK);
    GhmCornerParams cp = mp.corners;
    cp.max_corners = max_corners;
    ck_assert_int_eq(ghm_corners_detect(e, &cp, &c, &ncorners), GHM_OK);
    uint32_t *idx = malloc((e->count ? e->count : 1) * sizeof *idx);
    ck_assert_ptr_nonnull(idx);
    ck_assert_int_eq(ghm_edges_sample_capped(e->points, e->count, e->width, e->height,
                                             mp.point_cell, mp.max_points, idx, &kept, NULL),
                     GHM_OK);
    Side s = {malloc((ncorners ? ncorners : 1) * sizeof *s.basis),
              malloc((kept ? kept : 1) * sizeof *s.coded), ncorners, kept};
    ck_assert(s.basis && s.coded);
    for (size_t i = 0; i < ncorners; i++)
        s.basis[i] = (GhmGeoPoint){c[i].x, c[i].y, 0.0f};
    for (size_t i = 0; i < kept; i++) {
        const GhmEdgePoint *p = &e->points[idx[i]];
        s.coded[i] = (GhmGeoPoint){p->x, p->y, p->angle};
    }
    free(idx);
    free(c);
    ghm_edges_free(&e);
    ghm_image_free(&img);
    return s;
}

/* The CUDA backend carries the vision kernels, the CPU backend does not: the GPU path is the
 * one the CUDA tests below exercise. */
START_TEST(test_device_path_selected)
{
    GHM_REQUIRE_CUDA();
    GhmContext *cpu = ghm_test_context(GHM_BACKEND_CPU), *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    ck_assert_ptr_null(ghmi_vision_ops(cpu));
    const GhmVisionOps *ops = ghmi_vision_ops(gpu);
    ck_assert_ptr_nonnull(ops);
    ck_assert_ptr_nonnull(ops->geo_vote);
    ck_assert_ptr_nonnull(ops->geo_best);
    ghm_context_free(&cpu);
    ghm_context_free(&gpu);
}
END_TEST

START_TEST(test_votes_identical_synthetic)
{
    GHM_REQUIRE_CUDA();
    Side ref, q;
    random_sides(40, 400, &ref, &q);
    GhmGeoParams gp = ghm_geo_defaults();
    Votes a = vote_on(GHM_BACKEND_CPU, &ref, &q, hypot(500, 380), &gp, 2000);
    Votes b = vote_on(GHM_BACKEND_CUDA, &ref, &q, hypot(500, 380), &gp, 2000);
    ck_assert_uint_gt(a.ncand, 100);
    ck_assert_uint_gt(a.st.votes, 1000);
    assert_same_votes(&a, &b, "synthetic");
    /* the true correspondence wins on both */
    ck_assert_uint_eq(b.cand[0].ref_i, b.cand[0].q_k);
    ck_assert_uint_eq(b.cand[0].ref_j, b.cand[0].q_l);
    free(a.cand);
    free(b.cand);
    side_free(&ref);
    side_free(&q);
}
END_TEST

/* So many query and reference bases that the vote array is filled in several device batches
 * (more than 32 M cells), and fewer direction bins (another key space). */
START_TEST(test_votes_identical_batched)
{
    GHM_REQUIRE_CUDA();
    Side ref, q;
    random_sides(160, 40, &ref, &q);
    GhmGeoParams gp = ghm_geo_defaults();
    gp.neighbours = 64; /* every point with its 64 nearest: 10 240 bases a side */
    gp.query_neighbours = 64;
    gp.query_bases = 30000;
    gp.angle_bins = 8;
    Votes a = vote_on(GHM_BACKEND_CPU, &ref, &q, hypot(500, 380), &gp, 60000);
    Votes b = vote_on(GHM_BACKEND_CUDA, &ref, &q, hypot(500, 380), &gp, 60000);
    ck_assert_msg(a.bases * a.st.query_bases > ((size_t)32 << 20), "%zu x %zu cells: one batch",
                  a.bases, a.st.query_bases);
    assert_same_votes(&a, &b, "batched");
    free(a.cand);
    free(b.cand);
    side_free(&ref);
    side_free(&q);
}
END_TEST

/* Real features, a dense reference (millions of signatures) and the pairs' queries. */
START_TEST(test_votes_identical_images)
{
    GHM_REQUIRE_CUDA();
    static const char *pairs[][2] = {
        {"images/box_in_scene.png", "images/box.png"},
        {"images/butterfly.jpg", "pairs/dev_00_query.png"},
        {"images/rubberwhale1.png", "pairs/dev_04_query.png"},
        {"images/Blender_Suzanne1.jpg", "images/Blender_Suzanne2.jpg"},
    };
    GhmMatchParams mp = ghm_match_defaults();
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        GhmImage *img = ghm_test_load_image(pairs[i][0]);
        double diag = hypot(img->width, img->height);
        ghm_image_free(&img);
        Side ref = image_side(pairs[i][0], mp.corners.max_corners);
        Side q = image_side(pairs[i][1], mp.query_corners);
        Votes a = vote_on(GHM_BACKEND_CPU, &ref, &q, diag, &mp.geo, 1200);
        Votes b = vote_on(GHM_BACKEND_CUDA, &ref, &q, diag, &mp.geo, 1200);
        ck_assert_uint_gt(a.st.votes, 10000);
        assert_same_votes(&a, &b, pairs[i][1]);
        free(a.cand);
        free(b.cand);
        side_free(&ref);
        side_free(&q);
    }
}
END_TEST

/* The edge detector's device stages give the CPU's edges bit for bit: gradients, threshold,
 * every point and the pixel map, on photos, a JPEG, a tiny and a blank image, and without blur. */
START_TEST(test_edges_identical)
{
    GHM_REQUIRE_CUDA();
    static const char *images[] = {"images/box_in_scene.png", "images/rubberwhale1.png",
                                   "pairs/dev_03_query.jpg", "images/Blender_Suzanne2.jpg"};
    GhmContext *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmImage *tiny = NULL, *blank = NULL;
    ck_assert_int_eq(ghm_image_create(2, 5, &tiny), GHM_OK);
    ck_assert_int_eq(ghm_image_create(64, 48, &blank), GHM_OK);
    memset(blank->pixels, 77, (size_t)blank->stride * blank->height);
    for (size_t k = 0; k < sizeof images / sizeof images[0] + 3; k++) {
        GhmImage *own = k < 4 ? ghm_test_load_image(images[k]) : NULL;
        const GhmImage *img = own ? own : k == 4 ? tiny : blank;
        GhmEdgeParams ep = ghm_edge_defaults();
        if (k == 6) { /* no blur, on a photo */
            own = ghm_test_load_image(images[0]);
            img = own;
            ep.blur_sigma = 0.0;
        }
        GhmEdges *a = NULL, *b = NULL;
        ck_assert_int_eq(ghm_edges_detect(img, &ep, &a), GHM_OK);
        ck_assert_int_eq(ghm_edges_detect_ctx(gpu, img, &ep, &b), GHM_OK);
        size_t npix = (size_t)img->width * img->height;
        ck_assert_msg(a->count == b->count, "image %zu: %zu points on the CPU, %zu on CUDA", k,
                      a->count, b->count);
        ck_assert(a->threshold == b->threshold && a->noise == b->noise);
        ck_assert_msg(memcmp(a->gx, b->gx, npix * sizeof *a->gx) == 0, "image %zu: gx", k);
        ck_assert_msg(memcmp(a->gy, b->gy, npix * sizeof *a->gy) == 0, "image %zu: gy", k);
        ck_assert_mem_eq(a->pixel_point, b->pixel_point, npix * sizeof *a->pixel_point);
        for (size_t i = 0; i < a->count; i++)
            ck_assert_msg(a->points[i].x == b->points[i].x && a->points[i].y == b->points[i].y &&
                              a->points[i].angle == b->points[i].angle &&
                              a->points[i].strength == b->points[i].strength,
                          "image %zu point %zu: (%.6f, %.6f) vs (%.6f, %.6f)", k, i,
                          a->points[i].x, a->points[i].y, b->points[i].x, b->points[i].y);
        ghm_edges_free(&a);
        ghm_edges_free(&b);
        ghm_image_free(&own);
    }
    ghm_image_free(&tiny);
    ghm_image_free(&blank);
    ghm_context_free(&gpu);
}
END_TEST

/* The device chain's corner candidates, kept as the CPU keeps them, are the CPU's corners; its
 * grid sampling keeps the CPU's points for cells of one pixel and up. */
START_TEST(test_corners_and_sampling_identical)
{
    GHM_REQUIRE_CUDA();
    static const char *images[] = {"images/box_in_scene.png", "images/rubberwhale1.png"};
    GhmContext *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    const GhmVisionOps *ops = ghmi_vision_ops(gpu);
    for (size_t k = 0; k < 2; k++) {
        GhmImage *img = ghm_test_load_image(images[k]);
        GhmEdgeParams ep = ghm_edge_defaults();
        GhmCornerParams cp = ghm_corner_defaults();
        GhmEdges *e = NULL;
        GhmCorner *c = NULL, *dc = NULL;
        size_t nc = 0, ndc = 0;
        ck_assert_int_eq(ghm_edges_detect(img, &ep, &e), GHM_OK);
        ck_assert_int_eq(ghm_corners_detect(e, &cp, &c, &nc), GHM_OK);
        GhmFeatureParams fp;
        GhmFeatureWorkspace *ws = NULL;
        GhmDeviceFeatures f;
        ck_assert_int_eq(ghmi_feature_params(&ep, &cp, img->width, img->height, &fp), GHM_OK);
        ck_assert_int_eq(ops->features_create(gpu, &ws), GHM_OK);
        ck_assert_int_eq(ops->features_run(gpu, ws, img->pixels, img->width, img->height,
                                           img->stride, &fp, &f), GHM_OK);
        ck_assert_uint_eq(f.npoints, e->count);
        GhmCornerCand *cand = malloc((f.ncand + 1) * sizeof *cand);
        ck_assert_int_eq(ghm_buffer_download(gpu, cand, f.cand, f.ncand * sizeof *cand), GHM_OK);
        ck_assert_int_eq(ghmi_corners_select(cand, f.ncand, img->width, img->height, &cp, &dc,
                                             &ndc), GHM_OK);
        ck_assert_uint_eq(ndc, nc);
        for (size_t i = 0; i < nc; i++)
            ck_assert_msg(c[i].x == dc[i].x && c[i].y == dc[i].y &&
                              c[i].response == dc[i].response,
                          "%s corner %zu: (%.3f, %.3f) vs (%.3f, %.3f)", images[k], i, c[i].x,
                          c[i].y, dc[i].x, dc[i].y);
        static const double cells[] = {1.0, 2.0, 4.0, 7.5, 33.3};
        uint32_t *a = malloc((e->count + 1) * sizeof *a), *b = malloc((e->count + 1) * sizeof *b);
        void *dev = NULL;
        ck_assert_int_eq(ghm_buffer_alloc(gpu, (e->count + 1) * sizeof *b, &dev), GHM_OK);
        for (size_t j = 0; j < sizeof cells / sizeof cells[0]; j++) {
            size_t na = 0, nb = 0;
            ck_assert_int_eq(ghm_edges_grid_sample(e->points, e->count, img->width, img->height,
                                                   cells[j], a, &na), GHM_OK);
            ck_assert_int_eq(ops->features_sample(gpu, ws, cells[j], dev, &nb), GHM_OK);
            ck_assert_int_eq(ghm_buffer_download(gpu, b, dev, nb * sizeof *b), GHM_OK);
            ck_assert_msg(na == nb, "%s cell %.1f: %zu kept on the CPU, %zu on CUDA", images[k],
                          cells[j], na, nb);
            ck_assert_mem_eq(a, b, na * sizeof *a);
        }
        ghm_buffer_free(gpu, &dev);
        ops->features_free(gpu, &ws);
        free(a);
        free(b);
        free(cand);
        free(c);
        free(dc);
        ghm_edges_free(&e);
        ghm_image_free(&img);
    }
    ghm_context_free(&gpu);
}
END_TEST

/* data/pairs/truth.json on both backends: found on CUDA within the corner criterion, the same
 * votes, and matrices within a pixel of the CPU's at the query corners. */
START_TEST(test_known_pairs_both_backends)
{
    GHM_REQUIRE_CUDA();
    GhmTestPair *pairs = ghm_test_pairs_load("pairs", 6);
    GhmContext *cpu = ghm_test_context(GHM_BACKEND_CPU), *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmMatchParams mp = ghm_match_defaults();
    for (size_t i = 0; i < 6; i++) {
        const char *id = pairs[i].id;
        const GhmImage *ref = pairs[i].ref, *query = pairs[i].query;
        const double(*t)[3] = pairs[i].truth;
        GhmMatchResult res[2];
        GhmContext *ctxs[2] = {cpu, gpu};
        for (int k = 0; k < 2; k++) {
            GhmMatcher *m = NULL;
            ck_assert_int_eq(ghm_matcher_create(ctxs[k], ref, &mp, &m), GHM_OK);
            ck_assert_int_eq(ghm_matcher_match(m, query, &res[k]), GHM_OK);
            ghm_matcher_free(&m);
        }
        double limit = 0.02 * hypot(ref->width, ref->height);
        double truth_err = ghm_test_corner_error(res[1].matrix, t, query->width, query->height);
        double agree =
            ghm_test_corner_error(res[0].matrix, res[1].matrix, query->width, query->height);
        ck_assert_msg(res[1].found, "%s: not found on CUDA (confidence %.3f)", id,
                      res[1].confidence);
        ck_assert_msg(truth_err <= limit, "%s: CUDA corner error %.2f > %.2f", id, truth_err,
                      limit);
        ck_assert_msg(agree <= 1.0, "%s: CPU and CUDA corners %.3f px apart", id, agree);
        ck_assert_msg(res[0].query_edge_points == res[1].query_edge_points &&
                          res[0].query_basis_points == res[1].query_basis_points &&
                          res[0].query_coded_points == res[1].query_coded_points,
                      "%s: query features cpu %zu/%zu/%zu cuda %zu/%zu/%zu", id,
                      res[0].query_edge_points, res[0].query_basis_points,
                      res[0].query_coded_points, res[1].query_edge_points,
                      res[1].query_basis_points, res[1].query_coded_points);
        ck_assert_msg(fabs(res[0].confidence - res[1].confidence) < 0.01 &&
                          fabs((double)res[0].inliers - (double)res[1].inliers) <=
                              0.01 * (double)res[0].inliers + 2.0,
                      "%s: confidence cpu %.4f cuda %.4f, inliers %zu %zu", id, res[0].confidence,
                      res[1].confidence, res[0].inliers, res[1].inliers);
        /* The same votes; the winner's own cell (res.votes) may be another of the cells that
         * vote for the same transform, as refined transforms differ in their last bits. */
        ck_assert_msg(res[0].votes_cast == res[1].votes_cast && res[0].lookups == res[1].lookups &&
                          res[0].candidates == res[1].candidates,
                      "%s: votes cast cpu %llu cuda %llu, look-ups %zu %zu, candidates %zu %zu",
                      id, (unsigned long long)res[0].votes_cast,
                      (unsigned long long)res[1].votes_cast, res[0].lookups, res[1].lookups,
                      res[0].candidates, res[1].candidates);
    }
    ghm_context_free(&cpu);
    ghm_context_free(&gpu);
    ghm_test_pairs_free(pairs, 6);
}
END_TEST

/* data/hard/truth.json on both backends: the same answer (found or not, the same votes,
 * corners within a pixel), right on CUDA. */
START_TEST(test_hard_pairs_both_backends)
{
    GHM_REQUIRE_CUDA();
    GhmTestPair *pairs = ghm_test_pairs_load("hard", 6);
    GhmContext *cpu = ghm_test_context(GHM_BACKEND_CPU), *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmMatchParams mp = ghm_match_defaults();
    for (size_t i = 0; i < 6; i++) {
        const char *id = pairs[i].id;
        const GhmImage *ref = pairs[i].ref, *query = pairs[i].query;
        GhmMatchResult res[2];
        GhmContext *ctxs[2] = {cpu, gpu};
        for (int k = 0; k < 2; k++) {
            GhmMatcher *m = NULL;
            ck_assert_int_eq(ghm_matcher_create(ctxs[k], ref, &mp, &m), GHM_OK);
            ck_assert_int_eq(ghm_matcher_match(m, query, &res[k]), GHM_OK);
            ghm_matcher_free(&m);
        }
        int negative = pairs[i].negative;
        ck_assert_msg(res[1].found == !negative, "%s: found %d on CUDA (confidence %.3f)", id,
                      res[1].found, res[1].confidence);
        ck_assert_msg(res[0].found == res[1].found && res[0].votes_cast == res[1].votes_cast &&
                          res[0].query_basis_points == res[1].query_basis_points &&
                          res[0].query_coded_points == res[1].query_coded_points,
                      "%s: cpu found %d, %llu votes; cuda found %d, %llu votes", id,
                      res[0].found, (unsigned long long)res[0].votes_cast, res[1].found,
                      (unsigned long long)res[1].votes_cast);
        if (!negative) {
            double limit = 0.02 * hypot(ref->width, ref->height);
            double err =
                ghm_test_corner_error(res[1].matrix, pairs[i].truth, query->width, query->height);
            double agree =
                ghm_test_corner_error(res[0].matrix, res[1].matrix, query->width, query->height);
            ck_assert_msg(err <= limit, "%s: CUDA corner error %.2f > %.2f", id, err, limit);
            ck_assert_msg(agree <= 1.0, "%s: CPU and CUDA corners %.3f px apart", id, agree);
        }
    }
    ghm_context_free(&cpu);
    ghm_context_free(&gpu);
    ghm_test_pairs_free(pairs, 6);
}
END_TEST

/* The same query twice on CUDA, on one matcher and on a second one: the same answer to the last
 * bit (integer votes and counts, sums in a fixed order), inliers included. */
START_TEST(test_cuda_deterministic)
{
    GHM_REQUIRE_CUDA();
    GhmImage *ref = ghm_test_load_image("images/rubberwhale1.png");
    GhmImage *q = ghm_test_load_image("pairs/dev_04_query.png");
    GhmContext *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmMatchParams mp = ghm_match_defaults();
    GhmMatcher *m[2] = {NULL, NULL};
    GhmMatchResult r[3];
    const float(*xy[3])[2];
    size_t nxy[3];
    ck_assert_int_eq(ghm_matcher_create(gpu, ref, &mp, &m[0]), GHM_OK);
    ck_assert_int_eq(ghm_matcher_create(gpu, ref, &mp, &m[1]), GHM_OK);
    float(*keep)[2] = NULL;
    for (int k = 0; k < 3; k++) {
        GhmMatcher *mk = m[k == 2];
        ck_assert_int_eq(ghm_matcher_match(mk, q, &r[k]), GHM_OK);
        ghm_matcher_inliers(mk, &xy[k], &nxy[k]);
        if (k == 0) { /* the next match on m[0] reuses its inlier buffer */
            keep = malloc((nxy[0] + 1) * sizeof *keep);
            memcpy(keep, xy[0], nxy[0] * sizeof *keep);
            xy[0] = (const float(*)[2])keep;
        }
    }
    ck_assert(r[0].found);
    for (int k = 1; k < 3; k++) {
        ck_assert_mem_eq(r[0].matrix, r[k].matrix, sizeof r[0].matrix);
        ck_assert(r[0].confidence == r[k].confidence && r[0].inliers == r[k].inliers &&
                  r[0].votes_cast == r[k].votes_cast);
        ck_assert_uint_eq(nxy[0], nxy[k]);
        ck_assert_mem_eq(xy[0], xy[k], nxy[0] * sizeof *xy[0]);
    }
    free(keep);
    ghm_matcher_free(&m[0]);
    ghm_matcher_free(&m[1]);
    ghm_context_free(&gpu);
    ghm_image_free(&ref);
    ghm_image_free(&q);
}
END_TEST

/* The host waits for the GPU only where a stage needs it (a count it reads, the result): a
 * 640x480 query of a known pair, after a first one has sized every buffer, waits at most
 * HOST_WAITS times. The number is the count measured last (H100, 2026-11-24: 43 before the
 * queued copies of staging memory, 11 after): the pyramid's counts, its candidates with the
 * first sampling tries, two more rounds of tries, the votes, five verification rounds, the
 * inliers. The count does not depend on timing; more waits are a regression, fewer a reason to
 * lower it. */
#define HOST_WAITS 11
extern unsigned long long ghmi_cuda_spared_waits; /* buffer calls that used to wait */
START_TEST(test_query_host_waits)
{
    GHM_REQUIRE_CUDA();
    GhmImage *ref = ghm_test_load_image("images/Blender_Suzanne1.jpg");
    GhmImage *q = ghm_test_load_image("images/Blender_Suzanne2.jpg");
    GhmContext *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmMatchParams mp = ghm_match_defaults();
    GhmMatcher *m = NULL;
    GhmMatchResult r;
    ck_assert_int_eq(ghm_matcher_create(gpu, ref, &mp, &m), GHM_OK);
    ck_assert_int_eq(ghm_matcher_match(m, q, &r), GHM_OK);
    uint64_t before = ghm_cuda_host_waits();
    unsigned long long spared = ghmi_cuda_spared_waits;
    ck_assert_int_eq(ghm_matcher_match(m, q, &r), GHM_OK);
    uint64_t waits = ghm_cuda_host_waits() - before;
    spared = ghmi_cuda_spared_waits - spared;
    printf("cuda query: %llu host waits (%llu with the buffer calls that waited before)\n",
           (unsigned long long)waits, (unsigned long long)(waits + spared));
    ck_assert(r.found);
    ck_assert_uint_le(waits, HOST_WAITS);
    ghm_matcher_free(&m);
    ghm_context_free(&gpu);
    ghm_image_free(&ref);
    ghm_image_free(&q);
}
END_TEST

/* A reference without bases (blank) and queries without corners vote nothing on either. */
START_TEST(test_blank_images_both_backends)
{
    GHM_REQUIRE_CUDA();
    GhmImage *blank = NULL, *tiny = NULL;
    GhmImage *photo = ghm_test_load_image("images/box_in_scene.png");
    ck_assert_int_eq(ghm_image_create(320, 240, &blank), GHM_OK);
    ck_assert_int_eq(ghm_image_create(2, 5, &tiny), GHM_OK);
    memset(blank->pixels, 128, (size_t)blank->stride * blank->height);
    memset(tiny->pixels, 200, (size_t)tiny->stride * tiny->height);
    GhmContext *gpu = ghm_test_context(GHM_BACKEND_CUDA);
    GhmMatchParams mp = ghm_match_defaults();
    /* blank and 2x5 pixels, as reference and as query (the device chain's smallest images) */
    GhmImage *refs[] = {blank, photo, blank, photo, tiny};
    GhmImage *queries[] = {photo, blank, blank, tiny, photo};
    for (int k = 0; k < 5; k++) {
        GhmMatcher *m = NULL;
        GhmMatchResult res;
        ck_assert_int_eq(ghm_matcher_create(gpu, refs[k], &mp, &m), GHM_OK);
        ck_assert_int_eq(ghm_matcher_match(m, queries[k], &res), GHM_OK);
        ck_assert(!res.found);
        ck_assert_uint_eq(res.candidates, 0);
        ghm_matcher_free(&m);
    }
    ghm_context_free(&gpu);
    ghm_image_free(&blank);
    ghm_image_free(&tiny);
    ghm_image_free(&photo);
}
END_TEST

static Suite *geohash_cuda_suite(void)
{
    Suite *s = suite_create("geohash_cuda");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_device_path_selected);
    tcase_add_test(tc, test_votes_identical_synthetic);
    tcase_add_test(tc, test_votes_identical_batched);
    tcase_add_test(tc, test_votes_identical_images);
    tcase_add_test(tc, test_edges_identical);
    tcase_add_test(tc, test_corners_and_sampling_identical);
    tcase_add_test(tc, test_known_pairs_both_backends);
    tcase_add_test(tc, test_hard_pairs_both_backends);
    tcase_add_test(tc, test_blank_images_both_backends);
    tcase_add_test(tc, test_cuda_deterministic);
    tcase_add_test(tc, test_query_host_waits);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return ghm_test_main(geohash_cuda_suite());
}
