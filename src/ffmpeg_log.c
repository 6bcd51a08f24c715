/*
 * ffmpeg_log.c - the program's FFmpeg log callback. FFmpeg has one per process and it belongs
 * to the program, never to the library: every line is offered to the library (a line from a
 * video being read is kept for that video's damaged-frame messages, ghm_video_log_ffmpeg) and
 * none is printed, so that standard error holds only the program's own one-line messages. The
 * program does not link FFmpeg (the library loads it with the first video), so it hands the
 * callback to the library to install then (ghm_video_set_ffmpeg_log).
 */
#include "cli.h"
#include "ghm_video.h"

static void on_ffmpeg_log(void *avcl, int level, const char *fmt, va_list ap)
{
    (void)ghm_video_log_ffmpeg(avcl, level, fmt, ap);
}

void ghm_cli_install_ffmpeg_log(void)
{
    ghm_video_set_ffmpeg_log(on_ffmpeg_log);
}
