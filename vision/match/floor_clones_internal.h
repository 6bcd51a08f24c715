/*
 * floor_clones_internal.h - GHMI_FLOOR_CLONES, for the CPU loops that round with floor().
 *
 * floor() is one instruction with SSE4.1 (roundsd) and a dozen without. x86-64's baseline
 * lacks SSE4.1, so GCC builds a function marked GHMI_FLOOR_CLONES three times and the loader
 * picks one by the CPU: AVX2 (four doubles an instruction where SSE4.1 takes two), SSE4.1, the
 * baseline. The results are the same (floor is exact either way, the same operations in the same
 * order on each lane, and ISO C mode contracts no products into FMAs; the avx2 target does not
 * enable FMA anyway). Marked: the function that places coded points in basis frames
 * (geohash_signatures.c, a fifth of a one-shot CPU pair: the reference's tables 43.7 -> 40.8
 * ms on 2 cores) and those that land query points on reference edges (match_host.c: a query's
 * verification 7.3 -> 5.9 ms); the AVX2 clones made one-shot pairs another 6 % faster on 2
 * cores, where the per-pixel passes of vision/features built for AVX2 gained nothing
 * (docs/BENCHMARKS.md). Not under the sanitizers: the loader runs
 * the function that picks a clone while it relocates the program, before any sanitizer's
 * runtime has started, and ThreadSanitizer's instrumentation of that function crashed every
 * process.
 */
#ifndef GHM_FLOOR_CLONES_INTERNAL_H
#define GHM_FLOOR_CLONES_INTERNAL_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__CUDACC__) && \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define GHMI_FLOOR_CLONES __attribute__((target_clones("avx2", "sse4.1", "default")))
#else
#define GHMI_FLOOR_CLONES
#endif

#endif /* GHM_FLOOR_CLONES_INTERNAL_H */
