/*
 * voxel_device.c - the voxel pipeline on a backend with device kernels (GhmVoxelOps): the CPU
 * path's stages for both clouds at once, every array in backend memory from the points to the
 * download of keys, counts, normals and labels.
 *
 * A state (GhmiVoxelDevice) uploads the two clouds once and keeps its buffers from step to step:
 * the points at creation (or at a rebind to other clouds, which keeps everything else; a cloud
 * given as rows, a voxel edit's probe, has its points made on the device from them), voxel
 * arrays and the result staging grown when a step has more voxels than any before, and the
 * voxel table: a hashing/ GhmMultimap of the points' sort keys
 * (voxel_backend_internal.h), which keeps its own arrays (the keys op writes the points' keys
 * straight into them). A step waits for the device twice:
 *  1. after the keys and the table (sort, run heads, map: built queued, sized by the points):
 *     20 bytes (runs, A's runs, points outside the grid per cloud, the table's failure word),
 *     from which the host sizes the voxel arrays;
 *  2. at the end: one download of every result array (one contiguous device block) and of the
 *     counters (label counts, seeds, conflicts, rounds, neighbour histograms).
 * In between everything is queued: per-voxel sums, neighbours (radius 1), normals for a cloud
 * without them (PCA and the breadth-first orientation of normals.c, one cooperative launch for
 * the orientation; counted in "look-ups"), contact, classify, and the fill with all its conflict
 * rounds in one cooperative launch. The histograms then tell whether a cloud is too sparse for
 * 26-neighbours (voxelize.c's look_up); only then does the step
 * widen its neighbourhood, with a wait per radius, and redo (normals of a widened cloud without
 * them,) contact, classify and fill.
 *
 * A cloud given as rows whose points the grid proves each in its own voxel (a voxel edit's
 * probe) has no points made and stays out of the table: its voxels are its rows' cells
 * (row_voxels), the neighbours op finds its voxels' neighbours by the rows and the contact op
 * B's voxels' matches in it the same way, so only B's points are sorted and hashed (a probe
 * of 0.9 M voxels was 85 % of the points a 256^3 edit sorted).
 *
 * Points outside the grid sort as the largest key of their cloud and form its last run, which
 * build_kernel skips, so the ids are the ones GhmIndex gives on the CPU path (ascending keys).
 * A table whose build attempt failed (practically never: the map is sized for the points, about
 * five times the voxels) is built again, keys and all, with the next attempt's hash constants,
 * before the step goes past wait 1.
 */
#include <stdlib.h>
#include <string.h>

#include "voxel_backend_internal.h"
#include "voxel_internal.h"

enum { ALIGN = 256, TIMER_MARKS = 5, TABLE_ATTEMPTS = 8 };

/* The voxel table's map load for the bound it is sized for (the points): buckets of 4 slots
 * (one 32-byte sector) up to 0.9, and the smallest table with them. */
#define TABLE_LOAD 0.9

/* A device block that grows (freed and reallocated, contents lost) but never shrinks. */
typedef struct Block {
    void *p;
    size_t cap;
} Block;

struct GhmiVoxelDevice {
    GhmContext *ctx;
    const GhmVoxelOps *ops;
    const GhmPointCloud *pc[2];
    size_t n[2], n_all;
    size_t inside[2], K[2]; /* this step's points inside the grid and voxels, per cloud */
    int pinned;
    Block xyz, pnormals;    /* points: xyz and normals of A then B (float) */
    GhmMultimap *table;     /* sort key -> point indices; its runs are the voxels */
    const GhmiVoxelDevice *lender; /* whose table the steps may use (borrow_table), or NULL */
    GhmMultimap *step_table;       /* the table of this step: d->table or the lender's */
    size_t runs;                   /* ... its runs */
    GhmVoxelGridArgs grid;         /* ... and its grid */
    int posed;                     /* ... B moved by a pose */
    GhmVoxelInfo *info;     /* device */
    GhmVoxelInfo *info_h;   /* page-locked */
    GhmVoxelFillControl *ctl;
    GhmVoxelOrientControl *octl;
    int no_normals[2];      /* the cloud has no normals */
    int estimate[2];        /* ... and has points: normals estimated */
    int a_rows;             /* A is given as rows (ghmi_voxel_device_rebind) */
    int a_exact;            /* ... each of its points in its own voxel (the grid's extent proves
                             * it): A's voxels are made from the rows (row_voxels), no points
                             * and not through the voxel table, which holds B alone */
    unsigned flags;         /* GHMI_VOXEL_*, from the rebind */
    Block rows;             /* ... its lo, hi and start */
    GhmiVoxelDeviceView view; /* the last step's arrays; keys[0] NULL before a step */
    Block work;             /* voxel arrays and the table */
    Block out;              /* result arrays of both clouds, contiguous */
    void *stage;            /* page-locked copy of out (pinned) */
    size_t stage_cap;
    void *timer;
};

static size_t up(size_t x) { return (x + ALIGN - 1) / ALIGN * ALIGN; }

/* Carves `bytes` from a block at *at (aligned); with base NULL it only counts. */
static void *carve(void *base, size_t *at, size_t bytes)
{
    void *p = base ? (char *)base + *at : NULL;
    *at += up(bytes ? bytes : 1);
    return p;
}

static int grow(GhmiVoxelDevice *d, Block *b, size_t bytes)
{
    if (b->cap >= bytes && b->p)
        return GHM_OK;
    d->ops->release(d->ctx, b->p);
    b->p = NULL;
    b->cap = 0;
    size_t want = bytes + bytes / 4; /* room for the next steps' growth */
    int ret = d->ops->scratch(d->ctx, want, &b->p);
    if (ret == GHM_OK)
        b->cap = want;
    return ret;
}

void ghmi_voxel_device_free(GhmiVoxelDevice **pd)
{
    if (!pd || !*pd)
        return;
    GhmiVoxelDevice *d = *pd;
    const GhmVoxelOps *ops = d->ops;
    void *dev[] = {d->xyz.p, d->pnormals.p, d->rows.p, d->info, d->ctl, d->octl, d->work.p,
                   d->out.p};
    for (size_t i = 0; i < sizeof dev / sizeof dev[0]; i++)
        ops->release(d->ctx, dev[i]);
    ghm_multimap_free(&d->table);
    ops->host_free(d->ctx, d->info_h);
    ops->host_free(d->ctx, d->stage);
    if (d->timer)
        ops->timer_free(d->timer);
    ghm_context_sync(d->ctx);
    free(d);
    *pd = NULL;
}

/* The grid as kernels see it. */
static void grid_args(const GhmVoxelGrid *grid, GhmVoxelGridArgs *g)
{
    memset(g, 0, sizeof *g); /* compared whole (table_lender) */
    for (int k = 0; k < 3; k++) {
        g->origin[k] = grid->origin[k];
        g->dims[k] = grid->dims[k];
    }
    g->size = grid->voxel_size;
    g->inv = 1.0 / grid->voxel_size;
    g->key_bits = ghmi_voxel_key_bits(grid);
}

/* Cloud A's rows uploaded and, unless its voxels come from them alone (a_exact), its points (at
 * the start of the points' blocks) made on the device from them, and its normals zeroed. */
static int make_rows(GhmiVoxelDevice *d, const GhmiVoxelRows *rows)
{
    _Static_assert(sizeof(size_t) == sizeof(uint64_t), "row starts are uploaded as 64 bits");
    const GhmVoxelOps *ops = d->ops;
    size_t nr = (size_t)rows->grid->dims[1] * (size_t)rows->grid->dims[2];
    size_t hi_at = up(nr * sizeof(int32_t)), start_at = 2 * hi_at;
    int ret = grow(d, &d->rows, start_at + nr * sizeof(uint64_t));
    char *base = d->rows.p;
    if (ret == GHM_OK)
        ret = ops->upload(d->ctx, base, rows->lo, nr * sizeof(int32_t));
    if (ret == GHM_OK)
        ret = ops->upload(d->ctx, base + hi_at, rows->hi, nr * sizeof(int32_t));
    if (ret == GHM_OK)
        ret = ops->upload(d->ctx, base + start_at, rows->start, nr * sizeof(uint64_t));
    GhmVoxelGridArgs g;
    grid_args(rows->grid, &g);
    d->view.lo = (const int32_t *)base;
    d->view.hi = (const int32_t *)(base + hi_at);
    d->view.start = (const uint64_t *)(base + start_at);
    if (ret < 0 || d->a_exact)
        return ret;
    ret = ops->rows(d->ctx, &g, d->view.lo, d->view.hi, d->view.start, nr, rows->n, d->xyz.p);
    if (ret == GHM_OK)
        ret = ops->memset(d->ctx, d->pnormals.p, 0, 3 * rows->n * sizeof(float));
    return ret;
}

int ghmi_voxel_device_rebind(GhmiVoxelDevice *d, const GhmPointCloud *a,
                             const GhmiVoxelRows *a_rows, const GhmPointCloud *b, unsigned flags)
{
    if (!d || !a || !b || (a_rows && a_rows->n != a->n))
        return GHM_ERR_INVALID;
    if (a->n + b->n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    const GhmVoxelOps *ops = d->ops;
    d->view = (GhmiVoxelDeviceView){0};
    d->lender = NULL;
    d->pc[0] = a, d->pc[1] = b;
    d->n[0] = a->n, d->n[1] = b->n;
    d->n_all = a->n + b->n;
    d->a_rows = a_rows != NULL;
    d->a_exact = a_rows && ghmi_voxel_centres_in_own_voxels(a_rows->grid);
    d->flags = flags;
    d->no_normals[0] = !a_rows && !a->normals;
    d->no_normals[1] = !b->normals;
    for (int i = 0; i < 2; i++)
        d->estimate[i] = d->n[i] > 0 && d->no_normals[i];
    size_t bytes = 3 * d->n_all * sizeof(float);
    int ret = grow(d, &d->xyz, bytes);
    if (ret == GHM_OK)
        ret = grow(d, &d->pnormals, bytes);
    if (ret == GHM_OK && a_rows)
        ret = make_rows(d, a_rows);
    for (int i = a_rows ? 1 : 0; i < 2 && ret == GHM_OK; i++) {
        size_t at = 3 * (i ? d->n[0] : 0), len = 3 * d->n[i] * sizeof(float);
        ret = ops->upload(d->ctx, (float *)d->xyz.p + at, d->pc[i]->xyz, len);
        if (ret == GHM_OK && d->n[i] && d->pc[i]->normals)
            ret = ops->upload(d->ctx, (float *)d->pnormals.p + at, d->pc[i]->normals, len);
    }
    if (ret == GHM_OK)
        ret = ghm_context_sync(d->ctx);
    if (ret < 0) /* no step may read the clouds half uploaded */
        d->pc[0] = d->pc[1] = NULL;
    return ret;
}

int ghmi_voxel_device_create(GhmContext *ctx, const struct GhmVoxelOps *ops,
                             const GhmPointCloud *a, const GhmPointCloud *b, int pinned,
                             GhmiVoxelDevice **out)
{
    if (!ctx || !ops || !a || !b || !out)
        return GHM_ERR_INVALID;
    GhmiVoxelDevice *d = calloc(1, sizeof *d); /* the clouds are checked by the rebind */
    if (!d)
        return GHM_ERR_NOMEM;
    d->ctx = ctx;
    d->ops = ops;
    d->pinned = pinned;
    int ret = ghm_multimap_create(ctx, TABLE_LOAD, &d->table);
    if (ret == GHM_OK)
        ret = ops->scratch(ctx, sizeof *d->info, (void **)&d->info);
    if (ret == GHM_OK)
        ret = ops->scratch(ctx, sizeof *d->ctl, (void **)&d->ctl);
    if (ret == GHM_OK)
        ret = ops->scratch(ctx, sizeof *d->octl, (void **)&d->octl);
    if (ret == GHM_OK)
        ret = ops->host_alloc(ctx, sizeof *d->info_h, (void **)&d->info_h);
    if (ret == GHM_OK)
        ret = ops->timer_create(ctx, TIMER_MARKS, &d->timer);
    if (ret == GHM_OK)
        ret = ghmi_voxel_device_rebind(d, a, NULL, b, 0);
    if (ret < 0) {
        ghmi_voxel_device_free(&d);
        return ret;
    }
    *out = d;
    return GHM_OK;
}

/* The arrays of one step, carved from d->work (voxel arrays) and d->out (results). */
typedef struct Layout {
    GhmVoxelPair pair;
    GhmVoxelEstimate est; /* scratch of the normals op (clouds without normals) */
    size_t work_bytes, out_bytes;
    size_t out_at[2][4]; /* offsets of keys, counts, normals, labels in out (pinned) */
} Layout;

/* Lays out both clouds' arrays at radius 1 (base NULL: sizes only); estimate[c]: the cloud's
 * moments and the normals op's scratch too; first_run[c]: the table's run of the cloud's voxel
 * 0. A cloud given as rows (a_rows: A) has a point a voxel and zero normals: its counts and
 * normals go with the voxel arrays, not downloaded (14 of a probe's 19 MB of results); where
 * its voxels are its rows' (a_by_rows), it has no neighbour ids (GhmVoxelSideArgs). */
static void lay_out(Layout *L, void *work, void *out, const size_t K[2], const size_t first_run[2],
                    const int estimate[2], int a_rows, int a_by_rows)
{
    size_t at = 0, ot = 0;
    for (int c = 0; c < 2; c++) {
        GhmVoxelSideArgs *s = &L->pair.s[c];
        size_t k = K[c];
        s->K = (uint32_t)k;
        s->first_run = (uint32_t)first_run[c];
        s->radius = 1;
        const int kept = c == 0 && a_rows;
        L->out_at[c][0] = ot, s->keys = carve(out, &ot, k * 4);
        L->out_at[c][1] = ot, s->counts = kept ? carve(work, &at, k * 4) : carve(out, &ot, k * 4);
        L->out_at[c][2] = ot, s->normals = kept ? carve(work, &at, 3 * k * 4)
                                                : carve(out, &ot, 3 * k * 4);
        L->out_at[c][3] = ot, s->label = carve(out, &ot, k);
        s->nbr = c == 0 && a_by_rows ? NULL : carve(work, &at, 26 * k * 4);
        s->mask = carve(work, &at, k * 4);
        s->cross = carve(work, &at, k * 4);
        s->barrier = carve(work, &at, k);
        s->plane = carve(work, &at, 6 * k * 4);
        s->ring = carve(work, &at, k);
        s->seed = carve(work, &at, k);
        s->drop = carve(work, &at, k);
        s->state = carve(work, &at, k * 8);
        s->queue = carve(work, &at, k * 4);
        if (!estimate[c])
            continue;
        GhmVoxelEstimateSide *e = &L->est.s[c];
        s->moments = carve(work, &at, GHMI_MOMENTS * k * 8);
        e->part = carve(work, &at, 8 * (k / GHMI_CENTROID_CHUNK + 2) * 8);
        e->far = carve(work, &at, k * 8);
        e->best = carve(work, &at, k * 8);
        e->key = carve(work, &at, k * 8);
        e->parent = carve(work, &at, k * 4);
        e->comp = carve(work, &at, k * 4);
        e->best_id = carve(work, &at, k * 4);
        e->level = carve(work, &at, k * 4);
        e->queue = carve(work, &at, k * 4);
        e->ref = carve(work, &at, 3 * k * 4);
    }
    L->work_bytes = at;
    L->out_bytes = ot;
}

static int median_of(const uint32_t *hist, int nn, size_t K)
{
    size_t seen = 0;
    for (int c = 0; c <= nn; c++)
        if ((seen += hist[c]) * 2 >= K)
            return c;
    return nn;
}

/* The label stages from contact on (contact, classify, fill; none with GHMI_VOXEL_NO_LABELS) and
 * the download of everything (the counters only with GHMI_VOXEL_ON_DEVICE). */
static int label_and_download(GhmiVoxelDevice *d, Layout *L, const GhmVoxelGridArgs *g,
                              const GhmVoxelOptions *opt, int marks)
{
    const GhmVoxelOps *ops = d->ops;
    GhmContext *ctx = d->ctx;
    const int radius[2] = {L->pair.s[0].radius, L->pair.s[1].radius};
    const int labels = !(d->flags & GHMI_VOXEL_NO_LABELS);
    int rho = ghmi_voxel_barrier_reach(radius, d->inside, d->K);
    size_t tail = offsetof(GhmVoxelInfo, label_count);
    int ret = labels ? ops->contact(ctx, d->step_table, g, rho, &L->pair, d->info) : GHM_OK;
    if (ret == GHM_OK && marks)
        ret = ops->timer_mark(ctx, d->timer, 2);
    if (ret == GHM_OK && labels)
        ret = ops->classify(ctx, g, opt->t_out, opt->t_in, &L->pair);
    if (ret == GHM_OK && marks)
        ret = ops->timer_mark(ctx, d->timer, 3);
    for (int c = 0; c < 2 && ret == GHM_OK && labels; c++)
        ret = ops->memset(ctx, L->pair.s[c].drop, 0, L->pair.s[c].K);
    if (ret == GHM_OK && labels)
        ret = ops->memset(ctx, d->ctl, 0, sizeof *d->ctl);
    if (ret == GHM_OK)
        ret = ops->memset(ctx, (char *)d->info + tail, 0, sizeof *d->info - tail);
    if (ret == GHM_OK && labels)
        ret = ops->fill(ctx, opt->max_rounds, &L->pair, d->ctl, d->info);
    if (ret == GHM_OK && d->pinned && !(d->flags & GHMI_VOXEL_ON_DEVICE))
        ret = ops->download(ctx, d->stage, d->out.p, L->out_bytes);
    if (ret == GHM_OK)
        ret = ops->download(ctx, d->info_h, d->info, sizeof *d->info);
    if (ret == GHM_OK && marks)
        ret = ops->timer_mark(ctx, d->timer, 4);
    if (ret == GHM_OK)
        ret = ghm_context_sync(ctx);
    return ret;
}

/* The look-ups' neighbour histograms, brought to the host (a wait for the device): read to
 * widen, and, for a cloud known to be sparse, before any labels are made (they would be made
 * again after widening). */
static int download_histograms(GhmiVoxelDevice *d)
{
    const size_t at = offsetof(GhmVoxelInfo, hist);
    int ret = d->ops->download(d->ctx, d->info_h->hist, (char *)d->info + at,
                               sizeof d->info_h->hist);
    return ret == GHM_OK ? ghm_context_sync(d->ctx) : ret;
}

/* voxelize.c's look_up for the clouds whose median voxel has too few neighbours at radius 1:
 * widen step by step (a wait per radius for the histogram). The wider neighbour arrays are
 * scratch, released by the caller (wide[c]). */
static int widen(GhmiVoxelDevice *d, Layout *L, const GhmVoxelGridArgs *g, int need[2],
                 uint32_t *wide[2])
{
    const GhmVoxelOps *ops = d->ops;
    int ret = GHM_OK;
    for (int r = 2; r <= GHMI_MAX_RADIUS && ret == GHM_OK && (need[0] || need[1]); r++) {
        int w = 2 * r + 1, nn = w * w * w - 1;
        for (int c = 0; c < 2 && ret == GHM_OK; c++) {
            if (!need[c])
                continue;
            GhmVoxelSideArgs *s = &L->pair.s[c];
            ops->release(d->ctx, wide[c]);
            wide[c] = NULL;
            ret = ops->scratch(d->ctx, (size_t)nn * s->K * 4, (void **)&wide[c]);
            s->nbr = wide[c];
            s->radius = r;
        }
        char *hist = (char *)d->info + offsetof(GhmVoxelInfo, hist);
        if (ret == GHM_OK)
            ret = ops->memset(d->ctx, hist, 0, sizeof d->info_h->hist);
        if (ret == GHM_OK)
            ret = ops->neighbours(d->ctx, d->step_table, g, &L->pair, need, d->info);
        if (ret == GHM_OK)
            ret = download_histograms(d);
        for (int c = 0; c < 2 && ret == GHM_OK; c++)
            if (need[c] && median_of(d->info_h->hist[c], nn, L->pair.s[c].K) >=
                               GHMI_MIN_MEDIAN_NEIGHBOURS)
                need[c] = 0;
    }
    return ret;
}

static int hand_over(GhmiVoxelDevice *d, const Layout *L, GhmVoxelResult *r)
{
    const GhmVoxelInfo *info = d->info_h;
    int rounds = 1;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSideArgs *s = &L->pair.s[c];
        GhmVoxelSide *out = &r->side[c];
        size_t K = s->K;
        out->points = d->n[c];
        out->voxels = K;
        out->normals_estimated = d->no_normals[c];
        out->radius = s->radius;
        out->seeds = (size_t)info->seeds[c];
        out->conflicts = (size_t)info->conflicts[c];
        for (int l = 0; l < 4; l++)
            out->label_count[l] = (size_t)info->label_count[c][l];
        rounds = (int)info->rounds[c] > rounds ? (int)info->rounds[c] : rounds;
        const int kept = c == 0 && d->a_rows; /* no counts or normals downloaded (lay_out) */
        d->view.keys[c] = s->keys;
        d->view.labels[c] = d->flags & GHMI_VOXEL_NO_LABELS ? NULL : s->label;
        d->view.counts[c] = s->counts;
        d->view.voxel_normals[c] = s->normals;
        const size_t first = 3 * (c ? d->n[0] : 0); /* the cloud's first point's floats */
        const int no_points = c == 0 && d->a_exact; /* never made (make_rows) */
        d->view.xyz[c] = no_points ? NULL : (const float *)d->xyz.p + first;
        d->view.normals[c] = d->no_normals[c] || no_points ? NULL
                                                           : (const float *)d->pnormals.p + first;
        if (d->flags & GHMI_VOXEL_ON_DEVICE) /* the arrays stay in d->view */
            continue;
        if (d->pinned) {
            char *base = d->stage;
            out->keys = (uint32_t *)(base + L->out_at[c][0]);
            out->counts = kept ? NULL : (uint32_t *)(base + L->out_at[c][1]);
            out->normals = kept ? NULL : (float *)(base + L->out_at[c][2]);
            out->labels = d->flags & GHMI_VOXEL_NO_LABELS ? NULL
                                                          : (uint8_t *)(base + L->out_at[c][3]);
            continue;
        }
        out->keys = malloc((K + 1) * sizeof *out->keys);
        out->counts = malloc((K + 1) * sizeof *out->counts);
        out->normals = malloc((3 * K + 1) * sizeof *out->normals);
        out->labels = malloc(K + 1);
        if (!out->keys || !out->counts || !out->normals || !out->labels)
            return GHM_ERR_NOMEM;
        int ret = d->ops->download(d->ctx, out->keys, s->keys, K * 4);
        if (ret == GHM_OK)
            ret = d->ops->download(d->ctx, out->counts, s->counts, K * 4);
        if (ret == GHM_OK)
            ret = d->ops->download(d->ctx, out->normals, s->normals, 3 * K * 4);
        if (ret == GHM_OK)
            ret = d->ops->download(d->ctx, out->labels, s->label, K);
        if (ret < 0)
            return ret;
    }
    r->rounds = rounds;
    return d->pinned ? GHM_OK : ghm_context_sync(d->ctx);
}

/* The first of the points (A's then B's) that go through the voxel table: A's are not there
 * where its voxels come from its rows alone. */
static size_t table_first(const GhmiVoxelDevice *d) { return d->a_exact ? d->n[0] : 0; }

/* The lender whose table holds what this step's would (ghmi_voxel_device_borrow_table): its
 * last step, with no A points, on the same grid and unposed, hashed as many B points as this
 * step would put through the table, B's alone (A is out of it); else NULL. */
static const GhmiVoxelDevice *table_lender(const GhmiVoxelDevice *d, const GhmVoxelGridArgs *g,
                                           const GhmVoxelPose *pose)
{
    const GhmiVoxelDevice *l = d->lender;
    if (!l || !d->a_exact || pose->present || !l->view.keys[1] || l->posed || l->n[0] ||
        l->n[1] != d->n[1] || memcmp(&l->grid, g, sizeof *g))
        return NULL;
    return l;
}

/* Keys and the table of this state, and the one wait for its run counts; a failed build is
 * done again, keys and all, with the next attempt's constants. */
static int own_table(GhmiVoxelDevice *d, const GhmVoxelGridArgs *g, const GhmVoxelPose *pose)
{
    const GhmVoxelOps *ops = d->ops;
    GhmContext *ctx = d->ctx;
    const size_t skip = table_first(d), n = d->n_all - skip;
    const float *xyz = (const float *)d->xyz.p + 3 * skip;
    int ret = GHM_OK;
    for (int attempt = 0; ret == GHM_OK; attempt++) {
        if (attempt == TABLE_ATTEMPTS)
            return GHM_ERR_BUILD_FAILED;
        ret = ops->memset(ctx, d->info, 0, offsetof(GhmVoxelInfo, label_count));
        if (ret == GHM_OK)
            ret = ops->keys(ctx, d->table, xyz, d->n[0] - skip, d->n[1], pose, g, d->info);
        if (ret == GHM_OK)
            ret = ops->table(ctx, d->table, n, g->key_bits, attempt, d->info);
        if (ret == GHM_OK)
            ret = ops->download(ctx, d->info_h, d->info, offsetof(GhmVoxelInfo, hist));
        if (ret == GHM_OK)
            ret = ghm_context_sync(ctx);
        if (ret == GHM_OK && !d->info_h->table_failed)
            break;
    }
    d->step_table = d->table;
    d->runs = ret == GHM_OK && n ? d->info_h->runs : 0;
    return ret;
}

/* Stage 1: the step's table, its own or a lender's (whose counts the host has: no wait, no
 * points sorted or hashed again; a voxel edit's second run of its cloud, 0.1 ms of kernels and
 * a wait of a 160 k-point cloud's step at 256^3, H200). K[c]: the voxels of cloud c, first[c]:
 * the table's run of its voxel 0. */
static int voxel_table(GhmiVoxelDevice *d, const GhmVoxelGridArgs *g, const GhmVoxelPose *pose,
                       size_t K[2], size_t first[2], size_t *runs)
{
    const GhmiVoxelDevice *l = table_lender(d, g, pose);
    int ret = l ? d->ops->memset(d->ctx, d->info, 0, offsetof(GhmVoxelInfo, label_count))
                : own_table(d, g, pose);
    if (ret < 0)
        return ret;
    d->grid = *g;
    d->posed = pose->present;
    if (l) {
        d->step_table = l->step_table;
        d->runs = l->runs;
        K[0] = d->n[0];
        K[1] = l->K[1];
        d->inside[0] = d->n[0];
        d->inside[1] = l->inside[1];
        first[0] = first[1] = 0;
    } else {
        const GhmVoxelInfo *info = d->info_h;
        size_t all = d->runs, runs_a = d->n_all > table_first(d) ? info->runs_a : 0;
        K[0] = d->a_exact ? d->n[0] : runs_a - (info->outside[0] > 0);
        K[1] = all - runs_a - (info->outside[1] > 0);
        if (runs_a > all || K[0] > d->n[0] || K[1] > d->n[1] || info->outside[0] > d->n[0] ||
            info->outside[1] > d->n[1])
            return GHM_ERR_CUDA; /* counts the device cannot have produced */
        for (int c = 0; c < 2; c++)
            d->inside[c] = d->n[c] - info->outside[c];
        first[0] = 0;
        first[1] = runs_a;
    }
    d->K[0] = K[0];
    d->K[1] = K[1];
    *runs = d->runs;
    return GHM_OK;
}

/* The voxel arrays of a step with K voxels per cloud, laid out in blocks grown as needed; the
 * page-locked copy of the results only where they come to the host (its first making took 6-12
 * ms of a voxel edit's first step by a sparse cloud, H200 host, 2026-12-01). */
static int size_arrays(GhmiVoxelDevice *d, Layout *L, const size_t K[2], const size_t first[2])
{
    const int by_rows = d->a_rows && K[0] == d->n[0]; /* one voxel a row point: ids by rows */
    memset(L, 0, sizeof *L);
    lay_out(L, NULL, NULL, K, first, d->estimate, d->a_rows, by_rows);
    int ret = grow(d, &d->work, L->work_bytes);
    if (ret == GHM_OK)
        ret = grow(d, &d->out, L->out_bytes);
    const int staged = d->pinned && !(d->flags & GHMI_VOXEL_ON_DEVICE);
    if (ret == GHM_OK && staged && d->stage_cap < L->out_bytes) {
        d->ops->host_free(d->ctx, d->stage);
        d->stage = NULL;
        d->stage_cap = 0;
        size_t want = L->out_bytes + L->out_bytes / 4;
        if ((ret = d->ops->host_alloc(d->ctx, want, &d->stage)) == GHM_OK)
            d->stage_cap = want;
    }
    if (ret == GHM_OK)
        lay_out(L, d->work.p, d->out.p, K, first, d->estimate, d->a_rows, by_rows);
    if (ret == GHM_OK && by_rows) {
        GhmVoxelSideArgs *a = &L->pair.s[0];
        a->rows_lo = d->view.lo;
        a->rows_hi = d->view.hi;
        a->rows_start = d->view.start;
        memcpy(a->dims, d->grid.dims, sizeof a->dims);
    }
    return ret;
}

/* Sparse clouds (voxelize.c's look_up): widen, then normals and the label stages again, or for
 * the first time where the step left them for after the widening (unlabelled; then with the
 * timer's marks). */
static int sparse(GhmiVoxelDevice *d, Layout *L, const GhmVoxelGridArgs *g,
                  const GhmVoxelOptions *opt, const size_t K[2], int unlabelled)
{
    int need[2] = {0, 0}, ret = GHM_OK;
    for (int c = 0; c < 2; c++)
        need[c] = K[c] > 0 && median_of(d->info_h->hist[c], 26, K[c]) < GHMI_MIN_MEDIAN_NEIGHBOURS;
    if (!need[0] && !need[1])
        return unlabelled ? label_and_download(d, L, g, opt, 1) : GHM_OK;
    uint32_t *wide[2] = {NULL, NULL};
    ret = widen(d, L, g, need, wide);
    int redo[2] = {0, 0};
    for (int c = 0; c < 2; c++)
        redo[c] = d->estimate[c] && L->pair.s[c].radius > 1;
    if (ret == GHM_OK && (redo[0] || redo[1])) /* normals from the wider neighbourhood */
        ret = d->ops->normals(d->ctx, g, &L->pair, redo, &L->est, d->octl);
    if (ret == GHM_OK)
        ret = label_and_download(d, L, g, opt, unlabelled);
    d->ops->release(d->ctx, wide[0]);
    d->ops->release(d->ctx, wide[1]);
    return ret;
}

int ghmi_voxel_device_borrow_table(GhmiVoxelDevice *d, const GhmiVoxelDevice *lender)
{
    if (!d || !lender || lender == d || lender->ctx != d->ctx)
        return GHM_ERR_INVALID;
    d->lender = lender;
    return GHM_OK;
}

int ghmi_voxel_device_view(const GhmiVoxelDevice *d, GhmiVoxelDeviceView *v)
{
    if (!d || !v || !d->view.keys[0])
        return GHM_ERR_INVALID;
    *v = d->view;
    return GHM_OK;
}

int ghmi_voxel_device_step(GhmiVoxelDevice *d, const double *b_pose, const GhmVoxelGrid *grid,
                           const GhmVoxelOptions *opt, GhmVoxelResult *r)
{
    if (!d || !d->pc[0] || !grid || !opt || !r) /* no clouds: a failed rebind */
        return GHM_ERR_INVALID;
    d->view.keys[0] = d->view.keys[1] = NULL; /* until this step has results */
    const GhmVoxelOps *ops = d->ops;
    GhmContext *ctx = d->ctx;
    double t0 = ghm_now();
    GhmVoxelGridArgs g;
    grid_args(grid, &g);
    GhmVoxelPose pose = {.present = b_pose != NULL};
    if (b_pose)
        memcpy(pose.m, b_pose, sizeof pose.m);
    size_t K[2] = {0, 0}, first[2] = {0, 0}, runs = 0;
    Layout L;
    /* 1. keys and the table; 2. voxel sums, neighbours at radius 1, labels, download */
    int ret = ops->timer_mark(ctx, d->timer, 0);
    if (ret == GHM_OK)
        ret = voxel_table(d, &g, &pose, K, first, &runs);
    if (ret == GHM_OK)
        ret = size_arrays(d, &L, K, first);
    const size_t skip = table_first(d);
    if (ret == GHM_OK)
        ret = ops->build(ctx, d->step_table, runs, first[1], (const float *)d->xyz.p + 3 * skip,
                         (const float *)d->pnormals.p + 3 * skip, &pose, &g, &L.pair);
    if (ret == GHM_OK && d->a_exact) {
        const GhmVoxelSideArgs *a = &L.pair.s[0];
        ret = ops->row_voxels(ctx, &g, d->view.lo, d->view.hi, d->view.start,
                              (size_t)grid->dims[1] * (size_t)grid->dims[2], K[0], a->keys,
                              a->counts, a->normals);
    }
    if (ret == GHM_OK)
        ret = ops->timer_mark(ctx, d->timer, 1);
    const int both[2] = {1, 1};
    if (ret == GHM_OK)
        ret = ops->neighbours(ctx, d->step_table, &g, &L.pair, both, d->info);
    if (ret == GHM_OK && (d->estimate[0] || d->estimate[1])) /* counted as look-ups */
        ret = ops->normals(ctx, &g, &L.pair, d->estimate, &L.est, d->octl);
    const int widen_first = (d->flags & GHMI_VOXEL_B_SPARSE) != 0;
    if (ret == GHM_OK)
        ret = widen_first ? download_histograms(d) : label_and_download(d, &L, &g, opt, 1);
    if (ret == GHM_OK)
        ret = sparse(d, &L, &g, opt, K, widen_first);
    if (ret == GHM_OK)
        ret = hand_over(d, &L, r);
    double ms[4] = {0, 0, 0, 0};
    for (int i = 0; i < 4 && ret == GHM_OK; i++)
        ret = ops->timer_elapsed(d->timer, i, i + 1, &ms[i]);
    double t1 = ghm_now();
    r->time.voxelize_ms = ms[0];
    r->time.lookup_ms = ms[1];
    r->time.classify_ms = ms[2];
    r->time.fill_ms = ms[3]; /* with the download of the results */
    r->time.total_ms = 1e3 * (t1 - t0);
    return ret;
}
