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
 *
 * A stream with a display matrix (phones store portrait video landscape and say so) is turned
 * into the form players show (ghmi_display_orientation), as a JPEG's EXIF orientation is, so that
 * a frame's transform is in the coordinates of the frame a user sees, as FFmpeg's tool and
 * OpenCV give it.
 */
#if GHM_HAVE_FFMPEG
#include <libavutil/pixdesc.h>
#include <math.h>
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

/* The matrix (ISO/IEC 14496-12's tkhd: 16.16 fixed point a b u / c d v / x y w) maps a stored
 * point (x, y) to the shown (a x + c y + x0, b x + d y + y0); FFmpeg's tool turns frames so.
 * Each quarter turn or mirror has one code: a and d alone are a mirror of the axes (or none), b
 * and c alone a transposition with mirrors. */
static int orientation_of(const int32_t m[9])
{
    double a = m[0], b = m[1], c = m[3], d = m[4];
    double diag = fabs(a) + fabs(d), off = fabs(b) + fabs(c);
    if (diag > 64 * off && a != 0 && d != 0) {
        static const int by_signs[2][2] = {{1, 4}, {2, 3}}; /* [a < 0][d < 0] */
        return by_signs[a < 0][d < 0];
    }
    if (off > 64 * diag && b != 0 && c != 0) {
        static const int by_signs[2][2] = {{5, 6}, {8, 7}}; /* [b < 0][c < 0] */
        return by_signs[b < 0][c < 0];
    }
    return 1;
}

int ghmi_display_orientation(const AVStream *st)
{
#if LIBAVCODEC_VERSION_INT >= AV_VERSION_INT(60, 29, 100)
    const AVPacketSideData *sd = st->codecpar->coded_side_data;
    int n = st->codecpar->nb_coded_side_data;
#else /* FFmpeg before 6.1: the stream's own list (deprecated since, removed in 7.0) */
    const AVPacketSideData *sd = st->side_data;
    int n = st->nb_side_data;
#endif
    for (int i = 0; i < n; i++)
        if (sd[i].type == AV_PKT_DATA_DISPLAYMATRIX && sd[i].size >= 9 * sizeof(int32_t)) {
            int32_t m[9];
            memcpy(m, sd[i].data, sizeof m);
            return orientation_of(m);
        }
    return 1;
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
    } else {
        uint8_t *dst[4] = {img->pixels, NULL, NULL, NULL};
        int dst_stride[4] = {img->stride, 0, 0, 0};
        if (ghmi_ff.sws_scale(g->sws, (const uint8_t *const *)frame->data, frame->linesize, 0,
                              frame->height, dst, dst_stride) != frame->height) {
            ghm_image_free(&img);
            ghmi_why(why, n, "libswscale failed on a %dx%d frame", frame->width,
                     frame->height);
            return GHM_ERR_EXTERNAL;
        }
    }
    if ((ret = ghmi_image_orient(g->orientation, &img)) < 0) {
        ghm_image_free(&img);
        ghmi_why(why, n, "cannot turn a %dx%d frame: %s", frame->width, frame->height,
                 ghm_strerror(ret));
        return ret;
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
