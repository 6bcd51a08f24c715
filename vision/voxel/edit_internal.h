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
    /* The labels' two pipeline runs (edit_probe.c), each a sweep rebound to the clouds of
     * every apply, so that their device state (table, blocks, page-locked results) is made
     * once, not twice an apply; NULL before the first apply. The clouds they point at are
     * the last apply's (gone after it): every run rebinds first. */
    GhmVoxelSweep *alone, *against;
    GhmPointCloud none;    /* the empty cloud the first run pairs the cloud with */
    GhmPointCloud probe;   /* the probe's points (arrays in probe_block), kept from apply to
                            * apply; page-locked on a device backend, so uploads are DMA */
    void *probe_block;
    size_t probe_cap;      /* points probe_block holds */
};

/* Frees e's probe (edit_probe.c); e stays valid. */
void ghmi_edit_probe_free(GhmVoxelEdit *e);

/* Classifies the probe of pc: *out's side[0] is the probe (labels against pc), side[1] pc;
 * *out belongs to e and holds until the next classify or the free. *probe_ms: the time until
 * the probe was made. On failure why (may be NULL) says why: no point in the grid, normals that
 * point inward or either way, a probe past the memory (GHM_ERR_TOO_LARGE), centres that float
 * coordinates cannot hold apart. */
int ghmi_edit_classify(GhmVoxelEdit *e, const GhmPointCloud *pc, const GhmVoxelResult **out,
                       double *probe_ms, char *why, size_t why_size);

/* Whether the cloud c encloses something at the grid: an inside voxel of the probe p beyond the
 * pipeline's barrier (see edit_probe.c). */
int ghmi_edit_encloses(const GhmVoxelGrid *g, const GhmVoxelSide *p, const GhmVoxelSide *c,
                       int radius);

#endif /* GHM_EDIT_INTERNAL_H */
