/*
 * voxel_cli.h - what `voxel` (cmd_voxel.c) and `voxel edit` (cmd_voxel_edit.c) share: the grid
 * and label options, the output options, --normals, their help lines, reading the clouds, and
 * the preview.
 *
 * A command's long options start with GHM_COMMON_LONG_OPTIONS and GHM_VOXEL_LONG_OPTIONS, its own
 * option ids with GHM_VOXEL_OPT_FIRST_OWN; it hands each option to ghm_cli_common_option, then to
 * ghm_voxel_cli_option, then parses it itself.
 */
#ifndef GHM_VOXEL_CLI_H
#define GHM_VOXEL_CLI_H

#include "cli.h"
#include "ghm_voxel.h"

enum {
    GHM_VOXEL_OPT_GRID = GHM_OPT_FIRST_COMMAND,
    GHM_VOXEL_OPT_VOXEL_SIZE,
    GHM_VOXEL_OPT_ASCII,
    GHM_VOXEL_OPT_PREVIEW,
    GHM_VOXEL_OPT_PREVIEW_AXIS,
    GHM_VOXEL_OPT_T_IN,
    GHM_VOXEL_OPT_T_OUT,
    GHM_VOXEL_OPT_ROUNDS,
    GHM_VOXEL_OPT_NORMALS,
    GHM_VOXEL_OPT_FIRST_OWN
};

#define GHM_VOXEL_LONG_OPTIONS                                                               \
    {"output", required_argument, NULL, 'o'},                                                \
        {"grid", required_argument, NULL, GHM_VOXEL_OPT_GRID},                               \
        {"voxel-size", required_argument, NULL, GHM_VOXEL_OPT_VOXEL_SIZE},                   \
        {"ascii", no_argument, NULL, GHM_VOXEL_OPT_ASCII},                                   \
        {"preview", required_argument, NULL, GHM_VOXEL_OPT_PREVIEW},                         \
        {"preview-axis", required_argument, NULL, GHM_VOXEL_OPT_PREVIEW_AXIS},               \
        {"t-in", required_argument, NULL, GHM_VOXEL_OPT_T_IN},                               \
        {"t-out", required_argument, NULL, GHM_VOXEL_OPT_T_OUT},                             \
        {"rounds", required_argument, NULL, GHM_VOXEL_OPT_ROUNDS},                           \
        {"normals", required_argument, NULL, GHM_VOXEL_OPT_NORMALS}

/* The help lines of the grid options (each command adds -o and --preview in its own words). */
#define GHM_VOXEL_GRID_HELP                                                                  \
    "  --grid N            voxels along the longest side of the joint bounding box (128;\n"  \
    "                      at most 4096 along an axis and 2^30 in all: a cube stops at 1024)\n" \
    "  --voxel-size S      voxel edge length instead of --grid (the same bounds)\n"
#define GHM_VOXEL_LABEL_HELP                                                                 \
    "  --t-out T, --t-in T seed thresholds on the step . normal product (0.2, 0.2)\n"        \
    "  --rounds N          fills at most, dropping conflicting seeds in between (4)\n"     \
    "  --normals file|estimate  each cloud's normals from its file (the default; normals\n"  \
    "                      that point inward, or either way, are reported), or estimated\n"  \
    "                      as for clouds without normals\n"
#define GHM_VOXEL_PREVIEW_AXIS_HELP                                                          \
    "  --preview-axis x|y|z  view along this axis from its positive side (z)\n"

/* What the shared options choose besides the library's GhmVoxelOptions. */
typedef struct GhmVoxelCliChoices {
    const char *output, *preview; /* -o, --preview, or NULL */
    int ascii, axis;              /* axis 0 x, 1 y, 2 z (the default) */
    int estimate_normals;         /* --normals estimate: the files' normals are dropped */
} GhmVoxelCliChoices;

/* Applies one shared option to vox and out: 1 when id was one, 0 when it was not, -1 after
 * printing an error line for a bad value. */
int ghm_voxel_cli_option(GhmVoxelOptions *vox, GhmVoxelCliChoices *out, int id, const char *arg);

/* Reads the cloud at path ("-": standard input) into *out (dropping its normals with --normals
 * estimate); prints one error line and returns -1 when it cannot be read or has no points. */
int ghm_voxel_cli_load(const char *path, const GhmVoxelCliChoices *ch, GhmPointCloud **out);

/* Warns when the cloud at path is 50 or more times smaller or larger than the first cloud
 * (first_path: A, or an edit's BASE), by the diagonals of their bounding boxes: clouds compared
 * voxel by voxel are of one size, so that is nearly always two units (metres and millimetres),
 * and the smaller would fall in a few voxels of the grid with labels that mean nothing. */
void ghm_voxel_cli_warn_units(const char *first_path, const GhmPointCloud *first,
                              const char *path, const GhmPointCloud *pc);

/* Renders r along out->axis and writes it to out->preview (atomically); nothing without
 * --preview. Prints one error line and returns -1 on failure. */
int ghm_voxel_cli_write_preview(const GhmVoxelResult *r, const GhmVoxelCliChoices *out);

/* After a grid fit (ghm_voxel_grid_fit or _clouds) that returned ret with why: prints its error
 * line against --grid or --voxel-size and returns -1, or returns 0 when ret is GHM_OK. */
int ghm_voxel_cli_grid_error(const GhmVoxelOptions *vox, int ret, const char *why);

/* --backend auto on a coarse grid (--grid <= 128, not --voxel-size) for work that starts CUDA
 * for little (one step, or an edit; not a sweep of `steps` > 1) picks the CPU; says so with
 * --verbose. */
void ghm_voxel_cli_pick_auto_backend(GhmCommonOptions *common, const GhmVoxelOptions *vox,
                                     int steps);

/* `voxel edit BASE [--add X] [--subtract Y] [--intersect Z] ...` (cmd_voxel_edit.c). */
int ghm_cmd_voxel_edit(int argc, char **argv);

/* Steps first .. first + count - 1 of a sweep of B at poses (16 doubles a step, all the sweep's;
 * NULL: B as it is) against A. */
typedef struct GhmVoxelSweepRun {
    const GhmPointCloud *a, *b;
    const double *poses;
    int first, count;
    const GhmVoxelGrid *grid;
    const GhmVoxelOptions *opt;
} GhmVoxelSweepRun;

/* Step k's pose, or NULL. */
static inline const double *ghm_voxel_sweep_pose(const GhmVoxelSweepRun *run, int k)
{
    return run->poses ? run->poses + 16 * (size_t)k : NULL;
}

/* What the caller does with step k's result, in step order; < 0 stops the sweep (its status). */
typedef int (*GhmVoxelStepSink)(void *user, int k, const GhmVoxelResult *r);

/* `voxel --sweep --gpus N` (voxel_sweep_gpus.c): the steps of run dealt to gpus CUDA devices
 * from ctx's on (ctx itself for the first, contexts like it for the others), each step whole on
 * one device, handed to sink in step order. The first failure's status (its error line
 * printed), or the sink's. */
int ghm_voxel_sweep_on_gpus(GhmContext *ctx, int gpus, const GhmVoxelSweepRun *run,
                            GhmVoxelStepSink sink, void *user);

#endif /* GHM_VOXEL_CLI_H */
