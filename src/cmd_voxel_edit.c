/*
 * cmd_voxel_edit.c - `geohash-match voxel edit BASE [--add X] [--subtract Y] [--intersect Z] ...`:
 * option parsing and the output of a voxel set edited cloud by cloud. The
 * set and the edits live in vision/voxel/ (ghm_voxel_edit.h).
 *
 * Every cloud is read before anything runs (a reader's error names the file, exit 2), one grid
 * is fitted around all of them, the edits run in the order given, and only then are the outputs
 * written (each atomically), so a failing step leaves no output behind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_pointcloud.h"
#include "ghm_voxel_edit.h"
#include "json_out.h"
#include "voxel_cli.h"

enum { OPT_ADD = GHM_VOXEL_OPT_FIRST_OWN, OPT_SUBTRACT, OPT_INTERSECT };

static const struct option long_options[] = {
    GHM_COMMON_LONG_OPTIONS,
    GHM_VOXEL_LONG_OPTIONS,
    {"add", required_argument, NULL, OPT_ADD},
    {"subtract", required_argument, NULL, OPT_SUBTRACT},
    {"intersect", required_argument, NULL, OPT_INTERSECT},
    {NULL, 0, NULL, 0}};

static const char *const op_names[] = {"add", "subtract", "intersect"};

/* Step 0 is BASE (an add to the empty set), then the edits in the order given. */
typedef struct EditStep {
    GhmVoxelEditOp op;
    const char *path;
    GhmPointCloud *pc;
    GhmVoxelEditStep done;
} EditStep;

typedef struct EditArgs {
    GhmCommonOptions common;
    GhmVoxelOptions vox;
    GhmVoxelCliChoices out;
    EditStep *steps;
    int nsteps;
    const char *base;
} EditArgs;

static void print_help(void)
{
    fputs("Usage: geohash-match voxel edit [OPTIONS] BASE [--add X] [--subtract Y] "
          "[--intersect Z] ...\n"
          "\n"
          "Builds a solid voxel set from the closed point cloud BASE (its surface voxels and\n"
          "the voxels inside it), then edits it with each further cloud in the order given, on\n"
          "one grid that holds every cloud (PLY ascii or binary, XYZ text, one of them may be\n"
          "- for standard input; normals are estimated where a file has none). Inside and\n"
          "outside come from the voxel mode's labels (seeds from the cloud's normals next to\n"
          "its surface, then a flood fill), so a cloud must be a closed surface at the grid's\n"
          "resolution.\n"
          "  --add X             X's voxels and the voxels inside X join the set (a union)\n"
          "  --subtract Y        the set's voxels inside Y leave it; its voxels on Y's surface\n"
          "                      stay, as the cut that closes the hole (a difference)\n"
          "  --intersect Z       only the set's voxels inside Z or on its surface stay\n"
          "Each may be given many times; they run left to right.\n"
          "\n"
          "Options:\n" GHM_VOXEL_GRID_HELP
          "  -o, --output F.ply  the set, one vertex per voxel: float x y z (centre), uint count\n"
          "                      (points in it), float nx ny nz (mean normal), uchar label\n"
          "                      (0 surface, 1 interior, 2 cut), uchar red green blue\n"
          "  --ascii             write the PLY as ascii\n"
          "  --preview F.png     orthographic view of the set (surface grey, interior blue, cut\n"
          "                      green)\n" GHM_VOXEL_PREVIEW_AXIS_HELP GHM_VOXEL_LABEL_HELP
          "  --json              one JSON object: the grid, each step's counts and times, the set\n"
          "  --backend auto|cpu|cuda\n"
          "                      where the set (a dynamic hash table, GhmDynmap) and the\n"
          "                      labelling live; both backends give the same set\n"
          "  --quiet, --seed, --threads, --verbose, --help as everywhere\n"
          "\n"
          "Examples:\n"
          "  geohash-match voxel edit data/pointclouds/kitten.ply --subtract "
          "data/pointclouds/bunny.ply -o bitten.ply\n"
          "  geohash-match voxel edit --grid 96 --json A.ply --add B.ply --intersect C.ply "
          "--preview set.png\n"
          "\n"
          "A cloud that encloses nothing at the grid (a plane, an open patch, normals that\n"
          "point nowhere) is an error: try a coarser --grid, or give the file its normals.\n"
          "So are normals that point inward or either way (they would cut and fill the wrong\n"
          "voxels): flip or orient them, or use --normals estimate. So is a cloud too sparse\n"
          "for the grid, whose inside and outside do not settle (the fill leaks through the\n"
          "gaps between its voxels): use a coarser --grid.\n"
          "Exit status: 0 success, 2 error (one line on stderr names the file and the problem;\n"
          "no output file is written then).\n",
          stdout);
}

static void add_step(EditArgs *a, GhmVoxelEditOp op, const char *path)
{
    a->steps[a->nsteps++] = (EditStep){.op = op, .path = path};
}

/* 1 when neither -o nor --preview names one of the clouds (ghm_cli_output_not_input) and at
 * most one cloud is standard input, else -1 after its error line. */
static int outputs_not_inputs(const EditArgs *a)
{
    int from_stdin = 0;
    for (int i = 0; i < a->nsteps; i++) {
        const char *in = a->steps[i].path;
        from_stdin += strcmp(in, "-") == 0;
        if (ghm_cli_output_not_input("-o", a->out.output, in) < 0 ||
            ghm_cli_output_not_input("--preview", a->out.preview, in) < 0)
            return -1;
    }
    if (from_stdin > 1) {
        ghm_cli_error("voxel edit", "only one cloud can be read from standard input (-)");
        return -1;
    }
    return 1;
}

static int parse_args(int argc, char **argv, EditArgs *a)
{
    int id;
    optind = 1;
    a->nsteps = 1; /* step 0 is BASE, filled in below */
    while ((id = getopt_long(argc, argv, "o:", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&a->common, id, optarg);
        if (used == 0)
            used = ghm_voxel_cli_option(&a->vox, &a->out, id, optarg);
        if (used < 0)
            return -1;
        if (used)
            continue;
        if (id < OPT_ADD || id > OPT_INTERSECT) {
            ghm_cli_usage_hint("voxel edit");
            return -1;
        }
        add_step(a, (GhmVoxelEditOp)(id - OPT_ADD), optarg);
    }
    if (a->common.help) {
        print_help();
        return 0;
    }
    if (a->common.version) {
        ghm_cli_print_version(stdout);
        return 0;
    }
    if (argc - optind != 1) {
        ghm_cli_error("voxel edit", argc - optind < 1
                                        ? "missing point cloud: give BASE"
                                        : "give one BASE; the clouds that edit it follow "
                                          "--add, --subtract or --intersect");
        ghm_cli_usage_hint("voxel edit");
        return -1;
    }
    a->steps[0] = (EditStep){.op = GHM_VOXEL_EDIT_ADD, .path = argv[optind]};
    return outputs_not_inputs(a);
}

/* --- running ------------------------------------------------------------------------------ */

static int load_clouds(EditArgs *a)
{
    for (int i = 0; i < a->nsteps; i++) {
        EditStep *s = &a->steps[i];
        if (ghm_voxel_cli_load(s->path, &a->out, &s->pc) < 0)
            return -1;
        if (i > 0)
            ghm_voxel_cli_warn_units(a->steps[0].path, a->steps[0].pc, s->path, s->pc);
    }
    return 0;
}

static int edit_create(const EditArgs *a, const GhmVoxelGrid *grid, GhmContext **ctx,
                       GhmVoxelEdit **e)
{
    if (ghm_cli_context(&a->common, ctx) < 0)
        return -1;
    int ret = ghm_voxel_edit_create(*ctx, grid, &a->vox, e);
    if (ret < 0)
        ghm_cli_error("voxel edit", "%s", ghm_strerror(ret));
    return ret < 0 ? -1 : 0;
}

static int run_steps(EditArgs *a, GhmVoxelEdit *e)
{
    char why[512];
    for (int i = 0; i < a->nsteps; i++) {
        EditStep *s = &a->steps[i];
        if (ghm_voxel_edit_apply(e, s->op, s->pc, &s->done, why, sizeof why) < 0) {
            ghm_cli_error(s->path, "%s", why);
            return -1;
        }
        if (a->common.verbose)
            fprintf(stderr, "%s: step %d (%s): %.1f ms classify, %.1f ms edit\n", GHM_PROGRAM, i,
                    i ? op_names[s->op] : "base", s->done.classify_ms, s->done.edit_ms);
    }
    return 0;
}

static int write_outputs(const EditArgs *a, const GhmVoxelResult *r)
{
    char why[512];
    if (a->out.output &&
        ghm_voxel_edit_save_ply(r, a->out.output, a->out.ascii, why, sizeof why) < 0) {
        ghm_cli_error(a->out.output, "%s", why);
        return -1;
    }
    return ghm_voxel_cli_write_preview(r, &a->out);
}

/* --- printing ----------------------------------------------------------------------------- */

static json_t *step_json(const EditStep *s, int i)
{
    const GhmVoxelEditStep *d = &s->done;
    json_t *o = json_object(), *tm = json_object();
    json_object_set_new(o, "op", json_string(i ? op_names[s->op] : "base"));
    json_object_set_new(o, "file", ghm_json_string_lossy(s->path));
    const struct {
        const char *name;
        size_t value;
    } counts[] = {{"points", d->points},   {"cloud_voxels", d->cloud_voxels},
                  {"probed", d->probed},   {"inside", d->inside},
                  {"unknown", d->unknown}, {"added", d->added},
                  {"erased", d->erased},   {"relabelled", d->relabelled},
                  {"voxels", d->voxels},   {"conflicts", d->conflicts}};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        json_object_set_new(o, counts[k].name, json_integer((json_int_t)counts[k].value));
    json_object_set_new(o, "radius", json_integer(d->radius));
    json_object_set_new(tm, "classify", json_real(d->classify_ms));
    json_object_set_new(tm, "probe", json_real(d->probe_ms));
    json_object_set_new(tm, "voxelize", json_real(d->labels.voxelize_ms));
    json_object_set_new(tm, "lookup", json_real(d->labels.lookup_ms));
    json_object_set_new(tm, "seeds", json_real(d->labels.classify_ms));
    json_object_set_new(tm, "fill", json_real(d->labels.fill_ms));
    json_object_set_new(tm, "edit", json_real(d->edit_ms));
    json_object_set_new(tm, "step", json_real(d->total_ms));
    json_object_set_new(tm, "upload", json_real(d->upload_ms));
    json_object_set_new(o, "timings_ms", tm);
    return o;
}

static void print_json(const EditArgs *a, const GhmVoxelResult *r, const char *backend,
                       double read_ms)
{
    const GhmVoxelGrid *gr = &r->grid;
    const GhmVoxelSide *s = &r->side[0];
    json_t *o = json_object(), *g = json_object(), *steps = json_array(), *set = json_object();
    json_object_set_new(g, "origin",
                        json_pack("[fff]", gr->origin[0], gr->origin[1], gr->origin[2]));
    json_object_set_new(g, "voxel_size", json_real(gr->voxel_size));
    json_object_set_new(g, "dims", json_pack("[iii]", gr->dims[0], gr->dims[1], gr->dims[2]));
    json_object_set_new(o, "grid", g);
    json_object_set_new(o, "backend", json_string(backend));
    for (int i = 0; i < a->nsteps; i++)
        json_array_append_new(steps, step_json(&a->steps[i], i));
    json_object_set_new(o, "steps", steps);
    json_object_set_new(set, "voxels", json_integer((json_int_t)s->voxels));
    json_object_set_new(set, "surface", json_integer((json_int_t)s->label_count[0]));
    json_object_set_new(set, "interior", json_integer((json_int_t)s->label_count[1]));
    json_object_set_new(set, "cut", json_integer((json_int_t)s->label_count[2]));
    json_object_set_new(set, "points", json_integer((json_int_t)s->points));
    json_object_set_new(o, "set", set);
    json_object_set_new(o, "read_ms", json_real(read_ms));
    ghm_json_print(stdout, o);
    json_decref(o);
}

static void print_text(const EditArgs *a, const GhmVoxelResult *r)
{
    const GhmVoxelGrid *g = &r->grid;
    const GhmVoxelSide *s = &r->side[0];
    printf("grid %d x %d x %d voxels of %g at (%g, %g, %g)\n", g->dims[0], g->dims[1], g->dims[2],
           g->voxel_size, g->origin[0], g->origin[1], g->origin[2]);
    for (int i = 0; i < a->nsteps; i++) {
        const GhmVoxelEditStep *d = &a->steps[i].done;
        printf("%-9s %s: %zu points in %zu voxels, %zu voxels inside (%zu unknown); +%zu -%zu, "
               "%zu relabelled: %zu voxels (%.1f ms)\n",
               i ? op_names[a->steps[i].op] : "base", a->steps[i].path, d->points,
               d->cloud_voxels, d->inside, d->unknown, d->added, d->erased, d->relabelled,
               d->voxels, d->total_ms);
    }
    printf("set: %zu voxels: %zu surface, %zu interior, %zu cut\n", s->voxels, s->label_count[0],
           s->label_count[1], s->label_count[2]);
}

/* --- the command -------------------------------------------------------------------------- */

static int run(EditArgs *a, double read_ms)
{
    const GhmPointCloud **all = malloc((size_t)a->nsteps * sizeof *all);
    if (!all) {
        ghm_cli_error("voxel edit", "out of memory");
        return GHM_EXIT_ERROR;
    }
    for (int i = 0; i < a->nsteps; i++)
        all[i] = a->steps[i].pc;
    char why[512];
    GhmVoxelGrid grid;
    int ret = ghm_voxel_grid_fit_clouds(all, a->nsteps, &a->vox, &grid, why, sizeof why);
    free(all);
    if (ghm_voxel_cli_grid_error(&a->vox, ret, why) < 0)
        return GHM_EXIT_ERROR;
    GhmContext *ctx = NULL;
    GhmVoxelEdit *e = NULL;
    GhmVoxelResult *r = NULL;
    int status = GHM_EXIT_ERROR;
    if (edit_create(a, &grid, &ctx, &e) == 0 && run_steps(a, e) == 0) {
        if ((ret = ghm_voxel_edit_result(e, &r)) < 0)
            ghm_cli_error("voxel edit", "%s", ghm_strerror(ret));
        else if (write_outputs(a, r) == 0)
            status = GHM_EXIT_FOUND;
    }
    if (status == GHM_EXIT_FOUND && !a->common.quiet && a->common.json)
        print_json(a, r, ghm_context_backend_name(ctx), read_ms);
    else if (status == GHM_EXIT_FOUND && !a->common.quiet)
        print_text(a, r);
    ghm_voxel_result_free(&r);
    ghm_voxel_edit_free(&e);
    ghm_context_free(&ctx);
    return status;
}

int ghm_cmd_voxel_edit(int argc, char **argv)
{
    EditArgs a = {.common = ghm_cli_common_defaults(), .vox = ghm_voxel_defaults(),
                  .out = {.axis = 2}};
    a.steps = calloc((size_t)argc + 1, sizeof *a.steps); /* more than the options can name */
    if (!a.steps) {
        ghm_cli_error("voxel edit", "out of memory");
        return GHM_EXIT_ERROR;
    }
    int status = GHM_EXIT_ERROR, go = parse_args(argc, argv, &a);
    if (go == 0)
        status = GHM_EXIT_FOUND;
    if (go > 0) {
        ghm_voxel_cli_pick_auto_backend(&a.common, &a.vox, 1);
        ghm_cli_prestart(a.common.backend); /* overlaps reading the clouds */
    }
    double t0 = ghm_now();
    if (go > 0 && load_clouds(&a) == 0)
        status = run(&a, 1e3 * (ghm_now() - t0));
    for (int i = 0; i < a.nsteps; i++)
        ghm_pointcloud_free(&a.steps[i].pc);
    free(a.steps);
    return status;
}
