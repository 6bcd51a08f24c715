/*
 * log_internal.h - how library code hands a message to the application's log callback
 * (ghm_log.h). C and CUDA (kernels/hashing/cuda_check.cuh) alike.
 */
#ifndef GHM_LOG_INTERNAL_H
#define GHM_LOG_INTERNAL_H

#include "ghm_log.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Formats one line and passes it to the installed callback; 0 when none took it. */
int ghmi_log(GhmLogLevel level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif

#endif /* GHM_LOG_INTERNAL_H */
