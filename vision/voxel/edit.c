/*
 * edit.c - a voxel set in a GhmDynmap, edited by point clouds; see ghm_voxel_edit.h. Each apply
 * has the cloud's labels made (edit_probe.c: the voxel pipeline run twice), then edits the set
 * with bulk finds, erases and inserts, and (intersect) a test of the set's items in place.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_dynmap.h"
#include "ghm_index.h"
#include "ghm_map.h"
#include "edit_internal.h"
#include "voxel_backend_internal.h"
#include "voxel_internal.h"
#include "why_internal.h"

enum { /* the items' words (voxel_backend_internal.h, shared with the device's edit ops) */
    W_KEY = GHMI_EDIT_W_KEY,
    W_COUNT = GHMI_EDIT_W_COUNT,
    W_NORMAL = GHMI_EDIT_W_NORMAL,
    W_LABEL = GHMI_EDIT_W_LABEL,
    ITEM_WORDS = GHMI_EDIT_WORDS
};
#define KEY_TAG GHMI_EDIT_TAG

/* The worker's first job on a device: the code of the set's calls and of the edit ops loads
 * while the first apply runs (a first subtract, intersect or add waited 0.3-1 ms for its
 * kernels to load, H200, 2026-12-01; the pipeline's own kernels load in the first apply's
 * runs). A failure only leaves a kernel to load at its launch, which reports a device's
 * error. */
static void *preload_main(void *arg)
{
    const GhmVoxelEdit *e = arg;
    (void)ghm_dynmap_preload(e->set);
    (void)ghmi_voxel_ops(e->ctx)->edit_preload(e->ctx);
    return NULL;
}

int ghm_voxel_edit_create(GhmContext *ctx, const GhmVoxelGrid *grid, const GhmVoxelOptions *opt,
                          GhmVoxelEdit **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !grid || !opt || !out || !(grid->voxel_size > 0) || !ghmi_voxel_dims_ok(grid->dims))
        return GHM_ERR_INVALID;
    GhmVoxelEdit *e = calloc(1, sizeof *e);
    if (!e)
        return GHM_ERR_NOMEM;
    *e = (GhmVoxelEdit){.ctx = ctx, .grid = *grid, .opt = *opt};
    GhmDynmapOptions dopt = ghm_dynmap_defaults();
    dopt.item_words = ITEM_WORDS;
    dopt.key_words = 1;
    /* The buckets are fixed at create: size them for a solid of a quarter of the grid. */
    size_t cells = (size_t)grid->dims[0] * (size_t)grid->dims[1] * (size_t)grid->dims[2];
    dopt.capacity = cells / 4 < ((size_t)1 << 24) ? cells / 4 : (size_t)1 << 24;
    int ret = ghm_dynmap_create(ctx, &dopt, &e->set);
    if (ret < 0) {
        free(e);
        return ret;
    }
    if (ghmi_voxel_ops(ctx) && ghmi_edit_worker_create(&e->worker) == GHM_OK)
        ghmi_edit_worker_start(e->worker, preload_main, e);
    *out = e;
    return GHM_OK;
}

void ghm_voxel_edit_free(GhmVoxelEdit **e)
{
    if (!e || !*e)
        return;
    ghmi_edit_worker_free(&(*e)->worker); /* first: its preload may still read the set */
    ghm_dynmap_free(&(*e)->set);
    ghm_voxel_sweep_free(&(*e)->alone);
    ghm_voxel_sweep_free(&(*e)->against);
    ghmi_edit_bufs_free(*e);
    ghmi_edit_dev_free(*e);
    free(*e);
    *e = NULL;
}

size_t ghm_voxel_edit_size(const GhmVoxelEdit *e) { return e ? ghm_dynmap_size(e->set) : 0; }

/* --- the apply's arrays ------------------------------------------------------------------- */

/* Zeroes a new array of `bytes` in pieces on the context's threads: its pages are faulted in by
 * all of them at once, not one by one by the copy or loop that first writes there. */
static void zero_on_threads(const GhmVoxelEdit *e, char *p, size_t bytes)
{
    enum { PIECE = 1 << 20 };
    size_t pieces = (bytes + PIECE - 1) / PIECE;
#pragma omp parallel for num_threads(ghm_context_threads(e->ctx)) schedule(static) if (pieces > 1)
    for (size_t i = 0; i < pieces; i++)
        memset(p + i * PIECE, 0, i + 1 < pieces ? PIECE : bytes - i * PIECE);
}

void *ghmi_edit_buf(GhmVoxelEdit *e, EditBuf which, size_t bytes)
{
    int fresh = 0;
    void *p = ghmi_keep_room(&e->buf[which], bytes, &fresh);
    if (p && fresh)
        zero_on_threads(e, p, e->buf[which].cap);
    return p;
}

void ghmi_edit_bufs_free(GhmVoxelEdit *e)
{
    for (int i = 0; i < EDIT_BUFS; i++) {
        free(e->buf[i].p);
        e->buf[i] = (GhmiKeep){NULL, 0};
    }
    e->probe = (GhmPointCloud){0};
}

/* --- items -------------------------------------------------------------------------------- */

static void make_item(uint32_t key, uint32_t count, const float sum[3], uint8_t label,
                      uint32_t *item)
{
    item[W_KEY] = key | KEY_TAG;
    item[W_COUNT] = count;
    memcpy(item + W_NORMAL, sum, 3 * sizeof *sum);
    item[W_LABEL] = label;
}

/* Voxel v of the cloud's side as an item: its count and count x its unit mean normal (turned
 * around when flip). */
static void cloud_item(const GhmVoxelSide *c, size_t v, int flip, uint8_t label, uint32_t *item)
{
    float sum[3];
    for (int k = 0; k < 3; k++)
        sum[k] = (flip ? -1.0f : 1.0f) * (float)c->counts[v] * c->normals[3 * v + (size_t)k];
    make_item(c->keys[v], c->counts[v], sum, label, item);
}

/* Keys with the tag, as the set's find and erase take them, in the keys array. */
static uint32_t *tagged(GhmVoxelEdit *e, const uint32_t *keys, size_t n)
{
    uint32_t *t = ghmi_edit_buf(e, EDIT_BUF_KEYS, n * sizeof *t);
    for (size_t i = 0; t && i < n; i++)
        t[i] = keys[i] | KEY_TAG;
    return t;
}

/* Chunk k of the probe's voxels: how many have label l, their tagged keys written from out on
 * (when not NULL). */
static size_t label_chunk(const GhmVoxelSide *p, uint8_t l, int k, uint32_t *out)
{
    size_t m = 0;
    for (size_t v = ghmi_edit_chunk_at(p->voxels, k); v < ghmi_edit_chunk_at(p->voxels, k + 1); v++)
        if (p->labels[v] == l) {
            if (out)
                out[m] = p->keys[v] | KEY_TAG;
            m++;
        }
    return m;
}

/* The probe's voxels with label l (tagged), in the inside array. */
static uint32_t *probe_keys(GhmVoxelEdit *e, const GhmVoxelSide *p, uint8_t l, size_t *n)
{
    uint32_t *keys = ghmi_edit_buf(e, EDIT_BUF_INSIDE, p->label_count[l] * sizeof *keys);
    size_t at[GHMI_EDIT_CHUNKS];
    int threads = ghm_context_threads(e->ctx);
    *n = 0;
    if (!keys)
        return NULL;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int k = 0; k < GHMI_EDIT_CHUNKS; k++)
        at[k] = label_chunk(p, l, k, NULL);
    *n = ghmi_edit_exclusive_scan(at, 0);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int k = 0; k < GHMI_EDIT_CHUNKS; k++)
        label_chunk(p, l, k, keys + at[k]);
    return keys;
}

/* A batch of changes to the set on the CPU path (a device makes its changes in the set itself,
 * edit_device.c): keys to erase first, then items to insert, in the edit's host arrays. */
typedef struct Changes {
    uint32_t *erase, *insert;
    size_t n_erase, n_insert;
} Changes;

static int changes_alloc(GhmVoxelEdit *e, Changes *c, size_t erase, size_t insert)
{
    c->erase = ghmi_edit_buf(e, EDIT_BUF_ERASE, erase * sizeof *c->erase);
    c->insert = ghmi_edit_buf(e, EDIT_BUF_INSERT, insert * ITEM_WORDS * sizeof *c->insert);
    return c->erase && c->insert ? GHM_OK : GHM_ERR_NOMEM;
}

/* The batch a and, unless NULL, the batch b (a list kept apart: subtract's inside keys,
 * intersect's erases): every erase first, so that a voxel erased and inserted again gets its
 * new payload. */
static int changes_apply(GhmVoxelEdit *e, const Changes *a, const Changes *b)
{
    const Changes *c[2] = {a, b};
    const int batches = b ? 2 : 1;
    int ret = GHM_OK;
    for (int i = 0; i < batches && ret == GHM_OK; i++)
        ret = ghm_dynmap_erase(e->set, c[i]->erase, c[i]->n_erase, NULL);
    for (int i = 0; i < batches && ret == GHM_OK; i++)
        ret = ghm_dynmap_insert(e->set, c[i]->insert, c[i]->n_insert, NULL, NULL);
    return ret;
}

/* The set's items at the n tagged keys, in the array `which` (zeros where absent). An empty
 * set (an edit's BASE) is not asked, and *found is NULL: nothing is there (readers take it
 * through item_at), without the keys sent to the device, the items back or an array of zeros
 * written (20-22 of a BASE's 45-49 set milliseconds for its 1.3 M inside voxels, H200). */
static int find_items(GhmVoxelEdit *e, const uint32_t *keys, size_t n, EditBuf which,
                      uint32_t **found)
{
    *found = NULL;
    if (ghm_dynmap_size(e->set) == 0)
        return GHM_OK;
    if (!(*found = ghmi_edit_buf(e, which, n * ITEM_WORDS * sizeof **found)))
        return GHM_ERR_NOMEM;
    return ghm_dynmap_find(e->set, keys, n, NULL, *found);
}

/* Item i of what find_items found: zeros (absent) when nothing was. */
static const uint32_t *item_at(const uint32_t *found, size_t i)
{
    static const uint32_t absent[ITEM_WORDS];
    return found ? found + i * ITEM_WORDS : absent;
}

/* The cloud's voxels, found in the set: items (zeros where absent) in *found. */
static int find_cloud(GhmVoxelEdit *e, const GhmVoxelSide *c, uint32_t **found)
{
    uint32_t *keys = tagged(e, c->keys, c->voxels);
    return keys ? find_items(e, keys, c->voxels, EDIT_BUF_FOUND, found) : GHM_ERR_NOMEM;
}

/* The set's voxels at the cloud's voxels become cut (subtract, intersect): erased now, those
 * that were there flagged in *erased, to come back as the cut (cut_at_cloud). A cut item is
 * made of the cloud's voxel alone, so the set's old items are not needed: erasing every cloud
 * voxel saves finding them and sending their items back (1.5 MB for 62 k voxels, a third of a
 * repeated subtract's set time on the H200 host). */
static int erase_at_cloud(GhmVoxelEdit *e, const GhmVoxelSide *c, uint8_t **erased)
{
    uint32_t *keys = tagged(e, c->keys, c->voxels);
    *erased = ghmi_edit_buf(e, EDIT_BUF_ERASED, c->voxels);
    return keys && *erased ? ghm_dynmap_erase(e->set, keys, c->voxels, *erased) : GHM_ERR_NOMEM;
}

/* The cut items of the cloud's voxels that erase_at_cloud erased, into ch's inserts. */
static void cut_at_cloud(const GhmVoxelSide *c, const uint8_t *erased, int flip, Changes *ch,
                         GhmVoxelEditStep *st)
{
    for (size_t v = 0; v < c->voxels; v++) {
        if (!erased[v])
            continue;
        cloud_item(c, v, flip, GHM_VOXEL_EDIT_CUT, ch->insert + ch->n_insert++ * ITEM_WORDS);
        st->relabelled++;
    }
}

/* --- the three edits ---------------------------------------------------------------------- */

/* The cloud's voxel v as surface, merged into the set's item old when there is one (count and
 * normal sums added, interior kept); returns 1 when old is to be erased first. */
static int add_cloud_item(const GhmVoxelSide *c, size_t v, const uint32_t *old, uint32_t *item)
{
    cloud_item(c, v, 0, GHM_VOXEL_EDIT_SURFACE, item);
    if (!old[W_KEY])
        return 0;
    float a[3], b[3];
    memcpy(a, old + W_NORMAL, sizeof a);
    memcpy(b, item + W_NORMAL, sizeof b);
    for (int k = 0; k < 3; k++)
        b[k] += a[k];
    memcpy(item + W_NORMAL, b, sizeof b);
    item[W_COUNT] += old[W_COUNT];
    if (old[W_LABEL] == GHM_VOXEL_EDIT_INTERIOR)
        item[W_LABEL] = GHM_VOXEL_EDIT_INTERIOR;
    return 1;
}

/* An inside voxel (tagged key) as interior: 0 when the set has it as interior already, 1 when
 * absent (a new item), 2 when there with another label (relabelled: erased first). */
static int add_inside_item(uint32_t key, const uint32_t *old, uint32_t *item)
{
    static const float zero[3] = {0, 0, 0};
    if (!old[W_KEY]) {
        make_item(key & ~KEY_TAG, 0, zero, GHM_VOXEL_EDIT_INTERIOR, item);
        return 1;
    }
    if (old[W_LABEL] == GHM_VOXEL_EDIT_INTERIOR)
        return 0;
    memcpy(item, old, ITEM_WORDS * sizeof *item);
    item[W_LABEL] = GHM_VOXEL_EDIT_INTERIOR;
    return 2;
}

/* Per chunk: its count of each kind of change, then (exclusive_scan) where its first goes. */
typedef struct AddChunks {
    size_t cloud_erase[GHMI_EDIT_CHUNKS];  /* erases of merged cloud voxels (first in the batch) */
    size_t inside_erase[GHMI_EDIT_CHUNKS]; /* erases of relabelled inside voxels (after those) */
    size_t inside_new[GHMI_EDIT_CHUNKS];   /* inside items (after the cloud's items, one a voxel) */
} AddChunks;

/* Chunk k of the cloud's and of the inside voxels: counts its changes into ck (write 0), or
 * writes them from the starts in ck (write 1). Each cloud voxel's item has its own place. */
static void add_chunk(const GhmVoxelSide *c, const uint32_t *found, const uint32_t *inside,
                      size_t ni, const uint32_t *in_found, int k, int write, AddChunks *ck,
                      Changes *ch)
{
    uint32_t scratch[ITEM_WORDS];
    size_t ce = write ? ck->cloud_erase[k] : 0, ie = write ? ck->inside_erase[k] : 0;
    size_t in = write ? ck->inside_new[k] : 0;
    const size_t to = ghmi_edit_chunk_at(c->voxels, k + 1);
    for (size_t v = ghmi_edit_chunk_at(c->voxels, k); v < to; v++) {
        int merged = item_at(found, v)[W_KEY] != 0;
        if (write && add_cloud_item(c, v, item_at(found, v), ch->insert + v * ITEM_WORDS))
            ch->erase[ce] = c->keys[v] | KEY_TAG;
        ce += merged;
    }
    for (size_t i = ghmi_edit_chunk_at(ni, k); i < ghmi_edit_chunk_at(ni, k + 1); i++) {
        uint32_t *item = write ? ch->insert + in * ITEM_WORDS : scratch;
        int got = add_inside_item(inside[i], item_at(in_found, i), item);
        if (got == 2 && write)
            ch->erase[ie] = inside[i];
        ie += got == 2;
        in += got != 0;
    }
    if (!write)
        ck->cloud_erase[k] = ce, ck->inside_erase[k] = ie, ck->inside_new[k] = in;
}

/* The cloud's voxels as surface (merged into voxels already there), the inside as interior. */
static void add_changes(const GhmVoxelResult *r, const uint32_t *found, const uint32_t *inside,
                        size_t ni, const uint32_t *in_found, int threads, Changes *ch,
                        GhmVoxelEditStep *st)
{
    const GhmVoxelSide *c = &r->side[1];
    AddChunks ck;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int k = 0; k < GHMI_EDIT_CHUNKS; k++)
        add_chunk(c, found, inside, ni, in_found, k, 0, &ck, ch);
    size_t cloud_erases = ghmi_edit_exclusive_scan(ck.cloud_erase, 0);
    ch->n_erase = ghmi_edit_exclusive_scan(ck.inside_erase, cloud_erases);
    ch->n_insert = ghmi_edit_exclusive_scan(ck.inside_new, c->voxels);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int k = 0; k < GHMI_EDIT_CHUNKS; k++)
        add_chunk(c, found, inside, ni, in_found, k, 1, &ck, ch);
    st->relabelled += ch->n_erase;
}

/* add, subtract and intersect each make their changes to the cloud's own voxels and to the many
 * other voxels (the probe's inside voxels, the set's voxels outside) here on the CPU path, and
 * on the device where the labels are (edit_device.c). Every find of the set comes before its
 * first change. */

static int add(GhmVoxelEdit *e, const GhmVoxelResult *r, GhmVoxelEditStep *st)
{
    const GhmVoxelSide *c = &r->side[1];
    GhmiVoxelDeviceView v;
    Changes ch = {0}; /* the cloud's voxels' and the inside voxels' changes, one batch */
    int ret = GHM_OK;
    if (ghmi_edit_on_device(e, &v)) {
        size_t relabelled = 0;
        ret = ghmi_edit_add_apply(e, &v, &r->side[0], c->voxels, &relabelled);
        st->relabelled += relabelled;
        return ret;
    }
    size_t ni = 0;
    uint32_t *found = NULL, *in_found = NULL, *inside = NULL;
    ret = find_cloud(e, c, &found);
    if (ret == GHM_OK && !(inside = probe_keys(e, &r->side[0], GHM_VOXEL_INSIDE, &ni)))
        ret = GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = find_items(e, inside, ni, EDIT_BUF_IN_FOUND, &in_found);
    if (ret == GHM_OK)
        ret = changes_alloc(e, &ch, c->voxels + ni, c->voxels + ni);
    if (ret == GHM_OK) {
        add_changes(r, found, inside, ni, in_found, ghm_context_threads(e->ctx), &ch, st);
        ret = changes_apply(e, &ch, NULL);
    }
    return ret;
}

/* subtract's or intersect's changes where the labels are, on a device (edit_device.c). */
static int cut_on_device(GhmVoxelEdit *e, const GhmiVoxelDeviceView *v, size_t K, int subtract,
                         GhmVoxelEditStep *st)
{
    size_t cuts = 0;
    int ret = ghmi_edit_cut(e, v, K, subtract, &cuts);
    st->relabelled += cuts;
    return ret;
}

static int subtract(GhmVoxelEdit *e, const GhmVoxelResult *r, GhmVoxelEditStep *st)
{
    const GhmVoxelSide *c = &r->side[1];
    GhmiVoxelDeviceView v;
    uint8_t *erased = NULL;
    Changes ch = {0}, inner = {0}; /* the cloud's voxels' cut; the inside voxels apart (absent
                                    * ones are ignored by the erase) */
    if (ghmi_edit_on_device(e, &v))
        return cut_on_device(e, &v, c->voxels, 1, st);
    int ret = GHM_OK;
    if (!(inner.erase = probe_keys(e, &r->side[0], GHM_VOXEL_INSIDE, &inner.n_erase)))
        ret = GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = erase_at_cloud(e, c, &erased);
    if (ret == GHM_OK)
        ret = changes_alloc(e, &ch, 0, c->voxels);
    if (ret == GHM_OK) {
        cut_at_cloud(c, erased, 1, &ch, st);
        ret = changes_apply(e, &ch, &inner);
    }
    return ret;
}

/* Whether the set's voxel of item lies at an inside voxel or one of the cloud's voxels of the
 * probe p (found by the probe's rows, ghmi_voxel_rows_at), so that intersect keeps it. Until
 * 2026-11-29 the labels came from a GhmMap of the probe's keys: its build and finds took 47 of
 * an intersect's 120 set milliseconds on the 2-core machine. */
static int kept(const GhmVoxelEdit *e, const GhmVoxelSide *p, const uint32_t *item)
{
    uint32_t v = ghmi_voxel_rows_at(&e->rows, item[W_KEY] & ~KEY_TAG);
    return v != GHM_NOT_FOUND &&
           (p->labels[v] == GHM_VOXEL_INSIDE || p->labels[v] == GHM_VOXEL_INTERSECTION);
}

/* intersect's test of the set's items (ghm_dynmap_erase_if): those not kept are erased. */
typedef struct Outside {
    const GhmVoxelEdit *e;
    const GhmVoxelSide *p;
} Outside;

static int outside(const uint32_t *item, void *user)
{
    const Outside *o = user;
    return !kept(o->e, o->p, item);
}

static int intersect(GhmVoxelEdit *e, const GhmVoxelResult *r, GhmVoxelEditStep *st)
{
    const GhmVoxelSide *c = &r->side[1];
    GhmiVoxelDeviceView v;
    Changes ch = {0}; /* the cloud's voxels' cut */
    /* the outside voxels are never a cloud voxel (each is an intersection voxel of the probe,
     * kept), so the cut and the erases may come in either order */
    if (ghmi_edit_on_device(e, &v))
        return cut_on_device(e, &v, c->voxels, 0, st);
    uint8_t *erased = NULL;
    Outside o = {e, &r->side[0]};
    int ret = erase_at_cloud(e, c, &erased);
    if (ret == GHM_OK) /* the set's other voxels tested where they are, not listed first */
        ret = ghm_dynmap_erase_if(e->set, outside, &o, NULL);
    if (ret == GHM_OK)
        ret = changes_alloc(e, &ch, 0, c->voxels);
    if (ret == GHM_OK) {
        cut_at_cloud(c, erased, 0, &ch, st);
        ret = changes_apply(e, &ch, NULL);
    }
    return ret;
}

/* --- apply -------------------------------------------------------------------------------- */

static int edit(GhmVoxelEdit *e, GhmVoxelEditOp op, const GhmVoxelResult *r,
                GhmVoxelEditStep *st)
{
    size_t before = ghm_dynmap_size(e->set);
    int ret = op == GHM_VOXEL_EDIT_ADD        ? add(e, r, st)
              : op == GHM_VOXEL_EDIT_SUBTRACT ? subtract(e, r, st)
                                              : intersect(e, r, st);
    if (ret == GHM_OK && op != GHM_VOXEL_EDIT_ADD)
        ret = ghm_dynmap_gc(e->set, NULL); /* slabs the erases emptied go back */
    st->voxels = ghm_dynmap_size(e->set);
    if (st->voxels >= before)
        st->added = st->voxels - before;
    else
        st->erased = before - st->voxels;
    return ret;
}

/* Whether the classify's cloud encloses something (ghmi_edit_encloses), where its labels are. */
static int encloses(GhmVoxelEdit *e, const GhmVoxelResult *r, int *out)
{
    const GhmVoxelSide *p = &r->side[0];
    const int radius = r->side[1].radius;
    GhmiVoxelDeviceView v;
    if (ghmi_edit_on_device(e, &v))
        return ghmi_edit_device_encloses(e, &v, p->voxels, radius, out);
    *out = ghmi_edit_encloses(&e->rows, p, radius);
    return GHM_OK;
}

int ghm_voxel_edit_apply(GhmVoxelEdit *e, GhmVoxelEditOp op, const GhmPointCloud *pc,
                         GhmVoxelEditStep *step, char *why, size_t why_size)
{
    GhmVoxelEditStep st = {0};
    if (why && why_size)
        why[0] = '\0';
    if (!e || !pc || (unsigned)op > GHM_VOXEL_EDIT_INTERSECT || pc->n == 0) {
        ghmi_why(why, why_size, "%s", pc && pc->n == 0 ? "no points" : "invalid arguments");
        return GHM_ERR_INVALID;
    }
    double t0 = ghm_now();
    const GhmVoxelResult *r = NULL;
    int ret = ghmi_edit_classify(e, pc, &r, &st.probe_ms, &st.upload_ms, why, why_size);
    double t1 = ghm_now();
    if (ret == GHM_OK) {
        st.labels = r->time;
        const GhmVoxelSide *p = &r->side[0];
        st.points = pc->n;
        st.cloud_voxels = r->side[1].voxels;
        st.radius = r->side[1].radius;
        st.probed = p->voxels;
        st.inside = p->label_count[GHM_VOXEL_INSIDE];
        st.unknown = p->label_count[GHM_VOXEL_UNKNOWN];
        st.conflicts = p->conflicts;
        int inside = 0;
        if (st.conflicts * GHMI_EDIT_CONFLICTS_PER > st.probed) {
            if (why && why_size)
                snprintf(why, why_size, "is too sparse for this grid: its inside and outside do "
                         "not settle (%zu pairs of voxels in conflict among the %zu around its "
                         "%zu voxels: the fill leaks through gaps between them); use a coarser "
                         "--grid or a denser cloud", st.conflicts, st.probed, st.cloud_voxels);
            ret = GHM_ERR_INVALID;
        } else if ((ret = encloses(e, r, &inside)) == GHM_OK && !inside) {
            if (why && why_size)
                snprintf(why, why_size, "has no inside at this grid: none of the %zu voxels "
                         "around its %zu surface voxels lies inside it away from the surface (a "
                         "closed surface with outward normals is needed; a coarser grid closes "
                         "gaps)", st.probed - st.cloud_voxels, st.cloud_voxels);
            ret = GHM_ERR_INVALID;
        } else if (ret < 0) {
            ghmi_why(why, why_size, "%s", ghm_strerror(ret));
        }
    }
    if (ret == GHM_OK && (ret = edit(e, op, r, &st)) < 0)
        ghmi_why(why, why_size, "%s", ghm_strerror(ret));
    st.classify_ms = 1e3 * (t1 - t0);
    st.edit_ms = 1e3 * (ghm_now() - t1);
    st.total_ms = st.classify_ms + st.edit_ms;
    if (step)
        *step = st;
    return ret;
}

/* --- the set as a result ------------------------------------------------------------------ */

/* order[r] = the item with the r-th smallest key: the ranks that a GhmIndex of the keys gives
 * (the hashing layer's parallel sort, on the context's backend; a qsort on one thread here was
 * 6 % of a 2-core CPU edit of a million voxels). The set's keys are distinct, so the ranks are a
 * permutation. */
static int key_order(GhmContext *ctx, const uint32_t *items, size_t n, uint32_t *order)
{
    uint32_t *keys = malloc((n + 1) * sizeof *keys), *rank = malloc((n + 1) * sizeof *rank);
    GhmIndex *ix = NULL;
    int ret = keys && rank ? GHM_OK : GHM_ERR_NOMEM;
    for (size_t i = 0; ret == GHM_OK && i < n; i++)
        keys[i] = items[i * ITEM_WORDS + W_KEY]; /* tagged: the same order */
    if (ret == GHM_OK && (ret = ghm_index_create(ctx, 0.0, &ix)) == GHM_OK &&
        (ret = ghm_index_build(ix, keys, n)) == GHM_OK)
        ret = ghm_index_size(ix) == n ? ghm_index_ids(ix, keys, n, rank) : GHM_ERR_INVALID;
    for (size_t i = 0; ret == GHM_OK && i < n; i++)
        order[rank[i]] = (uint32_t)i;
    ghm_index_free(&ix);
    free(keys);
    free(rank);
    return ret;
}

/* Side s from the n items in ascending key order. */
static void fill_side(const uint32_t *items, const uint32_t *order, size_t n, GhmVoxelSide *s)
{
    for (size_t i = 0; i < n; i++) {
        const uint32_t *it = items + (size_t)order[i] * ITEM_WORDS;
        float sum[3];
        memcpy(sum, it + W_NORMAL, sizeof sum);
        double len = sqrt((double)sum[0] * sum[0] + (double)sum[1] * sum[1] +
                          (double)sum[2] * sum[2]);
        s->keys[i] = it[W_KEY] & ~KEY_TAG;
        s->counts[i] = it[W_COUNT];
        s->labels[i] = (uint8_t)it[W_LABEL];
        for (int k = 0; k < 3; k++)
            s->normals[3 * i + (size_t)k] = len > 1e-6 ? (float)(sum[k] / len) : 0.0f;
        s->points += it[W_COUNT];
        s->label_count[it[W_LABEL] & 3]++;
    }
    s->voxels = n;
}

int ghm_voxel_edit_result(const GhmVoxelEdit *e, GhmVoxelResult **out)
{
    if (!e || !out)
        return GHM_ERR_INVALID;
    size_t n = ghm_dynmap_size(e->set);
    uint32_t *items = malloc((n * ITEM_WORDS + 1) * sizeof *items);
    uint32_t *order = malloc((n + 1) * sizeof *order);
    GhmVoxelResult *r = calloc(1, sizeof *r);
    GhmVoxelSide *s = r ? &r->side[0] : NULL;
    int ret = items && order && r ? GHM_OK : GHM_ERR_NOMEM;
    if (ret == GHM_OK) {
        r->grid = e->grid;
        r->rounds = 0;
        s->keys = malloc((n + 1) * sizeof *s->keys);
        s->labels = malloc(n + 1);
        s->counts = malloc((n + 1) * sizeof *s->counts);
        s->normals = malloc((3 * n + 1) * sizeof *s->normals);
        ret = s->keys && s->labels && s->counts && s->normals ? GHM_OK : GHM_ERR_NOMEM;
    }
    if (ret == GHM_OK)
        ret = ghm_dynmap_items(e->set, items, NULL, n, &n);
    if (ret == GHM_OK)
        ret = key_order(e->ctx, items, n, order);
    if (ret == GHM_OK) {
        fill_side(items, order, n, s);
        s->radius = 1;
        *out = r;
        r = NULL;
    }
    ghm_voxel_result_free(&r);
    free(items);
    free(order);
    return ret;
}
