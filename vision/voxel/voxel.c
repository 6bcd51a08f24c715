/*
 * voxel.c - voxel Boolean intersection of two point clouds; see ghm_voxel.h. The entry points:
 * one step (ghm_voxel_intersect) and sweeps of many steps, each run on the device when the
 * context's backend has voxel kernels (voxel_device.c), else on the CPU, stage by stage
 * (voxelize.c, normals.c, labels.c).
 */
#include <stdlib.h>
#include <string.h>

#include "voxel_backend_internal.h"
#include "voxel_cpu_internal.h"

/* --- the step ----------------------------------------------------------------------------- */

/* labels NULL: made without them (GHMI_VOXEL_NO_LABELS) */
static void hand_over(GhmiSide *s, GhmVoxelSide *out)
{
    out->points = s->n;
    out->voxels = s->K;
    out->keys = s->keys, s->keys = NULL;
    out->labels = s->label, s->label = NULL;
    out->counts = s->counts, s->counts = NULL;
    out->normals = s->normals, s->normals = NULL;
    out->normals_estimated = s->pc->normals == NULL;
    out->seeds = s->seeds;
    out->conflicts = s->conflicts;
    out->radius = s->hood.radius;
    for (size_t v = 0; out->labels && v < out->voxels; v++)
        out->label_count[out->labels[v]]++;
}

/* labels 0: the stages up to the normals only (GHMI_VOXEL_NO_LABELS) */
static int run_step(GhmContext *ctx, GhmiSide *s, const double *b_pose, const GhmVoxelGrid *g,
                    const GhmVoxelOptions *opt, int threads, int labels, GhmVoxelResult *r)
{
    int ret = GHM_OK;
    double t[7];
    t[0] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = ghmi_voxel_voxelize(ctx, &s[i], i ? b_pose : NULL, g, threads);
    t[1] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = ghmi_voxel_look_up(g, &s[i], threads);
    t[2] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        if (s[i].moments)
            ret = ghmi_voxel_estimate_normals(g, s[i].K, s[i].keys, s[i].counts, s[i].moments,
                                              &s[i].hood, s[i].nbr, threads, s[i].normals);
    t[3] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK && labels; i++)
        ret = ghmi_voxel_contact(g, &s[i], &s[1 - i], threads);
    t[4] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK && labels; i++)
        ret = ghmi_voxel_classify(g, &s[i], opt, threads);
    t[5] = ghm_now();
    for (int i = 0; i < 2 && ret == GHM_OK && labels; i++)
        ret = ghmi_voxel_fill(&s[i], opt, threads, &r->rounds);
    t[6] = ghm_now();
    r->time.voxelize_ms = 1e3 * ((t[1] - t[0]) + (t[3] - t[2]));
    r->time.lookup_ms = 1e3 * ((t[2] - t[1]) + (t[4] - t[3]));
    r->time.classify_ms = 1e3 * (t[5] - t[4]);
    r->time.fill_ms = 1e3 * (t[6] - t[5]);
    r->time.total_ms = 1e3 * (t[6] - t[0]);
    return ret;
}

static int check_step(const GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                      const GhmVoxelGrid *grid, const GhmVoxelOptions *opt)
{
    if (!ctx || !a || !b || !grid || ghmi_voxel_check_options(opt, NULL, 0) < 0 || !(grid->voxel_size > 0))
        return GHM_ERR_INVALID;
    return ghmi_voxel_dims_ok(grid->dims) ? GHM_OK : GHM_ERR_INVALID;
}

/* The device path, for clouds with or without normals (estimated on the device). */
static const GhmVoxelOps *device_ops(const GhmContext *ctx, const GhmPointCloud *a,
                                     const GhmPointCloud *b)
{
    (void)a, (void)b;
    return ghmi_voxel_ops(ctx);
}

void *ghmi_keep_room(GhmiKeep *k, size_t bytes, int *fresh)
{
    if (fresh)
        *fresh = 0;
    if (k->p && k->cap >= bytes)
        return k->p;
    free(k->p);
    k->cap = 0;
    const size_t cap = bytes + bytes / 4 + 64;
    if (!(k->p = malloc(cap)))
        return NULL;
    k->cap = cap;
    if (fresh)
        *fresh = 1;
    return k->p;
}

/* keep: NULL, or the blocks a sweep keeps for each side's neighbour ids (GhmiKeep) */
static int cpu_step(GhmContext *ctx, const GhmPointCloud *a, const GhmiVoxelRows *a_rows,
                    const GhmPointCloud *b, const double *b_pose, const GhmVoxelGrid *grid,
                    const GhmVoxelOptions *opt, int labels, GhmiKeep *keep, GhmVoxelResult *r)
{
    GhmiSide s[2] = {{.pc = a, .rows = a_rows, .n = a->n, .nbr_keep = keep ? &keep[0] : NULL},
                     {.pc = b, .n = b->n, .nbr_keep = keep ? &keep[1] : NULL}};
    int ret = run_step(ctx, s, b_pose, grid, opt, ghm_context_threads(ctx), labels, r);
    if (ret == GHM_OK) {
        hand_over(&s[0], &r->side[0]);
        hand_over(&s[1], &r->side[1]);
    }
    ghmi_voxel_side_free(&s[0]);
    ghmi_voxel_side_free(&s[1]);
    return ret;
}

int ghm_voxel_intersect(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                        const double *b_pose, const GhmVoxelGrid *grid,
                        const GhmVoxelOptions *opt, GhmVoxelResult **out)
{
    if (!out || check_step(ctx, a, b, grid, opt) < 0)
        return GHM_ERR_INVALID;
    GhmVoxelResult *r = calloc(1, sizeof *r);
    if (!r)
        return GHM_ERR_NOMEM;
    r->grid = *grid;
    int ret;
    const GhmVoxelOps *ops = device_ops(ctx, a, b);
    if (ops) { /* one step: the upload of the points counts as voxelizing */
        GhmiVoxelDevice *dev = NULL;
        double t0 = ghm_now();
        ret = ghmi_voxel_device_create(ctx, ops, a, b, 0, &dev);
        double up = 1e3 * (ghm_now() - t0);
        if (ret == GHM_OK)
            ret = ghmi_voxel_device_step(dev, b_pose, grid, opt, r);
        ghmi_voxel_device_free(&dev);
        r->time.voxelize_ms += up;
        r->time.total_ms += up;
    } else {
        ret = cpu_step(ctx, a, NULL, b, b_pose, grid, opt, 1, NULL, r);
    }
    if (ret == GHM_OK)
        *out = r;
    else
        ghm_voxel_result_free(&r);
    return ret;
}

/* --- sweeps ------------------------------------------------------------------------------- */

struct GhmVoxelSweep {
    GhmContext *ctx;
    const GhmPointCloud *a, *b;
    const GhmiVoxelRows *a_rows; /* A as rows (ghmi_voxel_sweep_rebind), or NULL */
    unsigned flags;               /* GHMI_VOXEL_*, from the rebind */
    GhmVoxelGrid grid;
    GhmVoxelOptions opt;
    GhmiVoxelDevice *dev; /* the device path's state, or NULL for the CPU path */
    GhmVoxelResult view;  /* device path: the last step, arrays in the state's staging */
    GhmVoxelResult *cpu;  /* CPU path: the last step's result */
    GhmiKeep nbr_keep[2]; /* CPU path: each side's neighbour ids, kept from step to step */
    double setup_ms;
};

int ghm_voxel_sweep_create(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                           const GhmVoxelGrid *grid, const GhmVoxelOptions *opt,
                           GhmVoxelSweep **out)
{
    if (!out || check_step(ctx, a, b, grid, opt) < 0)
        return GHM_ERR_INVALID;
    GhmVoxelSweep *sw = calloc(1, sizeof *sw);
    if (!sw)
        return GHM_ERR_NOMEM;
    *sw = (GhmVoxelSweep){.ctx = ctx, .a = a, .b = b, .grid = *grid, .opt = *opt};
    const GhmVoxelOps *ops = device_ops(ctx, a, b);
    double t0 = ghm_now();
    int ret = ops ? ghmi_voxel_device_create(ctx, ops, a, b, 1, &sw->dev) : GHM_OK;
    sw->setup_ms = 1e3 * (ghm_now() - t0);
    if (ret < 0) {
        ghm_voxel_sweep_free(&sw);
        return ret;
    }
    *out = sw;
    return GHM_OK;
}

int ghm_voxel_sweep_step(GhmVoxelSweep *sw, const double *b_pose, const GhmVoxelResult **out)
{
    if (!sw || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    int ret;
    if (sw->dev) {
        memset(&sw->view, 0, sizeof sw->view);
        sw->view.grid = sw->grid;
        ret = ghmi_voxel_device_step(sw->dev, b_pose, &sw->grid, &sw->opt, &sw->view);
        if (ret == GHM_OK)
            *out = &sw->view;
        return ret;
    }
    ghm_voxel_result_free(&sw->cpu);
    if (!(sw->cpu = calloc(1, sizeof *sw->cpu)))
        return GHM_ERR_NOMEM;
    sw->cpu->grid = sw->grid;
    ret = cpu_step(sw->ctx, sw->a, sw->a_rows, sw->b, b_pose, &sw->grid, &sw->opt,
                   !(sw->flags & GHMI_VOXEL_NO_LABELS), sw->nbr_keep, sw->cpu);
    if (ret == GHM_OK)
        *out = sw->cpu;
    else
        ghm_voxel_result_free(&sw->cpu);
    return ret;
}

int ghmi_voxel_sweep_rebind(GhmVoxelSweep *sw, const GhmPointCloud *a,
                            const GhmiVoxelRows *a_rows, const GhmPointCloud *b, unsigned flags)
{
    if (!sw || !a || !b)
        return GHM_ERR_INVALID;
    sw->a = a;
    sw->a_rows = a_rows;
    sw->flags = flags;
    sw->b = b;
    ghm_voxel_result_free(&sw->cpu); /* the last step's, of the clouds before */
    return sw->dev ? ghmi_voxel_device_rebind(sw->dev, a, a_rows, b, flags) : GHM_OK;
}

int ghmi_voxel_sweep_borrow_table(GhmVoxelSweep *sw, const GhmVoxelSweep *lender)
{
    if (!sw || !lender)
        return GHM_ERR_INVALID;
    return sw->dev && lender->dev ? ghmi_voxel_device_borrow_table(sw->dev, lender->dev) : GHM_OK;
}

int ghmi_voxel_sweep_device_view(const GhmVoxelSweep *sw, GhmiVoxelDeviceView *v)
{
    if (!sw || !v)
        return GHM_ERR_INVALID;
    return sw->dev ? ghmi_voxel_device_view(sw->dev, v) : GHM_ERR_UNSUPPORTED;
}

double ghm_voxel_sweep_setup_ms(const GhmVoxelSweep *sw) { return sw ? sw->setup_ms : 0.0; }

void ghm_voxel_sweep_free(GhmVoxelSweep **sw)
{
    if (!sw || !*sw)
        return;
    ghmi_voxel_device_free(&(*sw)->dev);
    ghm_voxel_result_free(&(*sw)->cpu);
    for (int i = 0; i < 2; i++)
        free((*sw)->nbr_keep[i].p);
    free(*sw);
    *sw = NULL;
}

void ghm_voxel_result_free(GhmVoxelResult **r)
{
    if (!r || !*r)
        return;
    for (int i = 0; i < 2; i++) {
        free((*r)->side[i].keys);
        free((*r)->side[i].labels);
        free((*r)->side[i].counts);
        free((*r)->side[i].normals);
    }
    free(*r);
    *r = NULL;
}
