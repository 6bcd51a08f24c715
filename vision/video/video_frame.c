/*
 * video_frame.c - a decoded FFmpeg frame as a grey GhmImage, through libswscale to full-range
 * GRAY8: a limited-range Y of 16-235 becomes 0-255, as the PNG of a frame (RGB) would give
 * through BT.601 luma. Only in builds with FFmpeg; video_ffmpeg.c is its one caller.
 */
#if GHM_HAVE_FFMPEG
#include <libavutil/pixdesc.h>
#include <string.h>

#include "ffmpeg_libs_internal.h"
#include "image_internal.h"
#include "video_ffmpeg_internal.h"
#include "why_internal.h"

static int is_full_range(const AVFrame *frame)
{
    const AVPixFmtDescriptor *d = ghmi_ff.av_pix_fmt_desc_get(frame->format);
    /* Grey and RGB sources are full range; the yuvj* formats say so in their name. */
    if (frame->color_range == AVCOL_RANGE_JPEG || !d || d->nb_components < 3 ||
        (d->flags & AV_PIX_FMT_FLAG_RGB))
        return 1;
    return strncmp(d->name, "yuvj", 4) == 0;
}

/* Sets up g->sws for this frame's size, format and range, unless it already is. */
static int prepare(GhmiGrey *g, const AVFrame *frame, char *why, size_t n)
{
    int full = is_full_range(frame);
    if (g->sws && g->width == frame->width && g->height == frame->height &&
        g->format == frame->format && g->full == full)
        return GHM_OK;
    ghmi_ff.sws_freeContext(g->sws);
    g->sws = ghmi_ff.sws_getContext(frame->width, frame->height, frame->format, frame->width,
                                    frame->height, AV_PIX_FMT_GRAY8, SWS_BICUBIC, NULL, NULL,
                                    NULL);
    if (!g->sws) {
        const char *name = ghmi_ff.av_get_pix_fmt_name(frame->format);
        ghmi_why(why, n, "cannot convert %s frames to grey", name ? name : "?");
        return GHM_ERR_UNSUPPORTED;
    }
    const int *coeffs = ghmi_ff.sws_getCoefficients(SWS_CS_ITU601);
    ghmi_ff.sws_setColorspaceDetails(g->sws, coeffs, full, coeffs, 1, 0, 1 << 16, 1 << 16);
    g->width = frame->width;
    g->height = frame->height;
    g->format = frame->format;
    g->full = full;
    return GHM_OK;
}

int ghmi_grey_from_frame(GhmiGrey *g, const AVFrame *frame, GhmImage **out, char *why,
                         size_t n)
{
    int ret = prepare(g, frame, why, n);
    if (ret < 0)
        return ret;
    GhmImage *img = NULL;
    /* sws_scale writes every row, so the pixels need no zeroing first */
    if ((ret = ghmi_image_create_unset(frame->width, frame->height, &img)) < 0) {
        ghmi_why(why, n, "cannot hold a %dx%d frame: %s", frame->width, frame->height,
                 ghm_strerror(ret));
        return ret;
    }
    uint8_t *dst[4] = {img->pixels, NULL, NULL, NULL};
    int dst_stride[4] = {img->stride, 0, 0, 0};
    if (ghmi_ff.sws_scale(g->sws, (const uint8_t *const *)frame->data, frame->linesize, 0,
                          frame->height, dst, dst_stride) != frame->height) {
        ghm_image_free(&img);
        ghmi_why(why, n, "libswscale failed on a %dx%d frame", frame->width, frame->height);
        return GHM_ERR_EXTERNAL;
    }
    *out = img;
    return GHM_OK;
}

void ghmi_grey_release(GhmiGrey *g)
{
    ghmi_ff.sws_freeContext(g->sws);
    memset(g, 0, sizeof *g);
}

#endif /* GHM_HAVE_FFMPEG */
