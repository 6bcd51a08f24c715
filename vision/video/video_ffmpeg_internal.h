/*
 * video_ffmpeg_internal.h - FFmpeg types shared by the two FFmpeg files of the video module:
 * video_ffmpeg.c (demuxing, decoding, timestamps) hands each decoded frame to video_frame.c
 * (conversion to a grey GhmImage). Included only where GHM_HAVE_FFMPEG is true.
 */
#ifndef GHM_VIDEO_FFMPEG_INTERNAL_H
#define GHM_VIDEO_FFMPEG_INTERNAL_H

#include <libavutil/frame.h>
#include <libswscale/swscale.h>

#include "ghm_image.h"
#include "video_internal.h"

/* The libswscale context and what it was set up for: it is made again only when a frame's
 * size, pixel format or range differs from the one before. For a format whose luma is a plane
 * of bytes, map is what libswscale makes of each luma value (asked once per format and range)
 * and the frames go through it instead. Zeroed = none yet. */
typedef struct GhmiGrey {
    struct SwsContext *sws;
    int width, height, format, full;
    int direct;      /* frames of this format take the luma plane through map */
    GhmiByteMap map;
} GhmiGrey;

/* Converts a decoded frame to a new full-range grey image in *out (BT.601 luma; limited-range
 * 16-235 becomes 0-255). GHM_ERR_UNSUPPORTED (a pixel format libswscale cannot take),
 * GHM_ERR_TOO_LARGE or GHM_ERR_NOMEM (the image), GHM_ERR_EXTERNAL, each with why. */
int ghmi_grey_from_frame(GhmiGrey *g, const AVFrame *frame, GhmImage **out, char *why,
                         size_t why_size);

/* Frees the libswscale context and zeroes *g. */
void ghmi_grey_release(GhmiGrey *g);

#endif /* GHM_VIDEO_FFMPEG_INTERNAL_H */
