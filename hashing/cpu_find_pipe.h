/*
 * cpu_find_pipe.h - the CPU find of the maps whose keys all need the same chain of dependent
 * lines (chaining: the bucket's starts, then its run; the bucketed cuckoo layout: its buckets),
 * as a software pipeline.
 *
 * Why: these finds went in batches of keys stage by stage (every key's first line prefetched,
 * then read and its second prefetched, ...), so between a batch's last stage and the next
 * batch's first the misses in flight drained to none. Here key i enters stage 0 while key
 * i - GHMI_PIPE_DIST is in stage 1, key i - 2 GHMI_PIPE_DIST in stage 2, and so on: a line is
 * prefetched GHMI_PIPE_DIST keys before it is read, and as many misses of every stage are in
 * flight all the time. 2-core finds of 2^24 keys at load 0.8 (2026-11-30, docs/BENCHMARKS.md):
 * chaining 57-60 -> 70-75 M keys/s, the bucketed layout 80 -> 86-89 (absent keys 65 -> 74-79);
 * a distance of 4 was slower than the batches, 8-12 best, 16-20 no better.
 * Keys with a varying number of lines (open addressing, Robin Hood, the thesis's cuckoo layout)
 * use cpu_find_lanes.h instead.
 *
 * A scheme supplies two or three stage functions, inlined into its copy of the loop:
 *   stage 0 gets the key in k->key: compute, prefetch the first line;
 *   a middle stage reads what stage 0 prefetched and prefetches the next line;
 *   the last stage leaves the answer in k->value.
 * The answers are a plain find's: only the order of the memory accesses across keys changes.
 */
#ifndef GHM_CPU_FIND_PIPE_H
#define GHM_CPU_FIND_PIPE_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_find_lanes.h" /* GHMI_FIND_CHUNKS */

#define GHMI_PIPE_DIST 12
#define GHMI_PIPE_RING 32 /* a power of two above (stages - 1) * GHMI_PIPE_DIST */

/* One key in the pipeline. */
typedef struct GhmiPipeKey {
    uint32_t key;
    uint32_t value; /* the answer, from the last stage */
    uint32_t w[6];  /* the scheme's state between stages (32 bytes a key: faster than 28) */
} GhmiPipeKey;

typedef void (*GhmiPipeFn)(const void *map, GhmiPipeKey *k);

/* Stage s of key j (0 <= j < n) in the ring; the last stage writes out[j]. */
static inline __attribute__((always_inline)) void
ghmi_pipe_stage(const void *map, GhmiPipeKey *ring, const uint32_t *keys, uint32_t *out,
                size_t j, int s, int stages, GhmiPipeFn fn)
{
    GhmiPipeKey *k = &ring[j % GHMI_PIPE_RING];
    if (s == 0)
        k->key = keys[j];
    fn(map, k);
    if (s == stages - 1)
        out[j] = k->value;
}

/* out[i] = the answer for keys[i], i < n, through `stages` (2 or 3) stages s0, s1, s2 (NULL when
 * there are two). Always inlined, so that the stages are inlined in it. */
static inline __attribute__((always_inline)) void
ghmi_find_pipe(const void *map, const uint32_t *keys, size_t n, uint32_t *out, int stages,
               GhmiPipeFn s0, GhmiPipeFn s1, GhmiPipeFn s2)
{
    _Static_assert((GHMI_PIPE_RING & (GHMI_PIPE_RING - 1)) == 0 &&
                       GHMI_PIPE_RING > 2 * GHMI_PIPE_DIST, "the ring holds every key in flight");
    GhmiPipeKey ring[GHMI_PIPE_RING];
    const size_t d = GHMI_PIPE_DIST;
    for (size_t i = 0; i < n + (size_t)(stages - 1) * d; i++) {
        if (i < n)
            ghmi_pipe_stage(map, ring, keys, out, i, 0, stages, s0);
        if (i >= d && i - d < n)
            ghmi_pipe_stage(map, ring, keys, out, i - d, 1, stages, s1);
        if (stages > 2 && i >= 2 * d && i - 2 * d < n)
            ghmi_pipe_stage(map, ring, keys, out, i - 2 * d, 2, stages, s2);
    }
}

/* ghmi_find_pipe over `threads` OpenMP threads (cpu_find_lanes.h's GHMI_FIND_CHUNKS). */
#define GHMI_FIND_PIPE_PARALLEL(map, keys, n, out, threads, stages, s0, s1, s2)                  \
    GHMI_FIND_CHUNKS(n, threads,                                                                 \
                     ghmi_find_pipe((map), (keys) + lo_, cnt_, (out) + lo_, (stages), s0, s1, s2))

#endif /* GHM_CPU_FIND_PIPE_H */
