/*
 * video_ffmpeg_none.c - the FFmpeg reader's entry points in a build without FFmpeg
 * (-DGEOHASH_FFMPEG=OFF): opening a file says how to get a YUV4MPEG2 stream instead, and the
 * rest answers "no FFmpeg". The build with FFmpeg has them in video_ffmpeg.c.
 */
#include <stdarg.h>

#include "video_internal.h"
#include "why_internal.h"

#if !GHM_HAVE_FFMPEG
struct GhmiAv {
    int unused;
};

int ghm_video_log_ffmpeg(void *avcl, int level, const char *fmt, va_list ap)
{
    (void)avcl;
    (void)level;
    (void)fmt;
    (void)ap;
    return 0;
}

int ghm_video_have_ffmpeg(void)
{
    return 0;
}

int ghmi_video_built_with_ffmpeg(void)
{
    return 0;
}

void ghmi_av_free(GhmiAv **p)
{
    (void)p;
}

int ghmi_av_open(const char *path, GhmVideo *v, char *why, size_t n)
{
    (void)path;
    (void)v;
    ghmi_why(why, n, "this build has no FFmpeg, so it reads YUV4MPEG2 video only (rebuild with "
                "-DGEOHASH_FFMPEG=ON, or pipe: ffmpeg -i FILE -f yuv4mpegpipe - | "
                "geohash-match REFERENCE -)");
    return GHM_ERR_UNSUPPORTED;
}

int ghmi_av_next(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    (void)v;
    (void)f;
    ghmi_why(why, n, "this build has no FFmpeg");
    return GHM_ERR_UNSUPPORTED;
}

int ghmi_av_can_jump(GhmVideo *v)
{
    (void)v;
    return 0;
}

int ghmi_av_set_threads(GhmVideo *v, int threads)
{
    (void)v;
    (void)threads;
    return GHM_ERR_UNSUPPORTED;
}

int ghmi_av_set_gpu(GhmVideo *v, int device, char *why, size_t n)
{
    (void)v;
    (void)device;
    ghmi_why(why, n, "this build has no FFmpeg");
    return GHM_ERR_UNSUPPORTED;
}

#endif /* !GHM_HAVE_FFMPEG */
