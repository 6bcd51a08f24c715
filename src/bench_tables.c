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
 * ghm_context_sync); queries live in backend memory, uploaded outside the clock. The key sets
 * are made in bench_tables_keys.c; this file measures and reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_tables.h"
#include "cli.h"
#include "ghm_map.h"
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

enum { MAX_GRIDS = 8, MAX_CLOUDS = 8, MAX_PAIRS = 8 };

typedef struct TablesArgs {
    GhmCommonOptions common;
    const char *json_out;
    long reps, spheres;
    int ngrids, nclouds, npairs;
    long grids[MAX_GRIDS];
    const char *clouds[MAX_CLOUDS];
    char pairs[MAX_PAIRS][2][1024]; /* reference, query */
} TablesArgs;

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

static int stage(GhmContext *ctx, const GhmTablesTable *t, Staged *s)
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
static int time_best(GhmContext *ctx, GhmMap *map, const GhmTablesTable *t, const Staged *s,
                     int find, long reps, double *best)
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
static int measure_table(GhmContext *ctx, GhmMapScheme scheme, const GhmTablesTable *t, Staged *s,
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
static int measure_keyset(GhmContext *ctx, GhmTablesKeySet *ks, long reps, SchemeRow *rows)
{
    Staged s[GHM_TABLES_MAX] = {{0}};
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

static size_t total_queries(const GhmTablesKeySet *ks)
{
    size_t n = 0;
    for (int i = 0; i < ks->ntables; i++)
        n += ks->t[i].nq;
    return n;
}

/* What one use of the table costs the pipeline: a voxel step builds and queries its tables; a
 * reference's signature table is built once and queried by every query. */
static double per_use(const GhmTablesKeySet *ks, const SchemeRow *r)
{
    return ks->grid ? r->build_s + r->find_s : r->find_s;
}

static void print_keyset(const GhmTablesKeySet *ks, const SchemeRow *rows)
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

static json_t *keyset_json(const GhmTablesKeySet *ks, const SchemeRow *rows)
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
static int run_keyset(GhmContext *ctx, const TablesArgs *a, GhmTablesKeySet *ks, json_t *arr)
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
        GhmTablesKeySet ks = {.ntables = 0};
        snprintf(ks.name, sizeof ks.name, "%s", name);
        int ret = ghm_tables_voxel_keys(ctx, pa, pb, pose, a->grids[g], &ks);
        if (ret < 0)
            ghm_cli_error("bench tables", "%s at grid %ld: %s", name, a->grids[g],
                          ghm_strerror(ret));
        int status = ret == GHM_OK ? run_keyset(ctx, a, &ks, arr) : -1;
        ghm_tables_keys_free(&ks);
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
    ghm_tables_turn_pose(pc, pose);
    char name[96];
    const char *base = strrchr(path, '/');
    snprintf(name, sizeof name, "%s and itself turned", base ? base + 1 : path);
    int status = run_pair(ctx, a, name, pc, pc, pose, arr);
    ghm_pointcloud_free(&pc);
    return status;
}

static int run_signatures(GhmContext *ctx, const TablesArgs *a, int i, json_t *arr)
{
    GhmTablesKeySet ks = {.ntables = 0};
    snprintf(ks.name, sizeof ks.name, "signatures of %s queried by %s", a->pairs[i][0],
             a->pairs[i][1]);
    int status = ghm_tables_signature_keys(ctx, a->pairs[i][0], a->pairs[i][1], &ks) == GHM_OK
                     ? run_keyset(ctx, a, &ks, arr)
                     : -1;
    ghm_tables_keys_free(&ks);
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
