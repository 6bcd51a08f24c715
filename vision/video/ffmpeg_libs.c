/*
 * ffmpeg_libs.c - loads FFmpeg's libraries on first use (see ffmpeg_libs_internal.h) and
 * installs the application's log callback once they are in (ghm_video_set_ffmpeg_log).
 */
#include "video_internal.h"

#if GHM_HAVE_FFMPEG
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "ffmpeg_libs_internal.h"
#include "why_internal.h"

GhmiFfmpeg ghmi_ff;

/* The sonames of the headers compiled against: a library of another major version has
 * another ABI. libavutil first: the others need it. */
static const char *const libraries[] = {
    "libavutil.so." AV_STRINGIFY(LIBAVUTIL_VERSION_MAJOR),
    "libswscale.so." AV_STRINGIFY(LIBSWSCALE_VERSION_MAJOR),
    "libavcodec.so." AV_STRINGIFY(LIBAVCODEC_VERSION_MAJOR),
    "libavformat.so." AV_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR),
};
#define N_LIBRARIES (sizeof libraries / sizeof libraries[0])

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int load_result = GHM_ERR_UNSUPPORTED;
static char load_why[256];
static GhmFfmpegLogFn log_fn; /* under log_lock */

/* The symbol from whichever library defines it. The handles stay open: FFmpeg is used until the
 * process ends. */
static void *find_symbol(void *const *handles, const char *name)
{
    for (size_t i = 0; i < N_LIBRARIES; i++) {
        void *p = dlsym(handles[i], name);
        if (p)
            return p;
    }
    return NULL;
}

static int open_libraries(void **handles)
{
    for (size_t i = 0; i < N_LIBRARIES; i++) {
        if (!(handles[i] = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL))) {
            const char *err = dlerror();
            snprintf(load_why, sizeof load_why, "cannot load FFmpeg's %s (%s)", libraries[i],
                     err ? err : "not found");
            return GHM_ERR_UNSUPPORTED;
        }
    }
    return GHM_OK;
}

#define GHMI_FFMPEG_RESOLVE(name)                                                             \
    if (ret == GHM_OK) {                                                                      \
        ghmi_ff.name = (__typeof__(ghmi_ff.name))find_symbol(handles, #name);                 \
        if (!ghmi_ff.name) {                                                                  \
            snprintf(load_why, sizeof load_why, "FFmpeg's libraries lack %s", #name);         \
            ret = GHM_ERR_UNSUPPORTED;                                                        \
        }                                                                                     \
    }

static void load(void)
{
    void *handles[N_LIBRARIES] = {0};
    int ret = open_libraries(handles);
    GHMI_FFMPEG_FUNCTIONS(GHMI_FFMPEG_RESOLVE)
    pthread_mutex_lock(&log_lock);
    if (ret == GHM_OK && log_fn)
        ghmi_ff.av_log_set_callback(log_fn);
    load_result = ret;
    pthread_mutex_unlock(&log_lock);
}

int ghmi_ffmpeg_load(char *why, size_t why_size)
{
    pthread_once(&load_once, load);
    if (load_result < 0)
        ghmi_why(why, why_size, "%s", load_why);
    return load_result;
}

void ghm_video_set_ffmpeg_log(GhmFfmpegLogFn fn)
{
    if (!fn)
        return;
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    if (load_result == GHM_OK) /* loaded already: install it now */
        ghmi_ff.av_log_set_callback(fn);
    pthread_mutex_unlock(&log_lock);
}

#else /* !GHM_HAVE_FFMPEG */

void ghm_video_set_ffmpeg_log(GhmFfmpegLogFn fn)
{
    (void)fn;
}

#endif /* GHM_HAVE_FFMPEG */
