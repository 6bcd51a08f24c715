#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "ghm_context.h"
#include "ghm_map.h"
static uint32_t key_of(uint32_t c, uint32_t seed){uint32_t x=c^seed;x*=0x9E3779B1u;x^=x>>16;x*=0x85EBCA6Bu;x^=x>>13;x*=0xC2B2AE35u;x^=x>>16;return x;}
static int defined(uint32_t x, uint32_t y, uint32_t seed){ if (key_of(y/64*65536u + x/64, seed) % 3 == 0) return 1; return key_of(y*65536u + x, seed ^ 0x5555u) % 32 == 0; }
int main(int argc, char **argv)
{
    uint32_t side = 4096, seed = 1; int reps = atoi(argv[1]);
    size_t q = (size_t)side * side, n = 0;
    uint32_t *keys = malloc(q * 4), *vals = malloc(q * 4), *qs = malloc(q * 4), *out = malloc(q * 4);
    for (uint32_t y = 0; y < side; y++) for (uint32_t x = 0; x < side; x++) if (defined(x, y, seed)) { keys[n] = y * side + x; vals[n] = (uint32_t)n; n++; }
    for (size_t i = 0; i < q; i++) qs[i] = (uint32_t)i;
    GhmContextOptions co = ghm_context_defaults(); co.backend = GHM_BACKEND_CPU; co.threads = 2;
    GhmContext *ctx; ghm_context_create(&co, &ctx);
    GhmMapOptions o = ghm_map_defaults(); o.scheme = GHM_MAP_ROBIN_HOOD; o.load_factor = 0.99;
    GhmMap *m; ghm_map_create(ctx, &o, &m);
    double bb = 1e9, bf = 1e9; uint64_t sum = 0;
    for (int r = 0; r < reps; r++) {
        double t0 = omp_get_wtime(); if (ghm_map_build(m, keys, vals, n) < 0) return 2;
        double t1 = omp_get_wtime(); ghm_map_find(m, qs, q, out); double t2 = omp_get_wtime();
        sum = 0; for (size_t i = 0; i < q; i++) sum = sum * 31 + out[i];
        if (t1 - t0 < bb) bb = t1 - t0; if (t2 - t1 < bf) bf = t2 - t1;
    }
    GhmMapStats st; ghm_map_stats(m, &st);
    printf("grid %zu keys: build %.1f find %.1f M/s max_age %u stash %zu sum %llx\n", n, n / bb / 1e6, q / bf / 1e6, st.max_probes, st.stash_used, (unsigned long long)sum);
    return 0;
}
