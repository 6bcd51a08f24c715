/* test_support.c - see test_support.h. */
#include "test_support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *ghm_test_data(const char *relative)
{
    /* The environment may move the data (a build carried to another machine runs its tests
     * from a different checkout path). */
    static char path[4096];
    const char *root = getenv("GHM_TEST_DATA");
    snprintf(path, sizeof path, "%s/%s", root && *root ? root : GHM_TEST_DATA, relative);
    return path;
}

GhmImage *ghm_test_load_image(const char *relative)
{
    GhmImage *img = NULL;
    char why[256] = "";
    int ret = ghm_image_load(ghm_test_data(relative), &img, why, sizeof why);
    ck_assert_msg(ret == GHM_OK, "%s: %s", relative, why);
    return img;
}

double ghm_test_corner_error(const double a[2][3], const double b[2][3], int w, int h)
{
    double c[4][2] = {{0, 0}, {w - 1, 0}, {w - 1, h - 1}, {0, h - 1}}, worst = 0.0;
    for (int i = 0; i < 4; i++) {
        double dx = (a[0][0] - b[0][0]) * c[i][0] + (a[0][1] - b[0][1]) * c[i][1] + a[0][2] -
                    b[0][2];
        double dy = (a[1][0] - b[1][0]) * c[i][0] + (a[1][1] - b[1][1]) * c[i][1] + a[1][2] -
                    b[1][2];
        worst = fmax(worst, hypot(dx, dy));
    }
    return worst;
}

int ghm_test_have_cuda(void)
{
    static int cached = -1;
    if (cached >= 0)
        return cached;
    pid_t pid = fork();
    if (pid == 0)
        _exit(ghm_cuda_available() ? 0 : 1);
    int status = 0;
    cached = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0;
    return cached;
}

GhmContext *ghm_test_context(GhmBackendKind backend)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = backend;
    GhmContext *ctx = NULL;
    int ret = ghm_context_create(&opt, &ctx);
    ck_assert_msg(ret == GHM_OK, "context: %s", ghm_strerror(ret));
    return ctx;
}

int ghm_test_main(Suite *suite)
{
    const char *only = getenv("CK_RUN_CASE");
    if (only && strcmp(only, "cuda") == 0 && !ghm_test_have_cuda()) {
        printf("skipped: no CUDA device (or a build without CUDA)\n");
        srunner_free(srunner_create(suite));
        return 77;
    }
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}
