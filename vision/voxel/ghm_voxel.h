/*
 * ghm_voxel.h - voxel Boolean intersection of two point clouds (2009 paper, section 6 "Spatial
 * hashing"): both clouds are voxelized on one grid, every occupied voxel of each cloud is
 * labelled intersection (occupied by both), inside or outside the other cloud's surface, or
 * unknown.
 *
 * Usage:
 *     GhmVoxelOptions opt = ghm_voxel_defaults();           // --grid 128
 *     GhmVoxelGrid grid;
 *     if ((ret = ghm_voxel_grid_fit(a, b, NULL, 0, &opt, &grid, why, sizeof why)) < 0) goto fail;
 *     GhmVoxelResult *r = NULL;
 *     if ((ret = ghm_voxel_intersect(ctx, a, b, NULL, &grid, &opt, &r)) < 0) goto fail;
 *     // r->side[0] is A, r->side[1] is B: keys, labels, counts per label
 *     ghm_voxel_result_free(&r);
 *
 * Pipeline (one call = one step of an animation): each point of B is moved by the pose, the
 * voxel key of every point is x + nx * (y + ny * z); a GhmIndex per cloud gives each occupied
 * voxel a dense id (ids follow ascending keys; on a device, one GhmMultimap of both clouds'
 * points, sorted by voxel key, gives the same ids: its runs are the voxels); per voxel the point
 * count and the mean normal.
 * Normals come from the file when it has them, otherwise they are estimated: the smallest
 * principal axis of the points in the voxel and its 26 neighbours, oriented by propagation over
 * neighbouring voxels from, in each connected part, the voxel farthest from the cloud's
 * centroid, whose normal is turned away from the centroid (so closed surfaces point outward);
 * a device backend estimates them too, with the CPU's results bit for bit.
 * Neighbour (26) and cross-cloud look-ups are bulk GhmIndex queries (on a device, probes of the
 * multimap's map from the kernels).
 *
 * Labels: a voxel occupied by both clouds is an intersection. Every other occupied neighbour y
 * of an intersection voxel x gets one vote per such x: with u the unit step from x's centre to
 * y's and n the other cloud's mean normal in x, u.n > t_out votes outside, u.n < -t_in inside,
 * anything between abstains; y is seeded with the majority (no seed on a tie). A breadth-first
 * fill over each cloud's occupied voxels (26-connectivity, not through intersection voxels)
 * carries each seed's label and id: a voxel takes the label of the nearest seed in neighbour
 * steps, ties going to the smallest seed (voxel id), so the result does not depend on the order
 * of the work. Afterwards an inside voxel next to an outside voxel, both
 * reached by the fill and neither next to an intersection voxel (where the two labels meet
 * legitimately, along the crossing), is a conflict: the seeds of both are dropped and the fill
 * is redone, at most max_rounds times. Voxels the fill never reaches are unknown.
 *
 * Sparse clouds: a cloud with about one point per voxel (the 5k-point kitten at 128^3) is not
 * 26-connected, and a fill could not reach most of it. When the median voxel of a cloud has
 * fewer than 6 occupied 26-neighbours, its neighbourhood (for normals, seeds, fill and conflict
 * checks) widens to 5x5x5, then 7x7x7 if still needed; side.radius reports which was used. Then
 * two things would leak: the sparse cloud's intersection voxels form a dotted line that the other
 * cloud's fill slips through, and the sparse cloud's wide neighbourhood jumps over the other
 * cloud's one-voxel sheet. So with rho = (the larger radius) - 1 > 0, the barrier the fill does
 * not cross grows from the intersection voxels to every voxel with a voxel of the other cloud
 * within rho; such a voxel is labelled by the side of the other surface's plane there (through
 * the mean centre of those voxels, with their mean normal), and its neighbours vote as above
 * with u.n replaced by (their centre - the plane point).n / |step| (the same test when the plane
 * point is x's centre). With rho = 0 (two dense clouds) this is exactly the paper's method.
 *
 * Thin clouds: a cloud that is 26-connected but has fewer than 3 points per occupied voxel (2M
 * points on the bunny at 1024^3) leaves, where the other surface crosses, voxels that surface
 * passes through without a point of it: the intersection voxels along the crossing have gaps
 * and the other cloud's fill leaks through them from its inside part to its outside part,
 * more than the conflict rounds repair. Then rho is at least 1: the barrier is every voxel with a
 * voxel of the other cloud within one step, as for sparse clouds.
 */
#ifndef GHM_VOXEL_H
#define GHM_VOXEL_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_pointcloud.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A grid holds at most GHM_VOXEL_MAX_VOXELS voxels, so that a voxel's key (its index, x
 * fastest) fits in 30 bits, and at most GHM_VOXEL_MAX_DIM along an axis: a long or flat scene
 * (a street 4096 x 512 x 256, terrain 4096 x 4096 x 64) can be fine where a cube stops at
 * 1024^3. */
#define GHM_VOXEL_MAX_DIM 4096
#define GHM_VOXEL_MAX_VOXELS ((size_t)1 << 30)

typedef enum GhmVoxelLabel {
    GHM_VOXEL_OUTSIDE = 0,
    GHM_VOXEL_INSIDE = 1,
    GHM_VOXEL_INTERSECTION = 2,
    GHM_VOXEL_UNKNOWN = 3
} GhmVoxelLabel;

typedef struct GhmVoxelGrid {
    double origin[3];  /* corner of voxel (0,0,0) */
    double voxel_size; /* edge length */
    int dims[3];       /* voxels per axis, each in 1..GHM_VOXEL_MAX_DIM, at most
                        * GHM_VOXEL_MAX_VOXELS in all */
} GhmVoxelGrid;

typedef struct GhmVoxelOptions {
    int grid;          /* voxels along the longest side of the joint bounding box (default 128) */
    double voxel_size; /* > 0 overrides grid */
    double t_out;      /* seed thresholds on u.n, see above (defaults 0.2 and 0.2) */
    double t_in;
    int max_rounds;    /* fills, including the first (default 4) */
} GhmVoxelOptions;

typedef struct GhmVoxelSide {
    size_t points;         /* points of the cloud */
    size_t voxels;         /* K, occupied voxels */
    uint32_t *keys;        /* K ascending keys (host memory) */
    uint8_t *labels;       /* K GhmVoxelLabel values */
    uint32_t *counts;      /* K points per voxel */
    float *normals;        /* 3K unit mean normals (zero where none could be had) */
    int normals_estimated; /* 1 when the cloud had no normals */
    size_t label_count[4]; /* voxels per label */
    size_t seeds;          /* seeds that survived the conflict rounds */
    size_t conflicts;      /* conflicting voxel pairs found in the last fill */
    int radius;            /* neighbourhood used: 1 = 26-neighbours, 2 = 5x5x5, 3 = 7x7x7 */
} GhmVoxelSide;

typedef struct GhmVoxelTimings {
    double voxelize_ms;  /* keys, index build, per-voxel counts and normals */
    double lookup_ms;    /* neighbour and cross-cloud look-ups */
    double classify_ms;  /* intersection and seeds */
    double fill_ms;      /* flood fill with conflict rounds */
    double total_ms;
} GhmVoxelTimings;

typedef struct GhmVoxelResult {
    GhmVoxelGrid grid;
    GhmVoxelSide side[2]; /* [0] = A, [1] = B */
    int rounds;           /* fills run, at most max_rounds */
    GhmVoxelTimings time;
} GhmVoxelResult;

GHM_API GhmVoxelOptions ghm_voxel_defaults(void);

/* Fits the grid around A and around B moved by each of the nposes row-major 4x4 matrices (B
 * as it is when nposes is 0), so that one grid serves a whole sweep. The origin is the corner
 * of the joint bounding box; the voxel size is opt->voxel_size, or the longest side divided by
 * opt->grid (1.0 when all points coincide). GHM_ERR_TOO_LARGE (with why) when an axis would
 * need more than GHM_VOXEL_MAX_DIM voxels or the grid more than GHM_VOXEL_MAX_VOXELS,
 * GHM_ERR_INVALID for bad options. */
GHM_API int ghm_voxel_grid_fit(const GhmPointCloud *a, const GhmPointCloud *b, const double *poses,
                               int nposes, const GhmVoxelOptions *opt, GhmVoxelGrid *out, char *why,
                               size_t why_size);

/* The joint bounding box a grid is fitted around, for a fit spread over processes (a sweep's
 * poses over MPI ranks): each adds its share of the clouds and poses in order, the boxes are
 * joined in that order, and ghm_voxel_grid_fit_box then gives ghm_voxel_grid_fit's grid to the
 * bit (equal coordinates keep the first seen, as one pass does). */
typedef struct GhmVoxelBox {
    double lo[3], hi[3]; /* +inf / -inf while empty */
    size_t points;       /* points added (a cloud once per pose) */
} GhmVoxelBox;

GHM_API GhmVoxelBox ghm_voxel_box_empty(void);

/* Adds cloud c's points moved by the row-major 4x4 pose (NULL: as they are). NULL box or
 * cloud: nothing (here and in ghm_voxel_box_join). */
GHM_API void ghm_voxel_box_add(GhmVoxelBox *box, const GhmPointCloud *c, const double *pose);

/* Adds a box whose points came after box's (in the order of one pass). */
GHM_API void ghm_voxel_box_join(GhmVoxelBox *box, const GhmVoxelBox *later);

/* ghm_voxel_grid_fit's grid around a box (its codes; an empty box: one voxel of size 1). */
GHM_API int ghm_voxel_grid_fit_box(const GhmVoxelBox *box, const GhmVoxelOptions *opt,
                                   GhmVoxelGrid *out, char *why, size_t why_size);

/* The same grid around every point of n clouds (as they are): the one grid of a voxel edit
 * (ghm_voxel_edit.h). The same codes; n may be 0 (a grid of one voxel of size 1). */
GHM_API int ghm_voxel_grid_fit_clouds(const GhmPointCloud *const *clouds, int n,
                                      const GhmVoxelOptions *opt, GhmVoxelGrid *out, char *why,
                                      size_t why_size);

/* Runs one step: voxelizes A and B (B moved by b_pose, a row-major 4x4 matrix, or as it is
 * when NULL), classifies and fills. Points outside the grid are ignored. Either cloud may be
 * empty. The caller frees *out with ghm_voxel_result_free(). Returns GHM_ERR_INVALID for bad
 * arguments, GHM_ERR_NOMEM, or what the hashing backend reports. A sweep
 * (below) runs many steps of one pair of clouds without uploading them again. */
GHM_API int ghm_voxel_intersect(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                                const double *b_pose, const GhmVoxelGrid *grid,
                                const GhmVoxelOptions *opt, GhmVoxelResult **out);

/* A sweep: one A and one B stepped through many poses of B on one grid (the paper's
 * animation), each step as ghm_voxel_intersect would compute it, tables rebuilt per step. On a
 * backend with device kernels the clouds are uploaded once, by create, and the buffers of a
 * step are kept for the next; a and b must stay alive and unchanged until the sweep is freed.
 *
 *     GhmVoxelSweep *sw = NULL;
 *     if ((ret = ghm_voxel_sweep_create(ctx, a, b, &grid, &opt, &sw)) < 0) goto fail;
 *     for (k = 0; k < steps; k++) {
 *         const GhmVoxelResult *r;
 *         if ((ret = ghm_voxel_sweep_step(sw, poses + 16 * k, &r)) < 0) goto fail;
 *         ...                              // r is valid until the next step or the free
 *     }
 *     ghm_voxel_sweep_free(&sw);
 *
 * create: GHM_ERR_INVALID for bad arguments, GHM_ERR_NOMEM, or what the backend reports; the
 * caller frees *out with ghm_voxel_sweep_free(). step: *out belongs to the sweep (do not free
 * it); its arrays are overwritten by the next step. free accepts NULL and sets *sw to NULL. */
typedef struct GhmVoxelSweep GhmVoxelSweep;
GHM_API int ghm_voxel_sweep_create(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                                   const GhmVoxelGrid *grid, const GhmVoxelOptions *opt,
                                   GhmVoxelSweep **out);
GHM_API int ghm_voxel_sweep_step(GhmVoxelSweep *sw, const double *b_pose,
                                 const GhmVoxelResult **out);
/* The milliseconds create took (on a device: uploading the clouds, once per sweep). */
GHM_API double ghm_voxel_sweep_setup_ms(const GhmVoxelSweep *sw);
GHM_API void ghm_voxel_sweep_free(GhmVoxelSweep **sw);

/* --- the normals' orientation (normals_check.c) ------------------------------------------ */

/* The labels take a surface's inside from its normals. Normals that point inward, or either way
 * from point to point (estimated without an orientation), give wrong labels and nothing else
 * shows it; this looks at a side's mean normals for either:
 * - unchecked: fewer than 200 pairs of face-neighbour voxels (both with a normal), too few to
 *   tell (a cloud a few voxels across in the grid);
 * - mixed: more than 30 % of those pairs have normals pointing opposite ways (a consistently
 *   oriented surface has a few percent, where the two sides of a thin part meet; random signs
 *   give half);
 * - inward: of the 26 voxels that lie farthest along the 26 step directions, where a closed
 *   surface's outward normal points along the direction, at least 13 have normals pointing
 *   against it and they outnumber those pointing along it 3 to 1 (an open patch, whose rim's
 *   normals lie across the directions, is not called inward).
 * A sparse cloud (radius > 1) is judged on cells of radius^3 voxels, each with its voxels' summed
 * normals, since its voxels are seldom face neighbours. A surface scanned from inside (a room)
 * has inward normals by right: the verdict says what the labels will take as inside, not that
 * the file is wrong. */
typedef enum GhmVoxelNormalsVerdict {
    GHM_VOXEL_NORMALS_CONSISTENT = 0, /* neither fault found */
    GHM_VOXEL_NORMALS_INWARD = 1,
    GHM_VOXEL_NORMALS_MIXED = 2,
    GHM_VOXEL_NORMALS_UNCHECKED = 3
} GhmVoxelNormalsVerdict;

typedef struct GhmVoxelNormalsCheck {
    GhmVoxelNormalsVerdict verdict;
    size_t pairs;     /* face-neighbour pairs with both normals */
    double disagree;  /* the share of them pointing opposite ways, 0..1 */
    int extremes_out; /* extremes (of 26) whose normal points along their direction */
    int extremes_in;  /* ... against it (the rest have none, or one across it); both 0 when
                         unchecked */
} GhmVoxelNormalsCheck;

/* Checks side s of a result on grid g (its keys and normals; any side, file or estimated
 * normals). Two passes over the voxels. GHM_ERR_INVALID for bad arguments. */
GHM_API int ghm_voxel_normals_check(const GhmVoxelGrid *g, const GhmVoxelSide *s,
                                    GhmVoxelNormalsCheck *out);

/* Writes what is wrong with the normals c judged, as the start of a message ("its normals point
 * inward (toward the middle at 26 of the 26 voxels farthest out)", or "... point either way
 * (...)"), into out; returns 1 for those two verdicts, 0 (out empty) for the others. */
GHM_API int ghm_voxel_normals_fault(const GhmVoxelNormalsCheck *c, char *out, size_t size);

/* The centre of the voxel with this key. */
GHM_API void ghm_voxel_centre(const GhmVoxelGrid *grid, uint32_t key, double centre[3]);

/* Frees the result and sets *r to NULL; accepts NULL and a pointer to NULL. */
GHM_API void ghm_voxel_result_free(GhmVoxelResult **r);

/* --- output (voxel_output.c) -------------------------------------------------------------- */

/* The colour of a label, as in the paper's figure 7: inside blue, intersection green; outside
 * light grey and unknown red. */
GHM_API void ghm_voxel_label_colour(int label, uint8_t rgb[3]);

/* Writes one vertex per occupied voxel, A's then B's: float x y z (voxel centre), uchar cloud
 * (0 = A, 1 = B), uchar label, uchar red green blue, binary little endian or ascii; the grid is
 * recorded in a comment line "grid origin X Y Z voxel_size S dims NX NY NZ". Atomic (temporary
 * file renamed into place). GHM_ERR_IO with why on failure. */
GHM_API int ghm_voxel_save_ply(const GhmVoxelResult *r, const char *path, int ascii, char *why,
                               size_t why_size);

/* Renders an orthographic view along axis (0 = x, 1 = y, 2 = z) looking from the positive side,
 * each voxel a square of pixels (the image's longer side near max_side), coloured by label and
 * shaded by depth. The caller frees *out with ghm_rgb_image_free(). */
struct GhmRgbImage;
GHM_API int ghm_voxel_preview(const GhmVoxelResult *r, int axis, int max_side,
                              struct GhmRgbImage **out);

#ifdef __cplusplus
}
#endif

#endif /* GHM_VOXEL_H */
