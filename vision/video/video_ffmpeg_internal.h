/*
 * video_ffmpeg_internal.h - FFmpeg types shared by the FFmpeg files of the video module:
 * video_ffmpeg.c (demuxing, decoding, timestamps) hands each decoded frame to video_frame.c
 * (conversion to a grey GhmImage), through video_gpu_decode.c where a GPU decoded it;
 * video_jump.c plans where a reader enters the file. Included only where GHM_HAVE_FFMPEG is
 * true.
 */
#ifndef GHM_VIDEO_FFMPEG_INTERNAL_H
#define GHM_VIDEO_FFMPEG_INTERNAL_H

#include <libavformat/avformat.h>
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
    int orientation; /* the stream's, as ghmi_display_orientation gives it (0: kept) */
} GhmiGrey;

/* Converts a decoded frame to a new full-range grey image in *out (BT.601 luma; limited-range
 * 16-235 becomes 0-255), turned as g->orientation says. GHM_ERR_UNSUPPORTED (a pixel format
 * libswscale cannot take), GHM_ERR_TOO_LARGE or GHM_ERR_NOMEM (the image), GHM_ERR_EXTERNAL,
 * each with why. */
int ghmi_grey_from_frame(GhmiGrey *g, const AVFrame *frame, GhmImage **out, char *why,
                         size_t why_size);

/* How a stream's frames are shown, as an EXIF orientation code (1..8; ghmi_image_orient): from
 * its display matrix (a phone's portrait video is stored landscape with a matrix that turns it
 * a quarter turn clockwise: 6), read as players and FFmpeg's own tool read it. 1 without a
 * matrix, or for one that is not a quarter turn or a mirror of one (kept as stored). */
int ghmi_display_orientation(const AVStream *st);

/* Frees the libswscale context and zeroes *g. */
void ghmi_grey_release(GhmiGrey *g);

/* FFmpeg's words for the error err, or "FFmpeg error N" (video_ffmpeg.c). */
void ghmi_av_error_text(int err, char *buf, size_t n);

/* Makes dec (allocated, not yet opened, for codec) decode on CUDA device `device` through
 * FFmpeg's CUDA hwaccel (video_gpu_decode.c), with the device's context that every decoder on
 * it shares: frames then come out as CUDA frames where NVDEC takes the stream, as software
 * frames where it does not. GHM_ERR_UNSUPPORTED (FFmpeg has no CUDA hwaccel for codec),
 * GHM_ERR_NO_DEVICE (no such device, no driver), GHM_ERR_NOMEM, each with why; dec is unchanged
 * on failure. A decoder is freed with ghmi_decoder_free. */
int ghmi_gpu_decoder_attach(AVCodecContext *dec, const AVCodec *codec, int device, char *why,
                            size_t why_size);

/* Frees *dec (NULL or not) and sets it to NULL; a decoder on a GPU gives back its share of the
 * device's context. */
void ghmi_decoder_free(AVCodecContext **dec);

/* frame itself when it is in host memory; for a CUDA frame, host (the caller's, reused from
 * frame to frame) holding its copy with its properties; NULL with why when the copy fails. */
const AVFrame *ghmi_gpu_frame_to_host(const AVFrame *frame, AVFrame *host, char *why,
                                      size_t why_size);

/* A demuxer for path, probed by content, with the video stream it reads (*stream) and every
 * other stream discarded; opaque becomes its context's (the reader its lines belong to). On
 * failure *out may be set and is the caller's to close; why says what is wrong (video_ffmpeg.c). */
int ghmi_av_open_demuxer(const char *path, void *opaque, AVFormatContext **out, int *stream,
                         char *why, size_t why_size);

/* Where a reader asked for frames from `start` on may begin decoding instead of the first
 * packet (video_jump.c): the key packet of frame number `index`, and the timestamp of frame 0. */
typedef struct GhmiJump {
    int64_t index;       /* the key frame's number, 1 .. start */
    int64_t pts, dts;    /* the key packet's, in the stream's time base */
    int64_t origin;      /* frame 0's timestamp: what a reading from the start calls pts 0 */
} GhmiJump;

/* 1 with *jump when path's video stream numbers its frames by their timestamps alone, so that
 * a reader entering at a key frame gives every frame the number and time a reading from the
 * first frame gives it; 0 when not, or when no key frame lies in 1 .. start (start < 0: the
 * first key frame after frame 0, whatever its number); the reader then decodes from the start.
 * A negative error only for out of memory. fps: the stream's constant rate (GhmVideoInfo).
 * Reads the stream's packets, without decoding, up to the key frame after the one it picks. */
int ghmi_av_plan_jump(const char *path, void *opaque, double fps, int64_t start, GhmiJump *jump);

#endif /* GHM_VIDEO_FFMPEG_INTERNAL_H */
