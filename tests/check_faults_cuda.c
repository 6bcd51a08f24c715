/*
 * check_faults_cuda.c - the GPU half of check_faults.c: on the CUDA backend, every device
 * allocation of an operation fails in turn, then every kernel launch
 * (kernels/hashing/device_memory.h's test hooks), over the trials of fault_trials.h: a map
 * build and find per scheme, a multimap build and retrieve, an index build, a set and a sorted
 * build, a dynamic table's insert, erase and collection, a reference build, an image query,
 * a voxel step and a voxel edit. Trial k fails the operation's
 * k-th event; the operation must return the fault's error (GHM_ERR_NOMEM for an allocation,
 * GHM_ERR_CUDA for a launch) or succeed with the right answer, leak nothing (the allocator
 * holds as many allocations as before the trial) and leave its objects valid: the structure
 * answers as before the call or as empty, and the same call without a fault then gives the
 * right answer. A walk ends at the first k the operation does not reach. Skipped without a
 * device. GHM_FAULT_TRACE=1 prints every trial's k, status and hit on stderr (which k broke).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault_trials.h"
#include "kernels/hashing/device_memory.h"
#include "kernels/hashing/map_group.h"
#include "test_support.h"

enum { MAX_TRIALS = 5000 };

/* Fails event 1, 2, ... of `kind` in t's operation until one k is not reached; returns how many
 * the operation has (the last k reached), also printed under name. */
static long walk(const char *name, GhmiFaultKind kind, const FaultTrial *t)
{
    fault_error = kind == GHMI_FAULT_ALLOC ? GHM_ERR_NOMEM : GHM_ERR_CUDA;
    void *st = t->setup(); /* a warm-up run: whatever a context keeps exists before the count */
    t->check(st, t->run(st));
    t->teardown(st);
    long k = 1;
    for (; k <= MAX_TRIALS; k++) {
        long before = ghmi_device_live();
        st = t->setup();
        ghmi_device_fault_arm(kind, k);
        int ret = t->run(st);
        int hit = ghmi_device_fault_hit();
        ghmi_device_fault_disarm();
        if (getenv("GHM_FAULT_TRACE"))
            fprintf(stderr, "%s: %s %ld: returned %d, hit %d\n", name,
                    kind == GHMI_FAULT_ALLOC ? "allocation" : "launch", k, ret, hit);
        t->check(st, ret);
        t->teardown(st);
        ck_assert_msg(ghmi_device_live() == before, "%s %ld failed: %ld device allocations leaked",
                      kind == GHMI_FAULT_ALLOC ? "allocation" : "launch", k,
                      ghmi_device_live() - before);
        if (!hit)
            break;
    }
    ck_assert_int_le(k, MAX_TRIALS);
    printf("faults_cuda: %s: each of its %ld %s failed in turn\n", name, k - 1,
           kind == GHMI_FAULT_ALLOC ? "device allocations" : "kernel launches");
    return k - 1;
}

/* Both kinds of fault over one trial, in a context of its own (made here, in the forked test:
 * the Check parent never touches CUDA). */
static void walk_both(const char *name, const FaultTrial *t)
{
    fault_ctx = ghm_test_context(GHM_BACKEND_CUDA);
    ck_assert_int_gt(walk(name, GHMI_FAULT_ALLOC, t), 0);
    ck_assert_int_gt(walk(name, GHMI_FAULT_LAUNCH, t), 0);
    fault_trials_release();
    ghm_context_free(&fault_ctx);
}

START_TEST(test_map_build_and_find)
{
    GHM_REQUIRE_CUDA();
    for (int s = 0; s < GHM_MAP_SCHEMES; s++) {
        char name[64];
        fault_map_scheme = (GhmMapScheme)s;
        snprintf(name, sizeof name, "map build and find (%s)", ghm_map_scheme_name(s));
        walk_both(name, &fault_map_trial);
    }
    /* The default scheme again with its pairs grouped by table region first (map_group.cu), as
     * a table larger than L2 is: its scratch allocation and three launches fail in turn too. */
    fault_map_scheme = GHM_MAP_CUCKOO;
    ghmi_map_group_tune(1, 4096);
    walk_both("map build and find (cuckoo, pairs grouped)", &fault_map_trial);
    ghmi_map_group_tune(0, 0);
}
END_TEST

START_TEST(test_multimap_build_and_retrieve)
{
    GHM_REQUIRE_CUDA();
    walk_both("multimap build and retrieve", &fault_multi_trial);
}
END_TEST

/* The split map's parts on one device (two contexts) and one rank of a ranked map (its data
 * through host memory: NCCL takes no single rank). */
START_TEST(test_dist_map_build_and_find)
{
    GHM_REQUIRE_CUDA();
    walk_both("split map build and find", &fault_dist_trial);
    walk_both("ranked split map build and find", &fault_ranked_trial);
}
END_TEST

START_TEST(test_index_build)
{
    GHM_REQUIRE_CUDA();
    walk_both("index build", &fault_index_trial);
}
END_TEST

START_TEST(test_set_and_sorted_build)
{
    GHM_REQUIRE_CUDA();
    walk_both("set and sorted build", &fault_set_trial);
}
END_TEST

START_TEST(test_dynmap_edit)
{
    GHM_REQUIRE_CUDA();
    walk_both("dynmap insert, erase and gc", &fault_dynmap_trial);
}
END_TEST

START_TEST(test_reference_build)
{
    GHM_REQUIRE_CUDA();
    walk_both("reference build", &fault_ref_trial);
}
END_TEST

START_TEST(test_image_query)
{
    GHM_REQUIRE_CUDA();
    walk_both("image query", &fault_query_trial);
}
END_TEST

START_TEST(test_voxel_step)
{
    GHM_REQUIRE_CUDA();
    walk_both("voxel step", &fault_voxel_trial);
}
END_TEST

START_TEST(test_voxel_edit)
{
    GHM_REQUIRE_CUDA();
    walk_both("voxel edit", &fault_edit_trial);
}
END_TEST

/* The carve of device_memory.h, without a device: phase 1 adds up aligned parts, phase 2 hands
 * out the same offsets; an overflowing total saturates. */
START_TEST(test_carve)
{
    GhmiCarve c = ghmi_carve_start(NULL);
    ck_assert_ptr_null(ghmi_carve(&c, 10));
    ck_assert_ptr_null(ghmi_carve(&c, 0));
    ck_assert_ptr_null(ghmi_carve(&c, GHMI_DEVICE_ALIGN + 1));
    ck_assert_uint_eq(c.used, 3 * GHMI_DEVICE_ALIGN);
    static char block[3 * GHMI_DEVICE_ALIGN];
    c = ghmi_carve_start(block);
    ck_assert_ptr_eq(ghmi_carve(&c, 10), block);
    ck_assert_ptr_null(ghmi_carve(&c, 0));
    ck_assert_ptr_eq(ghmi_carve(&c, GHMI_DEVICE_ALIGN + 1), block + GHMI_DEVICE_ALIGN);
    c = ghmi_carve_start(NULL);
    ghmi_carve(&c, SIZE_MAX / 2);
    ghmi_carve(&c, SIZE_MAX / 2 + 2);
    ck_assert_uint_eq(c.used, SIZE_MAX);
    ghmi_carve(&c, 1);
    ck_assert_uint_eq(c.used, SIZE_MAX);
}
END_TEST

/* The fault counter without a device: the armed event fails once, events of the other kind and
 * empty allocations (which take nothing) are not counted, and disarming stops the failures. */
START_TEST(test_fault_counter)
{
    void *p = &p;
    ghmi_device_fault_arm(GHMI_FAULT_LAUNCH, 2);
    ck_assert_int_eq(ghmi_device_fault_launch(), 0);
    ck_assert_int_eq(ghmi_device_alloc(NULL, 0, &p), GHM_OK); /* neither kind: not counted */
    ck_assert_ptr_null(p);
    ck_assert_int_eq(ghmi_device_fault_hit(), 0);
    ck_assert_int_eq(ghmi_device_fault_launch(), 1);
    ck_assert_int_eq(ghmi_device_fault_hit(), 1);
    ck_assert_int_eq(ghmi_device_fault_launch(), 0);
    ck_assert_int_eq(ghmi_device_fault_disarm(), 3);
    ck_assert_int_eq(ghmi_device_fault_launch(), 0);
    ghmi_device_fault_arm(GHMI_FAULT_ALLOC, 1); /* fails before it would touch the context */
    p = &p;
    ck_assert_int_eq(ghmi_device_alloc(NULL, 16, &p), GHM_ERR_NOMEM);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(ghmi_device_fault_hit(), 1);
    ck_assert_int_eq(ghmi_device_fault_disarm(), 1);
    ck_assert_int_eq(ghmi_device_live(), 0);
}
END_TEST

static Suite *faults_cuda_suite(void)
{
    Suite *s = suite_create("faults_cuda");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_carve);
    tcase_add_test(core, test_fault_counter);
    suite_add_tcase(s, core);
    TCase *cuda = tcase_create("cuda");
    tcase_set_timeout(cuda, 600);
    tcase_add_test(cuda, test_map_build_and_find);
    tcase_add_test(cuda, test_multimap_build_and_retrieve);
    tcase_add_test(cuda, test_dist_map_build_and_find);
    tcase_add_test(cuda, test_index_build);
    tcase_add_test(cuda, test_set_and_sorted_build);
    tcase_add_test(cuda, test_dynmap_edit);
    tcase_add_test(cuda, test_reference_build);
    tcase_add_test(cuda, test_image_query);
    tcase_add_test(cuda, test_voxel_step);
    tcase_add_test(cuda, test_voxel_edit);
    suite_add_tcase(s, cuda);
    return s;
}

int main(void) { return ghm_test_main(faults_cuda_suite()); }
