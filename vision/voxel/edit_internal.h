/*
 * edit_internal.h - what the files of a voxel edit share: the set (edit.c: its items and the
 * three edits) and the labels an apply edits it by (edit_probe.c).
 */
#ifndef GHM_EDIT_INTERNAL_H
#define GHM_EDIT_INTERNAL_H

#include "ghm_dynmap.h"
#include "ghm_voxel_edit.h"
#include "voxel_internal.h"

/* An apply's host arrays (ghmi_edit_buf), one per use. */
typedef enum EditBuf {
    EDIT_BUF_PROBE,    /* the probe's points and (zero) normals */
    EDIT_BUF_INSIDE,   /* the probe's inside keys */
    EDIT_BUF_KEYS,     /* keys sent to the set or a map */
    EDIT_BUF_FOUND,    /* the set's items at the cloud's voxels */
    EDIT_BUF_ERASED,   /* which of the cloud's voxels the set held (erase_at_cloud) */
    EDIT_BUF_IN_FOUND, /* the set's items at the inside voxels */
    EDIT_BUF_SPAN_LO,  /* the probe's rows: first x, last x, first voxel */
    EDIT_BUF_SPAN_HI,
    EDIT_BUF_SPAN_START,
    EDIT_BUF_SPAN_SCRATCH, /* the spans' widening: a copy of first and last x */
    EDIT_BUF_ERASE,    /* a batch's erases */
    EDIT_BUF_INSERT,   /* a batch's inserts */
    EDIT_BUFS
} EditBuf;

/* An apply's backend arrays when its labels are on a device (edit_device.c), one per use. */
typedef enum EditDevBuf {
    EDIT_DEV_INSIDE,  /* add: the probe's inside keys */
    EDIT_DEV_INSERT,  /* add: its items */
    EDIT_DEV_HANDLES, /* add: the insert's handles of its items */
    EDIT_DEV_STORED,  /* add: which of its items the insert stored */
    EDIT_DEV_COUNTS,  /* the kernels' list lengths */
    EDIT_DEV_SPANS,   /* the probe's rows made there: lo, hi, start and their total */
    EDIT_DEV_BUFS
} EditDevBuf;

/* The edit's helper thread (edit_worker.c). */
typedef struct GhmiEditWorker GhmiEditWorker;

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
    GhmPointCloud held;    /* on a device: the apply's cloud as the first run's state holds it
                            * there, which the second run copies instead of uploading it */
    GhmiVoxelRows rows;    /* the probe: rows of the grid, in buf[EDIT_BUF_SPAN_*] (or, made
                            * on a device, dev[EDIT_DEV_SPANS]); on the host its voxel at a
                            * key is ghmi_voxel_rows_at(&rows, key) once a classify has
                            * checked the voxels are the rows' points */
    GhmPointCloud probe;   /* its points (CPU path: in buf[EDIT_BUF_PROBE]; a device makes
                            * them from the rows, and only n is set) */
    GhmiKeep buf[EDIT_BUFS]; /* see ghmi_edit_buf */
    void *dev[EDIT_DEV_BUFS]; /* see edit_device.c */
    size_t dev_cap[EDIT_DEV_BUFS];
    GhmiEditWorker *worker;   /* made at create on a device (its first job loads the code of
                               * later calls) or at the first apply that runs beside it; NULL
                               * before, or where it could not be made (then the check runs
                               * first) */
};

/* The work over many voxels or rows (the probe's spans and inside keys, add's changes,
 * intersect's erases) comes in chunks over the context's threads, each chunk counted, then
 * written after the chunks before it: the arrays are those one pass in order makes (a million
 * inside voxels of a BASE took 22 ms on one thread of the 2-core machine; intersect's 1.4 M set
 * voxels 11-15 ms on one thread of the H200 machine). */
enum { GHMI_EDIT_CHUNKS = 64 };

/* A cloud whose probe ends its fill with more conflicting pairs (inside next to outside) than
 * one per this many probed voxels is too sparse for an edit at its grid: the fill leaks through
 * the gaps of its barrier (the voxels within rho = 2 of its own, at the widest neighbourhood)
 * faster than the conflict rounds mend it, and its inside comes out short. Measured against the
 * bunny mesh (scripts/voxel_edit_truth.py, 2026-12-01; before, every one was taken as an
 * answer), conflicts per probed voxel -> voxels right: a 12 k-point scan of it intersected with
 * a 160 k-point one at 256^3 0.28 % -> 99.0 %, 384^3 2.6 % -> 83.6 %, 512^3 6.3 % -> 59.0 %; a
 * 3 k-point scan made solid at 128^3 0.40 % -> 99.9 %, 160^3 1.8 % -> 98.8 %, 256^3 9.1 %; the
 * 40 k-point bunny.ply with the 160 k-point scan at 256^3 0.009 % -> 99.9 %. */
enum { GHMI_EDIT_CONFLICTS_PER = 200 };

/* Chunk k's first: ghmi_chunk_at. */
static inline size_t ghmi_edit_chunk_at(size_t n, int k)
{
    return ghmi_chunk_at(n, k, GHMI_EDIT_CHUNKS);
}

/* The chunks' counts to their starts, the first at `first`; returns the end. */
static inline size_t ghmi_edit_exclusive_scan(size_t *count, size_t first)
{
    return ghmi_chunk_starts(count, GHMI_EDIT_CHUNKS, first);
}

/* Array `which` of e with room for `bytes` (NULL: out of memory; the others stay). Kept from
 * apply to apply and grown a quarter beyond the need, never shrunk: past the first applies no
 * array is faulted in again (fresh arrays of a few MB each took much of an edit's host time,
 * H200, 2026-11-29). Page-locked arrays were tried and not kept: pinning them cost the first
 * apply more (50-90 ms) than the faster copies saved in five (docs/BENCHMARKS.md). Zeroed when
 * (re)made, not when reused. */
void *ghmi_edit_buf(GhmVoxelEdit *e, EditBuf which, size_t bytes);

/* Frees e's arrays; e stays valid. */
void ghmi_edit_bufs_free(GhmVoxelEdit *e);

/* Classifies the probe of pc: *out's side[0] is the probe (labels against pc), side[1] pc;
 * *out belongs to e and holds until the next classify or the free. *probe_ms: the time until
 * the probe was made; *upload_ms: of that, pc's upload to the device (0 without one). On
 * failure why (may be NULL) says why: no point in the grid, normals that point inward or either
 * way, a probe past the memory (GHM_ERR_TOO_LARGE), centres that float coordinates cannot hold
 * apart. */
int ghmi_edit_classify(GhmVoxelEdit *e, const GhmPointCloud *pc, const GhmVoxelResult **out,
                       double *probe_ms, double *upload_ms, char *why, size_t why_size);

/* Whether a cloud of radius encloses something at the grid: an inside voxel of the probe p
 * (its rows) beyond the cloud's radius (see edit_probe.c). */
int ghmi_edit_encloses(const GhmiVoxelRows *rows, const GhmVoxelSide *p, int radius);

/* --- the set's big lists made on the device (edit_device.c) ------------------------------- */

/* 1 when the last classify's labels are in device memory (a backend with voxel kernels), with
 * their arrays in *v; 0 on the CPU path. */
int ghmi_edit_on_device(const GhmVoxelEdit *e, GhmiVoxelDeviceView *v);

/* The probe's rows (edit_probe.c's) made on the device from its cloud's K ascending voxel keys
 * there, spans widened by d, into e->rows (on_device) and its n. */
int ghmi_edit_device_rows(GhmVoxelEdit *e, const uint32_t *keys, size_t K, int d);

/* subtract's (subtract 1) or intersect's changes made in the set on the device, where the
 * result edit.c's subtract and intersect give on the host: the set's items at the cloud's K
 * voxels (side 1 of the result, in v) become cut items, *cuts of them; of the others, subtract
 * erases those inside the probe, intersect those neither inside it nor on its cloud (kept). */
int ghmi_edit_cut(GhmVoxelEdit *e, const GhmiVoxelDeviceView *v, size_t K, int subtract,
                  size_t *cuts);

/* add made in the set on the device, to the result edit.c's add_changes gives on the host: the
 * cloud's K voxels (side 1 of the result, in v) as surface items and the probe's inside voxels
 * (side p, labels in v) as interior items are inserted in one batch; those the set held are
 * then merged into its items in place (ghm_cuda_dynmap_ref's rewrite), and *relabelled counts
 * the ones that changed. */
int ghmi_edit_add_apply(GhmVoxelEdit *e, const GhmiVoxelDeviceView *v, const GhmVoxelSide *p,
                        size_t K, size_t *relabelled);


/* ghmi_edit_encloses on the device, for the probe's n voxels (their keys, labels and rows in
 * v) and a cloud of radius: *out 1 or 0. The probe's labels need not come to the host for it
 * (5.8 MB for a 256^3 probe). */
int ghmi_edit_device_encloses(GhmVoxelEdit *e, const GhmiVoxelDeviceView *v, size_t n,
                              int radius, int *out);

/* Frees e's backend arrays. */
void ghmi_edit_dev_free(GhmVoxelEdit *e);

/* --- the helper thread (edit_worker.c) ---------------------------------------------------- */

/* A thread that runs one job at a time beside the caller's, waiting between jobs.
 * GHM_ERR_NOMEM when no thread could be made. */
int ghmi_edit_worker_create(GhmiEditWorker **w);

/* Starts job(arg) on the worker once its job before has finished; ghmi_edit_worker_wait waits
 * for it. */
void ghmi_edit_worker_start(GhmiEditWorker *w, void *(*job)(void *), void *arg);
void ghmi_edit_worker_wait(GhmiEditWorker *w);

/* Stops the thread once a running job has finished (one not yet begun is dropped) and frees
 * it; *w NULL after; accepts NULL. */
void ghmi_edit_worker_free(GhmiEditWorker **w);

#endif /* GHM_EDIT_INTERNAL_H */
