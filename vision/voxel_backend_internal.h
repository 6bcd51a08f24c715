/*
 * voxel_backend_internal.h - how the voxel pipeline reaches device kernels: the backend's voxel
 * op table. Included by vision/voxel*.c and kernels/voxel/; not a public header.
 *
 * Usage (vision/voxel.c, vision/voxel_device.c):
 *     const GhmVoxelOps *ops = ghmi_voxel_ops(ctx);
 *     if (ops)                     // this backend runs the step on its device
 *         ret = ghmi_voxel_step_device(ctx, ops, ...);
 *     else
 *         ...the CPU path of voxel.c...
 *
 * As for GhmVisionOps: the CUDA backend fills the table (kernels/voxel/ops.cu), the CPU backend
 * leaves GhmBackend.voxel NULL, so no voxel code tests for CUDA. Every array argument is backend
 * memory; each op queues its work on the context's stream and neither allocates nor waits
 * (scratch / release are the stream-ordered allocator the host module uses for its arrays).
 *
 * Exactness: the device stages compute what the CPU path computes, bit for bit: the same
 * double operations in the same order with explicitly rounded intrinsics (no FMA contraction),
 * per-voxel normal sums in 64-bit fixed point (integer sums do not depend on the order of the
 * atomics), and a fill whose rule (nearest seed, ties to the smallest id) has one answer.
 */
#ifndef GHM_VOXEL_BACKEND_INTERNAL_H
#define GHM_VOXEL_BACKEND_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_index.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Normal components are summed per voxel as integers: round(component * 2^24), clamped to
 * +-2^40 (NaN counts as 0), so that sums are exact and identical on every backend. */
#define GHMI_VOXEL_FIX_SCALE 16777216.0
#define GHMI_VOXEL_FIX_LIMIT 1099511627776.0
#define GHMI_VOXEL_NO_SEED 0xFF

/* The grid as kernels see it; inv = 1.0 / size, as voxel.c computes it. */
typedef struct GhmVoxelGridArgs {
    double origin[3];
    double size;
    double inv;
    int32_t dims[3];
    int32_t pad;
} GhmVoxelGridArgs;

/* B's pose, a row-major 4x4 matrix (only the top three rows are read); present = 0: none. */
typedef struct GhmVoxelPose {
    double m[16];
    int32_t present;
    int32_t pad;
} GhmVoxelPose;

/* Counters the fill ops add to (unsigned long long, backend memory). */
enum { GHMI_VOXEL_PAIRS = 0, GHMI_VOXEL_SEEDS = 1, GHMI_VOXEL_COUNTERS = 2 };

typedef struct GhmVoxelOps {
    /* Stream-ordered device memory (uninitialised; bytes 0 gives a valid 1-byte block), its
     * release, and a queued memset to zero. */
    int (*scratch)(GhmContext *ctx, size_t bytes, void **out);
    void (*release)(GhmContext *ctx, void *p);
    int (*zero)(GhmContext *ctx, void *p, size_t bytes);
    /* pkey[i] = the voxel key of point i (moved by pose), GHM_NOT_FOUND outside the grid. */
    int (*keys)(GhmContext *ctx, const float *xyz, size_t n, const GhmVoxelPose *pose,
                const GhmVoxelGridArgs *g, uint32_t *pkey);
    /* For each point with pid[i] < K: counts[pid]++ and nsum[3 pid + r] += the fixed-point
     * component r of its normal (turned by pose); counts and nsum zeroed by the caller. */
    int (*accumulate)(GhmContext *ctx, const uint32_t *pid, size_t n, size_t K,
                      const float *normals, const GhmVoxelPose *pose, uint32_t *counts,
                      unsigned long long *nsum);
    /* normals[3v..] = the unit mean normal from nsum (zero when its length is <= 1e-6). */
    int (*normalise)(GhmContext *ctx, size_t K, const unsigned long long *nsum, float *normals);
    /* The ids of the (2 radius + 1)^3 - 1 neighbours of each of the K voxels (keys ascending,
     * ix their index) in hood order (voxel_internal.h), stored step-major: nbr[k * K + v];
     * hist[c] += voxels with c occupied neighbours (hist zeroed by the caller). */
    int (*neighbours)(GhmContext *ctx, const GhmIndex *ix, const uint32_t *keys, size_t K,
                      const GhmVoxelGridArgs *g, int radius, uint32_t *nbr, uint32_t *hist);
    /* voxel.c's contact(): cross[v] = id of the same voxel in the other cloud (other: its index
     * with other_K voxels, onormals its normals), barrier[v] and plane[6v..] from the other
     * cloud's voxels within rho. */
    int (*contact)(GhmContext *ctx, const uint32_t *keys, size_t K, const GhmIndex *other,
                   size_t other_K, const float *onormals, const GhmVoxelGridArgs *g, int rho,
                   uint32_t *cross, uint8_t *barrier, float *plane);
    /* voxel.c's classify(): barrier labels, ring and seeds (GHMI_VOXEL_NO_SEED for none). */
    int (*classify)(GhmContext *ctx, const uint32_t *keys, size_t K, const GhmVoxelGridArgs *g,
                    int radius, const uint32_t *nbr, const uint32_t *cross,
                    const uint8_t *barrier, const float *plane, double t_out, double t_in,
                    uint8_t *label, uint8_t *ring, uint8_t *seed);
    /* voxel.c's fill_once() without labels: state[v] = level << 32 | id of the nearest live
     * seed (ties to the smallest id; level 0 and v for a seed), all ones for barrier voxels and
     * voxels no seed reaches. queue: K ids of scratch; cnt: K + 2 counters, zeroed by the
     * caller. */
    int (*fill)(GhmContext *ctx, size_t K, int nn, const uint32_t *nbr, const uint8_t *barrier,
                const uint8_t *seed, unsigned long long *state, uint32_t *queue, uint32_t *cnt);
    /* Non-barrier labels from the settled state (the seed's label, unknown when unreached),
     * then voxel.c's find_conflicts(): drop[seed] = 1 for both seeds of an inside voxel next to
     * an outside one away from the ring and barrier; counters[PAIRS] += such pairs. */
    int (*fill_labels)(GhmContext *ctx, size_t K, int nn, const uint32_t *nbr,
                       const uint8_t *barrier, const uint8_t *ring, const uint8_t *seed,
                       const unsigned long long *state, uint8_t *label, uint8_t *drop,
                       unsigned long long *counters);
    /* Seeds with drop[v] set (drop may be NULL) become NO_SEED; counters[SEEDS] += live seeds. */
    int (*seeds)(GhmContext *ctx, size_t K, const uint8_t *drop, uint8_t *seed,
                 unsigned long long *counters);
} GhmVoxelOps;

/* The context's voxel op table, or NULL when its backend runs the voxel stages on the CPU. */
const GhmVoxelOps *ghmi_voxel_ops(const GhmContext *ctx);

/* The fixed-point value of one normal component (see GHMI_VOXEL_FIX_SCALE). */
static inline int64_t ghmi_voxel_fix(float f)
{
    double q = (double)f * GHMI_VOXEL_FIX_SCALE;
    if (!(fabs(q) <= GHMI_VOXEL_FIX_LIMIT))
        q = q > 0 ? GHMI_VOXEL_FIX_LIMIT : q < 0 ? -GHMI_VOXEL_FIX_LIMIT : 0.0;
    return (int64_t)llrint(q);
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_VOXEL_BACKEND_INTERNAL_H */
