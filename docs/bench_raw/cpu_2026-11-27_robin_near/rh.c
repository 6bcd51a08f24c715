#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "ghm_context.h"
#include "ghm_map.h"
static uint32_t fmix(uint32_t h){h^=h>>16;h*=0x85ebca6bu;h^=h>>13;h*=0xc2b2ae35u;h^=h>>16;return h;}
static uint64_t mix(uint64_t x){x+=0x9E3779B97F4A7C15ull;x=(x^(x>>30))*0xBF58476D1CE4E5B9ull;x=(x^(x>>27))*0x94D049BB133111EBull;return x^(x>>31);}
int main(int argc, char **argv)
{
    int scheme = atoi(argv[1]); double load = atof(argv[2]); int lg = atoi(argv[3]); int reps = atoi(argv[4]);
    size_t n = (size_t)1 << lg;
    uint32_t *keys = malloc(n * 4), *vals = malloc(n * 4), *q = malloc(n * 4), *qa = malloc(n * 4), *out = malloc(n * 4);
    for (size_t i = 0; i < n; i++) { keys[i] = fmix((uint32_t)(2 * i)); vals[i] = (uint32_t)i; }
    for (size_t i = 0; i < n; i++) { q[i] = keys[i]; qa[i] = fmix((uint32_t)(2 * i + 1)); }
    for (size_t i = n - 1; i > 0; i--) { size_t j = mix(i) % (i + 1); uint32_t t = q[i]; q[i] = q[j]; q[j] = t; }
    GhmContextOptions co = ghm_context_defaults(); co.backend = GHM_BACKEND_CPU; co.threads = 2; if (argc > 5) co.seed = strtoull(argv[5], 0, 10);
    GhmContext *ctx; if (ghm_context_create(&co, &ctx) < 0) return 1;
    GhmMapOptions o = ghm_map_defaults(); o.scheme = scheme; o.load_factor = load;
    GhmMap *m; if (ghm_map_create(ctx, &o, &m) < 0) return 1;
    double bb = 1e9, bf = 1e9, ba = 1e9; uint64_t sum = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime(); if (ghm_map_build(m, keys, vals, n) < 0) return 2;
        double t1 = omp_get_wtime(); ghm_map_find(m, q, n, out);
        double t2 = omp_get_wtime(); sum = 0; for (size_t i = 0; i < n; i++) sum = sum * 31 + out[i];
        double t3 = omp_get_wtime(); ghm_map_find(m, qa, n, out);
        double t4 = omp_get_wtime(); for (size_t i = 0; i < n; i++) sum = sum * 31 + out[i];
        if (t1 - t0 < bb) bb = t1 - t0; if (t2 - t1 < bf) bf = t2 - t1; if (t4 - t3 < ba) ba = t4 - t3;
    }
    GhmMapStats st; ghm_map_stats(m, &st);
    printf("rebuilds %d stash %u max_age %u | ", st.rebuilds, (unsigned)st.stash_used, (unsigned)st.max_probes);
    printf("scheme %d load %.2f 2^%d: build %.1f find %.1f absent %.1f M/s sum %llx\n", scheme, load, lg, n / bb / 1e6, n / bf / 1e6, n / ba / 1e6, (unsigned long long)sum);
    return 0;
}
