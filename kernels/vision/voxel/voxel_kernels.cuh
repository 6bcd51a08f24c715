/*
 * voxel_kernels.cuh - what the voxel kernel files (voxelize.cu, labels.cu, normals.cu) share:
 * the device twins of vision/voxel's arithmetic (the pose, point keys, voxel centres, the
 * neighbourhood's steps, plane tests, fixed-point normals), the look-up of a voxel's id in the
 * voxel table, and the checks and grid sizes of the launchers.
 *
 * Exactness: the double arithmetic is the CPU's (vision/voxel/voxelize.c, labels.c, normals.c),
 * operation by operation, with explicitly rounded intrinsics (__dadd_rn, __dmul_rn, ...), which
 * the compiler never contracts into FMAs; the C side is ISO C11 without contraction. So keys,
 * normals, planes and votes are bit for bit the CPU's, and so are the labels.
 */
#ifndef GHM_VOXEL_KERNELS_CUH
#define GHM_VOXEL_KERNELS_CUH

#include "hashing/ghm_error.h"
#include "kernels/hashing/backend_cuda.h"
#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/map_ref.cuh"
#include "vision/voxel/voxel_internal.h"
#include "voxel.h"

#define VOXEL_THREADS 256
#define LABEL_OUTSIDE 0
#define LABEL_INSIDE 1
#define LABEL_INTERSECTION 2
#define LABEL_UNKNOWN 3

static inline unsigned blocks_for(size_t n)
{
    return (unsigned)((n + VOXEL_THREADS - 1) / VOXEL_THREADS);
}

/* voxelize.c's apply_pose: ((m0 p0 + m1 p1) + m2 p2) + m3 per row. */
static __device__ __forceinline__ void apply_pose(const GhmVoxelPose &m, int moved, const float *p,
                                                  double out[3])
{
    double x = p[0], y = p[1], z = p[2];
    if (!moved || !m.present) {
        out[0] = x, out[1] = y, out[2] = z;
        return;
    }
#pragma unroll
    for (int r = 0; r < 3; r++)
        out[r] = __dadd_rn(__dadd_rn(__dadd_rn(__dmul_rn(m.m[4 * r], x),
                                               __dmul_rn(m.m[4 * r + 1], y)),
                                     __dmul_rn(m.m[4 * r + 2], z)),
                           m.m[4 * r + 3]);
}

/* voxelize.c's point_key. */
static __device__ __forceinline__ uint32_t point_key(const GhmVoxelGridArgs &g, const double p[3])
{
    uint32_t c[3];
#pragma unroll
    for (int k = 0; k < 3; k++) {
        double f = __dmul_rn(__dsub_rn(p[k], g.origin[k]), g.inv);
        double fl = floor(f), d = (double)g.dims[k];
        if (fl >= d && f < __dadd_rn(d, 1e-6))
            fl = (double)(g.dims[k] - 1);
        if (fl < 0 && f > -1e-6)
            fl = 0;
        if (!(fl >= 0 && fl < d))
            return GHM_NOT_FOUND;
        c[k] = (uint32_t)fl;
    }
    return c[0] + (uint32_t)g.dims[0] * (c[1] + (uint32_t)g.dims[1] * c[2]);
}

/* ghm_voxel_centre: origin + (x + 0.5) * size per axis. */
static __device__ __forceinline__ void centre(const GhmVoxelGridArgs &g, uint32_t key, double c[3])
{
    uint32_t nx = (uint32_t)g.dims[0], ny = (uint32_t)g.dims[1];
    uint32_t x = key % nx, y = (key / nx) % ny, z = key / nx / ny;
    c[0] = __dadd_rn(g.origin[0], __dmul_rn((double)x + 0.5, g.size));
    c[1] = __dadd_rn(g.origin[1], __dmul_rn((double)y + 0.5, g.size));
    c[2] = __dadd_rn(g.origin[2], __dmul_rn((double)z + 0.5, g.size));
}

/* The voxel of rows (each row's span lo..hi, its first voxel at start) on row r at x, or
 * GHM_NOT_FOUND outside the span: voxel_internal.h's ghmi_voxel_rows_in on the device. */
static __device__ __forceinline__ uint32_t rows_in(const int32_t *lo, const int32_t *hi,
                                                   const uint64_t *start, uint32_t r, int32_t x)
{
    int32_t l = lo[r];
    if (x < l || x > hi[r])
        return GHM_NOT_FOUND;
    return (uint32_t)(start[r] + (uint64_t)(x - l));
}

/* Step j of the full (2r+1)^3 cube, in hood order (dz, dy, dx lexicographic). */
static __device__ __forceinline__ void cube_step(int j, int r, int d[3])
{
    int w = 2 * r + 1;
    d[0] = j % w - r;
    d[1] = (j / w) % w - r;
    d[2] = j / (w * w) - r;
}

/* A voxel's grid coordinates: key = x + nx (y + ny z). Once a voxel, not once a neighbour: the
 * three divisions cost more than a neighbour's look-up by rows (voxelize.cu's row_voxel). */
static __device__ __forceinline__ void dims_coords(const int32_t dims[3], uint32_t key, int c[3])
{
    uint32_t nx = (uint32_t)dims[0], ny = (uint32_t)dims[1];
    c[0] = (int)(key % nx);
    c[1] = (int)((key / nx) % ny);
    c[2] = (int)(key / nx / ny);
}

static __device__ __forceinline__ void key_coords(const GhmVoxelGridArgs &g, uint32_t key,
                                                  int c[3])
{
    dims_coords(g.dims, key, c);
}

/* Whether the voxel at coordinates c + d lies in the grid; if so, its coordinates in at. */
static __device__ __forceinline__ bool step_coords(const GhmVoxelGridArgs &g, const int c[3],
                                                   const int d[3], int at[3])
{
    bool in = true;
#pragma unroll
    for (int k = 0; k < 3; k++) {
        at[k] = c[k] + d[k];
        in = in && at[k] >= 0 && at[k] < g.dims[k];
    }
    return in;
}

static __device__ __forceinline__ uint32_t coords_key(const GhmVoxelGridArgs &g, const int at[3])
{
    return (uint32_t)at[0] +
           (uint32_t)g.dims[0] * ((uint32_t)at[1] + (uint32_t)g.dims[1] * (uint32_t)at[2]);
}

/* The key of the voxel at coordinates c + d, or GHM_NOT_FOUND outside the grid. */
static __device__ __forceinline__ uint32_t step_key(const GhmVoxelGridArgs &g, const int c[3],
                                                    const int d[3])
{
    int at[3];
    return step_coords(g, c, d, at) ? coords_key(g, at) : GHM_NOT_FOUND;
}

/* --- radius-1 neighbours of a side given as rows ------------------------------------------- */

/* A side given as rows has no neighbour array at radius 1 (GhmVoxelSideArgs): a voxel's
 * neighbours are found by its rows (nine rows' spans, which stay in the caches) each time a
 * kernel needs them. A voxel edit's probe of 3.8 M voxels had 26 ids a voxel, 390 MB written
 * once and read by the contact, the classify and every level of the fill (H200, 2026-12-01). */

/* The coordinates of voxel v of a side given as rows (its key's). */
static __device__ __forceinline__ void rows_coords(const GhmVoxelSideArgs &s, uint32_t v, int c[3])
{
    dims_coords(s.dims, __ldg(&s.keys[v]), c);
}

/* The voxel of a side given as rows at coordinates c + d, or GHM_NOT_FOUND. */
static __device__ __forceinline__ uint32_t rows_step(const GhmVoxelSideArgs &s, const int c[3],
                                                     const int d[3])
{
    int y = c[1] + d[1], z = c[2] + d[2];
    if (y < 0 || y >= s.dims[1] || z < 0 || z >= s.dims[2])
        return GHM_NOT_FOUND;
    uint32_t r = (uint32_t)y + (uint32_t)s.dims[1] * (uint32_t)z;
    return rows_in(s.rows_lo, s.rows_hi, s.rows_start, r, c[0] + d[0]);
}

/* Voxel v's neighbour k (hood order) at the side's radius: s.nbr's, or, for a side given as
 * rows at radius 1 without them, found by the rows. */
static __device__ __forceinline__ uint32_t nbr_at(const GhmVoxelSideArgs &s, uint32_t v, int k)
{
    if (s.nbr)
        return __ldg(&s.nbr[(size_t)k * s.K + v]);
    int c[3], d[3];
    rows_coords(s, v, c);
    cube_step(k < 13 ? k : k + 1, 1, d);
    return rows_step(s, c, d);
}

/* Voxel v's radius-1 neighbours k whose bit k of m is set (GHM_NOT_FOUND for the others), in
 * hood order, into u: nbr_at's, each row's span read once. */
static __device__ __forceinline__ void nbr26(const GhmVoxelSideArgs &s, uint32_t v, uint32_t m,
                                             uint32_t u[26])
{
    if (s.nbr) {
#pragma unroll
        for (int k = 0; k < 26; k++)
            u[k] = m >> k & 1u ? __ldg(&s.nbr[(size_t)k * s.K + v]) : GHM_NOT_FOUND;
        return;
    }
    int c[3];
    rows_coords(s, v, c);
#pragma unroll
    for (int j = 0; j < 9; j++) { /* the rows at dy, dz; then dx along each */
        const int y = c[1] + j % 3 - 1, z = c[2] + j / 3 - 1;
        const bool in = y >= 0 && y < s.dims[1] && z >= 0 && z < s.dims[2];
        const uint32_t r = in ? (uint32_t)y + (uint32_t)s.dims[1] * (uint32_t)z : 0;
        const int32_t lo = in ? __ldg(&s.rows_lo[r]) : 1, hi = in ? __ldg(&s.rows_hi[r]) : 0;
        const uint64_t first = in ? __ldg(&s.rows_start[r]) : 0;
#pragma unroll
        for (int dx = -1; dx <= 1; dx++) {
            const int cube = 3 * j + dx + 1;
            if (cube == 13)
                continue;
            const int k = cube < 13 ? cube : cube - 1, x = c[0] + dx;
            u[k] = m >> k & 1u && x >= lo && x <= hi ? (uint32_t)(first + (uint64_t)(x - lo))
                                                     : GHM_NOT_FOUND;
        }
    }
}

/* (a0 - b0) n0 + (a1 - b1) n1 + (a2 - b2) n2, in labels.c's order, with float plane values. */
static __device__ __forceinline__ double plane_dot(const double c[3], const float *pl)
{
    return __dadd_rn(__dadd_rn(__dmul_rn(__dsub_rn(c[0], (double)pl[0]), (double)pl[3]),
                               __dmul_rn(__dsub_rn(c[1], (double)pl[1]), (double)pl[4])),
                     __dmul_rn(__dsub_rn(c[2], (double)pl[2]), (double)pl[5]));
}

static __device__ __forceinline__ double fix_of(float f)
{
    double q = __dmul_rn((double)f, GHMI_VOXEL_FIX_SCALE);
    if (!(fabs(q) <= GHMI_VOXEL_FIX_LIMIT))
        q = q > 0 ? GHMI_VOXEL_FIX_LIMIT : q < 0 ? -GHMI_VOXEL_FIX_LIMIT : 0.0;
    return q;
}


/* The id of the voxel with this key in cloud c, or GHM_NOT_FOUND: its run in the voxel table
 * (whose keys are the points' sort keys, c << (key_bits + 1) | key) minus the cloud's first run. */
static __device__ __forceinline__ uint32_t voxel_id(const GhmMapRef &t, const GhmVoxelGridArgs &g,
                                                    int c, uint32_t first_run, uint32_t key)
{
    uint32_t run = ghm_map_ref_find(&t, (uint32_t)c << (g.key_bits + 1) | key);
    return run == GHM_NOT_FOUND ? GHM_NOT_FOUND : run - first_run;
}

/* --- launch helpers ----------------------------------------------------------------------- */

static inline int check_pair(const GhmVoxelPair *p)
{
    if (!p)
        return GHM_ERR_INVALID;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSideArgs *s = &p->s[c];
        if (s->radius < 1 || s->radius > GHMI_MAX_RADIUS)
            return GHM_ERR_INVALID;
        const int nbr_ok = s->nbr || (s->rows_lo && s->radius == 1);
        if (s->K && (!s->keys || !s->counts || !s->normals || !s->label || !nbr_ok || !s->cross ||
                     !s->barrier || !s->plane || !s->ring || !s->seed || !s->drop || !s->state ||
                     !s->queue || (s->radius == 1 && !s->mask)))
            return GHM_ERR_INVALID;
    }
    return GHM_OK;
}

static inline uint32_t max_k(const GhmVoxelPair *p)
{
    return p->s[0].K > p->s[1].K ? p->s[0].K : p->s[1].K;
}

/* Blocks of a cooperative launch of kernel on ctx's device: want, at most what fits on the
 * device at once. */
static inline int cooperative_blocks(const GhmContext *ctx, const void *kernel, uint64_t want,
                                     unsigned *out)
{
    size_t most = 1;
    int ret = GHM_CUDA(ghm_cuda_resident_blocks(ctx, kernel, VOXEL_THREADS, &most));
    *out = (unsigned)(want < most ? want : most);
    return ret;
}

/* The SMs of ctx's device (at least 1). */
static inline int sm_count(const GhmContext *ctx, int *out)
{
    return GHM_CUDA(ghm_cuda_sm_count(ctx, out));
}

#endif /* GHM_VOXEL_KERNELS_CUH */
