/*
 * cmd_voxel.c - `geohash-match voxel [OPTIONS] A B`: option parsing and output of the voxel
 * Boolean intersection. The pipeline lives in vision/ (ghm_voxel.h, ghm_pointcloud.h).
 *
 * B can be moved before the test (--transform-b, or --rotate-b about its bounding-box centre
 * and --translate-b) and swept from where it is to that pose in --sweep K steps: the rotation is
 * interpolated about B's centre (quaternion slerp from the identity) while the centre moves on
 * a straight line; a matrix that is not a rotation plus translation is blended entry by entry.
 * One grid, fitted around every pose, serves all steps; the tables are rebuilt per step (a
 * GhmVoxelSweep: on a device the clouds are uploaded once).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_pointcloud.h"
#include "json_out.h"
#include "ranks.h"
#include "voxel_cli.h"
#include "voxel_ranks.h"

enum {
    OPT_TRANSFORM_B = GHM_VOXEL_OPT_FIRST_OWN,
    OPT_ROTATE_B,
    OPT_TRANSLATE_B,
    OPT_SWEEP,
    OPT_GPUS
};

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    GHM_VOXEL_LONG_OPTIONS,
    {"transform-b", required_argument, NULL, OPT_TRANSFORM_B},
    {"rotate-b", required_argument, NULL, OPT_ROTATE_B},
    {"translate-b", required_argument, NULL, OPT_TRANSLATE_B},
    {"sweep", required_argument, NULL, OPT_SWEEP},
    {"gpus", required_argument, NULL, OPT_GPUS},
    {NULL, 0, NULL, 0}};

typedef struct VoxelArgs {
    GhmCommonOptions common;
    GhmVoxelOptions vox;
    GhmVoxelCliChoices out;
    int sweep;
    int gpus; /* --gpus: CUDA devices a sweep's steps are dealt to (0: one) */
    int have_matrix, have_rotate, have_translate;
    double matrix[16], rotate[3], translate[3];
    const char *path[2];
} VoxelArgs;

static void print_help(void)
{
    fputs("Usage: geohash-match voxel [OPTIONS] A B\n"
          "       geohash-match voxel edit [OPTIONS] BASE [--add X] [--subtract Y] ...  (see\n"
          "       geohash-match voxel edit --help)\n"
          "\n"
          "Voxel Boolean intersection of two point clouds (PLY ascii or binary, XYZ text; the\n"
          "format is recognised by content; A or B may be - for standard input). Both are\n"
          "voxelized on one grid; every occupied voxel of each cloud is labelled intersection\n"
          "(occupied by both), inside or outside the other cloud's surface (seeded next to the\n"
          "intersection from the other cloud's normals, then flood-filled), or unknown (not\n"
          "reached). Clouds without normals get normals estimated per voxel (PCA of the 27-voxel\n"
          "neighbourhood, oriented outward by propagation), and the output says \"estimated\".\n"
          "Normals from a file are checked: where they point inward (toward the middle at the\n"
          "cloud's extremes) or either way (neighbouring voxels' normals opposed), the other\n"
          "cloud's labels follow them, and a warning says so (\"normals_check\" in the JSON:\n"
          "consistent, inward, mixed, or unchecked when the cloud spans too few voxels to tell).\n"
          "\n"
          "Options:\n"
          GHM_VOXEL_GRID_HELP
          "  -o, --output F.ply  one vertex per occupied voxel: float x y z (centre), uchar cloud\n"
          "                      (0 A, 1 B), uchar label (0 outside, 1 inside, 2 intersection,\n"
          "                      3 unknown), uchar red green blue; binary little endian\n"
          "  --ascii             write the PLY as ascii\n"
          "  --preview F.png     orthographic view coloured by label (inside blue, intersection\n"
          "                      green, outside grey, unknown red)\n"
          GHM_VOXEL_PREVIEW_AXIS_HELP
          "  --transform-b M     move B by a 4x4 row-major matrix: 16 comma-separated numbers\n"
          "  --rotate-b AX,AY,AZ rotate B about its bounding-box centre: x, then y, then z (degrees)\n"
          "  --translate-b X,Y,Z then move B by this vector\n"
          "  --sweep K           K steps from B as it is to the pose above (one line per step, JSON\n"
          "                      Lines with --json); -o and --preview show the last step\n"
          "  --gpus N|all        deal the sweep's steps to N CUDA devices, one whole step on\n"
          "                      each at a time (the same lines, in step order, as on one);\n"
          "                      under mpirun each rank takes a range of the steps, rank 0\n"
          "                      prints them all in order (the clouds must be files)\n"
          GHM_VOXEL_LABEL_HELP
          "  --backend, --json, --quiet, --seed, --threads, --verbose, --help as everywhere\n"
          "\n"
          "Example:\n"
          "  geohash-match voxel --json --grid 64 -o out.ply data/pointclouds/bunny.ply "
          "data/pointclouds/kitten.ply\n"
          "\n"
          "Exit status: 0 success, 2 error (one line on stderr names the file and the problem).\n",
          stdout);
}

/* Parses exactly n comma-separated finite numbers. */
static int parse_numbers(const char *name, const char *arg, int n, double *out)
{
    const char *p = arg;
    for (int i = 0; i < n; i++) {
        char *end = NULL;
        out[i] = strtod(p, &end);
        if (end == p || !isfinite(out[i]) || (i < n - 1 && *end != ',') ||
            (i == n - 1 && *end != '\0')) {
            ghm_cli_error(name, "'%s' is not %d comma-separated numbers", arg, n);
            return -1;
        }
        p = end + 1;
    }
    return 0;
}

static int parse_own_option(VoxelArgs *a, int id, const char *arg)
{
    long v = 0;
    switch (id) {
    case OPT_TRANSFORM_B:
        a->have_matrix = 1;
        return parse_numbers("--transform-b", arg, 16, a->matrix);
    case OPT_ROTATE_B:
        a->have_rotate = 1;
        return parse_numbers("--rotate-b", arg, 3, a->rotate);
    case OPT_TRANSLATE_B:
        a->have_translate = 1;
        return parse_numbers("--translate-b", arg, 3, a->translate);
    case OPT_SWEEP:
        if (ghm_cli_parse_long("--sweep", arg, 1, 100000, &v) < 0)
            return -1;
        a->sweep = (int)v;
        return 0;
    case OPT_GPUS:
        return ghm_cli_parse_gpus(arg, 64, &a->gpus);
    default:
        ghm_cli_usage_hint("voxel");
        return -1;
    }
}

/* Returns 1 to go on, 0 when --help or --version was answered, -1 on an error (printed). */
static int parse_args(int argc, char **argv, VoxelArgs *a)
{
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "o:", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used == 0)
            used = ghm_voxel_cli_option(&a->vox, &a->out, id, optarg);
        if (used < 0 || (used == 0 && parse_own_option(a, id, optarg) < 0))
            return -1;
    }
    if (a->common.help || a->common.version) { /* once, by rank 0, under MPI */
        if (!ghm_cli_quiet())
            a->common.help ? print_help() : ghm_cli_print_version(stdout);
        return 0;
    }
    if (argc - optind != 2) {
        ghm_cli_error("voxel", argc - optind < 2 ? "missing point clouds: give A and B"
                                                 : "too many arguments: give A and B only");
        ghm_cli_usage_hint("voxel");
        return -1;
    }
    if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0) {
        ghm_cli_error("voxel", "only one of A and B can be read from standard input (-)");
        return -1;
    }
    if (a->have_matrix && (a->have_rotate || a->have_translate)) {
        ghm_cli_error("--transform-b", "cannot be combined with --rotate-b or --translate-b");
        return -1;
    }
    a->path[0] = argv[optind];
    a->path[1] = argv[optind + 1];
    for (int i = 0; i < 2; i++)
        if (ghm_cli_output_not_input("-o", a->out.output, a->path[i]) < 0 ||
            ghm_cli_output_not_input("--preview", a->out.preview, a->path[i]) < 0)
            return -1;
    return 1;
}

/* --- poses -------------------------------------------------------------------------------- */

static void mat_identity(double m[16])
{
    memset(m, 0, 16 * sizeof *m);
    m[0] = m[5] = m[10] = m[15] = 1.0;
}

/* Rotation R = Rz * Ry * Rx from degrees, as the upper 3x3 of m. */
static void mat_euler(const double deg[3], double m[16])
{
    double r[3][3][3];
    for (int k = 0; k < 3; k++) {
        double c = cos(deg[k] * M_PI / 180.0), s = sin(deg[k] * M_PI / 180.0);
        int i = (k + 1) % 3, j = (k + 2) % 3; /* the plane the rotation about axis k turns */
        memset(r[k], 0, sizeof r[k]);
        r[k][k][k] = 1;
        r[k][i][i] = c, r[k][i][j] = -s, r[k][j][i] = s, r[k][j][j] = c;
    }
    double t[3][3];
    mat_identity(m);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            t[i][j] = 0;
            for (int k = 0; k < 3; k++)
                t[i][j] += r[1][i][k] * r[0][k][j];
        }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double v = 0;
            for (int k = 0; k < 3; k++)
                v += r[2][i][k] * t[k][j];
            m[4 * i + j] = v;
        }
}

static void bbox_centre(const GhmPointCloud *pc, double c[3])
{
    double lo[3], hi[3];
    ghm_pointcloud_bounds(pc, lo, hi);
    for (int k = 0; k < 3; k++)
        c[k] = pc->n ? 0.5 * (lo[k] + hi[k]) : 0.0;
}

/* The final pose of B: the matrix, or the rotation about B's centre followed by the shift. */
static void final_pose(const VoxelArgs *a, const double centre[3], double m[16])
{
    if (a->have_matrix) {
        memcpy(m, a->matrix, 16 * sizeof *m);
        return;
    }
    static const double zero[3] = {0, 0, 0};
    mat_euler(a->have_rotate ? a->rotate : zero, m);
    for (int i = 0; i < 3; i++) {
        double rc = m[4 * i] * centre[0] + m[4 * i + 1] * centre[1] + m[4 * i + 2] * centre[2];
        m[4 * i + 3] = centre[i] - rc + (a->have_translate ? a->translate[i] : 0.0);
    }
}

static int is_rotation(const double m[16])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = 0;
            for (int k = 0; k < 3; k++)
                d += m[4 * k + i] * m[4 * k + j];
            if (fabs(d - (i == j)) > 1e-4)
                return 0;
        }
    double det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
                 m[2] * (m[4] * m[9] - m[5] * m[8]);
    return det > 0 && fabs(m[12]) + fabs(m[13]) + fabs(m[14]) + fabs(m[15] - 1) < 1e-9;
}

/* Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method). */
static void quat_from(const double m[16], double q[4])
{
    double tr = m[0] + m[5] + m[10];
    if (tr > 0) {
        double s = 2 * sqrt(tr + 1);
        q[0] = s / 4, q[1] = (m[9] - m[6]) / s, q[2] = (m[2] - m[8]) / s, q[3] = (m[4] - m[1]) / s;
    } else if (m[0] > m[5] && m[0] > m[10]) {
        double s = 2 * sqrt(1 + m[0] - m[5] - m[10]);
        q[0] = (m[9] - m[6]) / s, q[1] = s / 4, q[2] = (m[1] + m[4]) / s, q[3] = (m[2] + m[8]) / s;
    } else if (m[5] > m[10]) {
        double s = 2 * sqrt(1 + m[5] - m[0] - m[10]);
        q[0] = (m[2] - m[8]) / s, q[1] = (m[1] + m[4]) / s, q[2] = s / 4, q[3] = (m[6] + m[9]) / s;
    } else {
        double s = 2 * sqrt(1 + m[10] - m[0] - m[5]);
        q[0] = (m[4] - m[1]) / s, q[1] = (m[2] + m[8]) / s, q[2] = (m[6] + m[9]) / s, q[3] = s / 4;
    }
}

static void mat_from_quat(const double q[4], double m[16])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    mat_identity(m);
    m[0] = 1 - 2 * (y * y + z * z), m[1] = 2 * (x * y - w * z), m[2] = 2 * (x * z + w * y);
    m[4] = 2 * (x * y + w * z), m[5] = 1 - 2 * (x * x + z * z), m[6] = 2 * (y * z - w * x);
    m[8] = 2 * (x * z - w * y), m[9] = 2 * (y * z + w * x), m[10] = 1 - 2 * (x * x + y * y);
}

/* The pose at fraction t of the way from the identity to m (see the file comment). */
static void interpolate(const double m[16], const double centre[3], double t, double out[16])
{
    if (!is_rotation(m)) {
        double id[16];
        mat_identity(id);
        for (int i = 0; i < 16; i++)
            out[i] = (1 - t) * id[i] + t * m[i];
        return;
    }
    double q[4];
    quat_from(m, q);
    if (q[0] < 0)
        for (int k = 0; k < 4; k++)
            q[k] = -q[k]; /* the short way round */
    double half = acos(fmin(1.0, q[0])), s = sin(half);
    double qt[4] = {cos(t * half), 0, 0, 0};
    for (int k = 1; k < 4; k++)
        qt[k] = s > 1e-12 ? q[k] / s * sin(t * half) : 0.0;
    mat_from_quat(qt, out);
    for (int i = 0; i < 3; i++) {
        double mc = m[4 * i] * centre[0] + m[4 * i + 1] * centre[1] + m[4 * i + 2] * centre[2] +
                    m[4 * i + 3];
        double rc = out[4 * i] * centre[0] + out[4 * i + 1] * centre[1] + out[4 * i + 2] * centre[2];
        out[4 * i + 3] = centre[i] + t * (mc - centre[i]) - rc;
    }
}

/* --- output ------------------------------------------------------------------------------- */

/* The verdict's name in the JSON output ("normals_check"), or NULL for estimated normals. */
static const char *verdict_name(const GhmVoxelSide *s, GhmVoxelNormalsVerdict v)
{
    static const char *const names[4] = {"consistent", "inward", "mixed", "unchecked"};
    return s->normals_estimated ? NULL : names[v];
}

static json_t *side_json(const GhmVoxelSide *s, const char *path, GhmVoxelNormalsVerdict v)
{
    json_t *o = json_object();
    json_object_set_new(o, "file", ghm_json_string_lossy(path));
    json_object_set_new(o, "points", json_integer((json_int_t)s->points));
    json_object_set_new(o, "voxels", json_integer((json_int_t)s->voxels));
    static const char *const names[4] = {"outside", "inside", "intersection", "unknown"};
    for (int l = 0; l < 4; l++)
        json_object_set_new(o, names[l], json_integer((json_int_t)s->label_count[l]));
    json_object_set_new(o, "normals", json_string(s->normals_estimated ? "estimated" : "file"));
    if (verdict_name(s, v))
        json_object_set_new(o, "normals_check", json_string(verdict_name(s, v)));
    json_object_set_new(o, "seeds", json_integer((json_int_t)s->seeds));
    json_object_set_new(o, "conflicts", json_integer((json_int_t)s->conflicts));
    return o;
}

static int print_json(FILE *out, const VoxelArgs *a, const GhmVoxelResult *r,
                      const char *backend, const GhmVoxelNormalsVerdict verdict[2], int step,
                      double t, double read_ms)
{
    json_t *o = json_object(), *g = json_object(), *tm = json_object();
    const GhmVoxelGrid *gr = &r->grid;
    if (a->sweep > 0) {
        json_object_set_new(o, "step", json_integer(step));
        json_object_set_new(o, "t", json_real(t));
    }
    json_object_set_new(g, "origin", json_pack("[fff]", gr->origin[0], gr->origin[1], gr->origin[2]));
    json_object_set_new(g, "voxel_size", json_real(gr->voxel_size));
    json_object_set_new(g, "dims", json_pack("[iii]", gr->dims[0], gr->dims[1], gr->dims[2]));
    json_object_set_new(o, "grid", g);
    json_object_set_new(o, "A", side_json(&r->side[0], a->path[0], verdict[0]));
    json_object_set_new(o, "B", side_json(&r->side[1], a->path[1], verdict[1]));
    json_object_set_new(o, "backend", json_string(backend));
    json_object_set_new(o, "rounds", json_integer(r->rounds));
    json_object_set_new(tm, "read", json_real(read_ms));
    json_object_set_new(tm, "voxelize", json_real(r->time.voxelize_ms));
    json_object_set_new(tm, "lookup", json_real(r->time.lookup_ms));
    json_object_set_new(tm, "classify", json_real(r->time.classify_ms));
    json_object_set_new(tm, "fill", json_real(r->time.fill_ms));
    json_object_set_new(tm, "step", json_real(r->time.total_ms));
    json_object_set_new(o, "timings_ms", tm);
    int ret = ghm_json_print(out, o);
    json_decref(o);
    return ret;
}

static void print_side(FILE *out, const char *name, const char *path, const GhmVoxelSide *s)
{
    fprintf(out, "%s %s: %zu points, %zu voxels: %zu outside, %zu inside, %zu intersection, "
            "%zu unknown (normals %s)\n",
            name, path, s->points, s->voxels, s->label_count[GHM_VOXEL_OUTSIDE],
            s->label_count[GHM_VOXEL_INSIDE], s->label_count[GHM_VOXEL_INTERSECTION],
            s->label_count[GHM_VOXEL_UNKNOWN], s->normals_estimated ? "estimated" : "from file");
}

static void print_text(FILE *out, const VoxelArgs *a, const GhmVoxelResult *r, int step,
                       double t, double read_ms)
{
    const GhmVoxelGrid *g = &r->grid;
    const GhmVoxelSide *A = &r->side[0], *B = &r->side[1];
    if (a->sweep > 0) {
        fprintf(out,
                "step %d t=%.3f: A %zu out %zu in %zu x %zu unknown | B %zu out %zu in %zu x "
                "%zu unknown | %.1f ms\n",
                step, t, A->label_count[0], A->label_count[1], A->label_count[2],
                A->label_count[3], B->label_count[0], B->label_count[1], B->label_count[2],
                B->label_count[3], r->time.total_ms);
        return;
    }
    fprintf(out, "grid %d x %d x %d voxels of %g at (%g, %g, %g)\n", g->dims[0], g->dims[1],
            g->dims[2], g->voxel_size, g->origin[0], g->origin[1], g->origin[2]);
    print_side(out, "A", a->path[0], A);
    print_side(out, "B", a->path[1], B);
    fprintf(out,
            "step %.1f ms (voxelize %.1f, look-ups %.1f, classify %.1f, fill %.1f in %d round%s); "
            "read %.1f ms\n",
            r->time.total_ms, r->time.voxelize_ms, r->time.lookup_ms, r->time.classify_ms,
            r->time.fill_ms, r->rounds, r->rounds == 1 ? "" : "s", read_ms);
}

static int write_outputs(const VoxelArgs *a, const GhmVoxelResult *r)
{
    char why[512];
    if (a->out.output && ghm_voxel_save_ply(r, a->out.output, a->out.ascii, why, sizeof why) < 0) {
        ghm_cli_error(a->out.output, "%s", why);
        return -1;
    }
    return ghm_voxel_cli_write_preview(r, &a->out);
}

/* Checks each cloud's file normals (ghm_voxel_normals_check) on the first step's result and
 * warns where they would make the other cloud's labels wrong. The verdicts hold for every step:
 * a rigid motion keeps a surface's orientation. */
static void check_normals(const VoxelArgs *a, const GhmVoxelResult *r,
                          GhmVoxelNormalsVerdict verdict[2])
{
    for (int i = 0; i < 2; i++) {
        GhmVoxelNormalsCheck c = {.verdict = GHM_VOXEL_NORMALS_CONSISTENT};
        if (!r->side[i].normals_estimated)
            ghm_voxel_normals_check(&r->grid, &r->side[i], &c);
        verdict[i] = c.verdict;
        char fault[256];
        if (ghm_voxel_normals_fault(&c, fault, sizeof fault))
            ghm_cli_warn(a->path[i], "%s, so %s's labels %s: %s, or use --normals estimate",
                         fault, i ? "A" : "B",
                         c.verdict == GHM_VOXEL_NORMALS_INWARD
                             ? "take its outside for its inside"
                             : "are unreliable",
                         c.verdict == GHM_VOXEL_NORMALS_INWARD ? "flip them" : "orient them");
    }
}

/* --- the command -------------------------------------------------------------------------- */

static int load_clouds(const VoxelArgs *a, GhmPointCloud *pc[2])
{
    for (int i = 0; i < 2; i++)
        if (ghm_voxel_cli_load(a->path[i], &a->out, &pc[i]) < 0)
            return -1;
    ghm_voxel_cli_warn_units(a->path[0], pc[0], a->path[1], pc[1]);
    return 0;
}

/* poses[16 * k] for step k of `steps` (the last one is the final pose). */
static double *make_poses(const VoxelArgs *a, const GhmPointCloud *b, int steps)
{
    double *poses = malloc((size_t)steps * 16 * sizeof *poses), centre[3], m[16];
    if (!poses)
        return NULL;
    bbox_centre(b, centre);
    final_pose(a, centre, m);
    for (int k = 0; k < steps; k++) {
        double t = steps == 1 ? 1.0 : (double)k / (steps - 1);
        if (a->sweep > 0)
            interpolate(m, centre, t, poses + 16 * k);
        else
            memcpy(poses + 16 * k, m, sizeof m);
    }
    return poses;
}

/* What a step's result goes to: the normals check (the first step of the run), its line on
 * out, and the outputs (the sweep's last step). */
typedef struct Emit {
    const VoxelArgs *a;
    GhmContext *ctx;
    FILE *out;
    int steps; /* the sweep's, whatever share of them this process runs */
    double read_ms;
    int checked; /* verdict holds the normals check */
    GhmVoxelNormalsVerdict verdict[2];
} Emit;

static int emit_step(void *user, int k, const GhmVoxelResult *r)
{
    Emit *e = user;
    const VoxelArgs *a = e->a;
    double t = e->steps == 1 ? 1.0 : (double)k / (e->steps - 1);
    if (!e->checked)
        check_normals(a, r, e->verdict);
    e->checked = 1;
    if (!a->common.quiet && a->common.json)
        print_json(e->out, a, r, ghm_context_backend_name(e->ctx), e->verdict, k, t, e->read_ms);
    else if (!a->common.quiet)
        print_text(e->out, a, r, k, t, e->read_ms);
    if (ferror(e->out)) { /* lost lines: stop */
        ghm_cli_stdout_error(a->common.json ? 0 : errno); /* 0: ghm_json_print's reason */
        return GHM_ERR_IO;
    }
    return k == e->steps - 1 && write_outputs(a, r) < 0 ? GHM_ERR_IO : GHM_OK;
}

/* A rank past the first checks the normals on the sweep's first step too (rank 0 alone warns),
 * so that its lines carry the verdict of one process's run: one step more on the rank's own
 * sweep sw when it has one (the clouds already on its device), else a step of its own. A run
 * that starts at step 0 checks on that step, in emit_step. */
static int check_first_step(Emit *e, const GhmVoxelSweepRun *run, GhmVoxelSweep *sw)
{
    if (run->first == 0)
        return GHM_OK;
    if (!run->a->normals && !run->b->normals) { /* nothing to check: the verdict stays as is */
        e->checked = 1;
        return GHM_OK;
    }
    GhmVoxelResult *own = NULL;
    const GhmVoxelResult *r = NULL;
    const double *pose = ghm_voxel_sweep_pose(run, 0);
    int ret = sw ? ghm_voxel_sweep_step(sw, pose, &r)
                 : ghm_voxel_intersect(e->ctx, run->a, run->b, pose, run->grid, run->opt, &own);
    if (ret < 0) {
        ghm_cli_error("voxel", "step 0: %s", ghm_strerror(ret));
        return ret;
    }
    ghm_cli_options_quiet(1);
    check_normals(e->a, sw ? r : own, e->verdict);
    ghm_cli_options_quiet(0);
    e->checked = 1;
    ghm_voxel_result_free(&own);
    return GHM_OK;
}

/* The run's steps on ctx's device: one ghm_voxel_intersect, or a sweep that keeps the clouds
 * and buffers from step to step. */
static int run_here(Emit *e, const GhmVoxelSweepRun *run)
{
    const VoxelArgs *a = e->a;
    GhmVoxelSweep *sw = NULL;
    int ret = GHM_OK;
    if (e->steps > 1 &&
        (ret = ghm_voxel_sweep_create(e->ctx, run->a, run->b, run->grid, run->opt, &sw)) < 0)
        ghm_cli_error("voxel", "%s", ghm_strerror(ret));
    if (ret == GHM_OK && !e->checked)
        ret = check_first_step(e, run, sw);
    for (int k = run->first; k < run->first + run->count && ret == GHM_OK; k++) {
        GhmVoxelResult *own = NULL;
        const GhmVoxelResult *r = NULL;
        const double *pose = ghm_voxel_sweep_pose(run, k);
        if (sw)
            ret = ghm_voxel_sweep_step(sw, pose, &r);
        else if ((ret = ghm_voxel_intersect(e->ctx, run->a, run->b, pose, run->grid, &a->vox,
                                            &own)) == 0)
            r = own;
        if (ret < 0)
            ghm_cli_error("voxel", "step %d: %s", k, ghm_strerror(ret));
        else
            ret = emit_step(e, k, r);
        ghm_voxel_result_free(&own);
    }
    ghm_voxel_sweep_free(&sw);
    return ret;
}

/* --- a sweep over MPI ranks --------------------------------------------------------------- */

/* Under an MPI launcher a sweep is cut into one consecutive range of steps per rank, each rank
 * reading the clouds (so neither may come from standard input), the ranks fitting the grid
 * together (voxel_ranks.c); rank 0 prints its lines, then the others' in rank order: the lines
 * of one process. */
static int split_over_ranks(const VoxelArgs *a)
{
    return ghm_ranks_size() > 1 && a->sweep > 1 && strcmp(a->path[0], "-") != 0 &&
           strcmp(a->path[1], "-") != 0;
}

/* ---------------------------------------------------------------------------------------- */

static int run(VoxelArgs *a, GhmPointCloud *pc[2], double read_ms, GhmContext *ctx, FILE *out)
{
    int moved = a->have_matrix || a->have_rotate || a->have_translate;
    int steps = a->sweep > 0 ? a->sweep : 1;
    ghm_cli_options_quiet(split_over_ranks(a)); /* every rank fits the same grid: rank 0 speaks */
    int gpus = ghm_cli_resolve_gpus(a->gpus, ctx);
    if (gpus < 0) {
        ghm_cli_options_quiet(0);
        return GHM_EXIT_ERROR;
    }
    if (gpus > 1 && steps == 1)
        ghm_cli_warn("--gpus", "one step runs on one device; --gpus deals a --sweep's steps");
    double *poses = moved ? make_poses(a, pc[1], steps) : NULL;
    char why[512];
    GhmVoxelGrid grid;
    int ret = moved && !poses ? GHM_ERR_NOMEM : GHM_OK;
    if (ret == GHM_OK)
        ret = split_over_ranks(a) ? ghm_voxel_ranks_fit(pc[0], pc[1], poses, moved ? steps : 0,
                                                        &a->vox, &grid, why, sizeof why)
                                  : ghm_voxel_grid_fit(pc[0], pc[1], poses, moved ? steps : 0,
                                                       &a->vox, &grid, why, sizeof why);
    int grid_error = ghm_voxel_cli_grid_error(&a->vox, ret, why) < 0;
    ghm_cli_options_quiet(0);
    if (grid_error) {
        free(poses);
        return GHM_EXIT_ERROR;
    }
    GhmVoxelSweepRun sweep = {pc[0], pc[1], poses, 0, steps, &grid, &a->vox};
    if (split_over_ranks(a)) {
        int64_t rank = ghm_ranks_rank(), ranks = ghm_ranks_size();
        sweep.first = (int)(steps * rank / ranks);
        sweep.count = (int)(steps * (rank + 1) / ranks) - sweep.first;
    }
    gpus = gpus < sweep.count ? gpus : sweep.count; /* a device without a step: only a copy */
    Emit e = {.a = a, .ctx = ctx, .out = out, .steps = steps, .read_ms = read_ms};
    if (ret == GHM_OK && sweep.count > 0 && gpus > 1) {
        ret = check_first_step(&e, &sweep, NULL);
        if (ret == GHM_OK)
            ret = ghm_voxel_sweep_on_gpus(ctx, gpus, &sweep, emit_step, &e);
    } else if (ret == GHM_OK && sweep.count > 0) {
        ret = run_here(&e, &sweep);
    }
    free(poses);
    return ret < 0 ? GHM_EXIT_ERROR : GHM_EXIT_FOUND;
}

/* Reads the clouds, starts the backend and runs; under MPI ranks (split) every rank does, its
 * lines (ranks past the first) kept in memory until rank 0 prints them after its own. */
static int read_and_run(VoxelArgs *a, int split)
{
    ghm_voxel_cli_pick_auto_backend(&a->common, &a->vox, a->sweep);
    ghm_cli_prestart(a->common.backend); /* overlaps reading the clouds */
    GhmPointCloud *pc[2] = {NULL, NULL};
    GhmContext *ctx = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *out = split && ghm_ranks_rank() > 0 ? open_memstream(&text, &len) : stdout;
    int status = GHM_EXIT_ERROR;
    double t0 = ghm_now();
    ghm_cli_options_quiet(split); /* every rank reads the same clouds: rank 0 speaks */
    int loaded = load_clouds(a, pc) == 0;
    ghm_cli_options_quiet(0);
    if (!out)
        ghm_cli_error(NULL, "out of memory");
    else if (loaded && ghm_cli_context(&a->common, &ctx) == GHM_OK)
        status = run(a, pc, 1e3 * (ghm_now() - t0), ctx, out);
    if (out && out != stdout && fclose(out) != 0)
        status = GHM_EXIT_ERROR;
    if (split && ghm_ranks_gather_text(text, len, ghm_ranks_rank() == 0 ? stdout : NULL) < 0)
        status = GHM_EXIT_ERROR;
    free(text);
    ghm_context_free(&ctx);
    ghm_pointcloud_free(&pc[0]);
    ghm_pointcloud_free(&pc[1]);
    return status;
}

int ghm_cmd_voxel(int argc, char **argv)
{
    int rank = ghm_ranks_rank();
    if (argc >= 2 && strcmp(argv[1], "edit") == 0) { /* an edit is rank 0's alone */
        ghm_cli_name_command(argv + 1, "voxel edit");
        return rank > 0 ? GHM_EXIT_SKIPPED : ghm_cmd_voxel_edit(argc - 1, argv + 1);
    }
    VoxelArgs a = {.common = ghm_cli_common_defaults(), .vox = ghm_voxel_defaults(),
                   .out = {.axis = 2}};
    ghm_cli_options_quiet(1); /* every MPI rank parses the same arguments: rank 0 speaks */
    int go = parse_args(argc, argv, &a);
    ghm_cli_options_quiet(0);
    int split = go > 0 && split_over_ranks(&a);
    if (go <= 0 || (rank > 0 && !split)) /* a run that is not a sweep is rank 0's alone */
        return go < 0 ? GHM_EXIT_ERROR : rank > 0 ? GHM_EXIT_SKIPPED : GHM_EXIT_FOUND;
    return read_and_run(&a, split);
}
