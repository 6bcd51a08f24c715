/*
 * video_frame.c - a decoded FFmpeg frame as a grey GhmImage, through libswscale to full-range
 * GRAY8: a limited-range Y of 16-235 becomes 0-255, as the PNG of a frame (RGB) would give
 * through BT.601 luma. Only in builds with FFmpeg; video_ffmpeg.c is its one caller.
 *
 * Most decoders give 8-bit planar YUV, whose grey is the luma plane value by value. For those
 * the frames skip libswscale: a table of what libswscale gives for each of the 256 luma values
 * (asked of it once, on a small frame of every value) maps the plane (GhmiByteMap,
 * video_internal.h). On the H200 machine FFmpeg alone decodes 1080p H.264 at ~1400 frames a
 * second on 16 threads (0.7 ms a frame), so the reader's own share per frame counts.
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

/* Whether grey is the first plane's bytes, one per pixel, value by value (8-bit YUV). */
static int luma_is_a_plane(const AVFrame *frame)
{
    const AVPixFmtDescriptor *d = ghmi_ff.av_pix_fmt_desc_get(frame->format);
    return d && d->nb_components >= 3 && !(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL |
                                                     AV_PIX_FMT_FLAG_BITSTREAM)) &&
           d->comp[0].plane == 0 && d->comp[0].step == 1 && d->comp[0].offset == 0 &&
           d->comp[0].shift == 0 && d->comp[0].depth == 8;
}

/* A converter of w x h frames of format, of range full, to full-range GRAY8 (BT.601). */
static struct SwsContext *grey_converter(int w, int h, int format, int full)
{
    struct SwsContext *s = ghmi_ff.sws_getContext(w, h, format, w, h, AV_PIX_FMT_GRAY8,
                                                  SWS_BICUBIC, NULL, NULL, NULL);
    if (s) {
        const int *coeffs = ghmi_ff.sws_getCoefficients(SWS_CS_ITU601);
        ghmi_ff.sws_setColorspaceDetails(s, coeffs, full, coeffs, 1, 0, 1 << 16, 1 << 16);
    }
    return s;
}

/* g->map.one from libswscale: a 256 x 2 frame of the format whose column x has luma x (chroma
 * neutral), converted and read back; refused unless both rows agree. */
static int ask_lut(GhmiGrey *g, int format, int full)
{
    enum { W = 256, H = 2 };
    struct SwsContext *s = grey_converter(W, H, format, full);
    if (!s)
        return GHM_ERR_UNSUPPORTED;
    uint8_t planes[4][2 * W * H]; /* a chroma plane has at most 2 bytes a pixel (NV12) */
    uint8_t *src[4];
    int stride[4];
    for (int p = 0; p < 4; p++) {
        memset(planes[p], 128, sizeof planes[p]);
        src[p] = planes[p];
        stride[p] = 2 * W;
    }
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            planes[0][y * stride[0] + x] = (uint8_t)x;
    uint8_t out[W * H];
    uint8_t *dst[4] = {out, NULL, NULL, NULL};
    int dst_stride[4] = {W, 0, 0, 0};
    int rows = ghmi_ff.sws_scale(s, (const uint8_t *const *)src, stride, 0, H, dst, dst_stride);
    ghmi_ff.sws_freeContext(s);
    if (rows != H || memcmp(out, out + W, W) != 0)
        return GHM_ERR_EXTERNAL;
    memcpy(g->map.one, out, W);
    return GHM_OK;
}

/* Sets up g->sws for this frame's size, format and range, unless it already is. */
static int prepare(GhmiGrey *g, const AVFrame *frame, char *why, size_t n)
{
    int full = is_full_range(frame);
    if (g->sws && g->width == frame->width && g->height == frame->height &&
        g->format == frame->format && g->full == full)
        return GHM_OK;
    ghmi_ff.sws_freeContext(g->sws);
    if (!(g->sws = grey_converter(frame->width, frame->height, frame->format, full))) {
        const char *name = ghmi_ff.av_get_pix_fmt_name(frame->format);
        ghmi_why(why, n, "cannot convert %s frames to grey", name ? name : "?");
        return GHM_ERR_UNSUPPORTED;
    }
    /* A table where libswscale gives one; where it cannot, its own path, as for other formats */
    g->direct = luma_is_a_plane(frame) && ask_lut(g, frame->format, full) == GHM_OK;
    if (g->direct)
        ghmi_byte_map_fill(&g->map);
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
    if (g->direct) {
        ghmi_byte_map_plane(&g->map, frame->data[0], frame->linesize[0], img->pixels,
                            img->stride, frame->width, frame->height);
        *out = img;
        return GHM_OK;
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
