/*
 * cpu_sort.c - a parallel, stable LSD radix sort for the CPU backend, and run detection on
 * sorted keys.
 *
 * The keys' highest set bit decides the digits: as few passes as cover it, the digits of one
 * width. While the arrays stay in the last-level cache (up to 2^20 keys: 16 MB with values and
 * the scratch copy) digits of up to 11 bits: scattering to 2^11 places costs no more than to
 * 2^8 there, so 32-bit keys take 3 passes and the vision module's 19-bit signatures 2 (its
 * 638k signatures 5.6 -> 3.8 ms on 2 cores). Past that every place is a cache and TLB miss of
 * its own and 2^11 of them cost more than a pass saves (4M 32-bit keys: 46-59 -> 65-68 ms), so
 * digits of up to 8 bits.
 *
 * Each pass: every thread counts the digits of its own contiguous chunk; one thread turns the
 * counts into scatter offsets ordered by (digit, thread), which is what makes the sort stable;
 * then every thread scatters its chunk in input order. A pass in which all keys share one digit
 * is skipped.
 */
#include "cpu_sort_internal.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_error.h"

#define MAX_DIGIT_BITS 11 /* up to CACHED_KEYS keys */
#define MAX_DIGIT_BITS_LARGE 8
#define CACHED_KEYS ((size_t)1 << 20)
#define MAX_RADIX (1 << MAX_DIGIT_BITS)
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
static int scan_histograms(size_t *hist, int nt, int radix, size_t n)
{
    size_t sum = 0;
    for (int d = 0; d < radix; d++) {
        size_t digit_total = 0;
        for (int t = 0; t < nt; t++) {
            size_t c = hist[(size_t)t * MAX_RADIX + (size_t)d];
            hist[(size_t)t * MAX_RADIX + (size_t)d] = sum;
            sum += c;
            digit_total += c;
        }
        if (digit_total == n)
            return 1;
    }
    return 0;
}

/* One counting pass plus scatter of the digit (key >> shift) & mask from (sk, sv) to (dk, dv).
 * Returns 1 if the pass moved data. */
static int radix_pass(int nt, size_t *hist, int shift, uint32_t mask, const uint32_t *sk,
                      const uint32_t *sv, uint32_t *dk, uint32_t *dv, size_t n)
{
    int moved = 1;
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
        int got = omp_get_num_threads();
        size_t lo, hi;
        chunk_of(n, t, got, &lo, &hi);
        size_t *h = hist + (size_t)t * MAX_RADIX;
        memset(h, 0, (mask + 1) * sizeof *h);
        for (size_t i = lo; i < hi; i++)
            h[(sk[i] >> shift) & mask]++;
#pragma omp barrier
#pragma omp single
        moved = !scan_histograms(hist, got, (int)mask + 1, n);
        if (moved) {
            for (size_t i = lo; i < hi; i++) {
                size_t pos = h[(sk[i] >> shift) & mask]++;
                dk[pos] = sk[i];
                if (sv)
                    dv[pos] = sv[i];
            }
        }
    }
    return moved;
}

/* The number of bits below the keys' highest set bit (0 when every key is 0). */
static int key_bits(int nt, const uint32_t *keys, size_t n)
{
    uint32_t any = 0;
#pragma omp parallel for num_threads(nt) reduction(| : any)
    for (size_t i = 0; i < n; i++)
        any |= keys[i];
    int bits = 0;
    while (bits < 32 && (any >> bits) != 0)
        bits++;
    return bits;
}

int ghmi_cpu_sort_pairs(int threads, uint32_t *keys, uint32_t *values, size_t n)
{
    if (n < 2)
        return GHM_OK;
    int nt = workers_for(threads, n);
    int bits = key_bits(nt, keys, n);
    if (bits == 0)
        return GHM_OK; /* every key is 0: sorted already */
    int widest = n <= CACHED_KEYS ? MAX_DIGIT_BITS : MAX_DIGIT_BITS_LARGE;
    int passes = (bits + widest - 1) / widest;
    int digit_bits = (bits + passes - 1) / passes;
    uint32_t *tk = malloc(n * sizeof *tk);
    uint32_t *tv = values ? malloc(n * sizeof *tv) : NULL;
    size_t *hist = malloc((size_t)nt * MAX_RADIX * sizeof *hist);
    if (!tk || (values && !tv) || !hist) {
        free(tk);
        free(tv);
        free(hist);
        return GHM_ERR_NOMEM;
    }
    uint32_t *sk = keys, *sv = values, *dk = tk, *dv = tv;
    uint32_t mask = (1u << digit_bits) - 1;
    for (int shift = 0; shift < bits; shift += digit_bits) {
        if (!radix_pass(nt, hist, shift, mask, sk, sv, dk, dv, n))
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
