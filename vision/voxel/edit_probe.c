/*
 * edit_probe.c - the labels of a voxel edit (ghm_voxel_edit.h): the voxel pipeline (on whatever
 * backend the context has) runs on the cloud alone (its voxels and the neighbourhood radius the
 * pipeline picks for it), then on the probe of the voxels that may lie inside it against the
 * cloud, which labels them; and the checks that the cloud has an inside to edit with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edit_internal.h"
#include "ghm_map.h"
#include "voxel_backend_internal.h"
#include "voxel_internal.h"
#include "why_internal.h"

/* --- the probe ---------------------------------------------------------------------------- */

/* The spans' passes go over the rows, or over chunks of the voxels, on the context's threads
 * (they took 0.2-0.3 ms of a 256^3 edit's step on one thread, H200 host, 2026-11-30); each row
 * is written by one chunk, so the spans are the one-thread passes'. */
enum { SPAN_PARALLEL_LEAST = 16384 }; /* fewer rows: one thread */

/* The first voxel from v on whose row is not voxel v - 1's (the keys ascend): chunks of voxels
 * that start there own their rows. */
static size_t row_boundary(const uint32_t *keys, size_t n, uint32_t nx, size_t v)
{
    while (v > 0 && v < n && keys[v] / nx == keys[v - 1] / nx)
        v++;
    return v;
}

/* Voxels [from, to) widen their rows' spans by d in x. */
static void spans_of_voxels(const uint32_t *keys, size_t from, size_t to, uint32_t nx, int d,
                            int32_t *lo, int32_t *hi)
{
    for (size_t v = from; v < to; v++) {
        uint32_t r = keys[v] / nx;
        int32_t x = (int32_t)(keys[v] % nx);
        lo[r] = x - d < lo[r] ? x - d : lo[r];
        hi[r] = x + d > hi[r] ? x + d : hi[r];
    }
}

/* Slice z's rows take the spans (tl, th) of the rows within d along y (pass 0) or z (pass 1). */
static void widen_slice(const GhmVoxelGrid *g, int pass, int d, int z, const int32_t *tl,
                        const int32_t *th, int32_t *lo, int32_t *hi)
{
    const int ny = g->dims[1], nz = g->dims[2];
    for (int y = 0; y < ny; y++) {
        int at = pass ? z : y, n = pass ? nz : ny;
        size_t r = (size_t)y + (size_t)ny * (size_t)z;
        for (int k = at - d > 0 ? at - d : 0; k <= at + d && k < n; k++) {
            size_t q = pass ? (size_t)y + (size_t)ny * (size_t)k
                            : (size_t)k + (size_t)ny * (size_t)z;
            lo[r] = tl[q] < lo[r] ? tl[q] : lo[r];
            hi[r] = th[q] > hi[r] ? th[q] : hi[r];
        }
    }
}

/* Per grid row (y, z) the first and last x of the cloud's voxels, both widened by d in x, y and
 * z (a square max filter over the rows), into e's span arrays; lo > hi where a row has none. */
static int row_spans(GhmVoxelEdit *e, const GhmVoxelSide *c, int d)
{
    const GhmVoxelGrid *g = &e->grid;
    const int nx = g->dims[0], nz = g->dims[2];
    size_t rows = (size_t)g->dims[1] * (size_t)nz;
    int32_t *lo = ghmi_edit_buf(e, EDIT_BUF_SPAN_LO, rows * sizeof *lo);
    int32_t *hi = ghmi_edit_buf(e, EDIT_BUF_SPAN_HI, rows * sizeof *hi);
    int32_t *tl = ghmi_edit_buf(e, EDIT_BUF_SPAN_SCRATCH, 2 * rows * sizeof *tl);
    if (!lo || !hi || !tl)
        return GHM_ERR_NOMEM;
    int32_t *th = tl + rows;
#pragma omp parallel num_threads(ghm_context_threads(e->ctx)) if (rows >= SPAN_PARALLEL_LEAST)
    {
#pragma omp for schedule(static)
        for (size_t r = 0; r < rows; r++)
            lo[r] = INT32_MAX, hi[r] = INT32_MIN;
#pragma omp for schedule(static)
        for (int k = 0; k < GHMI_EDIT_CHUNKS; k++) {
            size_t n = c->voxels, from = ghmi_edit_chunk_at(n, k);
            size_t to = ghmi_edit_chunk_at(n, k + 1);
            spans_of_voxels(c->keys, row_boundary(c->keys, n, (uint32_t)nx, from),
                            row_boundary(c->keys, n, (uint32_t)nx, to), (uint32_t)nx, d, lo, hi);
        }
        /* the widening over rows, along y then along z */
        for (int pass = 0; pass < 2 && d > 0; pass++) {
#pragma omp for schedule(static)
            for (size_t r = 0; r < rows; r++)
                tl[r] = lo[r], th[r] = hi[r];
#pragma omp for schedule(static)
            for (int z = 0; z < nz; z++)
                widen_slice(g, pass, d, z, tl, th, lo, hi);
        }
#pragma omp for schedule(static)
        for (size_t r = 0; r < rows; r++)
            if (lo[r] <= hi[r]) {
                lo[r] = lo[r] < 0 ? 0 : lo[r];
                hi[r] = hi[r] >= nx ? nx - 1 : hi[r];
            }
    }
    return GHM_OK;
}

/* start[r] = the voxels of rows before r (their spans' lengths); returns all of them. */
static size_t row_starts(const int32_t *lo, const int32_t *hi, size_t rows, int threads,
                         size_t *start)
{
    size_t count[GHMI_EDIT_CHUNKS];
    threads = rows >= SPAN_PARALLEL_LEAST ? threads : 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int k = 0; k < GHMI_EDIT_CHUNKS; k++) {
        size_t m = 0;
        for (size_t r = ghmi_edit_chunk_at(rows, k); r < ghmi_edit_chunk_at(rows, k + 1); r++) {
            start[r] = m;
            m += lo[r] <= hi[r] ? (size_t)(hi[r] - lo[r] + 1) : 0;
        }
        count[k] = m;
    }
    size_t n = ghmi_edit_exclusive_scan(count, 0);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int k = 0; k < GHMI_EDIT_CHUNKS; k++)
        for (size_t r = ghmi_edit_chunk_at(rows, k); r < ghmi_edit_chunk_at(rows, k + 1); r++)
            start[r] += count[k];
    return n;
}

static size_t memory_limit; /* tests: ghmi_voxel_edit_memory_limit */

void ghmi_voxel_edit_memory_limit(size_t bytes) { memory_limit = bytes; }

/* Host memory the system can give now (Linux's MemAvailable), or 0 when unknown. */
static size_t memory_available(void)
{
    if (memory_limit)
        return memory_limit;
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return (size_t)kb * 1024;
}

/* Whether classifying n probe voxels fits in host memory. A solid's voxels grow with the cube
 * of the grid (21.7 M inside the bunny at 512, 3.1 M at 256), and past the memory the kernel
 * kills the process minutes in, with no word: so refuse at once, saying why. Host bytes per
 * probe voxel at the peak of an apply, measured on the CPU backend (the bunny at 256 and 512:
 * 250-260; the pipeline keeps 26 neighbour ids a voxel); a device backend keeps only the probe's
 * points and the results on the host (about 50 bytes, counted as 96). */
static int probe_fits(size_t n, int on_device, char *why, size_t why_size)
{
    size_t need = n * (on_device ? 96 : 256), have = memory_available();
    if (have == 0 || need <= have)
        return GHM_OK;
    if (why && why_size)
        snprintf(why, why_size, "at this grid the voxels in and around it would be %.1f M, "
                 "needing about %.1f GB of memory where %.1f GB are free: use a coarser grid",
                 n / 1e6, need / 1e9, have / 1e9);
    return GHM_ERR_TOO_LARGE;
}

/* e->probe holding n points in its array (the CPU path's: a device makes them from the rows):
 * xyz, then the normals, zero (the array is zeroed when made and the normals never written),
 * so none are estimated for the probe. */
static int probe_room(GhmVoxelEdit *e, size_t n)
{
    float *p = ghmi_edit_buf(e, EDIT_BUF_PROBE, 6 * n * sizeof(float));
    if (!p)
        return GHM_ERR_NOMEM;
    e->probe.xyz = p; /* the normals after room for all the points the array can hold */
    e->probe.normals = p + 3 * (e->buf[EDIT_BUF_PROBE].cap / (6 * sizeof(float)));
    e->probe.n = n;
    return GHM_OK;
}

/* The probe's rows made here from the cloud's voxels c, spans widened by d, into e->rows. */
static int host_rows(GhmVoxelEdit *e, const GhmVoxelSide *c, int d)
{
    const GhmVoxelGrid *g = &e->grid;
    int ret = row_spans(e, c, d);
    if (ret < 0)
        return ret;
    const int32_t *lo = e->buf[EDIT_BUF_SPAN_LO].p, *hi = e->buf[EDIT_BUF_SPAN_HI].p;
    size_t rows = (size_t)g->dims[1] * (size_t)g->dims[2];
    size_t *start = ghmi_edit_buf(e, EDIT_BUF_SPAN_START, rows * sizeof *start);
    if (!start)
        return GHM_ERR_NOMEM;
    size_t n = row_starts(lo, hi, rows, ghm_context_threads(e->ctx), start);
    e->rows = (GhmiVoxelRows){.grid = g, .lo = lo, .hi = hi, .start = start, .n = n};
    return GHM_OK;
}

/* The probe, in e->rows and e->probe: a cloud of one point per voxel centre over the spans,
 * with zero normals (so none are estimated for it: its labels use only the cloud's normals).
 * Ascending keys. With the cloud's keys on a device (dev_keys: the first run's), its rows are
 * made there, where the host's passes over the rows and the rows' upload took 0.4-0.5 ms of a
 * 256^3 step (H200 host, 16 threads waking for each pass: 2026-11-30), unless the host is to
 * check the probe's keys against them (ghmi_voxel_rows_match: a grid far from the origin).
 * Its points are made here for the CPU path, on the device by a backend with voxel kernels.
 * GHM_ERR_TOO_LARGE, with why, when it would not fit in memory. */
static int make_probe(GhmVoxelEdit *e, const GhmVoxelSide *c, const uint32_t *dev_keys, int d,
                      char *why, size_t why_size)
{
    const int on_device = ghmi_voxel_ops(e->ctx) != NULL;
    int ret = dev_keys && ghmi_voxel_centres_in_own_voxels(&e->grid)
                  ? ghmi_edit_device_rows(e, dev_keys, c->voxels, d)
                  : host_rows(e, c, d);
    if (ret < 0)
        return ret;
    size_t n = e->rows.n;
    if (n > GHM_POINTCLOUD_MAX_POINTS)
        return GHM_ERR_TOO_LARGE;
    ret = probe_fits(n, on_device, why, why_size);
    e->probe = (GhmPointCloud){.n = n};
    if (ret == GHM_OK && !on_device && (ret = probe_room(e, n)) == GHM_OK)
        ghmi_voxel_rows_points(&e->rows, ghm_context_threads(e->ctx), e->probe.xyz);
    return ret;
}

/* An edit's inside comes from the cloud's normals: file normals that point inward or either way
 * (ghm_voxel_normals_check) would cut or fill the wrong voxels, so they are refused with why. */
static int check_normals(const GhmVoxelGrid *g, const GhmVoxelSide *c, int threads, char *why,
                         size_t size)
{
    GhmVoxelNormalsCheck nc = {.verdict = GHM_VOXEL_NORMALS_CONSISTENT};
    int ret = c->normals_estimated ? GHM_OK : ghmi_voxel_normals_check(g, c, threads, &nc);
    char fault[256];
    if (ret < 0 || !ghm_voxel_normals_fault(&nc, fault, sizeof fault))
        return ret;
    int inward = nc.verdict == GHM_VOXEL_NORMALS_INWARD;
    ghmi_why(why, size, "%s, so %s: %s, or drop them to have them estimated (--normals estimate)",
             fault,
             inward ? "its inside would be taken for its outside" : "it has no reliable inside",
             inward ? "flip them" : "orient them");
    return GHM_ERR_INVALID;
}

/* One pipeline run of a (given as rows when a_rows is not NULL) over b on *sw (made at the
 * first, with the empty cloud for a, then bound to the clouds with flags, GHMI_VOXEL_*: on a
 * device that uploads them, timed into *bind_ms unless NULL); *out is its view. lender: NULL,
 * or the sweep whose last step ran b alone, whose voxel table the run then uses. */
static int run(GhmVoxelEdit *e, GhmVoxelSweep **sw, const GhmPointCloud *a,
               const GhmiVoxelRows *a_rows, const GhmPointCloud *b, unsigned flags,
               const GhmVoxelSweep *lender, const GhmVoxelResult **out, double *bind_ms)
{
    int ret = *sw ? GHM_OK : ghm_voxel_sweep_create(e->ctx, &e->none, b, &e->grid, &e->opt, sw);
    double t0 = ghm_now();
    if (ret == GHM_OK)
        ret = ghmi_voxel_sweep_rebind(*sw, a, a_rows, b, flags);
    if (ret == GHM_OK && lender)
        ret = ghmi_voxel_sweep_borrow_table(*sw, lender);
    if (bind_ms) /* without a device the bind only forgets the last step */
        *bind_ms = ghmi_voxel_ops(e->ctx) ? 1e3 * (ghm_now() - t0) : 0.0;
    return ret < 0 ? ret : ghm_voxel_sweep_step(*sw, NULL, out);
}

/* The cloud's normals check on the edit's worker (normals_check.c's passes on the context's
 * threads but one), beside the probe's run on a device, whose thread mostly waits for it. */
typedef struct NormalsCheck {
    const GhmVoxelGrid *grid;
    const GhmVoxelSide *c;
    int threads;
    char *why;
    size_t why_size;
    int ret;
} NormalsCheck;

static void *check_main(void *arg)
{
    NormalsCheck *n = arg;
    n->ret = check_normals(n->grid, n->c, n->threads, n->why, n->why_size);
    return NULL;
}

/* The cloud's normals checked and, when the probe was made (probe_ret), the probe run against
 * the cloud: on a device the check runs beside the run (it took 0.3-0.5 ms of a 256^3 step's
 * host time on 16 threads, H200 host, 2026-11-30) on one thread fewer than the context's, on
 * the edit's worker, the run going on at once on this thread (the other way round, the run on
 * a thread started for it, it ended 0.2 ms later: H200 host, 2026-11-30); on the CPU, whose
 * run takes every thread, or without a worker, before it. The error is the check's, else the
 * probe's, else the run's. */
static int check_and_run(GhmVoxelEdit *e, const GhmVoxelSide *c, const GhmPointCloud *pc,
                         int probe_ret, const GhmVoxelResult **out, char *why, size_t why_size)
{
    const int threads = ghm_context_threads(e->ctx);
    /* On a device the host reads the run's arrays only to check the probe's keys against rows
     * made here: else they stay there (5.8 MB not downloaded for a 160 k-point cloud at 256^3;
     * a sparse cloud's enclosure test runs there too, ghmi_edit_device_encloses). */
    unsigned flags = e->rows.on_device ? GHMI_VOXEL_ON_DEVICE : 0;
    flags |= c->radius > 1 ? GHMI_VOXEL_B_SPARSE : 0; /* the cloud alone's run widened */
    NormalsCheck check = {&e->grid, c, threads - 1, why, why_size, GHM_OK};
    int beside = probe_ret == GHM_OK && ghmi_voxel_ops(e->ctx) && threads > 1 &&
                 !c->normals_estimated &&
                 (e->worker || ghmi_edit_worker_create(&e->worker) == GHM_OK);
    if (beside) {
        ghmi_edit_worker_start(e->worker, check_main, &check);
    } else {
        check.threads = threads;
        check_main(&check);
    }
    const GhmVoxelResult *r = NULL;
    int ret = probe_ret == GHM_OK && (beside || check.ret == GHM_OK)
                  ? run(e, &e->against, &e->probe, &e->rows, pc, flags, e->alone, &r, NULL)
                  : GHM_OK;
    if (beside)
        ghmi_edit_worker_wait(e->worker);
    ret = check.ret < 0 ? check.ret : probe_ret < 0 ? probe_ret : ret;
    if (ret == GHM_OK)
        *out = r;
    return ret;
}

int ghmi_edit_classify(GhmVoxelEdit *e, const GhmPointCloud *pc, const GhmVoxelResult **out,
                       double *probe_ms, double *upload_ms, char *why, size_t why_size)
{
    double t0 = ghm_now();
    const GhmVoxelResult *alone = NULL;
    *out = NULL;
    /* the cloud alone: only its voxels are read (its labels against nothing are of no use) */
    int ret = run(e, &e->alone, &e->none, NULL, pc, GHMI_VOXEL_NO_LABELS, NULL, &alone, upload_ms);
    if (ret == GHM_OK && alone->side[1].voxels == 0) {
        ghmi_why(why, why_size, "no point lies inside the grid");
        ret = GHM_ERR_INVALID;
    }
    GhmiVoxelDeviceView v;
    const int viewed = ret == GHM_OK && ghmi_voxel_sweep_device_view(e->alone, &v) == GHM_OK;
    /* its why, if any, stands unless the normals have a fault (check_and_run); the spans reach
     * one voxel beyond the barrier (ghm_voxel_edit.h: rows that slip between its voxels) */
    int probe_ret = ret == GHM_OK ? make_probe(e, &alone->side[1], viewed ? v.keys[1] : NULL,
                                               alone->side[1].radius, why, why_size)
                                  : GHM_OK;
    *probe_ms = 1e3 * (ghm_now() - t0);
    if (viewed) {
        e->held = (GhmPointCloud){.n = pc->n, .xyz = (float *)v.xyz[1],
                                  .normals = (float *)v.normals[1]};
        pc = &e->held;
    }
    if (ret == GHM_OK)
        ret = check_and_run(e, &alone->side[1], pc, probe_ret, out, why, why_size);
    /* a probe point voxelizes into its own voxel unless float coordinates cannot hold the
     * centres apart (a grid far from the origin for its voxel size) */
    /* The edit reads a probe voxel's label by its row (ghmi_voxel_rows_at) and a device finds
     * its neighbours so (voxelize.cu's row_voxel): both hold only when every point is in its
     * own voxel. */
    if (ret == GHM_OK && !ghmi_voxel_rows_match(&e->rows, (*out)->side[0].keys,
                                                (*out)->side[0].voxels,
                                                ghm_context_threads(e->ctx))) {
        ghmi_why(why, why_size, "the voxel centres are not representable in float coordinates "
                                "this far from the origin: use a coarser grid");
        *out = NULL;
        ret = GHM_ERR_UNSUPPORTED;
    }
    if (ret < 0 && why && why_size && !why[0]) /* a failure that said nothing of its own */
        ghmi_why(why, why_size, "%s", ghm_strerror(ret));
    return ret;
}

/* Whether the cloud encloses something: an inside voxel of the probe with no voxel of the cloud
 * within its radius, beyond the pipeline's barrier (rho = radius - 1) and the seeds next to it,
 * whose labels are the side of the cloud's nearby planes (ghm_voxel.h): a plane has an "inside"
 * there, and its probe, one voxel beyond the barrier (ghm_voxel_edit.h), is all barrier and
 * seeds. Such a voxel got its label from the fill. The cloud's voxels are the probe's
 * intersection voxels (the probe holds them all), found by the rows. Stops at the first. */
int ghmi_edit_encloses(const GhmiVoxelRows *rows, const GhmVoxelSide *p, int radius)
{
    const GhmVoxelGrid *g = rows->grid;
    GhmiHood h;
    ghmi_hood_make(radius, &h);
    for (size_t v = 0; v < p->voxels; v++) {
        if (p->labels[v] != GHM_VOXEL_INSIDE)
            continue;
        int64_t xyz[3];
        ghmi_voxel_coords(g, p->keys[v], xyz);
        int near = 0;
        for (int k = 0; k < h.n && !near; k++) {
            uint32_t key = ghmi_voxel_step_key(g, xyz, h.step[k], 1);
            uint32_t at = key != GHM_NOT_FOUND ? ghmi_voxel_rows_at(rows, key) : GHM_NOT_FOUND;
            near = at != GHM_NOT_FOUND && p->labels[at] == GHM_VOXEL_INTERSECTION;
        }
        if (!near)
            return 1;
    }
    return 0;
}
