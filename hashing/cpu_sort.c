/*
 * cpu_sort.c - a parallel, stable LSD radix sort for the CPU backend (8-bit digits, 4 passes),
 * and run detection on sorted keys.
 *
 * Each pass: every thread counts the digits of its own contiguous chunk; one thread turns the
 * counts into scatter offsets ordered by (digit, thread), which is what makes the sort stable;
 * then every thread scatters its chunk in input order. A pass in which all keys share one digit
 * is skipped (small or clustered keys then cost fewer passes).
 */
#include "cpu_sort_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_error.h"

#define RADIX_BITS 8
#define RADIX 256
#define MIN_CHUNK 65536 /* below this many keys per thread, fork/join costs more than it saves */

static int workers_for(int threads, size_t n)
{
    size_t useful = n / MIN_CHUNK + 1;
    return threads < 1 ? 1 : (size_t)threads < useful ? threads : (int)useful;
}

static void chunk_of(size_t n, int t, int nt, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)t / (size_t)nt;
    *hi = n * (size_t)(t + 1) / (size_t)nt;
}

/* Offsets for the scatter, ordered digit-major then thread; returns 1 when one digit holds every
 * key, so the pass would not move anything. */
static int scan_histograms(size_t *hist, int nt, size_t n)
{
    size_t sum = 0;
    for (int d = 0; d < RADIX; d++) {
        size_t digit_total = 0;
        for (int t = 0; t < nt; t++) {
            size_t c = hist[(size_t)t * RADIX + (size_t)d];
            hist[(size_t)t * RADIX + (size_t)d] = sum;
            sum += c;
            digit_total += c;
        }
        if (digit_total == n)
            return 1;
    }
    return 0;
}

/* One counting pass plus scatter from (sk, sv) to (dk, dv). Returns 1 if the pass moved data. */
static int radix_pass(int nt, size_t *hist, int shift, const uint32_t *sk, const uint32_t *sv,
                      uint32_t *dk, uint32_t *dv, size_t n)
{
    int moved = 1;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        int got = omp_get_num_threads();
        size_t lo, hi;
        chunk_of(n, t, got, &lo, &hi);
        size_t *h = hist + (size_t)t * RADIX;
        memset(h, 0, RADIX * sizeof *h);
        for (size_t i = lo; i < hi; i++)
            h[(sk[i] >> shift) & (RADIX - 1)]++;
#pragma omp barrier
#pragma omp single
        moved = !scan_histograms(hist, got, n);
        if (moved) {
            for (size_t i = lo; i < hi; i++) {
                size_t pos = h[(sk[i] >> shift) & (RADIX - 1)]++;
                dk[pos] = sk[i];
                if (sv)
                    dv[pos] = sv[i];
            }
        }
    }
    return moved;
}

int ghmi_cpu_sort_pairs(int threads, uint32_t *keys, uint32_t *values, size_t n)
{
    if (n < 2)
        return GHM_OK;
    int nt = workers_for(threads, n);
    uint32_t *tk = malloc(n * sizeof *tk);
    uint32_t *tv = values ? malloc(n * sizeof *tv) : NULL;
    size_t *hist = malloc((size_t)nt * RADIX * sizeof *hist);
    if (!tk || (values && !tv) || !hist) {
        free(tk);
        free(tv);
        free(hist);
        return GHM_ERR_NOMEM;
    }
    uint32_t *sk = keys, *sv = values, *dk = tk, *dv = tv;
    for (int shift = 0; shift < 32; shift += RADIX_BITS) {
        if (!radix_pass(nt, hist, shift, sk, sv, dk, dv, n))
            continue;
        uint32_t *swap_k = sk, *swap_v = sv;
        sk = dk;
        sv = dv;
        dk = swap_k;
        dv = swap_v;
    }
    if (sk != keys) {
#pragma omp parallel num_threads(nt)
        {
            size_t lo, hi;
            chunk_of(n, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
            memcpy(keys + lo, sk + lo, (hi - lo) * sizeof *keys);
            if (values)
                memcpy(values + lo, sv + lo, (hi - lo) * sizeof *values);
        }
    }
    free(tk);
    free(tv);
    free(hist);
    return GHM_OK;
}

static int is_run_head(const uint32_t *keys, size_t i) { return i == 0 || keys[i] != keys[i - 1]; }

int ghmi_cpu_runs(int threads, const uint32_t *keys, size_t n, uint32_t **starts, size_t *runs)
{
    int nt = workers_for(threads, n);
    size_t *count = calloc((size_t)nt + 1, sizeof *count);
    if (!count)
        return GHM_ERR_NOMEM;
    uint32_t *out = NULL;
    int ret = GHM_OK;
    /* Two passes over the chunks: count run heads, then write them at prefix-summed offsets. */
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        int got = omp_get_num_threads();
        size_t lo, hi, c = 0;
        chunk_of(n, t, got, &lo, &hi);
        for (size_t i = lo; i < hi; i++)
            c += (size_t)is_run_head(keys, i);
        count[t + 1] = c;
#pragma omp barrier
#pragma omp single
        {
            for (int u = 0; u < got; u++)
                count[u + 1] += count[u];
            out = malloc((count[got] + 1) * sizeof *out);
            if (!out)
                ret = GHM_ERR_NOMEM;
            else
                out[count[got]] = (uint32_t)n;
            *runs = count[got];
        }
        if (out) {
            size_t w = count[t];
            for (size_t i = lo; i < hi; i++)
                if (is_run_head(keys, i))
                    out[w++] = (uint32_t)i;
        }
    }
    free(count);
    *starts = out;
    return ret;
}
