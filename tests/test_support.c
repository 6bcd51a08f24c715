/* test_support.c - see test_support.h. */
#include "test_support.h"

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
