/*
 * ghm_voxel_edit.h - a voxel set edited in place by point clouds, one after another, on one grid
 * (`geohash-match voxel edit`; the application of Molenaar and Eisemann 2024: a dynamic hash
 * table of voxels that grows and shrinks while it is edited).
 *
 * Usage:
 *     const GhmPointCloud *all[3] = {base, bunny, kitten};
 *     GhmVoxelOptions opt = ghm_voxel_defaults();
 *     if ((ret = ghm_voxel_grid_fit_clouds(all, 3, &opt, &grid, why, sizeof why)) < 0) goto fail;
 *     GhmVoxelEdit *e = NULL;
 *     if ((ret = ghm_voxel_edit_create(ctx, &grid, &opt, &e)) < 0) goto fail;
 *     GhmVoxelEditStep st;
 *     ret = ghm_voxel_edit_apply(e, GHM_VOXEL_EDIT_ADD, base, &st, why, sizeof why);
 *     ret = ghm_voxel_edit_apply(e, GHM_VOXEL_EDIT_SUBTRACT, bunny, &st, why, sizeof why);
 *     GhmVoxelResult *r = NULL;                        // side[0]: the set, ascending keys
 *     if ((ret = ghm_voxel_edit_result(e, &r)) < 0) goto fail;
 *     ghm_voxel_edit_save_ply(r, "out.ply", 0, why, sizeof why);
 *     ghm_voxel_result_free(&r);
 *     ghm_voxel_edit_free(&e);
 *
 * The set is a GhmDynmap of 6-word items, keyed by the voxel: word 0 the voxel key with bit 31
 * set (so an item never starts with 8 zero bytes), 1 the points that fell in the voxel, 2..4 the
 * sum of their normals (float; count times the cloud's unit mean normal there), 5 the label
 * below. An item's payload is written once, so a voxel whose payload changes is erased and
 * inserted again; the others stay where they are.
 *
 * Inside and outside come from the voxel pipeline itself (ghm_voxel_intersect: seeds from the
 * cloud's normals next to its surface, then the flood fill with conflict rounds). Its "A" is a
 * probe: one point at the centre of every voxel that can lie inside the cloud's surface, that
 * is, every voxel between the first and the last voxel of the cloud along its grid row (a
 * closed surface crosses every row through its interior at least twice), widened in all
 * directions by the cloud's neighbourhood radius (ghm_voxel.h: one voxel beyond the pipeline's
 * barrier, rho = radius - 1). A sampled surface's voxels miss some rows' crossings, where the
 * row slips between them, and the barrier closes the surface only for the fill's neighbour
 * steps: the 40k-point bunny at grid 128 (radius 1) misses a crossing in 2.7 k of its rows,
 * which a probe ending at the barrier cut short, losing a tenth of the bunny's inside; the
 * neighbouring rows' voxels one further cover them. The probe's labels relative to the cloud
 * (inside, outside, intersection = the cloud's own voxels, unknown) decide the edit; the set
 * itself is never classified, so an edit costs what its cloud's probe costs, whatever the set
 * holds.
 *
 *   add C        C's voxels are inserted as surface (a voxel already in the set adds C's count
 *                and normals to its own; an interior voxel stays interior), the probe's inside
 *                voxels as interior (set voxels there that were surface or cut become interior:
 *                they are inside the union now).
 *   subtract C   set voxels at the probe's inside voxels are erased; set voxels at C's voxels
 *                become cut, carrying C's count and C's normals turned around (they face into
 *                the part cut away): the surface that bounds the cut.
 *   intersect C  set voxels at the probe's inside voxels stay, those at C's voxels become cut
 *                (C's count and normals), every other one is erased.
 * Unknown probe voxels count as outside. A cloud whose probe has no inside voxel that the fill
 * reached (none beyond the barrier next to a sparse surface, whose voxels take the side of the
 * nearby plane: a plane, a line, an open patch, normals that give no seeds) has no inside at this
 * grid: apply refuses it with GHM_ERR_INVALID and a why line, before changing the set.
 */
#ifndef GHM_VOXEL_EDIT_H
#define GHM_VOXEL_EDIT_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_voxel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum GhmVoxelEditOp {
    GHM_VOXEL_EDIT_ADD = 0,
    GHM_VOXEL_EDIT_SUBTRACT = 1,
    GHM_VOXEL_EDIT_INTERSECT = 2
} GhmVoxelEditOp;

/* A voxel's role in the set. Numbered as the voxel labels whose colours they take (outside
 * grey, inside blue, intersection green), so that ghm_voxel_preview draws a set as it is. */
typedef enum GhmVoxelEditLabel {
    GHM_VOXEL_EDIT_SURFACE = GHM_VOXEL_OUTSIDE,       /* holds points of an added cloud */
    GHM_VOXEL_EDIT_INTERIOR = GHM_VOXEL_INSIDE,       /* filled: inside an added surface */
    GHM_VOXEL_EDIT_CUT = GHM_VOXEL_INTERSECTION       /* a subtracted or intersected surface */
} GhmVoxelEditLabel;

/* What one apply did. */
typedef struct GhmVoxelEditStep {
    size_t points;       /* points of the cloud */
    size_t cloud_voxels; /* voxels its points occupy */
    size_t probed;       /* voxels classified against it (the probe) */
    size_t inside;       /* of those, inside its surface */
    size_t unknown;      /* of those, not reached by the fill (taken as outside) */
    int radius;          /* the cloud's neighbourhood radius (ghm_voxel.h; 1 = dense) */
    size_t added;        /* voxels that entered the set */
    size_t erased;       /* voxels that left it */
    size_t relabelled;   /* voxels that stayed with another label or payload */
    size_t voxels;       /* the set's size afterwards */
    double classify_ms;  /* the probe and the pipeline's labels */
    double edit_ms;      /* finds, erases and inserts in the set */
    double total_ms;
    /* Where classify_ms goes: the cloud's own labels and the probe made from them (probe_ms),
     * then the pipeline's stages on the probe (labels, as ghm_voxel_intersect reports them),
     * beside which (on a device; before them on the CPU) the cloud's normals are checked. */
    double probe_ms;
    GhmVoxelTimings labels;
    /* Of classify_ms: the cloud's points and normals sent to the device (0 on the CPU backend),
     * so that total_ms - upload_ms is the step after its upload. */
    double upload_ms;
    /* The probe's conflicting pairs that its last fill left (ghm_voxel.h's conflict rounds, at
     * most the options' max_rounds): inside next to outside away from the surface, where the
     * fill leaked through a gap in the cloud (0 when the labels settled). */
    size_t conflicts;
} GhmVoxelEditStep;

typedef struct GhmVoxelEdit GhmVoxelEdit;

/* Creates an empty set on grid (which must hold every cloud applied later: points outside it
 * are ignored). GHM_ERR_INVALID for bad arguments or options; GHM_ERR_UNSUPPORTED when ctx's
 * backend has no GhmDynmap (the CPU and CUDA backends both have one); GHM_ERR_NOMEM. Keeps a
 * pointer to ctx. The caller frees *out with ghm_voxel_edit_free(). */
GHM_API int ghm_voxel_edit_create(GhmContext *ctx, const GhmVoxelGrid *grid,
                                  const GhmVoxelOptions *opt, GhmVoxelEdit **out);

/* Edits the set with one cloud (see above); step (may be NULL) receives what it did. The cloud
 * must have points; clouds without normals get them estimated (ghm_voxel.h). GHM_ERR_INVALID with
 * why: the cloud has no inside at this grid, its normals point inward or either way
 * (ghm_voxel_normals_check), or its points fall outside the grid; the set is
 * unchanged then. GHM_ERR_NOMEM or a backend's error: the set stays a valid set but may be
 * partly edited. why (may be NULL) receives one line on every failure. The set keeps the device
 * state and host arrays of its largest apply for the next ones (about 100-150 bytes of host
 * memory a probe voxel, kept until ghm_voxel_edit_free). */
GHM_API int ghm_voxel_edit_apply(GhmVoxelEdit *e, GhmVoxelEditOp op, const GhmPointCloud *pc,
                                 GhmVoxelEditStep *step, char *why, size_t why_size);

/* Voxels in the set (0 for NULL). */
GHM_API size_t ghm_voxel_edit_size(const GhmVoxelEdit *e);

/* A copy of the set as a voxel result: side[0] holds its voxels in ascending key order (keys,
 * GhmVoxelEditLabel labels, counts, unit mean normals, label_count; points = the sum of the
 * counts), side[1] is empty; so ghm_voxel_preview draws it. The caller frees *out with
 * ghm_voxel_result_free(). */
GHM_API int ghm_voxel_edit_result(const GhmVoxelEdit *e, GhmVoxelResult **out);

/* Writes a result of ghm_voxel_edit_result as PLY, one vertex per voxel: float x y z (voxel
 * centre), uint count, float nx ny nz (unit mean normal, zero for interior voxels), uchar label
 * (0 surface, 1 interior, 2 cut), uchar red green blue; binary little endian or ascii; the grid
 * in a comment line as ghm_voxel_save_ply writes it. Atomic. GHM_ERR_IO with why. */
GHM_API int ghm_voxel_edit_save_ply(const GhmVoxelResult *r, const char *path, int ascii,
                                    char *why, size_t why_size);

/* Frees the set and sets *e to NULL; accepts NULL and a pointer to NULL. */
GHM_API void ghm_voxel_edit_free(GhmVoxelEdit **e);

#ifdef __cplusplus
}
#endif

#endif /* GHM_VOXEL_EDIT_H */
