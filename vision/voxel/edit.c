/*
 * edit.c - a voxel set in a GhmDynmap, edited by point clouds; see ghm_voxel_edit.h. Each apply
 * runs the voxel pipeline twice (ghm_voxel_intersect, on whatever backend the context has): the
 * cloud alone (its voxels and the neighbourhood radius the pipeline picks for it), then the
 * probe of the voxels that may lie inside it against the cloud (their labels); then it edits
 * the set with bulk finds, erases and inserts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_dynmap.h"
#include "ghm_index.h"
#include "ghm_map.h"
#include "ghm_voxel_edit.h"
#include "voxel_backend_internal.h"
#include "voxel_internal.h"

enum { W_KEY = 0, W_COUNT = 1, W_NORMAL = 2, W_LABEL = 5, ITEM_WORDS = 6 };
#define KEY_TAG 0x80000000u /* keys are below 2^30: the tag keeps word 0 non-zero */

struct GhmVoxelEdit {
    GhmContext *ctx;
    GhmVoxelGrid grid;
    GhmVoxelOptions opt;
    GhmDynmap *set;
};

static void say(char *why, size_t size, const char *msg)
{
    if (why && size)
        snprintf(why, size, "%s", msg);
}

int ghm_voxel_edit_create(GhmContext *ctx, const GhmVoxelGrid *grid, const GhmVoxelOptions *opt,
                          GhmVoxelEdit **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !grid || !opt || !out || !(grid->voxel_size > 0))
        return GHM_ERR_INVALID;
    for (int k = 0; k < 3; k++)
        if (grid->dims[k] < 1 || grid->dims[k] > GHM_VOXEL_MAX_DIM)
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
    *out = e;
    return GHM_OK;
}

void ghm_voxel_edit_free(GhmVoxelEdit **e)
{
    if (!e || !*e)
        return;
    ghm_dynmap_free(&(*e)->set);
    free(*e);
    *e = NULL;
}

size_t ghm_voxel_edit_size(const GhmVoxelEdit *e) { return e ? ghm_dynmap_size(e->set) : 0; }

/* --- the probe ---------------------------------------------------------------------------- */

/* Per grid row (y, z) the first and last x of the cloud's voxels, both widened by d in x, y and
 * z (a square max filter over the rows); lo > hi where a row has none. */
static int row_spans(const GhmVoxelGrid *g, const GhmVoxelSide *c, int d, int32_t **lo_out,
                     int32_t **hi_out)
{
    const int nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    size_t rows = (size_t)ny * (size_t)nz;
    int32_t *lo = malloc(rows * sizeof *lo), *hi = malloc(rows * sizeof *hi);
    int32_t *tl = malloc(rows * sizeof *tl), *th = malloc(rows * sizeof *th);
    if (!lo || !hi || !tl || !th) {
        free(lo), free(hi), free(tl), free(th);
        return GHM_ERR_NOMEM;
    }
    for (size_t r = 0; r < rows; r++)
        lo[r] = INT32_MAX, hi[r] = INT32_MIN;
    for (size_t v = 0; v < c->voxels; v++) {
        uint32_t key = c->keys[v], r = key / (uint32_t)nx;
        int32_t x = (int32_t)(key % (uint32_t)nx);
        lo[r] = x - d < lo[r] ? x - d : lo[r];
        hi[r] = x + d > hi[r] ? x + d : hi[r];
    }
    /* the widening over rows, along y then along z */
    for (int pass = 0; pass < 2 && d > 0; pass++) {
        memcpy(tl, lo, rows * sizeof *lo);
        memcpy(th, hi, rows * sizeof *hi);
        for (int z = 0; z < nz; z++)
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
    free(tl), free(th);
    for (size_t r = 0; r < rows; r++)
        if (lo[r] <= hi[r]) {
            lo[r] = lo[r] < 0 ? 0 : lo[r];
            hi[r] = hi[r] >= nx ? nx - 1 : hi[r];
        }
    *lo_out = lo;
    *hi_out = hi;
    return GHM_OK;
}

/* The probe's points of each row, row r's first at start[r]: the voxel centres as
 * ghm_voxel_centre computes them (the same doubles, so the same floats), y and z once a row. */
static void probe_points(const GhmVoxelGrid *g, const int32_t *lo, const int32_t *hi,
                         const size_t *start, int threads, GhmPointCloud *pc)
{
    const size_t ny = (size_t)g->dims[1], rows = ny * (size_t)g->dims[2];
    const double s = g->voxel_size;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
    for (size_t r = 0; r < rows; r++) {
        if (lo[r] > hi[r])
            continue;
        const float cy = (float)(g->origin[1] + ((double)(r % ny) + 0.5) * s);
        const float cz = (float)(g->origin[2] + ((double)(r / ny) + 0.5) * s);
        float *p = pc->xyz + 3 * start[r];
        for (int32_t x = lo[r]; x <= hi[r]; x++, p += 3) {
            p[0] = (float)(g->origin[0] + ((double)x + 0.5) * s);
            p[1] = cy;
            p[2] = cz;
        }
    }
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

/* The probe: a cloud of one point per voxel centre over the spans, with zero normals (so none
 * are estimated for it: its labels use only the cloud's normals; ghm_pointcloud_create zeroes
 * them). Ascending keys. GHM_ERR_TOO_LARGE, with why, when it would not fit in memory. */
static int make_probe(const GhmVoxelEdit *e, const GhmVoxelSide *c, int d, GhmPointCloud **out,
                      char *why, size_t why_size)
{
    const GhmVoxelGrid *g = &e->grid;
    int32_t *lo = NULL, *hi = NULL;
    int ret = row_spans(g, c, d, &lo, &hi);
    if (ret < 0)
        return ret;
    size_t rows = (size_t)g->dims[1] * (size_t)g->dims[2], n = 0;
    size_t *start = malloc((rows + 1) * sizeof *start);
    if (!start)
        ret = GHM_ERR_NOMEM;
    for (size_t r = 0; start && r < rows; r++) {
        start[r] = n;
        n += lo[r] <= hi[r] ? (size_t)(hi[r] - lo[r] + 1) : 0;
    }
    GhmPointCloud *pc = NULL;
    if (ret == GHM_OK)
        ret = probe_fits(n, ghmi_voxel_ops(e->ctx) != NULL, why, why_size);
    if (ret == GHM_OK && (ret = ghm_pointcloud_create(n, 1, 0, &pc)) == GHM_OK) {
        probe_points(g, lo, hi, start, ghm_context_threads(e->ctx), pc);
        *out = pc;
    }
    free(start);
    free(lo);
    free(hi);
    return ret;
}

/* An edit's inside comes from the cloud's normals: file normals that point inward or either way
 * (ghm_voxel_normals_check) would cut or fill the wrong voxels, so they are refused with why. */
static int check_normals(const GhmVoxelGrid *g, const GhmVoxelSide *c, char *why, size_t size)
{
    GhmVoxelNormalsCheck nc = {.verdict = GHM_VOXEL_NORMALS_CONSISTENT};
    int ret = c->normals_estimated ? GHM_OK : ghm_voxel_normals_check(g, c, &nc);
    if (ret < 0)
        return ret;
    if (nc.verdict == GHM_VOXEL_NORMALS_INWARD && why && size)
        snprintf(why, size, "its normals point inward (toward the middle at %d of the 26 voxels "
                 "farthest out), so its inside would be taken for its outside: flip them, or "
                 "drop them to have them estimated (--normals estimate)", nc.extremes_in);
    if (nc.verdict == GHM_VOXEL_NORMALS_MIXED && why && size)
        snprintf(why, size, "its normals point either way (%.0f %% of neighbouring voxels' "
                 "normals are opposed, as when normals are estimated without an orientation), "
                 "so it has no reliable inside: orient them, or drop them to have them "
                 "estimated (--normals estimate)", 100 * nc.disagree);
    return nc.verdict == GHM_VOXEL_NORMALS_INWARD || nc.verdict == GHM_VOXEL_NORMALS_MIXED
               ? GHM_ERR_INVALID
               : GHM_OK;
}

/* Classifies the probe of pc: *out's side[0] is the probe (labels against pc), side[1] pc.
 * *probe_ms: the time until the probe was made. */
static int classify(GhmVoxelEdit *e, const GhmPointCloud *pc, GhmVoxelResult **out,
                    double *probe_ms, char *why, size_t why_size)
{
    double t0 = ghm_now();
    GhmPointCloud none = {0};
    GhmVoxelResult *alone = NULL;
    GhmPointCloud *probe = NULL;
    int ret = ghm_voxel_intersect(e->ctx, &none, pc, NULL, &e->grid, &e->opt, &alone);
    if (ret == GHM_OK && alone->side[1].voxels == 0) {
        say(why, why_size, "no point lies inside the grid");
        ret = GHM_ERR_INVALID;
    }
    if (ret == GHM_OK)
        ret = check_normals(&e->grid, &alone->side[1], why, why_size);
    if (ret == GHM_OK)
        ret = make_probe(e, &alone->side[1], alone->side[1].radius - 1, &probe, why, why_size);
    *probe_ms = 1e3 * (ghm_now() - t0);
    if (ret == GHM_OK)
        ret = ghm_voxel_intersect(e->ctx, probe, pc, NULL, &e->grid, &e->opt, out);
    /* a probe point voxelizes into its own voxel unless float coordinates cannot hold the
     * centres apart (a grid far from the origin for its voxel size) */
    if (ret == GHM_OK && (*out)->side[0].voxels != probe->n) {
        say(why, why_size, "the voxel centres are not representable in float coordinates "
                           "this far from the origin: use a coarser grid");
        ghm_voxel_result_free(out);
        ret = GHM_ERR_UNSUPPORTED;
    }
    if (ret < 0 && why && why_size && !why[0]) /* a failure that said nothing of its own */
        say(why, why_size, ghm_strerror(ret));
    ghm_pointcloud_free(&probe);
    ghm_voxel_result_free(&alone);
    return ret;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Whether the cloud encloses something: an inside voxel of the probe with no voxel of the cloud
 * within rho = radius - 1 (the pipeline's barrier, where a sparse cloud's neighbours are labelled
 * by the side of its nearby plane, ghm_voxel.h: a plane has an "inside" there). Such a voxel got
 * its label from the fill. Stops at the first; a search of the cloud's ascending keys. */
static int encloses(const GhmVoxelGrid *g, const GhmVoxelSide *p, const GhmVoxelSide *c,
                    int radius)
{
    if (radius <= 1)
        return p->label_count[GHM_VOXEL_INSIDE] > 0; /* no barrier beyond the cloud's voxels */
    GhmiHood h;
    ghmi_hood_make(radius - 1, &h);
    for (size_t v = 0; v < p->voxels; v++) {
        if (p->labels[v] != GHM_VOXEL_INSIDE)
            continue;
        int64_t xyz[3];
        ghmi_voxel_coords(g, p->keys[v], xyz);
        int near = 0;
        for (int k = 0; k < h.n && !near; k++) {
            uint32_t key = ghmi_voxel_step_key(g, xyz, h.step[k], 1);
            near = key != GHM_NOT_FOUND &&
                   bsearch(&key, c->keys, c->voxels, sizeof key, cmp_u32) != NULL;
        }
        if (!near)
            return 1;
    }
    return 0;
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

/* Keys with the tag, as the set's find and erase take them. */
static uint32_t *tagged(const uint32_t *keys, size_t n)
{
    uint32_t *t = malloc((n + 1) * sizeof *t);
    for (size_t i = 0; t && i < n; i++)
        t[i] = keys[i] | KEY_TAG;
    return t;
}

/* The probe's voxels with label l. */
static uint32_t *probe_keys(const GhmVoxelSide *p, uint8_t l, size_t *n)
{
    uint32_t *k = malloc((p->label_count[l] + 1) * sizeof *k);
    size_t m = 0;
    for (size_t v = 0; k && v < p->voxels; v++)
        if (p->labels[v] == l)
            k[m++] = p->keys[v] | KEY_TAG;
    *n = m;
    return k;
}

/* One batch of changes: keys to erase first, then items to insert. */
typedef struct Changes {
    uint32_t *erase, *insert;
    size_t n_erase, n_insert;
} Changes;

static int changes_alloc(Changes *c, size_t erase, size_t insert)
{
    c->erase = malloc((erase + 1) * sizeof *c->erase);
    c->insert = malloc((insert * ITEM_WORDS + 1) * sizeof *c->insert);
    return c->erase && c->insert ? GHM_OK : GHM_ERR_NOMEM;
}

static void changes_free(Changes *c)
{
    free(c->erase);
    free(c->insert);
    memset(c, 0, sizeof *c);
}

/* Erases first, so that a voxel erased and inserted again gets its new payload. */
static int changes_apply(GhmVoxelEdit *e, Changes *c)
{
    int ret = ghm_dynmap_erase(e->set, c->erase, c->n_erase, NULL);
    if (ret == GHM_OK)
        ret = ghm_dynmap_insert(e->set, c->insert, c->n_insert, NULL, NULL);
    changes_free(c);
    return ret;
}

/* The cloud's voxels, found in the set: items (zeros where absent) in *found. */
static int find_cloud(GhmVoxelEdit *e, const GhmVoxelSide *c, uint32_t **found)
{
    uint32_t *keys = tagged(c->keys, c->voxels);
    *found = malloc((c->voxels * ITEM_WORDS + 1) * sizeof **found);
    int ret = keys && *found ? ghm_dynmap_find(e->set, keys, c->voxels, NULL, *found)
                             : GHM_ERR_NOMEM;
    free(keys);
    return ret;
}

/* The set's voxels at the cloud's voxels become cut (subtract, intersect). */
static void cut_at_cloud(const GhmVoxelSide *c, const uint32_t *found, int flip, Changes *ch,
                         GhmVoxelEditStep *st)
{
    for (size_t v = 0; v < c->voxels; v++) {
        if (!found[v * ITEM_WORDS + W_KEY])
            continue;
        ch->erase[ch->n_erase++] = c->keys[v] | KEY_TAG;
        cloud_item(c, v, flip, GHM_VOXEL_EDIT_CUT, ch->insert + ch->n_insert++ * ITEM_WORDS);
        st->relabelled++;
    }
}

/* --- the three edits ---------------------------------------------------------------------- */

/* The cloud's voxels as surface (merged into voxels already there), the inside as interior. */
static void add_changes(const GhmVoxelResult *r, const uint32_t *found, const uint32_t *inside,
                        size_t ni, const uint32_t *in_found, Changes *ch, GhmVoxelEditStep *st)
{
    const GhmVoxelSide *c = &r->side[1];
    for (size_t v = 0; v < c->voxels; v++) {
        const uint32_t *old = found + v * ITEM_WORDS;
        uint32_t *item = ch->insert + ch->n_insert++ * ITEM_WORDS;
        cloud_item(c, v, 0, GHM_VOXEL_EDIT_SURFACE, item);
        if (!old[W_KEY])
            continue;
        float a[3], b[3];
        memcpy(a, old + W_NORMAL, sizeof a);
        memcpy(b, item + W_NORMAL, sizeof b);
        for (int k = 0; k < 3; k++)
            b[k] += a[k];
        memcpy(item + W_NORMAL, b, sizeof b);
        item[W_COUNT] += old[W_COUNT];
        if (old[W_LABEL] == GHM_VOXEL_EDIT_INTERIOR)
            item[W_LABEL] = GHM_VOXEL_EDIT_INTERIOR;
        ch->erase[ch->n_erase++] = item[W_KEY];
        st->relabelled++;
    }
    static const float zero[3] = {0, 0, 0};
    for (size_t i = 0; i < ni; i++) {
        const uint32_t *old = in_found + i * ITEM_WORDS;
        uint32_t *item = ch->insert + ch->n_insert * ITEM_WORDS;
        if (!old[W_KEY]) {
            make_item(inside[i] & ~KEY_TAG, 0, zero, GHM_VOXEL_EDIT_INTERIOR, item);
        } else if (old[W_LABEL] != GHM_VOXEL_EDIT_INTERIOR) {
            memcpy(item, old, ITEM_WORDS * sizeof *item);
            item[W_LABEL] = GHM_VOXEL_EDIT_INTERIOR;
            ch->erase[ch->n_erase++] = inside[i];
            st->relabelled++;
        } else {
            continue;
        }
        ch->n_insert++;
    }
}

static int add(GhmVoxelEdit *e, const GhmVoxelResult *r, GhmVoxelEditStep *st)
{
    const GhmVoxelSide *c = &r->side[1];
    size_t ni = 0;
    uint32_t *found = NULL, *in_found = NULL, *inside = probe_keys(&r->side[0], GHM_VOXEL_INSIDE,
                                                                    &ni);
    Changes ch = {0};
    int ret = inside ? find_cloud(e, c, &found) : GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = (in_found = malloc((ni * ITEM_WORDS + 1) * sizeof *in_found)) != NULL
                  ? ghm_dynmap_find(e->set, inside, ni, NULL, in_found)
                  : GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = changes_alloc(&ch, c->voxels + ni, c->voxels + ni);
    if (ret == GHM_OK) {
        add_changes(r, found, inside, ni, in_found, &ch, st);
        ret = changes_apply(e, &ch);
    }
    changes_free(&ch);
    free(inside);
    free(found);
    free(in_found);
    return ret;
}

static int subtract(GhmVoxelEdit *e, const GhmVoxelResult *r, GhmVoxelEditStep *st)
{
    const GhmVoxelSide *c = &r->side[1];
    size_t ni = 0;
    uint32_t *found = NULL, *inside = probe_keys(&r->side[0], GHM_VOXEL_INSIDE, &ni);
    Changes ch = {0};
    int ret = inside ? find_cloud(e, c, &found) : GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = changes_alloc(&ch, ni + c->voxels, c->voxels);
    if (ret == GHM_OK) {
        memcpy(ch.erase, inside, ni * sizeof *inside); /* absent keys are ignored */
        ch.n_erase = ni;
        cut_at_cloud(c, found, 1, &ch, st);
        ret = changes_apply(e, &ch);
    }
    changes_free(&ch);
    free(inside);
    free(found);
    return ret;
}

/* The probe's label of each of the set's n voxels (GHM_NOT_FOUND outside the probe). */
static int probe_labels(GhmVoxelEdit *e, const GhmVoxelSide *p, const uint32_t *items, size_t n,
                        uint32_t *out)
{
    GhmMapOptions mopt = ghm_map_defaults();
    GhmMap *map = NULL;
    uint32_t *lab = malloc((p->voxels + 1) * sizeof *lab), *keys = malloc((n + 1) * sizeof *keys);
    int ret = lab && keys ? ghm_map_create(e->ctx, &mopt, &map) : GHM_ERR_NOMEM;
    for (size_t v = 0; ret == GHM_OK && v < p->voxels; v++)
        lab[v] = p->labels[v];
    for (size_t i = 0; ret == GHM_OK && i < n; i++)
        keys[i] = items[i * ITEM_WORDS + W_KEY] & ~KEY_TAG;
    if (ret == GHM_OK)
        ret = ghm_map_build(map, p->keys, lab, p->voxels);
    if (ret == GHM_OK)
        ret = ghm_map_find(map, keys, n, out);
    ghm_map_free(&map);
    free(lab);
    free(keys);
    return ret;
}

static int intersect(GhmVoxelEdit *e, const GhmVoxelResult *r, GhmVoxelEditStep *st)
{
    const GhmVoxelSide *c = &r->side[1];
    size_t n = ghm_dynmap_size(e->set);
    uint32_t *items = malloc((n * ITEM_WORDS + 1) * sizeof *items);
    uint32_t *lab = malloc((n + 1) * sizeof *lab), *found = NULL;
    Changes ch = {0};
    int ret = items && lab ? ghm_dynmap_items(e->set, items, NULL, n, &n) : GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        ret = probe_labels(e, &r->side[0], items, n, lab);
    if (ret == GHM_OK)
        ret = find_cloud(e, c, &found);
    if (ret == GHM_OK)
        ret = changes_alloc(&ch, n + c->voxels, c->voxels);
    if (ret == GHM_OK) {
        for (size_t i = 0; i < n; i++)
            if (lab[i] != GHM_VOXEL_INSIDE && lab[i] != GHM_VOXEL_INTERSECTION)
                ch.erase[ch.n_erase++] = items[i * ITEM_WORDS + W_KEY];
        cut_at_cloud(c, found, 0, &ch, st);
        ret = changes_apply(e, &ch);
    }
    changes_free(&ch);
    free(items);
    free(lab);
    free(found);
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

int ghm_voxel_edit_apply(GhmVoxelEdit *e, GhmVoxelEditOp op, const GhmPointCloud *pc,
                         GhmVoxelEditStep *step, char *why, size_t why_size)
{
    GhmVoxelEditStep st = {0};
    say(why, why_size, "");
    if (!e || !pc || (unsigned)op > GHM_VOXEL_EDIT_INTERSECT || pc->n == 0) {
        say(why, why_size, pc && pc->n == 0 ? "no points" : "invalid arguments");
        return GHM_ERR_INVALID;
    }
    double t0 = ghm_now();
    GhmVoxelResult *r = NULL;
    int ret = classify(e, pc, &r, &st.probe_ms, why, why_size);
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
        if (!encloses(&e->grid, p, &r->side[1], st.radius)) {
            if (why && why_size)
                snprintf(why, why_size, "has no inside at this grid: none of the %zu voxels "
                         "around its %zu surface voxels lies inside it away from the surface (a "
                         "closed surface with outward normals is needed; a coarser grid closes "
                         "gaps)", st.probed - st.cloud_voxels, st.cloud_voxels);
            ret = GHM_ERR_INVALID;
        }
    }
    if (ret == GHM_OK && (ret = edit(e, op, r, &st)) < 0)
        say(why, why_size, ghm_strerror(ret));
    st.classify_ms = 1e3 * (t1 - t0);
    st.edit_ms = 1e3 * (ghm_now() - t1);
    st.total_ms = st.classify_ms + st.edit_ms;
    ghm_voxel_result_free(&r);
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
