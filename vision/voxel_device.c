/*
 * voxel_device.c - one step of the voxel pipeline on a backend with device kernels
 * (GhmVoxelOps): voxel.c's stages in voxel.c's order, every array in backend memory from the
 * upload of the points to the download of keys, counts, normals and labels. The host waits only
 * for small counters: K (is the key GHM_NOT_FOUND, the points outside the grid, among the
 * index's keys?), the neighbour histogram (median, for widening), and each fill round's
 * conflict count.
 *
 * Points outside the grid keep the key GHM_NOT_FOUND and go into the index with the others
 * (no compaction pass): it is the largest key, so it takes the last id, K, and every other id
 * is the one voxel.c gives; the kernels never look it up and skip ids >= K.
 */
#include <stdlib.h>
#include <string.h>

#include "ghm_index.h"
#include "ghm_map.h"
#include "voxel_backend_internal.h"
#include "voxel_internal.h"

typedef struct DevSide {
    const GhmPointCloud *pc;
    size_t n, K;
    GhmIndex *ix;
    const uint32_t *keys; /* K ascending (+ GHM_NOT_FOUND last), owned by ix */
    float *xyz, *pnormals;
    uint32_t *pkey, *pid, *counts;
    unsigned long long *nsum;
    float *normals;
    int radius, nn;
    uint32_t *nbr; /* nn * K, step-major */
    uint32_t *cross;
    uint8_t *barrier;
    float *plane;
    uint8_t *label, *ring, *seed, *drop;
    unsigned long long *state;
    uint32_t *queue, *cnt; /* the fill's queue (K) and per-level counts (K + 2) */
    size_t seeds, conflicts;
} DevSide;

typedef struct Dev {
    GhmContext *ctx;
    const GhmVoxelOps *ops;
    GhmVoxelGridArgs g;
    uint32_t *hist;               /* GHMI_MAX_HOOD + 1 */
    unsigned long long *counters; /* GHMI_VOXEL_COUNTERS */
} Dev;

static int get(Dev *d, size_t bytes, void *out)
{
    return d->ops->scratch(d->ctx, bytes, (void **)out);
}

static void put(Dev *d, void *p) { d->ops->release(d->ctx, p); }

static void side_release(Dev *d, DevSide *s)
{
    void *arrays[] = {s->xyz,   s->pnormals, s->pkey,  s->pid,   s->counts, s->nsum,
                      s->normals, s->nbr,    s->cross, s->barrier, s->plane, s->label,
                      s->ring,  s->seed,     s->drop,  s->state, s->queue, s->cnt};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        put(d, arrays[i]);
    ghm_index_free(&s->ix);
}

static int upload_points(Dev *d, DevSide *s)
{
    size_t bytes = 3 * s->n * sizeof(float);
    int ret = get(d, bytes, &s->xyz);
    if (ret == GHM_OK)
        ret = ghm_buffer_upload(d->ctx, s->xyz, s->pc->xyz, bytes);
    if (ret == GHM_OK && s->pc->normals && s->n) {
        ret = get(d, bytes, &s->pnormals);
        if (ret == GHM_OK)
            ret = ghm_buffer_upload(d->ctx, s->pnormals, s->pc->normals, bytes);
    }
    return ret;
}

/* Keys, index, ids, counts and unit mean normals. */
static int voxelize(Dev *d, DevSide *s, const GhmVoxelPose *pose)
{
    GhmContext *ctx = d->ctx;
    size_t n = s->n;
    int ret = upload_points(d, s);
    if (ret == GHM_OK)
        ret = get(d, (n + 1) * 4, &s->pkey);
    if (ret == GHM_OK)
        ret = d->ops->keys(ctx, s->xyz, n, pose, &d->g, s->pkey);
    if (ret == GHM_OK)
        ret = ghm_index_create(ctx, 0.0, &s->ix);
    if (ret == GHM_OK)
        ret = ghm_index_build(s->ix, s->pkey, n);
    if (ret == GHM_OK)
        ret = ghm_index_key_array(s->ix, &s->keys);
    if (ret < 0)
        return ret;
    s->K = ghm_index_size(s->ix);
    if (s->K) {
        uint32_t last = 0;
        if ((ret = ghm_buffer_download(ctx, &last, s->keys + s->K - 1, 4)) < 0)
            return ret;
        s->K -= last == GHM_NOT_FOUND;
    }
    size_t K = s->K;
    if ((ret = get(d, (n + 1) * 4, &s->pid)) == GHM_OK && n)
        ret = ghm_index_ids(s->ix, s->pkey, n, s->pid);
    if (ret == GHM_OK)
        ret = get(d, (K + 1) * 4, &s->counts);
    if (ret == GHM_OK)
        ret = get(d, (3 * K + 1) * 8, &s->nsum);
    if (ret == GHM_OK)
        ret = get(d, (3 * K + 1) * 4, &s->normals);
    if (ret == GHM_OK)
        ret = d->ops->zero(ctx, s->counts, K * 4);
    if (ret == GHM_OK)
        ret = d->ops->zero(ctx, s->nsum, 3 * K * 8);
    if (ret == GHM_OK)
        ret = d->ops->accumulate(ctx, s->pid, n, K, s->pnormals, pose, s->counts, s->nsum);
    if (ret == GHM_OK)
        ret = d->ops->normalise(ctx, K, s->nsum, s->normals);
    return ret;
}

/* voxel.c's look_up: 26-neighbours, widened while the median voxel has too few. */
static int look_up(Dev *d, DevSide *s)
{
    int ret = GHM_OK;
    for (int r = 1; r <= GHMI_MAX_RADIUS; r++) {
        int w = 2 * r + 1;
        s->radius = r;
        s->nn = w * w * w - 1;
        if (s->K == 0)
            break;
        put(d, s->nbr);
        s->nbr = NULL;
        uint32_t hist[GHMI_MAX_HOOD + 1];
        size_t hist_bytes = (size_t)(s->nn + 1) * sizeof hist[0];
        if ((ret = get(d, (size_t)s->nn * s->K * 4, &s->nbr)) < 0 ||
            (ret = d->ops->zero(d->ctx, d->hist, hist_bytes)) < 0 ||
            (ret = d->ops->neighbours(d->ctx, s->ix, s->keys, s->K, &d->g, r, s->nbr,
                                      d->hist)) < 0 ||
            (ret = ghm_buffer_download(d->ctx, hist, d->hist, hist_bytes)) < 0)
            return ret;
        size_t seen = 0;
        int median = s->nn;
        for (int c = 0; c <= s->nn; c++)
            if ((seen += hist[c]) * 2 >= s->K) {
                median = c;
                break;
            }
        if (median >= GHMI_MIN_MEDIAN_NEIGHBOURS)
            break;
    }
    return ret;
}

static int contact(Dev *d, DevSide *s, const DevSide *o)
{
    size_t K = s->K;
    int rho = (s->radius > o->radius ? s->radius : o->radius) - 1;
    int ret = get(d, (K + 1) * 4, &s->cross);
    if (ret == GHM_OK)
        ret = get(d, K + 1, &s->barrier);
    if (ret == GHM_OK)
        ret = get(d, (6 * K + 1) * 4, &s->plane);
    if (ret == GHM_OK)
        ret = d->ops->contact(d->ctx, s->keys, K, o->ix, o->K, o->normals, &d->g, rho, s->cross,
                              s->barrier, s->plane);
    return ret;
}

static int classify(Dev *d, DevSide *s, const GhmVoxelOptions *opt)
{
    size_t K = s->K;
    int ret = get(d, K + 1, &s->label);
    if (ret == GHM_OK)
        ret = get(d, K + 1, &s->ring);
    if (ret == GHM_OK)
        ret = get(d, K + 1, &s->seed);
    if (ret == GHM_OK)
        ret = d->ops->classify(d->ctx, s->keys, K, &d->g, s->radius, s->nbr, s->cross,
                               s->barrier, s->plane, opt->t_out, opt->t_in, s->label, s->ring,
                               s->seed);
    return ret;
}

static int read_counter(Dev *d, int which, unsigned long long *out)
{
    return ghm_buffer_download(d->ctx, out, d->counters + which, sizeof *out);
}

/* voxel.c's fill(): fills with conflict rounds. */
static int fill(Dev *d, DevSide *s, const GhmVoxelOptions *opt, int *rounds)
{
    size_t K = s->K;
    int r = 0, ret = get(d, (K + 1) * 8, &s->state);
    if (ret == GHM_OK)
        ret = get(d, K + 1, &s->drop);
    if (ret == GHM_OK)
        ret = get(d, (K + 1) * 4, &s->queue);
    if (ret == GHM_OK)
        ret = get(d, (K + 2) * 4, &s->cnt);
    if (ret == GHM_OK)
        ret = d->ops->zero(d->ctx, s->drop, K);
    while (ret == GHM_OK && K) {
        unsigned long long pairs = 0;
        if ((ret = d->ops->zero(d->ctx, s->cnt, (K + 2) * 4)) < 0 ||
            (ret = d->ops->fill(d->ctx, K, s->nn, s->nbr, s->barrier, s->seed, s->state, s->queue,
                                s->cnt)) < 0 ||
            (ret = d->ops->zero(d->ctx, d->counters + GHMI_VOXEL_PAIRS, 8)) < 0 ||
            (ret = d->ops->fill_labels(d->ctx, K, s->nn, s->nbr, s->barrier, s->ring, s->seed,
                                       s->state, s->label, s->drop, d->counters)) < 0 ||
            (ret = read_counter(d, GHMI_VOXEL_PAIRS, &pairs)) < 0)
            break;
        r++;
        s->conflicts = (size_t)pairs;
        if (pairs == 0 || r == opt->max_rounds)
            break;
        ret = d->ops->seeds(d->ctx, K, s->drop, s->seed, d->counters);
    }
    unsigned long long live = 0;
    if (ret == GHM_OK && K &&
        (ret = d->ops->zero(d->ctx, d->counters + GHMI_VOXEL_SEEDS, 8)) == GHM_OK &&
        (ret = d->ops->seeds(d->ctx, K, NULL, s->seed, d->counters)) == GHM_OK)
        ret = read_counter(d, GHMI_VOXEL_SEEDS, &live);
    s->seeds = (size_t)live;
    r = r ? r : 1; /* voxel.c runs one (empty) fill for an empty cloud */
    *rounds = r > *rounds ? r : *rounds;
    return ret;
}

static int hand_over(Dev *d, DevSide *s, GhmVoxelSide *out)
{
    size_t K = s->K;
    out->points = s->n;
    out->voxels = K;
    out->normals_estimated = s->pc->normals == NULL;
    out->seeds = s->seeds;
    out->conflicts = s->conflicts;
    out->radius = s->radius;
    out->keys = malloc((K + 1) * sizeof *out->keys);
    out->labels = malloc(K + 1);
    out->counts = malloc((K + 1) * sizeof *out->counts);
    out->normals = malloc((3 * K + 1) * sizeof *out->normals);
    if (!out->keys || !out->labels || !out->counts || !out->normals)
        return GHM_ERR_NOMEM;
    int ret = ghm_buffer_download(d->ctx, out->keys, s->keys, K * 4);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(d->ctx, out->labels, s->label, K);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(d->ctx, out->counts, s->counts, K * 4);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(d->ctx, out->normals, s->normals, 3 * K * 4);
    for (size_t v = 0; ret == GHM_OK && v < K; v++)
        out->label_count[out->labels[v] & 3]++;
    return ret;
}

/* Waits for the queued work and returns the time. */
static double stamp(Dev *d, int *ret)
{
    if (*ret == GHM_OK)
        *ret = ghm_context_sync(d->ctx);
    return ghm_now();
}

static int run(Dev *d, DevSide *s, const GhmVoxelPose *pose, const GhmVoxelOptions *opt,
               GhmVoxelResult *r)
{
    static const GhmVoxelPose none = {.present = 0};
    int ret = GHM_OK;
    double t[6];
    t[0] = stamp(d, &ret);
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = voxelize(d, &s[i], i ? pose : &none);
    t[1] = stamp(d, &ret);
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = look_up(d, &s[i]);
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = contact(d, &s[i], &s[1 - i]);
    t[2] = stamp(d, &ret);
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = classify(d, &s[i], opt);
    t[3] = stamp(d, &ret);
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = fill(d, &s[i], opt, &r->rounds);
    t[4] = stamp(d, &ret);
    for (int i = 0; i < 2 && ret == GHM_OK; i++)
        ret = hand_over(d, &s[i], &r->side[i]);
    t[5] = ghm_now();
    r->time.voxelize_ms = 1e3 * (t[1] - t[0]);
    r->time.lookup_ms = 1e3 * (t[2] - t[1]);
    r->time.classify_ms = 1e3 * (t[3] - t[2]);
    r->time.fill_ms = 1e3 * (t[5] - t[3]); /* with the download of the results */
    r->time.total_ms = 1e3 * (t[5] - t[0]);
    return ret;
}

int ghmi_voxel_step_device(GhmContext *ctx, const struct GhmVoxelOps *ops,
                           const GhmPointCloud *a, const GhmPointCloud *b, const double *b_pose,
                           const GhmVoxelGrid *grid, const GhmVoxelOptions *opt,
                           GhmVoxelResult *r)
{
    Dev d = {.ctx = ctx, .ops = ops};
    for (int k = 0; k < 3; k++) {
        d.g.origin[k] = grid->origin[k];
        d.g.dims[k] = grid->dims[k];
    }
    d.g.size = grid->voxel_size;
    d.g.inv = 1.0 / grid->voxel_size;
    GhmVoxelPose pose = {.present = b_pose != NULL};
    if (b_pose)
        memcpy(pose.m, b_pose, sizeof pose.m);
    DevSide s[2] = {{.pc = a, .n = a->n}, {.pc = b, .n = b->n}};
    int ret = get(&d, (GHMI_MAX_HOOD + 1) * sizeof *d.hist, &d.hist);
    if (ret == GHM_OK)
        ret = get(&d, GHMI_VOXEL_COUNTERS * sizeof *d.counters, &d.counters);
    if (ret == GHM_OK)
        ret = run(&d, s, &pose, opt, r);
    side_release(&d, &s[0]);
    side_release(&d, &s[1]);
    put(&d, d.hist);
    put(&d, d.counters);
    int sync = ghm_context_sync(ctx);
    return ret < 0 ? ret : sync;
}
