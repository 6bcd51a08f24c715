/*
 * edit_device.c - a voxel edit's changes to its set made where its labels are, on a device
 * (ghm_voxel_edit.h; edit.c does the rest of an apply), and its probe's rows. With a backend
 * that has voxel kernels a classify's labels stay in device memory (its sweep's state,
 * ghmi_voxel_sweep_device_view), and the set, a GhmDynmap of the same context, is changed
 * there: add inserts its items (the cloud's voxels, the probe's inside voxels) in one batch of
 * device arrays and merges the ones the set held in place; subtract and intersect visit the
 * set's buckets and cut or erase its items in place (the backend's edit ops, through the set's
 * device reference). Until 2026-11-29 the lists of hundreds of thousands of voxels went to the
 * host and back (20-40 MB across PCIe per add or intersect of a 160 k-point cloud at 256^3);
 * until 2026-12-01 the changes were lists of keys the set searched, erased and inserted again
 * (docs/BENCHMARKS.md).
 *
 * The set an apply makes does not depend on the order of the changes (the inside voxels are
 * apart from the cloud's), so the result is the host path's (the ctests compare the sets of
 * the CPU and CUDA backends).
 */
#include "edit_internal.h"
#include "ghm_dynmap.h"
#include "voxel_backend_internal.h"

/* Backend array `which` of e with room for `bytes`, grown a quarter beyond the need and never
 * shrunk (as ghmi_edit_buf's host arrays; ghm_buffer_reserve gives an empty list an array too);
 * NULL when out of memory. */
static void *dev_buf(GhmVoxelEdit *e, EditDevBuf which, size_t bytes)
{
    if (e->dev_cap[which] < bytes)
        bytes += bytes / 4;
    int ret = ghm_buffer_reserve(e->ctx, &e->dev[which], &e->dev_cap[which], bytes);
    return ret == GHM_OK ? e->dev[which] : NULL;
}

void ghmi_edit_dev_free(GhmVoxelEdit *e)
{
    for (int i = 0; i < EDIT_DEV_BUFS; i++) {
        ghm_buffer_free(e->ctx, &e->dev[i]);
        e->dev_cap[i] = 0;
    }
}

int ghmi_edit_on_device(const GhmVoxelEdit *e, GhmiVoxelDeviceView *v)
{
    return e->against && ghmi_voxel_ops(e->ctx) &&
           ghmi_voxel_sweep_device_view(e->against, v) == GHM_OK;
}

/* The two list lengths an op counts, zeroed before it. */
static uint32_t *zeroed_counts(GhmVoxelEdit *e)
{
    uint32_t *counts = dev_buf(e, EDIT_DEV_COUNTS, 2 * sizeof *counts);
    return counts && ghm_buffer_zero(e->ctx, counts, 2 * sizeof *counts) == GHM_OK ? counts : NULL;
}

/* The lengths the op wrote, each checked against the room its list had (a longer one would
 * mean labels and their counts disagree: refused, the set untouched). */
static int read_counts(GhmVoxelEdit *e, const uint32_t *counts, const size_t room[2],
                       size_t out[2])
{
    uint32_t got[2];
    int ret = ghm_buffer_download(e->ctx, got, counts, sizeof got);
    for (int i = 0; i < 2 && ret == GHM_OK; i++) {
        out[i] = got[i];
        if (out[i] > room[i])
            ret = GHM_ERR_INVALID;
    }
    return ret;
}

int ghmi_edit_device_rows(GhmVoxelEdit *e, const uint32_t *keys, size_t K, int d)
{
    const int *dims = e->grid.dims;
    const size_t nr = (size_t)dims[1] * (size_t)dims[2], at = (nr * 4 + 255) / 256 * 256;
    char *base = dev_buf(e, EDIT_DEV_SPANS, 2 * at + (nr + 1) * sizeof(uint64_t));
    if (!base)
        return GHM_ERR_NOMEM;
    int32_t *lo = (int32_t *)base, *hi = (int32_t *)(base + at);
    uint64_t *start = (uint64_t *)(base + 2 * at), n = 0;
    int ret = ghmi_voxel_ops(e->ctx)->edit_spans(e->ctx, dims, keys, K, d, lo, hi, start,
                                                 start + nr);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(e->ctx, &n, start + nr, sizeof n);
    if (ret == GHM_OK)
        e->rows = (GhmiVoxelRows){.grid = &e->grid, .lo = lo, .hi = hi,
                                  .start = (const size_t *)start, .n = (size_t)n,
                                  .on_device = 1};
    return ret;
}

int ghmi_edit_cut(GhmVoxelEdit *e, const GhmiVoxelDeviceView *v, size_t K, int subtract,
                  size_t *cuts)
{
    const size_t room[2] = {K, 0};
    size_t got[2] = {0, 0};
    uint32_t *counts = zeroed_counts(e);
    int ret = counts ? ghmi_voxel_ops(e->ctx)->edit_cut(e->ctx, e->set, subtract,
                                                        e->grid.dims[0], v->lo, v->hi, v->start,
                                                        v->labels[0], v->keys[1], v->counts[1],
                                                        v->voxel_normals[1], K, counts)
                     : GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = read_counts(e, counts, room, got);
    *cuts = got[0];
    return ret;
}

/* The probe's inside keys (tagged; side p, labels in v) into keys, *n of them. */
static int select_inside(GhmVoxelEdit *e, const GhmiVoxelDeviceView *v, const GhmVoxelSide *p,
                         uint32_t *keys, size_t *n)
{
    const size_t room[2] = {p->label_count[GHM_VOXEL_INSIDE], 0};
    size_t got[2] = {0, 0};
    uint32_t *counts = zeroed_counts(e);
    int ret = counts ? ghmi_voxel_ops(e->ctx)->edit_select(e->ctx, v->keys[0], v->labels[0],
                                                           p->voxels, GHM_VOXEL_INSIDE, keys,
                                                           counts)
                     : GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = read_counts(e, counts, room, got);
    *n = got[0];
    return ret;
}

int ghmi_edit_add_apply(GhmVoxelEdit *e, const GhmiVoxelDeviceView *v, const GhmVoxelSide *p,
                        size_t K, size_t *relabelled)
{
    const size_t ni = p->label_count[GHM_VOXEL_INSIDE];
    size_t n = 0, got[2] = {0, 0};
    *relabelled = 0;
    uint32_t *inside = dev_buf(e, EDIT_DEV_INSIDE, ni * sizeof *inside);
    int ret = inside ? select_inside(e, v, p, inside, &n) : GHM_ERR_NOMEM;
    const size_t all = K + n, room[2] = {all, 0};
    uint32_t *items = ret == GHM_OK ? dev_buf(e, EDIT_DEV_INSERT,
                                              all * GHMI_EDIT_WORDS * sizeof *items)
                                    : NULL;
    GhmDynmapHandle *handles = items ? dev_buf(e, EDIT_DEV_HANDLES, all * sizeof *handles)
                                     : NULL;
    uint8_t *stored = handles ? dev_buf(e, EDIT_DEV_STORED, all) : NULL;
    uint32_t *counts = stored ? zeroed_counts(e) : NULL;
    if (ret == GHM_OK && !counts)
        ret = GHM_ERR_NOMEM;
    const GhmVoxelOps *ops = ghmi_voxel_ops(e->ctx);
    if (ret == GHM_OK)
        ret = ops->edit_add_items(e->ctx, v->keys[1], v->counts[1], v->voxel_normals[1], K, inside,
                                  n, items);
    if (ret == GHM_OK)
        ret = ghm_dynmap_insert(e->set, items, all, handles, stored);
    if (ret == GHM_OK)
        ret = ops->edit_add_present(e->ctx, e->set, items, handles, stored, K, all, counts);
    if (ret == GHM_OK)
        ret = read_counts(e, counts, room, got);
    *relabelled = got[0];
    return ret;
}

int ghmi_edit_device_encloses(GhmVoxelEdit *e, const GhmiVoxelDeviceView *v, size_t n,
                              int radius, int *out)
{
    uint32_t *found = zeroed_counts(e), got = 0;
    int ret = found ? ghmi_voxel_ops(e->ctx)->edit_encloses(e->ctx, e->grid.dims, v->keys[0],
                                                            v->labels[0], n, v->lo, v->hi,
                                                            v->start, radius, found)
                    : GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = ghm_buffer_download(e->ctx, &got, found, sizeof got);
    *out = got != 0;
    return ret;
}
