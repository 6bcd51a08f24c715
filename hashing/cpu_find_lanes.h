/*
 * cpu_find_lanes.h - the CPU maps' pipelined find (cuckoo's thesis layout in map_cpu.c, open
 * addressing in map_open_cpu.c, Robin Hood in map_robin_cpu.c): keys whose lookups need a varying
 * number of dependent cache misses are walked GHMI_LANES at a time, interleaved.
 *
 * Why: a table of 2^24 keys is far larger than the caches, so each probe of a new cache line is a
 * miss of ~100 ns. Prefetching the first line of a batch of keys overlaps the first misses only;
 * every later probe (double hashing's next slot, Robin Hood's next age, the next cuckoo hash) was
 * then a miss waited for alone. Here each lane holds one
 * key's probe state; a pass over the lanes advances every lane by one line, which it prefetched
 * the pass before, and prefetches its next; a lane whose key is answered takes the next key at
 * once. So about GHMI_LANES misses are in flight at every probe depth, and a key costs the lines
 * it really needs, not every line it might need.
 *
 * A scheme supplies two functions, inlined into its copy of the loop:
 *   start(map, lane, &value): lane->key is new; set the probe state and prefetch the first line.
 *       Returns 1 when the key is answered without touching the table (value set), else 0.
 *   step(map, lane, &value): probe the prefetched line (and any later probes in that same line);
 *       return 1 when answered (value set), else move the state on, prefetch, and return 0.
 * The answers are those of a plain walk of the same sequence: only the order of the memory
 * accesses across keys changes.
 *
 * Where every key needs the same fixed lines (the bucketed layout's two buckets, chaining's starts
 * then run, two-level's three slots), prefetching a whole batch stage by stage measured faster
 * than lanes (their bookkeeping per key costs more than the drain between stages), so those maps
 * keep their batches; chaining's stages run as a software pipeline (map_chain_cpu.c says why).
 */
#ifndef GHM_CPU_FIND_LANES_H
#define GHM_CPU_FIND_LANES_H

#include <stddef.h>
#include <stdint.h>

/* Keys in flight per thread: enough to cover a miss with a pass over the other lanes. */
#define GHMI_LANES 32
/* Keys per parallel work item: dynamic scheduling hands out this many at a time, so a thread
 * descheduled on a busy machine delays one chunk, while the lanes' start and drain stay rare. */
#define GHMI_FIND_CHUNK 4096

/* One key's lookup in flight; the scheme's start and step give the fields their meaning. */
typedef struct GhmiLane {
    size_t idx;     /* the query's index in keys[] and out[] */
    uint32_t key;
    uint32_t pos;   /* the slot (or entry) probed next */
    uint32_t step;  /* a second position or step */
    uint32_t probe; /* probes made, an age or a stage */
} GhmiLane;

typedef int (*GhmiLaneFn)(const void *map, GhmiLane *lane, uint32_t *value);

/* Loads keys[*next] into lane and starts it; a key answered at once is written and the next taken.
 * Returns 0 when no key is left. */
static inline __attribute__((always_inline)) int
ghmi_lane_fill(const void *map, GhmiLane *lane, const uint32_t *keys, size_t n, size_t *next,
               uint32_t *out, GhmiLaneFn start)
{
    while (*next < n) {
        uint32_t v;
        lane->idx = *next;
        lane->key = keys[(*next)++];
        if (!start(map, lane, &v))
            return 1;
        out[lane->idx] = v;
    }
    return 0;
}

/* out[i] = the answer for keys[i], i < n, with GHMI_LANES lookups interleaved (see above). Always
 * inlined, so that start and step are inlined in it. */
static inline __attribute__((always_inline)) void
ghmi_find_lanes(const void *map, const uint32_t *keys, size_t n, uint32_t *out, GhmiLaneFn start,
                GhmiLaneFn step)
{
    GhmiLane lane[GHMI_LANES];
    size_t next = 0;
    int live = 0;
    while (live < GHMI_LANES && ghmi_lane_fill(map, &lane[live], keys, n, &next, out, start))
        live++;
    while (live > 0) {
        for (int l = 0; l < live;) {
            uint32_t v;
            if (!step(map, &lane[l], &v)) {
                l++;
                continue;
            }
            out[lane[l].idx] = v;
            if (ghmi_lane_fill(map, &lane[l], keys, n, &next, out, start))
                l++;
            else
                lane[l] = lane[--live]; /* input spent: the last lane takes this place */
        }
    }
}

/* The same over `threads` OpenMP threads, GHMI_FIND_CHUNK keys per work item (one thread up to
 * 4096 keys, where starting the team costs more than it saves). A macro, not a function: the
 * parallel region is outlined, and through a function's parameters start and step would reach
 * it as pointers called indirectly, where here they stay names that inline. */
#define GHMI_FIND_LANES_PARALLEL(map, keys, n, out, threads, start, step)                        \
    do {                                                                                         \
        size_t n_ = (n), nchunk_ = (n_ + GHMI_FIND_CHUNK - 1) / GHMI_FIND_CHUNK;                 \
        int threads_ = (threads);                                                                \
        _Pragma("omp parallel for schedule(dynamic, 1) num_threads(threads_) if (n_ > 4096)")    \
        for (size_t c_ = 0; c_ < nchunk_; c_++) {                                                \
            size_t lo_ = c_ * GHMI_FIND_CHUNK;                                                   \
            size_t cnt_ = lo_ + GHMI_FIND_CHUNK < n_ ? GHMI_FIND_CHUNK : n_ - lo_;               \
            ghmi_find_lanes((map), (keys) + lo_, cnt_, (out) + lo_, start, step);                \
        }                                                                                        \
    } while (0)

#endif /* GHM_CPU_FIND_LANES_H */
