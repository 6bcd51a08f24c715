/*
 * ghm_error.h - status codes shared by every module of geohash-match.
 *
 * Usage:
 *     int ret = ghm_map_build(map, keys, values, n);
 *     if (ret < 0)
 *         fprintf(stderr, "build failed: %s\n", ghm_strerror(ret));
 *
 * A function that can fail returns GHM_OK (0) or one negative GHM_ERR_* value and passes its
 * results through out-parameters. Positive return values are never errors.
 */
#ifndef GHM_ERROR_H
#define GHM_ERROR_H

#include "ghm_api.h"

#ifdef __cplusplus
extern "C" {
#endif

enum GhmStatus {
    GHM_OK = 0,
    GHM_ERR_NOMEM = -1,        /* an allocation on the host or the device failed */
    GHM_ERR_IO = -2,           /* a read or write failed, or a file could not be opened */
    GHM_ERR_FORMAT = -3,       /* the input is not in the format it claims, or is damaged */
    GHM_ERR_INVALID = -4,      /* an argument is out of range or inconsistent */
    GHM_ERR_UNSUPPORTED = -5,  /* a valid input this build or format variant cannot handle */
    GHM_ERR_NO_DEVICE = -6,    /* the CUDA backend was asked for but no usable device exists */
    GHM_ERR_CUDA = -7,         /* a CUDA call failed (details were logged where it happened) */
    GHM_ERR_EXTERNAL = -8,     /* a library we call (FFmpeg, libpng, libjpeg) reported an error */
    GHM_ERR_TOO_LARGE = -9,    /* the input exceeds a stated limit (pixels, points, table size) */
    GHM_ERR_TRUNCATED = -10,   /* the input ends before the data it declares */
    GHM_ERR_BUILD_FAILED = -11 /* a hash table could not be built within its rebuild budget */
};

/* Returns a static, human-readable description of a GHM_OK or GHM_ERR_* value; never NULL. */
GHM_API const char *ghm_strerror(int status);

/* Aborts with file:line and the message. For programmer errors only, never for bad input. */
#define GHM_ASSERT(cond)                                                                     \
    do {                                                                                     \
        if (!(cond))                                                                         \
            ghm_assert_fail(#cond, __FILE__, __LINE__);                                      \
    } while (0)

GHM_API void ghm_assert_fail(const char *cond, const char *file, int line);

#ifdef __cplusplus
}
#endif

#endif /* GHM_ERROR_H */
