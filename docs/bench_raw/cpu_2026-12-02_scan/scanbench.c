/* median voting ms of a one-query matcher, in-process */
#include <stdio.h>
#include <stdlib.h>
#include "ghm_context.h"
#include "ghm_image.h"
#include "ghm_match.h"
static int cmpd(const void *a, const void *b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
int main(int argc, char **argv)
{
    GhmContextOptions o = ghm_context_defaults(); o.backend = GHM_BACKEND_CPU;
    GhmContext *ctx = NULL; ghm_context_create(&o, &ctx);
    char why[256]; GhmImage *ref = NULL, *q = NULL;
    ghm_image_load(argv[1], &ref, why, sizeof why); ghm_image_load(argv[2], &q, why, sizeof why);
    GhmMatchParams p = ghm_match_defaults(); GhmMatcher *m = NULL;
    ghm_matcher_create_for_one_query(ctx, ref, &p, &m);
    int n = argc > 3 ? atoi(argv[3]) : 40; double *t = malloc(n * sizeof *t);
    GhmMatchResult r;
    for (int i = 0; i < n; i++) { ghm_matcher_match(m, q, &r); t[i] = r.time.voting_ms; }
    qsort(t, n, sizeof *t, cmpd);
    printf("voting median %.2f min %.2f votes %llu\n", t[n/2], t[0], (unsigned long long)r.votes_cast);
    return 0;
}
