/* A/B driver: 2^24 unique keys, one scheme at one load, finds of present keys in a random order
   (and absent ones), best and median of R runs, M keys/s; checksum of answers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ghm_context.h"
#include "ghm_map.h"
static uint32_t fmix(uint32_t h) { h ^= h >> 16; h *= 0x85ebca6b; h ^= h >> 13; h *= 0xc2b2ae35; return h ^ (h >> 16); }
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }
int main(int argc, char **argv)
{
    const char *scheme = argv[1]; double load = atof(argv[2]); int reps = atoi(argv[3]);
    size_t n = (size_t)1 << (getenv("LG") ? atoi(getenv("LG")) : 24);
    uint32_t *k = malloc(n * 4), *v = malloc(n * 4), *q = malloc(n * 4), *a = malloc(n * 4), *out = malloc(n * 4);
    for (size_t i = 0; i < n; i++) { k[i] = fmix((uint32_t)i + 1); if (k[i] == 0xFFFFFFFFu) k[i] = fmix((uint32_t)n + 1); v[i] = (uint32_t)i; }
    for (size_t i = 0; i < n; i++) { q[i] = k[(i * 2654435761u) & (n - 1)]; a[i] = fmix((uint32_t)(n + 2 + i)); }
    GhmContextOptions co = ghm_context_defaults(); co.backend = GHM_BACKEND_CPU; co.threads = getenv("T") ? atoi(getenv("T")) : 2;
    GhmContext *ctx; if (ghm_context_create(&co, &ctx) < 0) return 1;
    GhmMapOptions mo = ghm_map_defaults(); mo.scheme = ghm_map_scheme_from_name(scheme); mo.load_factor = load;
    GhmMap *m; if (ghm_map_create(ctx, &mo, &m) < 0 || ghm_map_build(m, k, v, n) < 0) { puts("build failed"); return 1; }
    double tp[64], ta[64];
    for (int r = 0; r < reps; r++) {
        double t0 = now(); ghm_map_find(m, q, n, out); tp[r] = n / (now() - t0) / 1e6;
        t0 = now(); ghm_map_find(m, a, n, out + 0); ta[r] = n / (now() - t0) / 1e6;
    }
    ghm_map_find(m, q, n, out); uint64_t s = 0; for (size_t i = 0; i < n; i++) s = s * 31 + out[i];
    qsort(tp, reps, sizeof *tp, cmpd); qsort(ta, reps, sizeof *ta, cmpd);
    printf("%-12s load %.2f find best %.1f median %.1f  absent best %.1f median %.1f  sum %016llx\n", scheme, load, tp[reps - 1], tp[reps / 2], ta[reps - 1], ta[reps / 2], (unsigned long long)s);
    ghm_map_free(&m); ghm_context_free(&ctx); return 0;
}
