/*
 * check_faults.c - every allocation of an operation fails in turn (fault_inject.h), CPU backend:
 * the trials of fault_trials.h (the build and find of each hashing structure, a dynamic table's
 * insert and erase, a reference build, an image query, a voxel step, a voxel edit) and a video
 * frame. Each trial k fails the operation's k-th allocation; the operation must
 * return an error (or succeed with the right answer where it can do without), leak nothing
 * (the heap holds what it held before the trial), and leave its objects valid: the structure
 * answers as before the call or as empty, and the same call without a fault then works.
 * A walk ends at the first k the operation does not reach.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_inject.h"
#include "fault_trials.h"
#include "ghm_image.h"
#include "ghm_video.h"
#include "test_support.h"

/* Fails allocation 1, 2, ... of t's operation until one k is not reached; returns how many
 * allocations the operation makes (the last k reached), also printed under name. The heap
 * comparison needs glibc's per-thread cache off (CMake sets GLIBC_TUNABLES for this test):
 * chunks it keeps count as in use. */
static long walk(const char *name, const FaultTrial *t)
{
    const char *tun = getenv("GLIBC_TUNABLES");
    ck_assert_msg(tun && strstr(tun, "glibc.malloc.tcache_count=0"),
                  "run with GLIBC_TUNABLES=glibc.malloc.tcache_count=0 (ctest sets it)");
    void *st = t->setup(); /* a warm-up run: caches and thread pools exist before the baseline */
    t->check(st, t->run(st));
    t->teardown(st);
    long k = 1;
    for (;; k++) {
        size_t before = fault_heap_in_use();
        st = t->setup();
        fault_arm(k);
        int ret = t->run(st);
        int hit = fault_hit();
        fault_disarm();
        t->check(st, ret);
        t->teardown(st);
        ck_assert_msg(fault_heap_in_use() == before, "allocation %ld failed: %zu bytes leaked", k,
                      fault_heap_in_use() - before);
        if (!hit)
            break;
    }
    printf("faults: %s: each of its %ld allocations failed in turn\n", name, k - 1);
    return k - 1;
}

START_TEST(test_map_build)
{
    /* Open addressing reuses its larger table for the smaller content B and allocates nothing
     * here, which is right; cuckoo, Robin Hood (its duplicate list) and chaining (its sort
     * scratch) always allocate. */
    for (int s = 0; s < GHM_MAP_SCHEMES; s++) {
        char name[64];
        fault_map_scheme = (GhmMapScheme)s;
        snprintf(name, sizeof name, "map build and find (%s)", ghm_map_scheme_name(s));
        long k = walk(name, &fault_map_trial);
        if (s == GHM_MAP_CUCKOO || s >= GHM_MAP_ROBIN_HOOD)
            ck_assert_int_gt(k, 0);
    }
}
END_TEST

/* One walk of a trial that must allocate at least once. */
#define WALK_TEST(test, name, trial)                                                             \
    START_TEST(test) { ck_assert_int_gt(walk(name, &trial), 0); }                                \
    END_TEST

WALK_TEST(test_multimap_build, "multimap build and retrieve", fault_multi_trial)
WALK_TEST(test_dist_map_build, "split map build and find", fault_dist_trial)
WALK_TEST(test_ranked_map_build, "ranked split map build and find", fault_ranked_trial)
WALK_TEST(test_set_and_sorted_build, "set and sorted build", fault_set_trial)
WALK_TEST(test_index_build, "index build", fault_index_trial)
WALK_TEST(test_dynmap_insert_erase, "dynmap insert, erase and gc", fault_dynmap_trial)
WALK_TEST(test_reference_build, "reference build", fault_ref_trial)
WALK_TEST(test_image_query, "image query", fault_query_trial)
WALK_TEST(test_voxel_step, "voxel step", fault_voxel_trial)
WALK_TEST(test_voxel_edit, "voxel edit", fault_edit_trial)

/* --- a video frame (YUV4MPEG2 from memory) ------------------------------------------------ */

typedef struct VideoState {
    char data[256];
    size_t size;
    FILE *f;
    GhmVideo *v;
    GhmVideoFrame frame;
} VideoState;

static void *video_setup(void)
{
    VideoState *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    const char head[] = "YUV4MPEG2 W8 H6 F25:1 C420jpeg\n";
    memcpy(s->data, head, sizeof head - 1);
    s->size = sizeof head - 1;
    for (int fr = 0; fr < 2; fr++) {
        memcpy(s->data + s->size, "FRAME\n", 6);
        s->size += 6;
        for (int i = 0; i < 8 * 6 + 2 * 4 * 3; i++)
            s->data[s->size++] = (char)(i * 5 + fr);
    }
    s->f = fmemopen(s->data, s->size, "rb");
    ck_assert_ptr_nonnull(s->f);
    return s;
}

static int video_run(void *p)
{
    VideoState *s = p; /* no check assertion here: Check allocates, and it is linked in */
    char why[256];
    int ret = ghm_video_open_y4m(s->f, &s->v, why, sizeof why);
    return ret < 0 ? ret : ghm_video_read(s->v, &s->frame, why, sizeof why);
}

static void video_check(void *p, int ret)
{
    VideoState *s = p;
    if (ret < 0) {
        ck_assert_int_eq(ret, GHM_ERR_NOMEM);
        ck_assert_ptr_null(s->frame.image);
        ghm_video_free(&s->v);
        rewind(s->f);
        ck_assert_int_eq(video_run(s), GHM_VIDEO_FRAME);
    }
    ck_assert_int_eq(ret < 0 ? GHM_VIDEO_FRAME : ret, GHM_VIDEO_FRAME);
    ck_assert_ptr_nonnull(s->frame.image);
    ck_assert_int_eq(s->frame.image->width, 8);
}

static void video_teardown(void *p)
{
    VideoState *s = p;
    ghm_image_free(&s->frame.image);
    ghm_video_free(&s->v);
    if (s->f)
        fclose(s->f);
    free(s);
}

START_TEST(test_video_frame)
{
    FaultTrial t = {video_setup, video_run, video_check, video_teardown};
    ck_assert_int_gt(walk("video frame", &t), 0);
}
END_TEST

static void make_context(void)
{
    GhmContextOptions o = ghm_context_defaults();
    o.backend = GHM_BACKEND_CPU;
    o.threads = 2;
    ck_assert_int_eq(ghm_context_create(&o, &fault_ctx), GHM_OK);
}

static void free_context(void)
{
    fault_trials_release();
    ghm_context_free(&fault_ctx);
}

static Suite *faults_suite(void)
{
    Suite *s = suite_create("faults");
    TCase *tables = tcase_create("tables");
    tcase_add_checked_fixture(tables, make_context, free_context);
    tcase_add_test(tables, test_map_build);
    tcase_add_test(tables, test_multimap_build);
    tcase_add_test(tables, test_dist_map_build);
    tcase_add_test(tables, test_ranked_map_build);
    tcase_add_test(tables, test_set_and_sorted_build);
    tcase_add_test(tables, test_index_build);
    tcase_add_test(tables, test_dynmap_insert_erase);
    suite_add_tcase(s, tables);
    TCase *pipelines = tcase_create("pipelines");
    tcase_add_checked_fixture(pipelines, make_context, free_context);
    tcase_set_timeout(pipelines, 600);
    tcase_add_test(pipelines, test_reference_build);
    tcase_add_test(pipelines, test_image_query);
    tcase_add_test(pipelines, test_voxel_step);
    tcase_add_test(pipelines, test_voxel_edit);
    tcase_add_test(pipelines, test_video_frame);
    suite_add_tcase(s, pipelines);
    return s;
}

int main(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return 77; /* the sanitizers replace the allocation functions themselves */
#else
    return ghm_test_main(faults_suite());
#endif
}
