/*
 * edit_internal.h - what the files of a voxel edit share: the set (edit.c: its items and the
 * three edits) and the labels an apply edits it by (edit_probe.c).
 */
#ifndef GHM_EDIT_INTERNAL_H
#define GHM_EDIT_INTERNAL_H

#include "ghm_dynmap.h"
#include "ghm_voxel_edit.h"

struct GhmVoxelEdit {
    GhmContext *ctx;
    GhmVoxelGrid grid;
    GhmVoxelOptions opt;
    GhmDynmap *set;
};

/* Classifies the probe of pc: *out's side[0] is the probe (labels against pc), side[1] pc.
 * *probe_ms: the time until the probe was made. On failure why (may be NULL) says why: no point
 * in the grid, normals that point inward or either way, a probe past the memory
 * (GHM_ERR_TOO_LARGE), centres that float coordinates cannot hold apart. */
int ghmi_edit_classify(GhmVoxelEdit *e, const GhmPointCloud *pc, GhmVoxelResult **out,
                       double *probe_ms, char *why, size_t why_size);

/* Whether the cloud c encloses something at the grid: an inside voxel of the probe p beyond the
 * pipeline's barrier (see edit_probe.c). */
int ghmi_edit_encloses(const GhmVoxelGrid *g, const GhmVoxelSide *p, const GhmVoxelSide *c,
                       int radius);

#endif /* GHM_EDIT_INTERNAL_H */
