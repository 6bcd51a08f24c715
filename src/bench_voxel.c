/*
 * bench_voxel.c - `geohash-match bench voxel`: time per step of the voxel Boolean intersection
 * (voxelize, look-ups, classify, fill; no file reading), as in the paper's animation: two point
 * clouds with normals, B turning a little between steps so that every step rebuilds its tables
 * for new content.
 *
 * The clouds are analytic: A is a unit sphere, B a sphere of radius 0.6 centred at (0.9, 0.2, 0)
 * that crosses it, each sampled with the same number of points (Fibonacci lattice) and exact
 * normals. Three sizes by default: 20k, 160k (the paper's clouds) and 1.28M points per cloud.
 * Each row reports the best and the median of --reps steps of one sweep (ghm_voxel_sweep_*:
 * on a device the clouds are uploaded once, when the sweep is created, which the "setup"
 * column reports; every step rebuilds every table).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cli.h"
#include "ghm_pointcloud.h"
#include "ghm_voxel.h"
#include "json_out.h"

enum { OPT_JSON_OUT = GHM_OPT_FIRST_COMMAND, OPT_REPS, OPT_GRID, OPT_POINTS, OPT_ESTIMATE };

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    {"json-out", required_argument, NULL, OPT_JSON_OUT},
    {"reps", required_argument, NULL, OPT_REPS},
    {"grid", required_argument, NULL, OPT_GRID},
    {"points", required_argument, NULL, OPT_POINTS},
    {"estimate-normals", no_argument, NULL, OPT_ESTIMATE},
    {NULL, 0, NULL, 0}};

enum { MAX_SIZES = 8, MAX_REPS = 1000 };

typedef struct VoxelBenchArgs {
    GhmCommonOptions common;
    const char *json_out;
    long reps, grid;
    int estimate;
    int nsizes;
    long sizes[MAX_SIZES];
} VoxelBenchArgs;

static void print_help(void)
{
    printf("Usage: geohash-match bench voxel [OPTIONS]\n\n"
           "Time per step of the voxel Boolean intersection (voxelize, look-ups, classify, fill;\n"
           "no file reading) for two crossing spheres with normals, B turning between steps.\n"
           "  --points N,N,...     points per cloud (default 20000,160000,1280000)\n"
           "  --grid N             voxels along the longest side (default 128)\n"
           "  --reps N             steps per size; best and median are reported (default 10)\n"
           "  --estimate-normals   clouds without normals (normals estimated per voxel)\n"
           "  --json-out FILE      also write the measurements as JSON\n"
           "  --backend, --threads, --seed as everywhere\n");
}

static int parse_sizes(const char *arg, VoxelBenchArgs *a)
{
    const char *p = arg;
    a->nsizes = 0;
    while (*p) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > (long)GHM_POINTCLOUD_MAX_POINTS || a->nsizes == MAX_SIZES ||
            (*end != ',' && *end != '\0')) {
            ghm_cli_error("--points", "'%s' is not a list of up to %d point counts", arg,
                          MAX_SIZES);
            return -1;
        }
        a->sizes[a->nsizes++] = v;
        p = *end ? end + 1 : end;
    }
    return a->nsizes ? 0 : -1;
}

static int parse_args(int argc, char **argv, VoxelBenchArgs *a)
{
    *a = (VoxelBenchArgs){.common = ghm_cli_common_defaults(), .reps = 10, .grid = 128,
                          .nsizes = 3, .sizes = {20000, 160000, 1280000}};
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used < 0)
            return -1;
        if (used > 0)
            continue;
        int bad = 0;
        if (id == OPT_JSON_OUT)
            a->json_out = optarg;
        else if (id == OPT_REPS)
            bad = ghm_cli_parse_long("--reps", optarg, 1, MAX_REPS, &a->reps) < 0;
        else if (id == OPT_GRID)
            bad = ghm_cli_parse_long("--grid", optarg, 1, GHM_VOXEL_MAX_DIM, &a->grid) < 0;
        else if (id == OPT_POINTS)
            bad = parse_sizes(optarg, a) < 0;
        else if (id == OPT_ESTIMATE)
            a->estimate = 1;
        else {
            ghm_cli_usage_hint("bench voxel");
            return -1;
        }
        if (bad)
            return -1;
    }
    if (optind != argc) {
        ghm_cli_error("bench voxel", "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

int ghm_bench_sphere(size_t n, double r, const double c[3], int normals, GhmPointCloud **out)
{
    int ret = ghm_pointcloud_create(n, normals, 0, out);
    if (ret < 0)
        return ret;
    GhmPointCloud *pc = *out;
    const double golden = M_PI * (3.0 - sqrt(5.0));
    for (size_t i = 0; i < n; i++) {
        double z = 1.0 - 2.0 * (i + 0.5) / n, rad = sqrt(1.0 - z * z), phi = golden * i;
        double u[3] = {rad * cos(phi), rad * sin(phi), z};
        for (int k = 0; k < 3; k++) {
            pc->xyz[3 * i + (size_t)k] = (float)(c[k] + r * u[k]);
            if (normals)
                pc->normals[3 * i + (size_t)k] = (float)u[k];
        }
    }
    return GHM_OK;
}

/* B turned by `deg` about the z axis through its centre. */
static void pose_of(double deg, const double c[3], double m[16])
{
    double a = deg * M_PI / 180.0, co = cos(a), si = sin(a);
    double r[16] = {co, -si, 0, 0, si, co, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    r[3] = c[0] - (co * c[0] - si * c[1]);
    r[7] = c[1] - (si * c[0] + co * c[1]);
    memcpy(m, r, sizeof r);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { STAGES = 6 };

typedef struct Row {
    size_t points, voxels[2];
    double setup_ms; /* creating the sweep (uploading the clouds), once */
    double best[STAGES], median[STAGES]; /* voxelize, lookup, classify, fill, total, cpu */
} Row;

/* "step_cpu" is the process CPU time of the step: on a shared, busy machine it shows what the
 * step costs when the wall clock also counts time spent waiting for a core. */
static const char *const stage_names[STAGES] = {"voxelize", "lookup", "classify", "fill", "step",
                                                "step_cpu"};

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int run_size(GhmContext *ctx, const VoxelBenchArgs *a, size_t n, Row *row)
{
    const double *ca = GHM_BENCH_SPHERE_A, *cb = GHM_BENCH_SPHERE_B;
    GhmPointCloud *A = NULL, *B = NULL;
    double *t[STAGES] = {NULL}, poses[2 * 16];
    int ret = ghm_bench_sphere(n, 1.0, ca, !a->estimate, &A);
    if (ret == GHM_OK)
        ret = ghm_bench_sphere(n, 0.6, cb, !a->estimate, &B);
    for (int s = 0; s < STAGES && ret == GHM_OK; s++)
        if (!(t[s] = malloc((size_t)a->reps * sizeof *t[s])))
            ret = GHM_ERR_NOMEM;
    GhmVoxelOptions opt = ghm_voxel_defaults();
    opt.grid = (int)a->grid;
    GhmVoxelGrid grid;
    pose_of(0, cb, poses);
    pose_of((double)a->reps, cb, poses + 16);
    if (ret == GHM_OK) /* a sphere turning about its centre keeps its box: two poses suffice */
        ret = ghm_voxel_grid_fit(A, B, poses, 2, &opt, &grid, NULL, 0);
    GhmVoxelSweep *sw = NULL;
    if (ret == GHM_OK)
        ret = ghm_voxel_sweep_create(ctx, A, B, &grid, &opt, &sw);
    row->setup_ms = ghm_voxel_sweep_setup_ms(sw);
    for (long k = 0; k < a->reps && ret == GHM_OK; k++) {
        const GhmVoxelResult *r = NULL;
        double m[16];
        pose_of((double)k, cb, m);
        double c0 = cpu_ms();
        if ((ret = ghm_voxel_sweep_step(sw, m, &r)) < 0)
            break;
        double c1 = cpu_ms();
        const GhmVoxelTimings *tm = &r->time;
        double v[STAGES] = {tm->voxelize_ms, tm->lookup_ms, tm->classify_ms, tm->fill_ms,
                            tm->total_ms, c1 - c0};
        for (int s = 0; s < STAGES; s++)
            t[s][k] = v[s];
        row->voxels[0] = r->side[0].voxels;
        row->voxels[1] = r->side[1].voxels;
    }
    ghm_voxel_sweep_free(&sw);
    row->points = n;
    for (int s = 0; s < STAGES && ret == GHM_OK; s++) {
        qsort(t[s], (size_t)a->reps, sizeof *t[s], cmp_double);
        row->best[s] = t[s][0];
        row->median[s] = t[s][a->reps / 2];
    }
    for (int s = 0; s < STAGES; s++)
        free(t[s]);
    ghm_pointcloud_free(&A);
    ghm_pointcloud_free(&B);
    return ret;
}

static json_t *row_json(const Row *r)
{
    json_t *o = json_object(), *best = json_object(), *med = json_object();
    json_object_set_new(o, "points_per_cloud", json_integer((json_int_t)r->points));
    json_object_set_new(o, "voxels", json_pack("[II]", (json_int_t)r->voxels[0],
                                               (json_int_t)r->voxels[1]));
    for (int s = 0; s < STAGES; s++) {
        json_object_set_new(best, stage_names[s], json_real(r->best[s]));
        json_object_set_new(med, stage_names[s], json_real(r->median[s]));
    }
    json_object_set_new(o, "setup_ms", json_real(r->setup_ms));
    json_object_set_new(o, "best_ms", best);
    json_object_set_new(o, "median_ms", med);
    return o;
}

static int write_json(const VoxelBenchArgs *a, GhmContext *ctx, const Row *rows, int n)
{
    char device[256];
    ghm_context_describe(ctx, device, sizeof device);
    json_t *o = json_object(), *arr = json_array();
    json_object_set_new(o, "bench", json_string("voxel"));
    json_object_set_new(o, "backend", json_string(ghm_context_backend_name(ctx)));
    json_object_set_new(o, "device", json_string(device));
    json_object_set_new(o, "grid", json_integer(a->grid));
    json_object_set_new(o, "reps", json_integer(a->reps));
    json_object_set_new(o, "normals", json_string(a->estimate ? "estimated" : "file"));
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, row_json(&rows[i]));
    json_object_set_new(o, "rows", arr);
    return ghm_json_write_file(a->json_out, o);
}

int ghm_bench_voxel(int argc, char **argv)
{
    VoxelBenchArgs a;
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
    printf("bench voxel: %s backend (%s), grid %ld, normals %s, best / median of %ld steps (ms)\n",
           ghm_context_backend_name(ctx), device, a.grid, a.estimate ? "estimated" : "from the "
           "clouds", a.reps);
    printf("%12s %16s %17s %17s %17s %17s %17s %17s %9s\n", "points/cloud", "voxels A+B",
           "voxelize", "look-ups", "classify", "fill", "step", "step CPU time", "setup");
    Row rows[MAX_SIZES];
    int status = GHM_EXIT_FOUND;
    for (int i = 0; i < a.nsizes; i++) {
        int ret = run_size(ctx, &a, (size_t)a.sizes[i], &rows[i]);
        if (ret < 0) {
            ghm_cli_error("bench voxel", "%ld points: %s", a.sizes[i], ghm_strerror(ret));
            status = GHM_EXIT_ERROR;
            break;
        }
        printf("%12zu %7zu+%-8zu", rows[i].points, rows[i].voxels[0], rows[i].voxels[1]);
        for (int s = 0; s < STAGES; s++)
            printf(" %8.2f / %6.2f", rows[i].best[s], rows[i].median[s]);
        printf(" %9.2f\n", rows[i].setup_ms);
        fflush(stdout);
    }
    if (status == GHM_EXIT_FOUND && a.json_out && write_json(&a, ctx, rows, a.nsizes) < 0)
        status = GHM_EXIT_ERROR;
    ghm_context_free(&ctx);
    return status;
}
