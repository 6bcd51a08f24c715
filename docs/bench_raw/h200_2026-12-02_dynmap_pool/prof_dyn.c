#define _POSIX_C_SOURCE 200809L
/* Profiling driver (not in the project): a GhmDynmap of 6-word items filled with 2^25, then
 * REPS x (2^23 inserts of new items, their erase, gc), wall times per call; under ncu the
 * kernels' times. argv: variant capacity_factor reps */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ghm_context.h"
#include "ghm_dynmap.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static uint64_t mix(uint64_t z) { z += 0x9E3779B97F4A7C15ull; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
static void make(uint64_t id, uint32_t *o) { uint64_t a = mix(id ^ 0x5bd1e995u); o[0] = (uint32_t)a; o[1] = (uint32_t)id + 1; for (int j = 2; j < 6; j++) o[j] = (uint32_t)mix(a + j); }
#define CK(x) do { int r_ = (x); if (r_ < 0) { fprintf(stderr, "%s: %d\n", #x, r_); return 1; } } while (0)
int main(int argc, char **argv)
{
    int variant = argc > 1 ? ghm_dynmap_variant_from_name(argv[1]) : 0;
    double capf = argc > 2 ? atof(argv[2]) : 2.0;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    int fill_log2 = argc > 4 ? atoi(argv[4]) : 25;
    size_t fill = (size_t)1 << fill_log2, ops = (size_t)1 << 23;
    GhmContextOptions co = ghm_context_defaults();
    co.backend = GHM_BACKEND_CUDA;
    GhmContext *ctx; CK(ghm_context_create(&co, &ctx));
    uint32_t *h = malloc(fill * 24), *df, *dn; uint64_t *hd;
    for (size_t i = 0; i < fill; i++) make(i, h + 6 * i);
    CK(ghm_buffer_alloc(ctx, fill * 24, (void **)&df)); CK(ghm_buffer_upload(ctx, df, h, fill * 24));
    for (size_t i = 0; i < ops; i++) make(fill + i, h + 6 * i);
    CK(ghm_buffer_alloc(ctx, ops * 24, (void **)&dn)); CK(ghm_buffer_upload(ctx, dn, h, ops * 24));
    CK(ghm_buffer_alloc(ctx, ops * 8, (void **)&hd));
    GhmDynmapOptions o = ghm_dynmap_defaults(); o.variant = variant; o.capacity = (size_t)(capf * fill);
    GhmDynmap *dm; CK(ghm_dynmap_create(ctx, &o, &dm)); CK(ghm_dynmap_preload(dm));
    double t0 = now(); CK(ghm_dynmap_insert(dm, df, fill, NULL, NULL)); double t1 = now();
    GhmDynmapStats st; CK(ghm_dynmap_stats(dm, &st));
    printf("variant %s capf %.2f buckets %zu slots %zu fill %.3f ms\n", argv[1], capf, st.buckets, st.slots_per_slab, (t1 - t0) * 1e3);
    for (int k = 0; k < reps; k++) {
        double a = now(); CK(ghm_dynmap_insert(dm, dn, ops, hd, NULL)); double b = now();
        CK(ghm_dynmap_find(dm, dn, ops, hd, NULL)); double c = now();
        CK(ghm_dynmap_erase(dm, dn, ops, NULL)); double d = now();
        size_t rel; CK(ghm_dynmap_gc(dm, &rel)); double e = now();
        printf("rep %d insert %.3f find100 %.3f erase %.3f gc %.3f ms\n", k, (b - a) * 1e3, (c - b) * 1e3, (d - c) * 1e3, (e - d) * 1e3);
    }
    if (ghm_dynmap_size(dm) != fill) { fprintf(stderr, "size %zu\n", ghm_dynmap_size(dm)); return 1; }
    ghm_dynmap_free(&dm); ghm_context_free(&ctx); free(h);
    return 0;
}
