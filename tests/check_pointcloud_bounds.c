/* check_pointcloud_bounds.c - a cloud's own computations, apart from its readers
 * (check_pointcloud.c): the bounding box, on one thread and on the OpenMP threads. */
#include <math.h>

#include "ghm_pointcloud.h"
#include "test_support.h"

/* The bounds of a cloud large enough for the threads: each axis's extremes planted at points far
 * apart (first, last, the middle of a thread's share), against a plain loop; no points gives
 * +inf / -inf. */
START_TEST(test_bounds)
{
    enum { N = 300001 };
    GhmPointCloud *pc = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(N, 0, 0, &pc), GHM_OK);
    for (size_t i = 0; i < 3 * (size_t)N; i++)
        pc->xyz[i] = (float)((i * 2654435761u) % 1000u) * 0.001f - 0.5f;
    pc->xyz[0] = -7.0f;                 /* x of the first point */
    pc->xyz[3 * (N - 1) + 1] = 9.0f;    /* y of the last */
    pc->xyz[3 * (N / 3) + 2] = -3.5f;   /* z of one in the middle */
    pc->xyz[3 * (N / 2) + 2] = 4.25f;
    double lo[3], hi[3];
    ghm_pointcloud_bounds(pc, lo, hi);
    for (int k = 0; k < 3; k++) {
        float l = pc->xyz[k], h = pc->xyz[k];
        for (size_t i = 1; i < N; i++) {
            float c = pc->xyz[3 * i + (size_t)k];
            l = c < l ? c : l;
            h = c > h ? c : h;
        }
        ck_assert(lo[k] == l && hi[k] == h);
    }
    ck_assert(lo[0] == -7.0 && hi[1] == 9.0 && lo[2] == -3.5 && hi[2] == 4.25);
    pc->n = 0;
    ghm_pointcloud_bounds(pc, lo, hi);
    ck_assert(isinf(lo[0]) && lo[0] > 0 && isinf(hi[2]) && hi[2] < 0);
    ghm_pointcloud_free(&pc);
}
END_TEST

/* A few points (one thread): the box of three, and of one point. */
START_TEST(test_bounds_small)
{
    GhmPointCloud *pc = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(3, 0, 0, &pc), GHM_OK);
    const float xyz[9] = {1, -2, 3, -4, 5, 0.5f, 0, 0, -6};
    for (int i = 0; i < 9; i++)
        pc->xyz[i] = xyz[i];
    double lo[3], hi[3];
    ghm_pointcloud_bounds(pc, lo, hi);
    ck_assert(lo[0] == -4 && lo[1] == -2 && lo[2] == -6 && hi[0] == 1 && hi[1] == 5 &&
              hi[2] == 3);
    pc->n = 1;
    ghm_pointcloud_bounds(pc, lo, hi);
    for (int k = 0; k < 3; k++)
        ck_assert(lo[k] == xyz[k] && hi[k] == xyz[k]);
    ghm_pointcloud_free(&pc);
}
END_TEST

static Suite *bounds_suite(void)
{
    Suite *s = suite_create("pointcloud_bounds");
    TCase *bounds = tcase_create("bounds");
    tcase_add_test(bounds, test_bounds);
    tcase_add_test(bounds, test_bounds_small);
    suite_add_tcase(s, bounds);
    return s;
}

int main(void) { return ghm_test_main(bounds_suite()); }
