/*
 * find_pair.c - a user's program built against the installed library (tests/install.sh): loads
 * REFERENCE and QUERY, matches them, and checks the matrix against the expected one given on
 * the command line (a, b, tx, c, d, ty) within TOL pixels at the query's corners.
 * Exit 0: found and right; 1: not found or wrong; 2: an error.
 */
#include <geohash/ghm_context.h>
#include <geohash/ghm_image.h>
#include <geohash/ghm_match.h>
#include <geohash/ghm_version.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double corner_error(const double m[2][3], const double t[2][3], int w, int h)
{
    const double xs[4] = {0, w - 1, w - 1, 0}, ys[4] = {0, 0, h - 1, h - 1};
    double worst = 0.0;
    for (int i = 0; i < 4; i++) {
        double dx = (m[0][0] - t[0][0]) * xs[i] + (m[0][1] - t[0][1]) * ys[i] + m[0][2] - t[0][2];
        double dy = (m[1][0] - t[1][0]) * xs[i] + (m[1][1] - t[1][1]) * ys[i] + m[1][2] - t[1][2];
        worst = fmax(worst, hypot(dx, dy));
    }
    return worst;
}

int main(int argc, char **argv)
{
    if (argc != 10) {
        fprintf(stderr, "usage: find_pair REFERENCE QUERY a b tx c d ty TOL\n");
        return 2;
    }
    double t[2][3];
    for (int i = 0; i < 6; i++)
        t[i / 3][i % 3] = atof(argv[3 + i]);
    double tol = atof(argv[9]);
    char why[256] = "";
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = GHM_BACKEND_CPU;
    GhmContext *ctx = NULL;
    GhmImage *ref = NULL, *query = NULL;
    GhmMatcher *m = NULL;
    GhmMatchParams p = ghm_match_defaults();
    GhmMatchResult res;
    int rc = 2, ret;
    if ((ret = ghm_context_create(&opt, &ctx)) < 0 ||
        (ret = ghm_image_load(argv[1], &ref, why, sizeof why)) < 0 ||
        (ret = ghm_image_load(argv[2], &query, why, sizeof why)) < 0 ||
        (ret = ghm_matcher_create(ctx, ref, &p, &m)) < 0 ||
        (ret = ghm_matcher_match(m, query, &res)) < 0) {
        fprintf(stderr, "find_pair: %s %s\n", ghm_strerror(ret), why);
        goto done;
    }
    double err = res.found ? corner_error(res.matrix, t, query->width, query->height) : INFINITY;
    printf("geohash %s (header %s): found %d, corner error %.3f px\n", ghm_version(),
           GHM_VERSION_STRING, res.found, err);
    rc = res.found && err <= tol ? 0 : 1;
done:
    ghm_matcher_free(&m);
    ghm_image_free(&query);
    ghm_image_free(&ref);
    ghm_context_free(&ctx);
    return rc;
}
