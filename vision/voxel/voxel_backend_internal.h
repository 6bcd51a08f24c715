/*
 * voxel_backend_internal.h - how the voxel pipeline reaches device kernels: the backend's voxel
 * op table. Included by vision/voxel/ and kernels/vision/voxel/; not a public header.
 *
 * Usage (vision/voxel/voxel.c, vision/voxel/voxel_device.c):
 *     const GhmVoxelOps *ops = ghmi_voxel_ops(ctx);
 *     if (ops)                     // this backend runs the step on its device
 *         ret = ghmi_voxel_device_step(dev, ...);
 *     else
 *         ...the CPU path of voxel.c...
 *
 * As for GhmVisionOps: the CUDA backend's "voxel" device module (kernels/vision/voxel/ops.cu)
 * holds the table, the CPU backend has none (NULL), so no voxel code tests for CUDA. Every
 * array argument is backend memory unless it says host; each op queues its work on the
 * context's stream and waits for nothing but where it says so (the memory ops are the
 * stream-ordered allocator and copies the host module uses for its arrays; the table op lets
 * the multimap grow its own arrays, stream-ordered too).
 *
 * Both clouds go through each stage in one launch: points are numbered A's first (0..nA-1), then
 * B's; voxels are numbered per cloud (ids 0..K-1 in ascending key order, as GhmIndex numbers
 * them on the CPU path), and kernels that work on voxels take the two clouds' arrays as a
 * GhmVoxelPair. The voxel table is a hashing/ GhmMultimap of both clouds' points, built on the
 * device without a wait (ghm_cuda_multimap_build_queued): key = the point's sort key, cloud <<
 * (key_bits + 1) | voxel key, value = the point's index. Its runs are the voxels in ascending
 * key order (A's, A's points outside the grid, B's, B's outside), so the run of a voxel minus
 * its cloud's first run is its id; kernels probe the multimap's map (key -> run) through its
 * device reference.
 *
 * Exactness: the device stages compute what the CPU path computes, bit for bit: the same
 * double operations in the same order with explicitly rounded intrinsics (no FMA contraction),
 * per-voxel normal sums in 64-bit fixed point (integer sums do not depend on the order of the
 * additions), and a fill whose rule (nearest seed, ties to the smallest id) has one answer.
 */
#ifndef GHM_VOXEL_BACKEND_INTERNAL_H
#define GHM_VOXEL_BACKEND_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_dynmap.h"
#include "ghm_multimap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Normal components are summed per voxel as integers: round(component * 2^24), clamped to
 * +-2^40 (NaN counts as 0), so that sums are exact and identical on every backend. */
#define GHMI_VOXEL_FIX_SCALE 16777216.0
#define GHMI_VOXEL_FIX_LIMIT 1099511627776.0
#define GHMI_VOXEL_NO_SEED 0xFF
/* A label's bit (the labels are 0-3) that marks, from a refill of a fill's orphans to the
 * conflict test over them (labels.c, labels.cu), a voxel refilled in this round. */
#define GHMI_VOXEL_ORPHAN 0x80
#define GHMI_VOXEL_HIST 343 /* occupied-neighbour counts 0..342 (radius 3) */

/* The grid as kernels see it; inv = 1.0 / size, as voxel.c computes it. key_bits: the bits of
 * the largest key (nx ny nz - 1), so that a point outside the grid sorts as 1 << key_bits. */
typedef struct GhmVoxelGridArgs {
    double origin[3];
    double size;
    double inv;
    int32_t dims[3];
    int32_t key_bits;
} GhmVoxelGridArgs;

/* B's pose, a row-major 4x4 matrix (only the top three rows are read); present = 0: none. */
typedef struct GhmVoxelPose {
    double m[16];
    int32_t present;
    int32_t pad;
} GhmVoxelPose;

/* What the host reads back: after the table (the fields before hist, one small download), and
 * at the end of the step (all of it, zeroed by the host before the stages that add to it). */
typedef struct GhmVoxelInfo {
    uint32_t runs;                              /* distinct sort keys, both clouds */
    uint32_t runs_a;                            /* of which A's (with A's "outside" run) */
    uint32_t outside[2];                        /* points outside the grid per cloud */
    uint32_t table_failed;                      /* the table's build attempt failed */
    uint32_t placed;                            /* B's voxels placed in A's rows (contact) */
    uint32_t hist[2][GHMI_VOXEL_HIST];          /* voxels with c occupied neighbours */
    unsigned long long label_count[2][4];
    unsigned long long seeds[2];                /* live seeds after the rounds */
    unsigned long long conflicts[2];            /* conflicting pairs of the last round */
    uint32_t rounds[2];                         /* fills run */
} GhmVoxelInfo;

/* One cloud's voxel arrays (device memory), as the voxel kernels see them. */
typedef struct GhmVoxelSideArgs {
    uint32_t K;           /* occupied voxels */
    uint32_t first_run;   /* the table's run of voxel 0 (0 for A, A's runs for B) */
    int32_t radius;       /* neighbourhood of nbr (1 = 26 neighbours) */
    uint32_t *keys;       /* K ascending keys */
    uint32_t *counts;     /* K points per voxel */
    float *normals;       /* 3K unit mean normals (estimated: PCA normals, by the normals op) */
    double *moments;      /* GHMI_MOMENTS K point moments (voxel_internal.h) when the cloud has
                           * no normals and they are estimated; NULL when it has normals */
    uint8_t *label;       /* K */
    uint32_t *nbr;        /* nn K neighbour ids, step-major: nbr[k K + v]; NULL for a side
                           * given as rows at radius 1 (below): found by the rows instead */
    uint32_t *mask;       /* K: bit k = neighbour k is occupied and not barrier (radius 1) */
    uint32_t *cross;      /* K: id of the same voxel in the other cloud */
    uint8_t *barrier;     /* K */
    float *plane;         /* 6K */
    uint8_t *ring;        /* K */
    uint8_t *seed;        /* K */
    uint8_t *drop;        /* K, zeroed by the host */
    unsigned long long *state; /* K: fill state, level << 32 | seed id */
    uint32_t *queue;      /* K: the fill's queue */
    /* A cloud given as rows (voxel_internal.h's GhmiVoxelRows) whose K voxels are its points,
     * one each, so that voxel start[r] + x - lo[r] is row r's voxel x: the neighbours op finds
     * its neighbours, and the contact op the other cloud its voxels, by the rows, not by the
     * table (NULL: by the table). dims: the grid's, for the kernels that find such a side's
     * neighbours without the grid's arguments (the fill's). */
    const int32_t *rows_lo, *rows_hi;
    const uint64_t *rows_start;
    int32_t dims[3];
} GhmVoxelSideArgs;

typedef struct GhmVoxelPair {
    GhmVoxelSideArgs s[2];
} GhmVoxelPair;

/* Scratch of the fill op (zeroed by the host): per-level queue counts, conflict pairs, and a
 * volume's orphans and refill passes (labels.cu's pull_orphans). */
typedef struct GhmVoxelFillControl {
    uint32_t count[2][3];
    uint32_t orphans[2];
    unsigned long long pairs[2][2];
    uint32_t changed[2][3];
} GhmVoxelFillControl;

/* Scratch of the normals op for one cloud (device memory, K = the cloud's voxels; contents need
 * not be initialised). */
typedef struct GhmVoxelEstimateSide {
    double *part;               /* 8 (K / GHMI_CENTROID_CHUNK + 2): centroid partial sums */
    unsigned long long *far;    /* K: squared distance from the centroid (bits of a double) */
    unsigned long long *best;   /* K: per component, the largest of far */
    unsigned long long *key;    /* K: breadth-first discovery key, parent rank << 16 | step */
    uint32_t *parent;           /* K: union-find forest of the connected parts */
    uint32_t *comp;             /* K: component (its smallest voxel id) */
    uint32_t *best_id;          /* K: per component, the smallest id at the largest far */
    uint32_t *level;            /* K: breadth-first level */
    uint32_t *queue;            /* K: the breadth-first order */
    float *ref;                 /* 3K: orientation reference */
} GhmVoxelEstimateSide;

typedef struct GhmVoxelEstimate {
    GhmVoxelEstimateSide s[2];
} GhmVoxelEstimate;

/* Scratch of the orientation: root counts and per-block child counts of a level. */
enum { GHMI_VOXEL_ORIENT_BLOCKS = 1024 };
typedef struct GhmVoxelOrientControl {
    uint32_t roots[2];
    uint32_t bsum[2][GHMI_VOXEL_ORIENT_BLOCKS];
} GhmVoxelOrientControl;

typedef struct GhmVoxelOps {
    /* Stream-ordered device memory (uninitialised; bytes 0 gives a valid 1-byte block), its
     * release, and a queued memset of every byte to value. */
    int (*scratch)(GhmContext *ctx, size_t bytes, void **out);
    void (*release)(GhmContext *ctx, void *p);
    int (*memset)(GhmContext *ctx, void *p, int value, size_t bytes);
    /* Page-locked host memory (waits for the device before it frees). */
    int (*host_alloc)(GhmContext *ctx, size_t bytes, void **out);
    void (*host_free)(GhmContext *ctx, void *p);
    /* Queued copies host -> device and device -> host (asynchronous for page-locked memory);
     * upload copies from device memory too (a cloud another state holds on the device). */
    int (*upload)(GhmContext *ctx, void *dst, const void *host_src, size_t bytes);
    int (*download)(GhmContext *ctx, void *host_dst, const void *src, size_t bytes);
    /* Stage timers: n events; mark records event i on the stream; elapsed (after a wait) gives
     * the milliseconds from event i to event j. */
    int (*timer_create)(GhmContext *ctx, int n, void **out);
    int (*timer_mark)(GhmContext *ctx, void *t, int i);
    int (*timer_elapsed)(void *t, int i, int j, double *ms);
    void (*timer_free)(void *t);

    /* The points of a cloud given by rows (GhmiVoxelRows, voxel_internal.h; lo, hi and start
     * uploaded, nr = ny nz rows, n points): ghmi_voxel_rows_points' floats, into xyz. */
    int (*rows)(GhmContext *ctx, const GhmVoxelGridArgs *g, const int32_t *lo, const int32_t *hi,
                const uint64_t *start, size_t nr, size_t n, float *xyz);
    /* The voxels of those points where each lies in its own voxel (ghmi_voxel_centres_in_own_
     * voxels): what build makes of them (keys in the rows' order, counts 1, normals zero),
     * without the points or the table. */
    int (*row_voxels)(GhmContext *ctx, const GhmVoxelGridArgs *g, const int32_t *lo,
                      const int32_t *hi, const uint64_t *start, size_t nr, size_t n,
                      uint32_t *keys, uint32_t *counts, float *normals);
    /* The input of the voxel table (a CUDA GhmMultimap), staged in its own buffers: for the
     * n = na + nb points of xyz (A's then B's; B moved by pose), key i = cloud << (key_bits + 1)
     * | (the voxel key of point i, or 1 << key_bits outside the grid), value i = i;
     * info->outside[cloud] += points outside the grid. */
    int (*keys)(GhmContext *ctx, GhmMultimap *table, const float *xyz, size_t na, size_t nb,
                const GhmVoxelPose *pose, const GhmVoxelGridArgs *g, GhmVoxelInfo *info);
    /* The voxel table built from the n staged pairs, queued (sorted on key_bits + 2 bits, the
     * hash constants of attempt); then info->runs = its runs, info->runs_a = A's runs (keys
     * below 1 << (key_bits + 1)), and info->table_failed = 1 if the attempt failed (the host
     * then stages the keys again and builds with attempt + 1). */
    int (*table)(GhmContext *ctx, GhmMultimap *table, size_t n, int key_bits, int attempt,
                 GhmVoxelInfo *info);
    /* Per voxel (runs known: runs_a = info->runs_a, from the host): keys, counts and unit mean
     * normals of both clouds into p (normals of B turned by pose; for a cloud with
     * p->s[c].moments, the moments of its points, B's moved by pose, instead), from the table's
     * runs. xyz and pnormals: the points, as for keys. */
    int (*build)(GhmContext *ctx, const GhmMultimap *table, size_t runs, size_t runs_a,
                 const float *xyz, const float *pnormals, const GhmVoxelPose *pose,
                 const GhmVoxelGridArgs *g, const GhmVoxelPair *p);
    /* Neighbour ids of the clouds with do_side[c] set, at p->s[c].radius (hood order of
     * voxel_internal.h); info->hist[c][m] += voxels with m occupied neighbours (zeroed by the
     * caller). */
    int (*neighbours)(GhmContext *ctx, const GhmMultimap *table, const GhmVoxelGridArgs *g,
                      const GhmVoxelPair *p, const int do_side[2], GhmVoxelInfo *info);
    /* voxelize.c's contact() for both clouds with radius rho: cross, barrier and plane (info:
     * device scratch for a count). */
    int (*contact)(GhmContext *ctx, const GhmMultimap *table, const GhmVoxelGridArgs *g, int rho,
                   const GhmVoxelPair *p, GhmVoxelInfo *info);
    /* labels.c's classify(): barrier labels, ring, seeds (GHMI_VOXEL_NO_SEED for none) and the
     * fill masks. */
    int (*classify)(GhmContext *ctx, const GhmVoxelGridArgs *g, double t_out, double t_in,
                    const GhmVoxelPair *p);
    /* labels.c's fill(): every round (fill, labels, conflicts, dropped seeds) of both clouds in
     * one cooperative launch; info gets rounds, levels, conflicts, live seeds and the label
     * counts (ctl and info zeroed by the caller). */
    int (*fill)(GhmContext *ctx, int max_rounds, const GhmVoxelPair *p, GhmVoxelFillControl *ctl,
                GhmVoxelInfo *info);
    /* vision/voxel/normals.c's ghmi_voxel_estimate_normals() for the clouds with do_side[c] set
     * (p->s[c].moments and p->s[c].nbr at p->s[c].radius filled): PCA normals into
     * p->s[c].normals, the centroid in normals.c's order of additions, the connected parts and
     * their roots (farthest from the centroid, ties to the smallest id), and the breadth-first
     * orientation in the CPU's queue order (one cooperative launch for both clouds). */
    int (*normals)(GhmContext *ctx, const GhmVoxelGridArgs *g, const GhmVoxelPair *p,
                   const int do_side[2], const GhmVoxelEstimate *e, GhmVoxelOrientControl *ctl);

    /* A voxel edit's set (vision/voxel/edit.c) edited from device arrays: its items are
     * GHMI_EDIT_WORDS words (the GHMI_EDIT_W_* layout), keys tagged with GHMI_EDIT_TAG. Lists
     * are written in no set order, counts (device) incremented by their lengths. */
    /* The tagged keys of the n voxels (keys, labels) with label `label`: into out, counts[0]. */
    int (*edit_select)(GhmContext *ctx, const uint32_t *keys, const uint8_t *labels, size_t n,
                       int label, uint32_t *out, uint32_t *counts);
    /* add's items as the set takes them where it has none (edit.c's add_cloud_item and
     * add_inside_item of an absent voxel), into items: the cloud's K voxels (keys, point
     * counts, unit mean normals, as edit_cut takes them) as surface, then the n tagged keys of
     * inside as interior with no points. */
    int (*edit_add_items)(GhmContext *ctx, const uint32_t *keys, const uint32_t *counts,
                          const float *normals, size_t K, const uint32_t *inside, size_t n,
                          uint32_t *items);
    /* After the insert of those total items (handles, stored: its answers): the items the set
     * already held rewritten in place as add merges them (a cloud voxel's count and normal
     * sums added, surface unless interior; an inside voxel interior), *relabelled (device)
     * incremented by each that changed. */
    int (*edit_add_present)(GhmContext *ctx, GhmDynmap *set, const uint32_t *items,
                            const GhmDynmapHandle *handles, const uint8_t *stored, size_t K,
                            size_t total, uint32_t *relabelled);
    /* subtract's or intersect's changes made in the set (a GhmDynmap of ctx), for a probe of
     * rows lo, hi, start on the nx-wide grid and labels (the probe's voxels) and its cloud's K
     * voxels (keys ascending, point counts, unit mean normals): an item at a cloud voxel becomes
     * its cut item (normals turned round by subtract), counted in *cuts (device); any other is
     * erased where subtract's probe holds it inside, or where intersect's probe does not hold
     * it inside or as an intersection voxel. Waits for the set's new size. */
    int (*edit_cut)(GhmContext *ctx, GhmDynmap *set, int subtract, int32_t nx, const int32_t *lo,
                    const int32_t *hi, const uint64_t *start, const uint8_t *labels,
                    const uint32_t *keys, const uint32_t *counts, const float *normals, size_t K,
                    uint32_t *cuts);
    /* The probe's rows (edit_probe.c's row_spans and row_starts) from the K ascending voxel
     * keys of its cloud on a grid of dims, spans widened by d: per row r of the dims[1]
     * dims[2], lo[r] and hi[r] (lo > hi: none) and start[r], the voxels of the rows before;
     * *total, all of them. Every array in device memory. */
    int (*edit_spans)(GhmContext *ctx, const int dims[3], const uint32_t *keys, size_t K,
                      int d, int32_t *lo, int32_t *hi, uint64_t *start, uint64_t *total);
    /* edit_probe.c's ghmi_edit_encloses for a cloud of radius rho (1 to 3): *found (device,
     * zeroed by the caller) set to 1 when one of the probe's n voxels (keys, labels; its rows'
     * spans lo, hi and starts, GhmiVoxelRows) labelled inside has no intersection voxel of the
     * probe (the cloud's) in the cube of rho around it. */
    int (*edit_encloses)(GhmContext *ctx, const int dims[3], const uint32_t *keys,
                         const uint8_t *labels, size_t n, const int32_t *lo, const int32_t *hi,
                         const uint64_t *start, int rho, uint32_t *found);
    /* Loads the code of the edit_* ops now, on the calling thread (ghm_dynmap_preload's
     * reason): an edit's first subtract or intersect need not wait for it. */
    int (*edit_preload)(GhmContext *ctx);
} GhmVoxelOps;

/* A voxel edit's items (edit.c): key | GHMI_EDIT_TAG (keys are below 2^30: the tag keeps word 0
 * non-zero), the point count, the normal sums (3 floats) and the label. */
enum {
    GHMI_EDIT_W_KEY = 0,
    GHMI_EDIT_W_COUNT = 1,
    GHMI_EDIT_W_NORMAL = 2,
    GHMI_EDIT_W_LABEL = 5,
    GHMI_EDIT_WORDS = 6
};
#define GHMI_EDIT_TAG 0x80000000u

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
