/*
 * test_support.h - what every Check suite shares: where the data is, whether a CUDA device can
 * be used (asked in a child process, so that the Check parent never initialises CUDA), and the
 * standard main() that runs one suite and returns failure when a test failed.
 */
#ifndef GHM_TEST_SUPPORT_H
#define GHM_TEST_SUPPORT_H

#include <check.h>

#include "ghm_context.h"

/* Path of a file under the repository's data/ folder, in a static buffer (one at a time). */
const char *ghm_test_data(const char *relative);

/* 1 when a CUDA device is usable; probed in a forked child and cached. */
int ghm_test_have_cuda(void);

/* First line of every test in a "cuda" TCase: without a device the test passes vacuously
 * (ctest reports the case as skipped through ghm_test_main's exit code 77). */
#define GHM_REQUIRE_CUDA()                                                                   \
    do {                                                                                     \
        if (!ghm_test_have_cuda())                                                           \
            return;                                                                          \
    } while (0)

/* Creates a context on the given backend with seed 1, failing the test if that is impossible. */
GhmContext *ghm_test_context(GhmBackendKind backend);

/* Runs the suite; returns 0 when every test passed, 1 otherwise, 77 (ctest "skipped") when the
 * only case asked for in CK_RUN_CASE is "cuda" and no device is present. */
int ghm_test_main(Suite *suite);

#endif /* GHM_TEST_SUPPORT_H */
