/*
 * bench_tables.c - `geohash-match bench tables`: every GhmMap scheme on the key sets and query
 * streams of the product's voxel look-ups, so that the choice of table family for them is made
 * by measurement (issue 11, "used by the product").
 *
 * A voxel key set is one step of the voxel pipeline: a cloud pair is voxelized on the backend
 * (ghm_voxel_intersect), and its occupied voxels' keys and neighbourhoods are taken from the
 * result. The tables and the queries are laid out as that backend's pipeline lays them out:
 *   CPU   one table per cloud (a GhmIndex: key -> rank, load 0.8); the queries are every voxel's
 *         hood keys, voxel after voxel (vision/voxel/voxelize.c's neighbours()), out-of-grid
 *         steps as the key 0xFFFFFFFF, as there;
 *   CUDA  one table of both clouds (the device pipeline's multimap map: cloud << (key_bits + 1)
 *         | key -> run, load 0.9); the queries step after step, so that a warp asks one
 *         neighbour of 32 consecutive voxels, as kernels/vision/voxel/voxelize.cu's
 *         neighbours_kernel does; out-of-grid steps are not asked.
 * A signature key set is the matcher's: the distinct signatures of a reference image's table
 * (key -> run, as the multimap's map, load 0.8) and, as queries, the table entries of a query
 * image in basis order (ghm_matcher_signatures): the look-ups its voting makes, but for the
 * de-duplication per basis and the order within a basis.
 * Each scheme builds the same pairs (keys ascending, values their ranks) and answers the same
 * queries; every answer is checked against a binary search of the keys, so a scheme that gave
 * a wrong id fails the run. Times are the best of --reps (build and find apart, each ended by
 * ghm_context_sync); queries live in backend memory, uploaded outside the clock.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cli.h"
#include "ghm_map.h"
#include "ghm_match.h"
#include "ghm_pointcloud.h"
#include "ghm_voxel.h"
#include "json_out.h"

enum { OPT_JSON_OUT = GHM_OPT_FIRST_COMMAND, OPT_REPS, OPT_GRID, OPT_CLOUD, OPT_SPHERES, OPT_PAIR };

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    {"json-out", required_argument, NULL, OPT_JSON_OUT},
    {"reps", required_argument, NULL, OPT_REPS},
    {"grid", required_argument, NULL, OPT_GRID},
    {"cloud", required_argument, NULL, OPT_CLOUD},
    {"spheres", required_argument, NULL, OPT_SPHERES},
    {"pair", required_argument, NULL, OPT_PAIR},
    {NULL, 0, NULL, 0}};

enum { MAX_GRIDS = 8, MAX_CLOUDS = 8, MAX_PAIRS = 8, MAX_TABLES = 2 };
/* The widest hood: GhmVoxelSide.radius is 1, 2 or 3 (ghm_voxel.h), (2 * 3 + 1)^3 - 1 steps. */
enum { MAX_RADIUS = 3, MAX_HOOD = 342 };

typedef struct TablesArgs {
    GhmCommonOptions common;
    const char *json_out;
    long reps, spheres;
    int ngrids, nclouds, npairs;
    long grids[MAX_GRIDS];
    const char *clouds[MAX_CLOUDS];
    char pairs[MAX_PAIRS][2][1024]; /* reference, query */
} TablesArgs;

/* One table of a key set and the look-ups asked of it. */
typedef struct Table {
    uint32_t *keys, *values; /* host: n keys ascending, their ranks */
    uint32_t *queries;       /* host: nq keys */
    size_t n, nq;
} Table;

typedef struct KeySet {
    char name[2112]; /* room for two --pair paths */
    double load;    /* the pipeline's load factor for this table */
    double present; /* share of the queries whose key is in the table */
    long grid;   /* voxel key sets; 0 for signatures */
    size_t voxels[2];
    int radius[2];
    Table t[MAX_TABLES];
    int ntables;
} KeySet;

/* A scheme's result on one key set: summed over its tables. */
typedef struct SchemeRow {
    GhmMapScheme scheme;
    double load, build_s, find_s;
    size_t bytes;
    int rebuilds;
} SchemeRow;

static void print_help(void)
{
    printf("Usage: geohash-match bench tables [OPTIONS]\n\n"
           "Every GhmMap scheme on the product's own key sets. Voxels: the occupied voxels of a\n"
           "cloud pair (a cloud and itself turned 90 degrees about its centre, or two crossing\n"
           "spheres) as keys, every voxel's neighbour keys as queries, laid out as the backend's\n"
           "pipeline lays them out (CPU: a table per cloud, queries voxel after voxel; CUDA: one\n"
           "table, queries step after step). Signatures: a reference image's distinct signature\n"
           "keys, queried with a query image's signatures. Build and find times, checked answers.\n"
           "  --cloud FILE      a point cloud (PLY, XYZ, OFF); may be repeated\n"
           "                    (default data/pointclouds/bunny.ply)\n"
           "  --spheres N       also two crossing spheres of N points each (as bench voxel)\n"
           "  --pair REF,QUERY  also the matcher's signature table of image REF, queried with\n"
           "                    QUERY's signatures; may be repeated (default, with the default\n"
           "                    cloud: data/images/box_in_scene.png,data/images/box.png)\n"
           "  --grid N,N,...    voxels along the longest side (default 128,1024)\n"
           "  --reps N          runs per measurement, the best is kept (default 5)\n"
           "  --json-out FILE   also write the measurements as JSON\n"
           "  --backend, --threads, --seed as everywhere\n");
}

static int parse_grids(const char *arg, TablesArgs *a)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", arg);
    a->ngrids = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (a->ngrids == MAX_GRIDS) {
            ghm_cli_error("bench tables", "--grid takes at most %d sizes", MAX_GRIDS);
            return -1;
        }
        if (ghm_cli_parse_long("--grid", tok, 1, GHM_VOXEL_MAX_DIM, &a->grids[a->ngrids]) < 0)
            return -1;
        a->ngrids++;
    }
    if (a->ngrids == 0) {
        ghm_cli_error("bench tables", "--grid needs at least one size");
        return -1;
    }
    return 0;
}

static int parse_pair(const char *arg, TablesArgs *a)
{
    const char *comma = strchr(arg, ',');
    size_t len = comma ? (size_t)(comma - arg) : 0;
    if (!comma || len == 0 || !comma[1] || strchr(comma + 1, ',') || len >= 1024 ||
        strlen(comma + 1) >= 1024) {
        ghm_cli_error("bench tables", "--pair '%s' is not REF,QUERY", arg);
        return -1;
    }
    if (a->npairs == MAX_PAIRS) {
        ghm_cli_error("bench tables", "--pair given more than %d times", MAX_PAIRS);
        return -1;
    }
    memcpy(a->pairs[a->npairs][0], arg, len);
    a->pairs[a->npairs][0][len] = '\0';
    snprintf(a->pairs[a->npairs][1], 1024, "%s", comma + 1);
    a->npairs++;
    return 0;
}

static int parse_args(int argc, char **argv, TablesArgs *a)
{
    *a = (TablesArgs){.common = ghm_cli_common_defaults(), .reps = 5, .ngrids = 2,
                      .grids = {128, 1024}};
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used < 0)
            return -1;
        if (used > 0)
            continue;
        if (id == OPT_REPS) {
            if (ghm_cli_parse_long("--reps", optarg, 1, 100, &a->reps) < 0)
                return -1;
        } else if (id == OPT_SPHERES) {
            if (ghm_cli_parse_long("--spheres", optarg, 1, 100000000, &a->spheres) < 0)
                return -1;
        } else if (id == OPT_GRID) {
            if (parse_grids(optarg, a) < 0)
                return -1;
        } else if (id == OPT_PAIR) {
            if (parse_pair(optarg, a) < 0)
                return -1;
        } else if (id == OPT_CLOUD) {
            if (a->nclouds == MAX_CLOUDS) {
                ghm_cli_error("bench tables", "--cloud given more than %d times", MAX_CLOUDS);
                return -1;
            }
            a->clouds[a->nclouds++] = optarg;
        } else if (id == OPT_JSON_OUT)
            a->json_out = optarg;
        else {
            ghm_cli_usage_hint("bench tables");
            return -1;
        }
    }
    if (optind != argc) {
        ghm_cli_error("bench tables", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (a->nclouds == 0 && a->spheres == 0 && a->npairs == 0) {
        a->clouds[a->nclouds++] = "data/pointclouds/bunny.ply";
        parse_pair("data/images/box_in_scene.png,data/images/box.png", a);
    }
    return 0;
}

/* ---- key sets ---- */

static void keyset_free(KeySet *ks)
{
    for (int i = 0; i < MAX_TABLES; i++) {
        free(ks->t[i].keys);
        free(ks->t[i].values);
        free(ks->t[i].queries);
    }
    memset(ks->t, 0, sizeof ks->t);
    ks->ntables = 0;
}

/* Steps of the (2r + 1)^3 hood without its centre, in the pipeline's order (x fastest). */
static int hood_steps(int r, int (*d)[3])
{
    int n = 0, w = 2 * r + 1;
    for (int j = 0; j < w * w * w; j++) {
        int s[3] = {j % w - r, (j / w) % w - r, j / (w * w) - r};
        if (s[0] || s[1] || s[2])
            memcpy(d[n++], s, sizeof s);
    }
    return n;
}

/* The key of the voxel `d` away from `key`, or 0xFFFFFFFF outside the grid. */
static uint32_t step_key(const GhmVoxelGrid *g, uint32_t key, const int d[3])
{
    int64_t nx = g->dims[0], ny = g->dims[1], nz = g->dims[2];
    int64_t x = key % nx + d[0], y = key / nx % ny + d[1], z = key / nx / ny + d[2];
    if (x < 0 || x >= nx || y < 0 || y >= ny || z < 0 || z >= nz)
        return 0xFFFFFFFFu;
    return (uint32_t)(x + nx * (y + ny * z));
}

static int key_bits(const GhmVoxelGrid *g)
{
    uint64_t cells = (uint64_t)g->dims[0] * (uint64_t)g->dims[1] * (uint64_t)g->dims[2];
    int bits = 0;
    while (((uint64_t)1 << bits) < cells)
        bits++;
    return bits;
}

static int alloc_table(Table *t, size_t n, size_t nq)
{
    t->keys = malloc((n + 1) * sizeof *t->keys);
    t->values = malloc((n + 1) * sizeof *t->values);
    t->queries = malloc((nq + 1) * sizeof *t->queries);
    t->n = n;
    t->nq = nq;
    return t->keys && t->values && t->queries ? GHM_OK : GHM_ERR_NOMEM;
}

/* CPU layout: a table per cloud, its own voxels' hoods voxel after voxel. */
static int tables_per_cloud(const GhmVoxelResult *r, KeySet *ks)
{
    int d[MAX_HOOD][3];
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSide *s = &r->side[c];
        int nn = hood_steps(s->radius, d);
        Table *t = &ks->t[c];
        if (alloc_table(t, s->voxels, s->voxels * (size_t)nn) < 0)
            return GHM_ERR_NOMEM;
        for (size_t v = 0; v < s->voxels; v++) {
            t->keys[v] = s->keys[v];
            t->values[v] = (uint32_t)v;
            for (int k = 0; k < nn; k++)
                t->queries[v * (size_t)nn + (size_t)k] = step_key(&r->grid, s->keys[v], d[k]);
        }
    }
    ks->ntables = 2;
    return GHM_OK;
}

/* CUDA layout: one table of both clouds' prefixed keys (A's below B's, so ascending), the hoods
 * step after step; steps outside the grid are left out, as the kernel does not ask them. */
static int table_of_both(const GhmVoxelResult *r, KeySet *ks)
{
    int d[MAX_HOOD][3];
    int shift = key_bits(&r->grid) + 1;
    size_t n = r->side[0].voxels + r->side[1].voxels, nq = 0;
    for (int c = 0; c < 2; c++)
        nq += r->side[c].voxels * (size_t)hood_steps(r->side[c].radius, d);
    Table *t = &ks->t[0];
    if (alloc_table(t, n, nq) < 0)
        return GHM_ERR_NOMEM;
    size_t at = 0, q = 0;
    for (int c = 0; c < 2; c++) {
        const GhmVoxelSide *s = &r->side[c];
        uint32_t prefix = (uint32_t)c << shift;
        for (size_t v = 0; v < s->voxels; v++, at++) {
            t->keys[at] = prefix | s->keys[v];
            t->values[at] = (uint32_t)at;
        }
        int nn = hood_steps(s->radius, d);
        for (int k = 0; k < nn; k++)
            for (size_t v = 0; v < s->voxels; v++) {
                uint32_t key = step_key(&r->grid, s->keys[v], d[k]);
                if (key != 0xFFFFFFFFu)
                    t->queries[q++] = prefix | key;
            }
    }
    t->nq = q;
    ks->ntables = 1;
    return GHM_OK;
}

/* B turned by 90 degrees about the z axis through the centre of A's bounding box. */
static void turn_pose(const GhmPointCloud *a, double m[16])
{
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (size_t i = 0; i < a->n; i++)
        for (int k = 0; k < 2; k++) {
            double v = a->xyz[3 * i + (size_t)k];
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
    double cx = a->n ? 0.5 * (lo[0] + hi[0]) : 0.0, cy = a->n ? 0.5 * (lo[1] + hi[1]) : 0.0;
    double r[16] = {0, -1, 0, cx + cy, 1, 0, 0, cy - cx, 0, 0, 1, 0, 0, 0, 0, 1};
    memcpy(m, r, sizeof r);
}

/* Voxelizes the pair on ctx's backend and lays its tables out for that backend. */
static int make_keyset(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                       const double *pose, long grid, KeySet *ks)
{
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = (int)grid;
    GhmVoxelGrid g;
    GhmVoxelResult *r = NULL;
    int ret = ghm_voxel_grid_fit(a, b, pose, pose ? 1 : 0, &opt, &g, NULL, 0);
    if (ret == GHM_OK)
        ret = ghm_voxel_intersect(ctx, a, b, pose, &g, &opt, &r);
    for (int c = 0; ret == GHM_OK && c < 2; c++)
        if (r->side[c].radius < 1 || r->side[c].radius > MAX_RADIUS)
            ret = GHM_ERR_UNSUPPORTED; /* a hood this bench does not know */
    if (ret == GHM_OK) {
        ks->grid = grid;
        for (int c = 0; c < 2; c++) {
            ks->voxels[c] = r->side[c].voxels;
            ks->radius[c] = r->side[c].radius;
        }
        int device = strcmp(ghm_context_backend_name(ctx), "cpu") != 0;
        ks->load = device ? 0.9 : 0.8;
        ret = device ? table_of_both(r, ks) : tables_per_cloud(r, ks);
    }
    ghm_voxel_result_free(&r);
    if (ret < 0)
        keyset_free(ks);
    return ret;
}

/* The signature table entries of the image at path (the matcher's, default parameters). */
static int image_signatures(GhmContext *ctx, const char *path, uint32_t **keys, size_t *n)
{
    char why[256] = "";
    GhmImage *img = NULL;
    GhmMatcher *m = NULL;
    GhmMatchParams p = ghm_match_defaults();
    int ret = ghm_image_load(path, &img, why, sizeof why);
    if (ret < 0) {
        ghm_cli_error(path, "%s", why[0] ? why : ghm_strerror(ret));
        return ret;
    }
    if ((ret = ghm_matcher_create(ctx, img, &p, &m)) == GHM_OK)
        ret = ghm_matcher_signatures(m, keys, n);
    if (ret < 0)
        ghm_cli_error(path, "the reference's tables: %s", ghm_strerror(ret));
    ghm_matcher_free(&m);
    ghm_image_free(&img);
    return ret;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The table: the reference's distinct signatures -> rank; the queries: the query's entries.
 * Errors are reported here. */
static int make_signature_keyset(GhmContext *ctx, const char *ref, const char *query, KeySet *ks)
{
    uint32_t *rk = NULL, *qk = NULL;
    size_t nr = 0, nq = 0, k = 0;
    int ret = image_signatures(ctx, ref, &rk, &nr);
    if (ret == GHM_OK)
        ret = image_signatures(ctx, query, &qk, &nq);
    if (ret == GHM_OK) {
        qsort(rk, nr, sizeof *rk, cmp_u32);
        for (size_t i = 0; i < nr; i++)
            if (i == 0 || rk[i] != rk[i - 1])
                rk[k++] = rk[i];
        Table *t = &ks->t[0];
        ks->ntables = 1;
        if ((ret = alloc_table(t, k, nq)) < 0)
            ghm_cli_error("bench tables", "%s", ghm_strerror(ret));
        for (size_t i = 0; ret == GHM_OK && i < k; i++) {
            t->keys[i] = rk[i];
            t->values[i] = (uint32_t)i;
        }
        if (ret == GHM_OK && nq)
            memcpy(t->queries, qk, nq * sizeof *qk);
    }
    ks->load = 0.8;
    ks->voxels[0] = nr; /* entries of the reference */
    free(rk);
    free(qk);
    return ret;
}

/* ---- measurements ---- */

/* Backend copies of one table's arrays and the answers its queries must get. */
typedef struct Staged {
    uint32_t *keys, *values, *queries, *out; /* backend memory */
    uint32_t *expect, *got;                  /* host */
} Staged;

static void staged_free(GhmContext *ctx, Staged *s)
{
    ghm_buffer_free(ctx, (void **)&s->keys);
    ghm_buffer_free(ctx, (void **)&s->values);
    ghm_buffer_free(ctx, (void **)&s->queries);
    ghm_buffer_free(ctx, (void **)&s->out);
    free(s->expect);
    free(s->got);
    memset(s, 0, sizeof *s);
}

/* The rank of key among the ascending keys[0..n), or GHM_NOT_FOUND. */
static uint32_t rank_of(const uint32_t *keys, size_t n, uint32_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && keys[lo] == key ? (uint32_t)lo : GHM_NOT_FOUND;
}

static int stage(GhmContext *ctx, const Table *t, Staged *s)
{
    size_t kb = (t->n + 1) * sizeof(uint32_t), qb = (t->nq + 1) * sizeof(uint32_t);
    int ret = GHM_OK;
    if ((ret = ghm_buffer_alloc(ctx, kb, (void **)&s->keys)) < 0 ||
        (ret = ghm_buffer_alloc(ctx, kb, (void **)&s->values)) < 0 ||
        (ret = ghm_buffer_alloc(ctx, qb, (void **)&s->queries)) < 0 ||
        (ret = ghm_buffer_alloc(ctx, qb, (void **)&s->out)) < 0)
        return ret;
    if (!(s->expect = malloc(qb)) || !(s->got = malloc(qb)))
        return GHM_ERR_NOMEM;
    for (size_t i = 0; i < t->nq; i++)
        s->expect[i] = rank_of(t->keys, t->n, t->queries[i]);
    if ((ret = ghm_buffer_upload(ctx, s->keys, t->keys, t->n * sizeof(uint32_t))) < 0 ||
        (ret = ghm_buffer_upload(ctx, s->values, t->values, t->n * sizeof(uint32_t))) < 0)
        return ret;
    return ghm_buffer_upload(ctx, s->queries, t->queries, t->nq * sizeof(uint32_t));
}

/* The load the pipeline gives the key set's table, or the scheme's highest when that is lower. */
static double scheme_load(double load, GhmMapScheme scheme)
{
    return scheme == GHM_MAP_TWO_LEVEL && load > GHM_MAP_TWO_LEVEL_MAX_LOAD
               ? GHM_MAP_TWO_LEVEL_MAX_LOAD
               : load;
}

/* Best seconds of reps builds (find = 0) or finds of map on staged table s. */
static int time_best(GhmContext *ctx, GhmMap *map, const Table *t, const Staged *s, int find,
                     long reps, double *best)
{
    for (long r = 0; r < reps; r++) {
        double t0 = ghm_now();
        int ret = find ? ghm_map_find(map, s->queries, t->nq, s->out)
                       : ghm_map_build(map, s->keys, s->values, t->n);
        if (ret == GHM_OK)
            ret = ghm_context_sync(ctx);
        double dt = ghm_now() - t0;
        if (ret < 0)
            return ret;
        if (r == 0 || dt < *best)
            *best = dt;
    }
    return GHM_OK;
}

/* A scheme answered a query wrongly (reported already): the run fails. */
enum { WRONG_ANSWER = 1 };

/* One scheme on one table: build and find timed, every answer checked. Returns GHM_OK,
 * WRONG_ANSWER or a GHM_ERR_* code. */
static int measure_table(GhmContext *ctx, GhmMapScheme scheme, const Table *t, Staged *s,
                         long reps, SchemeRow *row)
{
    GhmMapOptions opt = ghm_map_defaults();
    opt.scheme = scheme;
    opt.load_factor = row->load;
    GhmMap *map = NULL;
    GhmMapStats st;
    double build = 0.0, find = 0.0;
    int ret = ghm_map_create(ctx, &opt, &map);
    if (ret == GHM_OK)
        ret = time_best(ctx, map, t, s, 0, reps, &build);
    if (ret == GHM_OK)
        ret = time_best(ctx, map, t, s, 1, reps, &find);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(ctx, s->got, s->out, t->nq * sizeof(uint32_t));
    if (ret == GHM_OK)
        ret = ghm_map_stats(map, &st);
    ghm_map_free(&map);
    if (ret < 0)
        return ret;
    for (size_t i = 0; i < t->nq; i++)
        if (s->got[i] != s->expect[i]) {
            ghm_cli_error("bench tables", "%s: query %zu (key %u) answered %u, expected %u",
                          ghm_map_scheme_name(scheme), i, t->queries[i], s->got[i],
                          s->expect[i]);
            return WRONG_ANSWER;
        }
    row->build_s += build;
    row->find_s += find;
    row->bytes += st.bytes;
    row->rebuilds += st.rebuilds;
    return GHM_OK;
}

/* Every scheme on the key set; also sets its share of present queries (from the answers). */
static int measure_keyset(GhmContext *ctx, KeySet *ks, long reps, SchemeRow *rows)
{
    Staged s[MAX_TABLES] = {{0}};
    int ret = GHM_OK;
    size_t hit = 0, n = 0;
    for (int i = 0; i < ks->ntables && ret == GHM_OK; i++) {
        ret = stage(ctx, &ks->t[i], &s[i]);
        for (size_t q = 0; ret == GHM_OK && q < ks->t[i].nq; q++, n++)
            hit += s[i].expect[q] != GHM_NOT_FOUND;
    }
    ks->present = n ? (double)hit / (double)n : 0.0;
    for (int k = 0; k < GHM_MAP_SCHEMES && ret == GHM_OK; k++) {
        rows[k] = (SchemeRow){.scheme = (GhmMapScheme)k,
                              .load = scheme_load(ks->load, (GhmMapScheme)k)};
        for (int i = 0; i < ks->ntables && ret == GHM_OK; i++)
            ret = measure_table(ctx, (GhmMapScheme)k, &ks->t[i], &s[i], reps, &rows[k]);
    }
    for (int i = 0; i < ks->ntables; i++)
        staged_free(ctx, &s[i]);
    return ret;
}

/* ---- output ---- */

static size_t total_queries(const KeySet *ks)
{
    size_t n = 0;
    for (int i = 0; i < ks->ntables; i++)
        n += ks->t[i].nq;
    return n;
}

/* What one use of the table costs the pipeline: a voxel step builds and queries its tables; a
 * reference's signature table is built once and queried by every query. */
static double per_use(const KeySet *ks, const SchemeRow *r)
{
    return ks->grid ? r->build_s + r->find_s : r->find_s;
}

static void print_keyset(const KeySet *ks, const SchemeRow *rows)
{
    size_t nq = total_queries(ks);
    if (ks->grid)
        printf("\n%s, grid %ld: voxels %zu + %zu (hood radius %d / %d), %d table(s), %zu "
               "queries (%.1f %% present)\n", ks->name, ks->grid, ks->voxels[0], ks->voxels[1],
               ks->radius[0], ks->radius[1], ks->ntables, nq, 100.0 * ks->present);
    else
        printf("\n%s: %zu distinct keys of %zu entries, %zu queries (%.1f %% present)\n",
               ks->name, ks->t[0].n, ks->voxels[0], nq, 100.0 * ks->present);
    printf("(per use: %s)\n", ks->grid ? "build + find, as every voxel step rebuilds"
                                        : "find, as a reference's table serves every query");
    printf("%-18s %5s %10s %10s %12s %11s %10s %8s\n", "scheme", "load", "build ms", "find ms",
           "find M/s", "per use ms", "vs cuckoo", "MB");
    double base = per_use(ks, &rows[GHM_MAP_CUCKOO]);
    for (int k = 0; k < GHM_MAP_SCHEMES; k++) {
        const SchemeRow *r = &rows[k];
        double use = per_use(ks, r);
        printf("%-18s %5.2f %10.3f %10.3f %12.1f %11.3f %9.2fx %8.1f\n",
               ghm_map_scheme_name(r->scheme), r->load, 1e3 * r->build_s, 1e3 * r->find_s,
               r->find_s > 0 ? 1e-6 * (double)nq / r->find_s : 0.0, 1e3 * use,
               use > 0 ? base / use : 0.0, (double)r->bytes / 1048576.0);
    }
    fflush(stdout);
}

static json_t *keyset_json(const KeySet *ks, const SchemeRow *rows)
{
    json_t *o = json_object(), *arr = json_array();
    json_object_set_new(o, "key_set", ghm_json_string_lossy(ks->name));
    json_object_set_new(o, "kind", json_string(ks->grid ? "voxel" : "signature"));
    json_object_set_new(o, "load", json_real(ks->load));
    json_object_set_new(o, "grid", json_integer(ks->grid));
    json_object_set_new(o, "voxels", json_pack("[II]", (json_int_t)ks->voxels[0],
                                               (json_int_t)ks->voxels[1]));
    json_object_set_new(o, "radius", json_pack("[ii]", ks->radius[0], ks->radius[1]));
    json_object_set_new(o, "tables", json_integer(ks->ntables));
    json_object_set_new(o, "queries", json_integer((json_int_t)total_queries(ks)));
    json_object_set_new(o, "present_share", json_real(ks->present));
    for (int k = 0; k < GHM_MAP_SCHEMES; k++)
        json_array_append_new(
            arr, json_pack("{s:s,s:f,s:f,s:f,s:f,s:I,s:i}", "scheme",
                           ghm_map_scheme_name(rows[k].scheme), "load", rows[k].load,
                           "build_ms", 1e3 * rows[k].build_s, "find_ms", 1e3 * rows[k].find_s,
                           "per_use_ms", 1e3 * per_use(ks, &rows[k]), "bytes",
                           (json_int_t)rows[k].bytes, "rebuilds", rows[k].rebuilds));
    json_object_set_new(o, "schemes", arr);
    return o;
}

/* ---- the run ---- */

/* Measures, prints and adds one key set; returns 0 or -1 (reported). */
static int run_keyset(GhmContext *ctx, const TablesArgs *a, KeySet *ks, json_t *arr)
{
    SchemeRow rows[GHM_MAP_SCHEMES];
    int ret = measure_keyset(ctx, ks, a->reps, rows);
    if (ret < 0)
        ghm_cli_error("bench tables", "%s: %s", ks->name, ghm_strerror(ret));
    if (ret != GHM_OK)
        return -1;
    print_keyset(ks, rows);
    json_array_append_new(arr, keyset_json(ks, rows));
    return 0;
}

/* Measures and prints one cloud pair at every grid; adds its key sets to arr. */
static int run_pair(GhmContext *ctx, const TablesArgs *a, const char *name,
                    const GhmPointCloud *pa, const GhmPointCloud *pb, const double *pose,
                    json_t *arr)
{
    for (int g = 0; g < a->ngrids; g++) {
        KeySet ks = {.ntables = 0};
        snprintf(ks.name, sizeof ks.name, "%s", name);
        int ret = make_keyset(ctx, pa, pb, pose, a->grids[g], &ks);
        if (ret < 0)
            ghm_cli_error("bench tables", "%s at grid %ld: %s", name, a->grids[g],
                          ghm_strerror(ret));
        int status = ret == GHM_OK ? run_keyset(ctx, a, &ks, arr) : -1;
        keyset_free(&ks);
        if (status < 0)
            return -1;
    }
    return 0;
}

static int run_cloud(GhmContext *ctx, const TablesArgs *a, const char *path, json_t *arr)
{
    char why[256] = "";
    GhmPointCloud *pc = NULL;
    int ret = ghm_pointcloud_load(path, &pc, why, sizeof why);
    if (ret < 0) {
        ghm_cli_error(path, "%s", why[0] ? why : ghm_strerror(ret));
        return -1;
    }
    double pose[16];
    turn_pose(pc, pose);
    char name[96];
    const char *base = strrchr(path, '/');
    snprintf(name, sizeof name, "%s and itself turned", base ? base + 1 : path);
    int status = run_pair(ctx, a, name, pc, pc, pose, arr);
    ghm_pointcloud_free(&pc);
    return status;
}

static int run_signatures(GhmContext *ctx, const TablesArgs *a, int i, json_t *arr)
{
    KeySet ks = {.ntables = 0};
    snprintf(ks.name, sizeof ks.name, "signatures of %s queried by %s", a->pairs[i][0],
             a->pairs[i][1]);
    int status = make_signature_keyset(ctx, a->pairs[i][0], a->pairs[i][1], &ks) == GHM_OK
                     ? run_keyset(ctx, a, &ks, arr)
                     : -1;
    keyset_free(&ks);
    return status;
}

static int run_spheres(GhmContext *ctx, const TablesArgs *a, json_t *arr)
{
    GhmPointCloud *A = NULL, *B = NULL;
    int ret = ghm_bench_sphere((size_t)a->spheres, 1.0, GHM_BENCH_SPHERE_A, 1, &A);
    if (ret == GHM_OK)
        ret = ghm_bench_sphere((size_t)a->spheres, 0.6, GHM_BENCH_SPHERE_B, 1, &B);
    int status = -1;
    if (ret == GHM_OK) {
        char name[96];
        snprintf(name, sizeof name, "two spheres of %ld points", a->spheres);
        status = run_pair(ctx, a, name, A, B, NULL, arr);
    } else
        ghm_cli_error("bench tables", "spheres: %s", ghm_strerror(ret));
    ghm_pointcloud_free(&A);
    ghm_pointcloud_free(&B);
    return status;
}

int ghm_bench_tables(int argc, char **argv)
{
    TablesArgs a;
    if (parse_args(argc, argv, &a) < 0)
        return GHM_EXIT_ERROR;
    if (a.common.help) {
        print_help();
        return GHM_EXIT_FOUND;
    }
    GhmContext *ctx = NULL;
    if (ghm_cli_context(&a.common, &ctx) < 0)
        return GHM_EXIT_ERROR;
    char device[256];
    ghm_context_describe(ctx, device, sizeof device);
    printf("bench tables: %s backend (%s), every GhmMap scheme on the product's key sets, "
           "best of %ld\n", ghm_context_backend_name(ctx), device, a.reps);
    json_t *arr = json_array();
    int status = arr ? 0 : -1;
    for (int i = 0; i < a.nclouds && status == 0; i++)
        status = run_cloud(ctx, &a, a.clouds[i], arr);
    if (status == 0 && a.spheres > 0)
        status = run_spheres(ctx, &a, arr);
    for (int i = 0; i < a.npairs && status == 0; i++)
        status = run_signatures(ctx, &a, i, arr);
    if (status == 0 && a.json_out) {
        json_t *o = json_object();
        json_object_set_new(o, "bench", json_string("tables"));
        json_object_set_new(o, "backend", json_string(ghm_context_backend_name(ctx)));
        json_object_set_new(o, "device", json_string(device));
        json_object_set_new(o, "reps", json_integer(a.reps));
        json_object_set_new(o, "key_sets", json_incref(arr));
        status = ghm_json_write_file(a.json_out, o) < 0 ? -1 : 0;
    }
    json_decref(arr);
    ghm_context_free(&ctx);
    return status == 0 ? GHM_EXIT_FOUND : GHM_EXIT_ERROR;
}
