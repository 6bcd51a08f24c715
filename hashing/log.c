/*
 * log.c - the library's log callback (ghm_log.h).
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "log_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static GhmLogCallback installed;
static void *installed_user;

void ghm_log_set_callback(GhmLogCallback callback, void *user)
{
    pthread_mutex_lock(&lock);
    installed = callback;
    installed_user = user;
    pthread_mutex_unlock(&lock);
}

int ghmi_log(GhmLogLevel level, const char *fmt, ...)
{
    pthread_mutex_lock(&lock);
    GhmLogCallback callback = installed;
    void *user = installed_user;
    pthread_mutex_unlock(&lock);
    if (!callback)
        return 0;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    callback(user, level, line); /* outside the lock: it may take its own */
    return 1;
}
