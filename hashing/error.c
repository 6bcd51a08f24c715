/* error.c - the one table behind ghm_strerror(). */
#include "ghm_error.h"
#include "log_internal.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const messages[] = {
    [0] = "success",
    [-GHM_ERR_NOMEM] = "out of memory",
    [-GHM_ERR_IO] = "input/output error",
    [-GHM_ERR_FORMAT] = "invalid or damaged data",
    [-GHM_ERR_INVALID] = "invalid argument",
    [-GHM_ERR_UNSUPPORTED] = "unsupported",
    [-GHM_ERR_NO_DEVICE] = "no CUDA device available",
    [-GHM_ERR_CUDA] = "CUDA error",
    [-GHM_ERR_EXTERNAL] = "error in an external library",
    [-GHM_ERR_TOO_LARGE] = "input too large",
    [-GHM_ERR_TRUNCATED] = "input ends early (truncated)",
    [-GHM_ERR_BUILD_FAILED] = "hash table build failed after all rebuild attempts",
};

const char *ghm_strerror(int status)
{
    int index = -status;
    if (index < 0 || index >= (int)(sizeof messages / sizeof messages[0]) || !messages[index])
        return "unknown error";
    return messages[index];
}

void ghm_assert_fail(const char *cond, const char *file, int line)
{
    /* The process ends here: said on stderr when no callback takes it, so a bug report has it. */
    if (!ghmi_log(GHM_LOG_ERROR, "%s:%d: internal error: assertion '%s' failed", file, line, cond))
        fprintf(stderr, "%s:%d: internal error: assertion '%s' failed\n", file, line, cond);
    abort();
}
