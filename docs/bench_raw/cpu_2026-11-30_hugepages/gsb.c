#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ghm_image.h"
#include "ghm_edges.h"
#include "ghm_context.h"
int old_sample_capped(const GhmEdgePoint *pts, size_t n, int width, int height, double min_cell,
                      size_t max_points, uint32_t *idx, size_t *kept, double *cell_used);
int main(int argc, char **argv)
{
    for (int a = 1; a < argc; a++) {
        GhmImage *img; char why[256];
        if (ghm_image_load(argv[a], &img, why, sizeof why) < 0) { puts(why); return 1; }
        GhmEdgeParams ep = ghm_edge_defaults(); GhmEdges *e;
        if (ghm_edges_detect(img, &ep, &e) < 0) return 1;
        uint32_t *i1 = malloc(e->count * 4 + 4), *i2 = malloc(e->count * 4 + 4);
        struct { double cell; size_t max; } tries[3] = {{1.0, 40000}, {2.0, 1000}, {3.0, 12000}};
        for (int t = 0; t < 3; t++) {
            double best[2] = {1e9, 1e9}; size_t k1 = 0, k2 = 0; double c1, c2;
            for (int r = 0; r < 40; r++) {
                double t0 = ghm_now();
                old_sample_capped(e->points, e->count, e->width, e->height, tries[t].cell, tries[t].max, i1, &k1, &c1);
                double t1 = ghm_now();
                ghm_edges_sample_capped(e->points, e->count, e->width, e->height, tries[t].cell, tries[t].max, i2, &k2, &c2);
                double t2 = ghm_now();
                if (t1 - t0 < best[0]) best[0] = t1 - t0;
                if (t2 - t1 < best[1]) best[1] = t2 - t1;
            }
            printf("%s %dx%d n=%zu min_cell %.0f max %zu: old %.3f ms new %.3f ms (kept %zu/%zu %s)\n", argv[a], e->width, e->height, e->count, tries[t].cell, tries[t].max,
                   1e3 * best[0], 1e3 * best[1], k1, k2, k1 == k2 && !memcmp(i1, i2, k1 * 4) && c1 == c2 ? "same" : "DIFFERENT");
        }
        ghm_edges_free(&e); ghm_image_free(&img); free(i1); free(i2);
    }
    return 0;
}
