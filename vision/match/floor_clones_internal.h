/*
 * floor_clones_internal.h - GHMI_FLOOR_CLONES, for the CPU loops that round with floor().
 *
 * floor() is one instruction with SSE4.1 (roundsd) and a dozen without. x86-64's baseline
 * lacks SSE4.1, so GCC builds a function marked GHMI_FLOOR_CLONES twice and the loader picks
 * one by the CPU; the results are the same (floor is exact either way, and ISO C mode contracts
 * no products into FMAs). Marked: the function that places coded points in basis frames
 * (geohash_signatures.c, a fifth of a one-shot CPU pair: the reference's tables 43.7 -> 40.8
 * ms on 2 cores) and those that land query points on reference edges (match_host.c: a query's
 * verification 7.3 -> 5.9 ms), docs/BENCHMARKS.md. Not under the sanitizers: the loader runs
 * the function that picks a clone while it relocates the program, before any sanitizer's
 * runtime has started, and ThreadSanitizer's instrumentation of that function crashed every
 * process.
 */
#ifndef GHM_FLOOR_CLONES_INTERNAL_H
#define GHM_FLOOR_CLONES_INTERNAL_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__CUDACC__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GHMI_FLOOR_CLONES __attribute__((target_clones("sse4.1", "default")))
#else
#define GHMI_FLOOR_CLONES
#endif

#endif /* GHM_FLOOR_CLONES_INTERNAL_H */
