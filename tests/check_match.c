/* check_match.c - ghm_matcher_clone: a clone in a context with the original's seed gives the
 * original's answers bit for bit (other thread counts, query-side parameters carried over, and
 * the two matching at the same time on two threads, as the video mode's workers do); bad
 * arguments are refused. "clone" runs on the CPU backend; "cuda" does the same with both
 * matchers on the device, each context with its own stream, and skips without one. */
#include <pthread.h>
#include <string.h>

#include "ghm_match.h"
#include "test_support.h"

static GhmContext *context_with(GhmBackendKind backend, int threads, uint64_t seed)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = backend;
    opt.threads = threads;
    opt.seed = seed;
    return ghm_test_context_opt(opt);
}

/* Everything a result says about the match, timings aside. */
static void assert_same_answer(const GhmMatchResult *a, const GhmMatchResult *b)
{
    ck_assert_int_eq(a->found, b->found);
    ck_assert_mem_eq(a->matrix, b->matrix, sizeof a->matrix);
    ck_assert_uint_eq(a->votes, b->votes);
    ck_assert_uint_eq(a->inliers, b->inliers);
    ck_assert_uint_eq(a->votes_cast, b->votes_cast);
    ck_assert_uint_eq(a->candidates, b->candidates);
    ck_assert_uint_eq(a->ref_entries, b->ref_entries);
    ck_assert_uint_eq(a->ref_keys, b->ref_keys);
    ck_assert(a->confidence == b->confidence);
}

typedef struct Job {
    GhmMatcher *m;
    const GhmImage *q;
    int reps;
    int ret;
    GhmMatchResult res;
} Job;

static void *match_job(void *arg)
{
    Job *j = arg;
    for (int i = 0; i < j->reps && j->ret == GHM_OK; i++)
        j->ret = ghm_matcher_match(j->m, j->q, &j->res);
    return NULL;
}

/* The original in ctx_a, its clone in ctx_b: the same answer alone, then both at once on two
 * threads (each with its own matcher and context). */
static void check_clone(GhmContext *ctx_a, GhmContext *ctx_b)
{
    GhmImage *ref = ghm_test_load_image("images/rubberwhale1.png");
    GhmImage *q = ghm_test_load_image("pairs/dev_04_query.png");
    GhmMatchParams mp = ghm_match_defaults();
    GhmMatcher *m = NULL, *c = NULL;
    ck_assert_int_eq(ghm_matcher_create(ctx_a, ref, &mp, &m), GHM_OK);
    ck_assert_int_eq(ghm_matcher_clone(ctx_b, m, &c), GHM_OK);
    int w, h, cw, ch;
    ghm_matcher_size(m, &w, &h);
    ghm_matcher_size(c, &cw, &ch);
    ck_assert(w == cw && h == ch);
    GhmMatchResult a, b;
    ck_assert_int_eq(ghm_matcher_match(m, q, &a), GHM_OK);
    ck_assert_int_eq(ghm_matcher_match(c, q, &b), GHM_OK);
    ck_assert(a.found);
    assert_same_answer(&a, &b);

    Job ja = {.m = m, .q = q, .reps = 3}, jb = {.m = c, .q = q, .reps = 3};
    pthread_t ta, tb;
    ck_assert_int_eq(pthread_create(&ta, NULL, match_job, &ja), 0);
    ck_assert_int_eq(pthread_create(&tb, NULL, match_job, &jb), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    ck_assert_int_eq(ja.ret, GHM_OK);
    ck_assert_int_eq(jb.ret, GHM_OK);
    assert_same_answer(&a, &ja.res);
    assert_same_answer(&a, &jb.res);
    ghm_matcher_free(&c);
    ghm_matcher_free(&m);
    ghm_image_free(&q);
    ghm_image_free(&ref);
}

START_TEST(test_clone_same_answers)
{
    GhmContext *a = context_with(GHM_BACKEND_CPU, 2, 7), *b = context_with(GHM_BACKEND_CPU, 1, 7);
    check_clone(a, b);
    ghm_context_free(&b);
    ghm_context_free(&a);
}
END_TEST

/* Query-side parameters set on the original travel with the clone. */
START_TEST(test_clone_keeps_query_params)
{
    GhmContext *ctx = context_with(GHM_BACKEND_CPU, 1, 1);
    GhmImage *ref = ghm_test_load_image("images/rubberwhale1.png");
    GhmImage *q = ghm_test_load_image("pairs/dev_04_query.png");
    GhmMatchParams mp = ghm_match_defaults();
    GhmMatcher *m = NULL, *c = NULL;
    ck_assert_int_eq(ghm_matcher_create(ctx, ref, &mp, &m), GHM_OK);
    GhmMatchParams qp = *ghm_matcher_params(m);
    qp.top_candidates = 40;
    qp.min_confidence = 0.3;
    qp.geo.query_bases = qp.geo.query_bases / 2 + 1;
    ck_assert_int_eq(ghm_matcher_set_query_params(m, &qp), GHM_OK);
    ck_assert_int_eq(ghm_matcher_clone(ctx, m, &c), GHM_OK);
    const GhmMatchParams *pc = ghm_matcher_params(c);
    ck_assert_uint_eq(pc->top_candidates, 40);
    ck_assert(pc->min_confidence == 0.3);
    ck_assert_uint_eq(pc->geo.query_bases, qp.geo.query_bases);
    GhmMatchResult a, b;
    ck_assert_int_eq(ghm_matcher_match(m, q, &a), GHM_OK);
    ck_assert_int_eq(ghm_matcher_match(c, q, &b), GHM_OK);
    assert_same_answer(&a, &b);
    ghm_matcher_free(&c);
    ghm_matcher_free(&m);
    ghm_image_free(&q);
    ghm_image_free(&ref);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_clone_bad_arguments)
{
    GhmContext *ctx = context_with(GHM_BACKEND_CPU, 1, 1);
    GhmImage *ref = ghm_test_load_image("images/box.png");
    GhmMatchParams mp = ghm_match_defaults();
    GhmMatcher *m = NULL, *c = NULL;
    ck_assert_int_eq(ghm_matcher_create(ctx, ref, &mp, &m), GHM_OK);
    ck_assert_int_eq(ghm_matcher_clone(NULL, m, &c), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_matcher_clone(ctx, NULL, &c), GHM_ERR_INVALID);
    ck_assert_ptr_null(c);
    ck_assert_int_eq(ghm_matcher_clone(ctx, m, NULL), GHM_ERR_INVALID);
    ghm_matcher_free(&m);
    ghm_image_free(&ref);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_clone_cuda)
{
    GHM_REQUIRE_CUDA();
    GhmContext *a = context_with(GHM_BACKEND_CUDA, 0, 7), *b = context_with(GHM_BACKEND_CUDA, 1, 7);
    check_clone(a, b);
    ghm_context_free(&b);
    ghm_context_free(&a);
}
END_TEST

static Suite *match_suite(void)
{
    Suite *s = suite_create("match");
    TCase *clone = tcase_create("clone");
    tcase_set_timeout(clone, 300);
    tcase_add_test(clone, test_clone_same_answers);
    tcase_add_test(clone, test_clone_keeps_query_params);
    tcase_add_test(clone, test_clone_bad_arguments);
    suite_add_tcase(s, clone);
    TCase *cuda = tcase_create("cuda");
    tcase_set_timeout(cuda, 300);
    tcase_add_test(cuda, test_clone_cuda);
    suite_add_tcase(s, cuda);
    return s;
}

int main(void)
{
    return ghm_test_main(match_suite());
}
