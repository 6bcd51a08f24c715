#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <omp.h>
#include "cpu_sort_internal.h"
int old_sort_pairs(int, uint32_t *, uint32_t *, size_t);
static uint64_t s = 88172645463325252ull;
static uint32_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)s; }
int main(int argc, char **argv)
{
    size_t n = strtoull(argv[1], 0, 10); int bits = atoi(argv[2]); int th = atoi(argv[3]); int reps = 15;
    uint32_t *k0 = malloc(n * 4), *k = malloc(n * 4), *v = malloc(n * 4);
    for (size_t i = 0; i < n; i++) k0[i] = bits == 32 ? rnd() : rnd() & ((1u << bits) - 1);
    double best[2] = {1e9, 1e9};
    for (int r = 0; r < reps; r++)
        for (int w = 0; w < 2; w++) {
            memcpy(k, k0, n * 4);
            for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
            double t = omp_get_wtime();
            (w ? ghmi_cpu_sort_pairs : old_sort_pairs)(th, k, v, n);
            t = omp_get_wtime() - t;
            if (t < best[w]) best[w] = t;
            for (size_t i = 1; i < n; i++) if (k[i-1] > k[i] || (k[i-1] == k[i] && v[i-1] > v[i])) { printf("BAD\n"); return 1; }
        }
    printf("n %zu bits %d threads %d: old %.2f ms new %.2f ms\n", n, bits, th, best[0]*1e3, best[1]*1e3);
    return 0;
}
