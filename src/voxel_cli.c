/*
 * voxel_cli.c - the options and outputs that `voxel` and `voxel edit` share; see voxel_cli.h.
 */
#include "voxel_cli.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ghm_image.h"

int ghm_voxel_cli_option(GhmVoxelOptions *vox, GhmVoxelCliChoices *out, int id, const char *arg)
{
    long v = 0;
    switch (id) {
    case 'o':
        out->output = arg;
        return 1;
    case GHM_VOXEL_OPT_GRID:
        if (ghm_cli_parse_long("--grid", arg, 1, GHM_VOXEL_MAX_DIM, &v) < 0)
            return -1;
        vox->grid = (int)v;
        return 1;
    case GHM_VOXEL_OPT_VOXEL_SIZE:
        return ghm_cli_parse_double("--voxel-size", arg, 1e-30, 1e30, &vox->voxel_size) < 0 ? -1
                                                                                           : 1;
    case GHM_VOXEL_OPT_ASCII:
        out->ascii = 1;
        return 1;
    case GHM_VOXEL_OPT_PREVIEW:
        out->preview = arg;
        return 1;
    case GHM_VOXEL_OPT_PREVIEW_AXIS:
        if (strlen(arg) != 1 || !strchr("xyz", arg[0])) {
            ghm_cli_error("--preview-axis", "'%s' is not one of x, y, z", arg);
            return -1;
        }
        out->axis = arg[0] - 'x';
        return 1;
    case GHM_VOXEL_OPT_T_IN:
        return ghm_cli_parse_double("--t-in", arg, 0.0, 0.99, &vox->t_in) < 0 ? -1 : 1;
    case GHM_VOXEL_OPT_T_OUT:
        return ghm_cli_parse_double("--t-out", arg, 0.0, 0.99, &vox->t_out) < 0 ? -1 : 1;
    case GHM_VOXEL_OPT_ROUNDS:
        if (ghm_cli_parse_long("--rounds", arg, 1, 1000, &v) < 0)
            return -1;
        vox->max_rounds = (int)v;
        return 1;
    case GHM_VOXEL_OPT_NORMALS:
        if (strcmp(arg, "file") != 0 && strcmp(arg, "estimate") != 0) {
            ghm_cli_error("--normals", "'%s' is not one of file, estimate", arg);
            return -1;
        }
        out->estimate_normals = arg[0] == 'e';
        return 1;
    default:
        return 0;
    }
}

int ghm_voxel_cli_load(const char *path, const GhmVoxelCliChoices *ch, GhmPointCloud **out)
{
    char why[512];
    int stdin_ = strcmp(path, "-") == 0; /* a pipe from a converter: read as a file */
    const char *name = stdin_ ? "standard input" : path;
    if (ghm_pointcloud_load(stdin_ ? "/dev/stdin" : path, out, why, sizeof why) < 0) {
        ghm_cli_error(name, "%s", why);
        return -1;
    }
    if ((*out)->n == 0) {
        ghm_cli_error(name, "no points");
        return -1;
    }
    if (ch->estimate_normals)
        ghm_pointcloud_drop_normals(*out);
    return 0;
}

/* The diagonal of the cloud's bounding box (0 for one point). */
static double diagonal(const GhmPointCloud *pc)
{
    double lo[3], hi[3];
    ghm_pointcloud_bounds(pc, lo, hi);
    return pc->n ? sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                        (hi[2] - lo[2]) * (hi[2] - lo[2]))
                 : 0.0;
}

void ghm_voxel_cli_warn_units(const char *first_path, const GhmPointCloud *first,
                              const char *path, const GhmPointCloud *pc)
{
    enum { RATIO = 50 };
    double a = diagonal(first), b = diagonal(pc);
    if (a > 0 && b > 0 && (a >= RATIO * b || b >= RATIO * a))
        ghm_cli_warn(path, "it is %.0f times %s than %s (bounding-box diagonals %g and %g): are "
                     "they in the same units? The smaller covers few voxels of the grid",
                     a > b ? a / b : b / a, a > b ? "smaller" : "larger", first_path, b, a);
}

int ghm_voxel_cli_write_preview(const GhmVoxelResult *r, const GhmVoxelCliChoices *out)
{
    if (!out->preview)
        return 0;
    char why[512];
    GhmRgbImage *img = NULL;
    int ret = ghm_voxel_preview(r, out->axis, 768, &img);
    if (ret == GHM_OK)
        ret = ghm_rgb_image_save_png(img, out->preview, why, sizeof why);
    else
        snprintf(why, sizeof why, "%s", ghm_strerror(ret));
    ghm_rgb_image_free(&img);
    if (ret < 0) {
        ghm_cli_error(out->preview, "%s", why);
        return -1;
    }
    return 0;
}

int ghm_voxel_cli_grid_error(const GhmVoxelOptions *vox, int ret, const char *why)
{
    if (ret >= 0)
        return 0;
    ghm_cli_error(vox->voxel_size > 0 ? "--voxel-size" : "--grid", "%s",
                  ret == GHM_ERR_NOMEM ? "out of memory" : why);
    return -1;
}

/* Measured on the H100 machine (2026-11-26, docs/BENCHMARKS.md "Cold start"), process start to
 * exit with two 160k-point scans: one step at --grid 128 takes 35-61 ms on its 16 CPU cores and
 * 285-384 ms with CUDA (its start-up ~0.2 s and the driver's teardown at exit ~0.1 s); an edit
 * 196-320 against 370-418 ms. At --grid 256 the CPU still wins there (76-131 against 293-377
 * ms), but by a margin that a machine with a quarter of those cores loses; at 512 CUDA wins
 * (320-331 against 497-591 ms). A sweep keeps CUDA: a step takes 0.5 ms there, 35 on the CPU. */
void ghm_voxel_cli_pick_auto_backend(GhmCommonOptions *common, const GhmVoxelOptions *vox,
                                     int steps)
{
    if (common->backend != GHM_BACKEND_AUTO || vox->voxel_size > 0 || vox->grid > 128 ||
        steps > 1)
        return;
    ghm_cli_auto_on_cpu(common, "a grid of at most 128");
}
