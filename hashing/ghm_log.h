/*
 * ghm_log.h - where the library's own messages go. The library writes nothing to stdout or
 * stderr: what a caller must act on comes back as a GHM_ERR_* value (and a `why` line where a
 * function has one); what only helps a person find a fault (which CUDA call failed, at which
 * file and line) goes to the callback an application installs here. Without one it is dropped.
 *
 *     static void to_stderr(void *user, GhmLogLevel level, const char *message)
 *     {
 *         fprintf(stderr, "myapp: %s\n", message);
 *     }
 *     ghm_log_set_callback(to_stderr, NULL);
 *
 * One callback per process (as the errors it reports come from any context and from code that
 * has none); it may be called from any thread, at any time, and must not call the library.
 */
#ifndef GHM_LOG_H
#define GHM_LOG_H

#include "ghm_api.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum GhmLogLevel {
    GHM_LOG_ERROR = 0,   /* a call failed (its GHM_ERR_* value is returned too) */
    GHM_LOG_WARNING = 1, /* something was worked around */
    GHM_LOG_INFO = 2
} GhmLogLevel;

/* message: one line without a newline, valid during the call. */
typedef void (*GhmLogCallback)(void *user, GhmLogLevel level, const char *message);

/* Installs callback (NULL: messages are dropped, the default) with its user pointer. */
GHM_API void ghm_log_set_callback(GhmLogCallback callback, void *user);

#ifdef __cplusplus
}
#endif

#endif /* GHM_LOG_H */
