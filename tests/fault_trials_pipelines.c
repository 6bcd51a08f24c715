/*
 * fault_trials_pipelines.c - the pipelines' trials of fault_trials.h: a reference build, an
 * image query, a voxel step and a voxel edit. As in fault_trials.c, each owns its state, made by
 * setup and freed by teardown.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fault_trials.h"
#include "ghm_image.h"
#include "ghm_match.h"
#include "ghm_pointcloud.h"
#include "ghm_voxel.h"
#include "ghm_voxel_edit.h"
#include "test_support.h"

/* --- matching: a reference build, and a query against a built reference (box.png, a small
 * one) ---------------------------------------------------------------------------------- */

static GhmImage *img;

typedef struct MatchState {
    GhmMatcher *m;
    GhmMatchResult res;
} MatchState;

static void *ref_setup(void)
{
    if (!img)
        img = ghm_test_load_image("images/box.png");
    MatchState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    return s;
}

static int ref_run(void *p)
{
    MatchState *s = p;
    GhmMatchParams params = ghm_match_defaults();
    return ghm_matcher_create(fault_ctx, img, &params, &s->m);
}

static void ref_check(void *p, int ret)
{
    MatchState *s = p;
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_ptr_null(s->m);
        ck_assert_int_eq(ref_run(s), GHM_OK);
    }
    ck_assert_int_eq(ghm_matcher_match(s->m, img, &s->res), GHM_OK);
    ck_assert(s->res.found);
}

/* A fresh matcher per trial: a matcher keeps scratch between queries, which a leak count would
 * take for a leak. */
static void *query_setup(void)
{
    MatchState *s = ref_setup();
    ck_assert_int_eq(ref_run(s), GHM_OK);
    return s;
}

static int query_run(void *p)
{
    MatchState *s = p;
    return ghm_matcher_match(s->m, img, &s->res);
}

static void query_check(void *p, int ret)
{
    MatchState *s = p;
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_int_eq(query_run(s), GHM_OK); /* the matcher still works */
    }
    ck_assert(s->res.found);
    ck_assert_double_lt(fabs(s->res.scale - 1.0), 0.01);
}

static void match_teardown(void *p)
{
    MatchState *s = p;
    ghm_matcher_free(&s->m);
    free(s);
}

/* --- a voxel step: two spheres, 32^3, the device path ------------------------------------- */

static GhmPointCloud *sphere(size_t n, double r, double cx)
{
    GhmPointCloud *pc = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(n, 1, 0, &pc), GHM_OK);
    const double golden = M_PI * (3.0 - sqrt(5.0));
    for (size_t i = 0; i < n; i++) {
        double z = 1.0 - 2.0 * (i + 0.5) / n, rad = sqrt(1.0 - z * z), phi = golden * i;
        double u[3] = {rad * cos(phi), rad * sin(phi), z};
        for (int k = 0; k < 3; k++) {
            pc->xyz[3 * i + k] = (float)((k == 0 ? cx : 0.0) + r * u[k]);
            pc->normals[3 * i + k] = (float)u[k];
        }
    }
    return pc;
}

typedef struct VoxelState {
    GhmPointCloud *a, *b;
    GhmVoxelGrid grid;
    GhmVoxelOptions opt;
    GhmVoxelResult *r;
} VoxelState;

static size_t voxel_expected[2][4]; /* label counts of the warm-up run (all zero until then) */

static void *voxel_setup(void)
{
    VoxelState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    s->a = sphere(3000, 1.0, 0.0);
    s->b = sphere(1500, 0.6, 0.9);
    s->opt = ghm_voxel_defaults();
    s->opt.grid = 32;
    char why[256];
    ck_assert_int_eq(ghm_voxel_grid_fit(s->a, s->b, NULL, 0, &s->opt, &s->grid, why, sizeof why),
                     GHM_OK);
    return s;
}

static int voxel_run(void *p)
{
    VoxelState *s = p;
    return ghm_voxel_intersect(fault_ctx, s->a, s->b, NULL, &s->grid, &s->opt, &s->r);
}

static void voxel_check(void *p, int ret)
{
    VoxelState *s = p;
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_ptr_null(s->r);
        ck_assert_int_eq(voxel_run(s), GHM_OK);
    }
    ck_assert_uint_gt(s->r->side[0].voxels, 0);
    ck_assert_uint_gt(s->r->side[0].label_count[1], 0); /* some of A lies inside B */
    int first = voxel_expected[0][1] == 0; /* the warm-up run */
    for (int c = 0; c < 2; c++)
        for (int l = 0; l < 4; l++) {
            if (first)
                voxel_expected[c][l] = s->r->side[c].label_count[l];
            ck_assert_uint_eq(s->r->side[c].label_count[l], voxel_expected[c][l]);
        }
}

static void voxel_teardown(void *p)
{
    VoxelState *s = p;
    ghm_voxel_result_free(&s->r);
    ghm_pointcloud_free(&s->a);
    ghm_pointcloud_free(&s->b);
    free(s);
}

/* --- a voxel edit: the two spheres at 32^3, added, subtracted, added, intersected --------- */

static size_t edit_expected[5]; /* the warm-up run's set: size, then its label counts */

typedef struct EditState {
    VoxelState v;  /* the clouds and the grid */
    size_t got[5]; /* as edit_expected */
} EditState;

static void *edit_setup(void)
{
    EditState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    VoxelState *v = voxel_setup();
    s->v = *v;
    free(v);
    return s;
}

/* Every op, so that each kind of list (inside erases and adds, intersect's erases; on a device
 * made there) meets a fault; a fresh edit each run, so a partly edited set is not carried on. */
static int edit_run(void *p)
{
    EditState *s = p;
    const GhmVoxelEditOp op[4] = {GHM_VOXEL_EDIT_ADD, GHM_VOXEL_EDIT_SUBTRACT,
                                  GHM_VOXEL_EDIT_ADD, GHM_VOXEL_EDIT_INTERSECT};
    const GhmPointCloud *pc[4] = {s->v.a, s->v.b, s->v.b, s->v.a};
    GhmVoxelEdit *e = NULL;
    GhmVoxelResult *r = NULL;
    int ret = ghm_voxel_edit_create(fault_ctx, &s->v.grid, &s->v.opt, &e);
    for (int i = 0; i < 4 && ret == GHM_OK; i++)
        ret = ghm_voxel_edit_apply(e, op[i], pc[i], NULL, NULL, 0);
    if (ret == GHM_OK)
        ret = ghm_voxel_edit_result(e, &r);
    if (ret == GHM_OK) {
        s->got[0] = r->side[0].voxels;
        for (int l = 0; l < 4; l++)
            s->got[1 + l] = r->side[0].label_count[l];
    }
    ghm_voxel_result_free(&r);
    ghm_voxel_edit_free(&e);
    return ret;
}

static void edit_check(void *p, int ret)
{
    EditState *s = p;
    if (ret != GHM_OK) {
        ck_assert_int_eq(ret, fault_error);
        ck_assert_int_eq(edit_run(s), GHM_OK);
    }
    ck_assert_uint_gt(s->got[0], 0);
    int first = edit_expected[0] == 0; /* the warm-up run */
    for (int i = 0; i < 5; i++) {
        if (first)
            edit_expected[i] = s->got[i];
        ck_assert_uint_eq(s->got[i], edit_expected[i]);
    }
}

static void edit_teardown(void *p)
{
    EditState *s = p;
    ghm_pointcloud_free(&s->v.a);
    ghm_pointcloud_free(&s->v.b);
    free(s);
}

/* --- the trials ---------------------------------------------------------------------------- */

const FaultTrial fault_ref_trial = {ref_setup, ref_run, ref_check, match_teardown};
const FaultTrial fault_query_trial = {query_setup, query_run, query_check, match_teardown};
const FaultTrial fault_voxel_trial = {voxel_setup, voxel_run, voxel_check, voxel_teardown};
const FaultTrial fault_edit_trial = {edit_setup, edit_run, edit_check, edit_teardown};

void fault_trials_release(void)
{
    ghm_image_free(&img);
    memset(voxel_expected, 0, sizeof voxel_expected);
    memset(edit_expected, 0, sizeof edit_expected);
}
