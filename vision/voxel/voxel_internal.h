/*
 * voxel_internal.h - what the files of vision/voxel/ share (grid.c defines the grid helpers
 * declared here), and what kernels/vision/voxel/ needs of them. Not a public header.
 */
#ifndef GHM_VOXEL_INTERNAL_H
#define GHM_VOXEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_voxel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GHM_OK when the options are usable (grid.c), else GHM_ERR_INVALID with why (may be NULL)
 * naming the first option out of range. */
int ghmi_voxel_check_options(const GhmVoxelOptions *o, char *why, size_t why_size);

/* Tests: the host memory a voxel edit counts on for its probe (edit.c's probe_fits); 0 restores
 * what the system reports. Not thread-safe: set before the edits that should see it. */
void ghmi_voxel_edit_memory_limit(size_t bytes);

/* ghm_voxel_normals_check on `threads` threads (the public one runs on one): the same verdict. */
int ghmi_voxel_normals_check(const GhmVoxelGrid *g, const GhmVoxelSide *s, int threads,
                             GhmVoxelNormalsCheck *out);

/* B's point p moved by the row-major 4x4 pose m (p as it is when m is NULL), in the order that
 * the device repeats: ((m0 p0 + m1 p1) + m2 p2) + m3 per row. */
static inline void ghmi_voxel_apply_pose(const double *m, const float *p, double out[3])
{
    if (!m) {
        out[0] = p[0], out[1] = p[1], out[2] = p[2];
        return;
    }
    for (int r = 0; r < 3; r++)
        out[r] = m[4 * r] * p[0] + m[4 * r + 1] * p[1] + m[4 * r + 2] * p[2] + m[4 * r + 3];
}

/* A cubic neighbourhood of radius r: the (2r+1)^3 - 1 steps (dx, dy, dz) other than (0,0,0),
 * in lexicographic (dz, dy, dx) order, so that the opposite of step k is step n - 1 - k.
 * Radius 1 is the 26-neighbourhood. */
enum { GHMI_MAX_RADIUS = 3, GHMI_MAX_HOOD = 342 };
typedef struct GhmiHood {
    int radius;
    int n;
    int step[GHMI_MAX_HOOD][3];
} GhmiHood;

void ghmi_hood_make(int radius, GhmiHood *h); /* grid.c */

/* A host block its owner keeps from use to use (a sweep's neighbour ids, a voxel edit's
 * arrays): grown, contents lost, a quarter beyond the need; never shrunk; freed by the owner
 * (free(k->p)). */
typedef struct GhmiKeep {
    void *p;
    size_t cap;
} GhmiKeep;

/* k's block with room for `bytes` (NULL when out of memory); *fresh (unless NULL) = 1 when it
 * was allocated now. voxel.c. */
void *ghmi_keep_room(GhmiKeep *k, size_t bytes, int *fresh);

/* Whether a grid's voxel counts are in range (ghm_voxel.h): 1..GHM_VOXEL_MAX_DIM per axis, at
 * most GHM_VOXEL_MAX_VOXELS in all. In doubles: the grid's fit asks before the counts are known
 * to fit an int. */
static inline int ghmi_voxel_counts_ok(const double d[3])
{
    for (int k = 0; k < 3; k++)
        if (!(d[k] >= 1 && d[k] <= GHM_VOXEL_MAX_DIM))
            return 0;
    return d[0] * d[1] * d[2] <= (double)GHM_VOXEL_MAX_VOXELS;
}

static inline int ghmi_voxel_dims_ok(const int dims[3])
{
    const double d[3] = {(double)dims[0], (double)dims[1], (double)dims[2]};
    return ghmi_voxel_counts_ok(d);
}

/* The bits a voxel key of grid g needs (x + nx * (y + ny * z) < 2^bits); the device table keys
 * a point by cloud << (bits + 1) | key, bit `bits` marking points outside the grid. */
static inline int ghmi_voxel_key_bits(const GhmVoxelGrid *g)
{
    uint64_t cells = (uint64_t)g->dims[0] * (uint64_t)g->dims[1] * (uint64_t)g->dims[2];
    int bits = 0;
    while (((uint64_t)1 << bits) < cells)
        bits++;
    return bits;
}

/* Where chunk k of [0, n) cut in `chunks` nearly equal parts starts (k = chunks: n), for passes
 * over voxels in chunks on threads whose results are merged in chunk order. */
static inline size_t ghmi_chunk_at(size_t n, int k, int chunks)
{
    return n / (size_t)chunks * (size_t)k + n % (size_t)chunks * (size_t)k / (size_t)chunks;
}

/* Such chunks' counts turned into their starts, the first at `first`; returns the end. */
static inline size_t ghmi_chunk_starts(size_t *count, int chunks, size_t first)
{
    for (int k = 0; k < chunks; k++) {
        size_t n = count[k];
        count[k] = first;
        first += n;
    }
    return first;
}

static inline void ghmi_voxel_coords(const GhmVoxelGrid *g, uint32_t key, int64_t xyz[3])
{
    /* 32-bit divisions (keys are below 2^30): 64-bit ones made this half of the normals
     * check's time (2-core AMD EPYC, 2026-11-29) */
    const uint32_t nx = (uint32_t)g->dims[0], ny = (uint32_t)g->dims[1], row = key / nx;
    xyz[0] = key - row * nx, xyz[1] = row % ny, xyz[2] = row / ny;
}

/* The key of the voxel at xyz moved by step d (scaled by sign, 1 or -1), or 0xFFFFFFFF (never
 * a stored key: keys are below 2^30; GHM_NOT_FOUND) outside the grid. */
static inline uint32_t ghmi_voxel_step_key(const GhmVoxelGrid *g, const int64_t xyz[3],
                                           const int d[3], int sign)
{
    const int64_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    int64_t a = xyz[0] + sign * d[0], b = xyz[1] + sign * d[1], c = xyz[2] + sign * d[2];
    int in = a >= 0 && a < nx && b >= 0 && b < ny && c >= 0 && c < nz;
    return in ? (uint32_t)(a + nx * (b + ny * c)) : 0xFFFFFFFFu;
}

/* A cloud whose median voxel has fewer occupied neighbours than this is too sparse for the grid
 * to be connected through 26-neighbours: a sampled surface that fills its voxels has about 8. */
enum { GHMI_MIN_MEDIAN_NEIGHBOURS = 6 };

/* A cloud with fewer points than this per occupied voxel samples its surface too thinly for a
 * one-voxel barrier: a voxel that the other surface crosses holds none of its points often
 * enough that the intersection voxels along a crossing have gaps, and the other cloud's
 * 26-connected fill leaks through them from the inside part to the outside part. Measured on
 * two 2M-point bunnies (scripts/voxel_pair.py): 4.5 points per voxel (512^3) no leak; 3.1 and
 * 2.4 leaks that the conflict rounds repair; 2.0 conflicts left after 4 rounds; 1.7 and 2.2
 * (1024^3) 0.03 % of the judged voxels wrong. Below it the barrier reaches one voxel further,
 * as for sparse clouds (ghm_voxel.h); above it the step costs what it did. */
enum { GHMI_THIN_POINTS_PER_VOXEL = 3 };

/* rho, the reach of the barrier in voxels (ghm_voxel.h): the larger neighbourhood radius less
 * one, and at least 1 when either cloud is thin; inside[c] = cloud c's points in the grid, K[c]
 * its occupied voxels. The one rule of both backends. */
static inline int ghmi_voxel_barrier_reach(const int radius[2], const size_t inside[2],
                                           const size_t K[2])
{
    int rho = (radius[0] > radius[1] ? radius[0] : radius[1]) - 1;
    for (int c = 0; c < 2; c++)
        if (K[c] > 0 && inside[c] < (size_t)GHMI_THIN_POINTS_PER_VOXEL * K[c] && rho < 1)
            rho = 1;
    return rho;
}

/* A cloud given by rows of a grid (a voxel edit's probe): a point at the centre of each voxel
 * lo[r]..hi[r] of row r = y + ny z (none where lo[r] > hi[r]), row r's first being point
 * start[r], n points in all, with zero normals. Arrays of ny nz entries: host arrays, or, when
 * on_device, the device memory of the context a device state binds them in (which copies them
 * there; nothing on the host reads them then). */
typedef struct GhmiVoxelRows {
    const GhmVoxelGrid *grid;
    const int32_t *lo, *hi;
    const size_t *start;
    size_t n;
    int on_device;
} GhmiVoxelRows;

/* The rows' points into xyz (3 n floats) on `threads` threads: the centres as ghm_voxel_centre
 * computes them, rounded to float (grid.c; a device makes the same ones, voxelize.cu). */
void ghmi_voxel_rows_points(const GhmiVoxelRows *rows, int threads, float *xyz);

/* Whether every voxel centre of g, rounded to float, lies in its own voxel, known from g's
 * extent alone: 1 within 2^21 voxel sizes of the origin, 0 beyond (a fine grid far from the
 * origin, where the centres are checked: ghmi_voxel_rows_match). */
int ghmi_voxel_centres_in_own_voxels(const GhmVoxelGrid *g);

/* Whether the K voxel keys of the rows' points (ghmi_voxel_rows_points) are the rows' voxels,
 * one a point, in order (each point in its own voxel: float coordinates held the centres
 * apart): known from the grid's extent where it is small enough (0.3 ms of a 0.9 M-voxel
 * probe's apply on the H200 host), else checked key by key on `threads` threads. */
int ghmi_voxel_rows_match(const GhmiVoxelRows *rows, const uint32_t *keys, size_t K,
                          int threads);

/* The point of row r of the rows at x (the row's first plus the offset in its span: the voxel's
 * id when each point is in its own voxel), or 0xFFFFFFFF (GHM_NOT_FOUND) outside the span. */
static inline uint32_t ghmi_voxel_rows_in(const GhmiVoxelRows *rows, size_t r, int32_t x)
{
    if (x < rows->lo[r] || x > rows->hi[r]) /* lo > hi: a row without points */
        return 0xFFFFFFFFu;
    return (uint32_t)(rows->start[r] + (size_t)(x - rows->lo[r]));
}

/* The point of the rows at voxel key, or 0xFFFFFFFF outside them (voxelize.cu's row_voxel on a
 * device). */
static inline uint32_t ghmi_voxel_rows_at(const GhmiVoxelRows *rows, uint32_t key)
{
    const uint32_t nx = (uint32_t)rows->grid->dims[0], r = key / nx;
    return ghmi_voxel_rows_in(rows, r, (int32_t)(key - r * nx));
}

/* The device path of the voxel pipeline (voxel_device.c), for a backend with device kernels
 * (ops, see voxel_backend_internal.h): the CPU path's stages with every array in backend memory and
 * the same results bit for bit. A state holds the two clouds on the device (uploaded once, by
 * create) and the buffers a step needs, reused by the next step; the clouds must stay alive
 * and unchanged while it exists; a cloud without normals has them estimated on the device
 * (ghmi_voxel_estimate_normals' results, bit for bit).
 * pinned = 1: results are downloaded into page-locked staging that the state owns, and the
 * result arrays of a step point into it (valid until the next step or the free; do not free
 * them); pinned = 0: each step mallocs the result arrays (the result owns them). */
struct GhmVoxelOps;
typedef struct GhmiVoxelDevice GhmiVoxelDevice;
int ghmi_voxel_device_create(GhmContext *ctx, const struct GhmVoxelOps *ops,
                             const GhmPointCloud *a, const GhmPointCloud *b, int pinned,
                             GhmiVoxelDevice **out);

/* What the steps after a rebind make for their caller (flags; 0: everything, on the host).
 * A voxel edit (edit_probe.c) runs its cloud alone only for the cloud's voxels, and on a device
 * reads the probe's labels there. */
enum {
    /* each side's voxels, counts, normals and radius, no labels: contact, classify and fill
     * are not run (labels NULL, label counts, seeds, conflicts and rounds 0) */
    GHMI_VOXEL_NO_LABELS = 1,
    /* a device state's result arrays stay in device memory (ghmi_voxel_device_view): the
     * result's arrays are NULL, its counts and radii are there; no effect on the CPU path */
    GHMI_VOXEL_ON_DEVICE = 2,
    /* cloud b is too sparse for the grid (an earlier run of it at this grid widened its
     * neighbourhood): a device state labels once, after widening, not first at radius 1 as
     * well (a pass of 1.9 ms wasted by a 40 k-point cloud at 256^3, H200, 2026-12-01); the
     * result is the same. No effect on the CPU path, which widens before it labels. */
    GHMI_VOXEL_B_SPARSE = 4
};

/* Binds the state to two other clouds (uploaded now; the same rules as create's), keeping its
 * table, blocks and staging for the steps that follow: what a caller that runs one step on
 * each of many pairs of clouds (a voxel edit's applies) keeps from pair to pair. a_rows: NULL,
 * or cloud a given as rows, whose points are then made on the device (a's arrays are not read;
 * a->n must be a_rows->n; its normals are zero): a probe of a million voxels is 24 MB to upload
 * but 1 MB of rows. Its side of a step's result (pinned) then has keys and labels only (counts
 * and normals NULL: a point a voxel, no normal). flags: GHMI_VOXEL_*, what the steps make (for
 * a pinned state, as a sweep's; create binds with 0). On failure the state has no clouds: a
 * step refuses it (GHM_ERR_INVALID) until a rebind succeeds. */
int ghmi_voxel_device_rebind(GhmiVoxelDevice *d, const GhmPointCloud *a,
                             const GhmiVoxelRows *a_rows, const GhmPointCloud *b, unsigned flags);

/* Lets the steps until d's next rebind use lender's voxel table instead of sorting and hashing
 * the points again, where it holds what theirs would: lender's last step had no A points, the
 * same grid and no pose, and d's A is out of the table (given as rows, each point in its own
 * voxel); the caller promises that lender's B was d's B, point for point (a voxel edit's cloud
 * alone and then against its probe), and that lender is not stepped, rebound or freed before
 * d's step. Elsewhere the steps build their own. */
int ghmi_voxel_device_borrow_table(GhmiVoxelDevice *d, const GhmiVoxelDevice *lender);

/* One step (ghm_voxel_intersect's): fills r->side[], r->rounds and r->time (r->grid already
 * set). On failure r may hold some arrays (pinned = 0), which ghm_voxel_result_free() releases. */
int ghmi_voxel_device_step(GhmiVoxelDevice *d, const double *b_pose, const GhmVoxelGrid *grid,
                           const GhmVoxelOptions *opt, GhmVoxelResult *r);

/* Frees the state (waiting for its work) and sets *d to NULL; accepts NULL. */
void ghmi_voxel_device_free(GhmiVoxelDevice **d);

/* The device arrays of a state's last step, valid until its next step, rebind or free: per side
 * the cloud's points, its voxels' keys, labels, point counts and normals (those of the result's
 * side, K voxels; a side given as rows: counts 1, normals 0), and, when A is given as rows, the
 * rows' lo, hi and start (else NULL): what a voxel edit reads to change its set on the device,
 * and to bind its cloud to its other state without an upload. */
typedef struct GhmiVoxelDeviceView {
    const float *xyz[2], *normals[2]; /* each cloud's points as bound (normals NULL: none;
                                       * both NULL for a side made from rows alone) */
    const uint32_t *keys[2];
    const uint8_t *labels[2];
    const uint32_t *counts[2];      /* the result side's per voxel: points, */
    const float *voxel_normals[2];  /* unit mean normals (3 a voxel) */
    const int32_t *lo, *hi;
    const uint64_t *start;
} GhmiVoxelDeviceView;
int ghmi_voxel_device_view(const GhmiVoxelDevice *d, GhmiVoxelDeviceView *v);

/* Binds a sweep to two other clouds (a rebind of its device state, or the CPU path's clouds),
 * keeping what its steps reuse; the last step's result is gone. a_rows: NULL, or cloud a given
 * as rows: a device state makes its points from them and gives its side keys and labels only
 * (ghmi_voxel_device_rebind: read no other array of side 0); the CPU path
 * reads a's arrays, which the caller fills (ghmi_voxel_rows_points) when the context's backend
 * has no voxel kernels. flags: GHMI_VOXEL_*, what the steps make. On failure the sweep's steps
 * fail until a rebind succeeds. */
int ghmi_voxel_sweep_rebind(GhmVoxelSweep *sw, const GhmPointCloud *a,
                            const GhmiVoxelRows *a_rows, const GhmPointCloud *b, unsigned flags);

/* ghmi_voxel_device_borrow_table for the sweeps' device states (the same promises); nothing on
 * the CPU path. */
int ghmi_voxel_sweep_borrow_table(GhmVoxelSweep *sw, const GhmVoxelSweep *lender);

/* The device arrays of the sweep's last step (ghmi_voxel_device_view); GHM_ERR_UNSUPPORTED on
 * the CPU path, GHM_ERR_INVALID before a step. */
int ghmi_voxel_sweep_device_view(const GhmVoxelSweep *sw, GhmiVoxelDeviceView *v);

/* Per-voxel moments of its points relative to the voxel centre: the sum of d = p - centre
 * (3 values) and of d d^T (xx, xy, xz, yy, yz, zz), 9 doubles per voxel. */
enum { GHMI_MOMENTS = 9 };

/* The cloud's centroid for the orientation of estimated normals is summed over the voxels in
 * chunks of this many (sequentially within a chunk, then the chunk sums the same way, until one
 * is left): a fixed order of additions that a device with one thread per chunk repeats. */
enum { GHMI_CENTROID_CHUNK = 256 };

/* Estimates unit normals[3K] from the moments of each voxel and its neighbours (nbr[hood->n * K],
 * GHM_NOT_FOUND where a neighbour is empty) and orients them consistently; voxels whose
 * neighbourhood has fewer than 3 points get a zero normal. */
int ghmi_voxel_estimate_normals(const GhmVoxelGrid *grid, size_t K, const uint32_t *keys,
                                const uint32_t *counts, const double *moments,
                                const GhmiHood *hood, const uint32_t *nbr, int threads,
                                float *normals);

#ifdef __cplusplus
}
#endif

#endif /* GHM_VOXEL_INTERNAL_H */
