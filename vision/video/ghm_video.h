/*
 * ghm_video.h - video frames as grey GhmImages: any container/codec FFmpeg decodes (the file is
 * recognised by its content, never its name), or a YUV4MPEG2 stream ("-" = standard input).
 *
 * Usage:
 *     GhmVideo *v = NULL;
 *     char why[256];
 *     if ((ret = ghm_video_open("clip.mp4", &v, why, sizeof why)) < 0) {
 *         fprintf(stderr, "clip.mp4: %s\n", why);      // e.g. "has no video stream"
 *         goto fail;
 *     }
 *     GhmVideoFrame f = {0};
 *     while ((ret = ghm_video_read(v, &f, why, sizeof why)) != GHM_VIDEO_END) {
 *         if (ret < 0) goto fail;                     // fatal: why says what (truncated, ...)
 *         if (ret == GHM_VIDEO_DAMAGED) { warn(why); continue; }   // frame f.index skipped
 *         use(f.image, f.index, f.pts);               // f.image->pixels, 0 = black
 *         ghm_image_free(&f.image);
 *     }
 *     ghm_video_free(&v);
 *
 * Grey values: FFmpeg frames go through libswscale to full-range GRAY8, i.e. the BT.601 luma
 * that the PNG/JPEG loader computes from RGB, up to rounding: on Megamind.avi frame 50 against
 * FFmpeg's own RGB PNG of it, the mean absolute difference is about 1.1 grey levels (the RGB
 * conversion rounds differently and clips saturated colours). YUV4MPEG2 streams give their Y
 * plane, expanded from limited (16-235) to full range unless the header says XCOLORRANGE=FULL
 * (Cmono is full range, as FFmpeg writes it), so that "ffmpeg -f yuv4mpegpipe - |" and the file
 * itself give the same pictures.
 *
 * Frame numbers count from 0 in presentation order; a frame whose data the decoder rejects
 * (GHM_VIDEO_DAMAGED) still uses up its number, so later frames keep theirs. pts is in seconds
 * from the first frame's timestamp, so frame 0 is at 0 (NAN when the container gives none).
 *
 * A build without FFmpeg (GEOHASH_FFMPEG=OFF) reads YUV4MPEG2 only, from standard input or a
 * file; other files give GHM_ERR_UNSUPPORTED ("this build has no FFmpeg").
 */
#ifndef GHM_VIDEO_H
#define GHM_VIDEO_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ghm_image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Non-negative results of ghm_video_read(). */
enum {
    GHM_VIDEO_FRAME = 0,   /* a frame was returned */
    GHM_VIDEO_END = 1,     /* no more frames (end of stream or past the selected range) */
    GHM_VIDEO_DAMAGED = 2  /* the decoder rejected frame f->index; why says how; read on */
};

/* After this many damaged frames in a row the stream is declared unreadable (GHM_ERR_FORMAT),
 * so that a file of garbage ends the loop instead of producing warnings for ever. */
#define GHM_VIDEO_MAX_DAMAGED_RUN 64

typedef struct GhmVideo GhmVideo;

typedef struct GhmVideoInfo {
    int width, height;   /* of the first frame as declared by the stream */
    double fps;          /* frames per second, 0 when unknown */
    int64_t frames;      /* frame count the container declares (a Y4M file: from its size);
                            -1 when unknown */
    char format[32];     /* container: "avi", "mov,mp4,m4a,3gp,3g2,mj2", "yuv4mpegpipe", ... */
    char codec[32];      /* "mpeg4", "h264", "rawvideo", ... */
} GhmVideoInfo;

typedef struct GhmVideoFrame {
    GhmImage *image; /* owned by the caller after GHM_VIDEO_FRAME; free with ghm_image_free() */
    int64_t index;   /* frame number from 0, presentation order */
    double pts;      /* seconds from the first frame; NAN when unknown */
} GhmVideoFrame;

/* Opens a video file, or standard input (a YUV4MPEG2 stream) when path is "-". On failure
 * returns GHM_ERR_IO (cannot open or read), GHM_ERR_FORMAT (empty, not a video, no video
 * stream), GHM_ERR_UNSUPPORTED (no decoder for its codec, a Y4M variant we do not read, or no
 * FFmpeg in this build), GHM_ERR_TOO_LARGE, GHM_ERR_NOMEM or GHM_ERR_EXTERNAL and, when why
 * is not NULL, writes one line saying what is wrong (without the file name). The caller owns
 * *out and frees it with ghm_video_free(). */
GHM_API int ghm_video_open(const char *path, GhmVideo **out, char *why, size_t why_size);

/* Reads a YUV4MPEG2 stream from f, which stays owned by the caller and must outlive the video
 * (ghm_video_open("-") uses stdin). Same results as ghm_video_open(). */
GHM_API int ghm_video_open_y4m(FILE *f, GhmVideo **out, char *why, size_t why_size);

/* What the stream declares. Never NULL for a valid video. */
GHM_API const GhmVideoInfo *ghm_video_info(const GhmVideo *v);

/* Chooses the frames ghm_video_read() returns: numbers start, start+step, ... up to end
 * (inclusive; end < 0 means to the last). Frames outside are decoded (later frames may need
 * them) but not converted, except that a file whose timestamps number its frames (a constant
 * rate, every packet timed on its grid: most MP4, MKV and MPEG-TS files) is entered at the last
 * key frame before start, found by its demuxer alone (reading the packets up to there, not
 * decoding them), with the same frame numbers and times as a reading from the start; damaged
 * frames before that key frame are then not reported. Call before the first read. GHM_ERR_INVALID for start < 0 or step < 1. */
GHM_API int ghm_video_select(GhmVideo *v, int64_t start, int64_t end, int64_t step);

/* 1 when a selection of v that starts past frame 0 would be entered at a key frame (see
 * ghm_video_select): a file whose timestamps number its frames and that has a key frame after
 * its first. 0 when every reading decodes from the first frame (a YUV4MPEG2 stream, an AVI
 * without presentation times, a file of one group of pictures), and for NULL or a video already
 * read. Reads the packets of the file's first two groups of pictures without decoding them, so
 * that a caller splitting a video between several readers knows whether that pays. */
GHM_API int ghm_video_enters_at_key_frames(GhmVideo *v);

/* The decoder's threads: FFmpeg's frame threads, each decoding a frame while the reader takes
 * the previous ones, at several times one thread's rate (which for 1080p H.264 is below one
 * GPU's matching rate). ghm_video_open sets GHM_VIDEO_DECODE_THREADS, the same on every
 * machine; 1 decodes on the thread that reads, 0 lets FFmpeg choose (one per core), more than
 * 16 are taken as 16 (frame threads past that add delay, not speed). Decoding is bit-exact for
 * any count on sound data; where data is damaged, the frames that follow it up to the next key
 * frame are concealed differently by different counts (the same for the same count). Call before
 * the first read. GHM_ERR_INVALID for threads < 0 or after a read; a YUV4MPEG2 stream, which
 * needs no decoder, accepts and ignores it; else the errors of opening the decoder again
 * (GHM_ERR_NOMEM, GHM_ERR_EXTERNAL). */
#define GHM_VIDEO_DECODE_THREADS 16
GHM_API int ghm_video_set_decode_threads(GhmVideo *v, int threads);

/* Decodes on CUDA device `device`'s video engines (NVDEC, through FFmpeg's CUDA hwaccel), or
 * on the CPU again with -1. Frame numbers, times and damaged frames are found as on the CPU
 * (the same software decoder parses the stream); the pixels are NVDEC's, copied back to host
 * memory: for H.264, HEVC, VP9 and AV1 the same as the CPU's on sound data (those standards fix
 * the output bit for bit), for MPEG-2 and MPEG-4 within the inverse transform's rounding, and
 * where data is damaged concealed as NVDEC conceals. A stream NVDEC cannot take (a profile it
 * lacks) is decoded on the CPU. One engine decodes 1080p H.264 at ~700 frames/s with almost no
 * CPU; a GPU has several, used by several videos (or readers of parts of one) at once. The
 * decoder then runs 4 frame threads, whatever ghm_video_set_decode_threads says. Call
 * before the first read. GHM_ERR_INVALID after a read or for device < -1; GHM_ERR_UNSUPPORTED
 * when FFmpeg has no CUDA hwaccel for the codec, GHM_ERR_NO_DEVICE when the device cannot be
 * opened (no driver, no such device), each with why; on failure v decodes as before. A
 * YUV4MPEG2 stream, which needs no decoder, accepts and ignores it. */
GHM_API int ghm_video_set_gpu_decoding(GhmVideo *v, int device, char *why, size_t why_size);

/* Decodes the next selected frame into *f (f->image is new and owned by the caller). Returns
 * GHM_VIDEO_FRAME, GHM_VIDEO_END, GHM_VIDEO_DAMAGED (f->index says which frame was skipped,
 * f->image is NULL, why says why; reading may go on), or a negative error after which the
 * video is unusable: GHM_ERR_TRUNCATED when the file ends before the data it declares (the
 * frames before were returned), GHM_ERR_FORMAT, GHM_ERR_IO, GHM_ERR_NOMEM, GHM_ERR_EXTERNAL.
 * why (may be NULL) gets one line for every result but GHM_VIDEO_FRAME/END. */
GHM_API int ghm_video_read(GhmVideo *v, GhmVideoFrame *f, char *why, size_t why_size);

/* Closes the video and sets *v to NULL; accepts NULL and a pointer to NULL. */
GHM_API void ghm_video_free(GhmVideo **v);

/* 1 when the build decodes video files through FFmpeg and FFmpeg's libraries load, 0 when it
 * reads YUV4MPEG2 only. The library loads FFmpeg when the first video is opened (or here), not
 * when the program starts: its libraries and theirs cost ~50 ms of every process's start. */
GHM_API int ghm_video_have_ffmpeg(void);

/* An FFmpeg log callback, av_log_set_callback's type. */
typedef void (*GhmFfmpegLogFn)(void *avcl, int level, const char *fmt, va_list ap);
/* For an application that does not link FFmpeg itself but wants its log lines (see
 * ghm_video_log_ffmpeg): the library passes fn to av_log_set_callback when it loads FFmpeg,
 * or at once if it has. The callback stays the application's choice; the library installs none
 * of its own. NULL is ignored; a build without FFmpeg ignores every call. An application that
 * links FFmpeg may call av_log_set_callback itself instead. */
GHM_API void ghm_video_set_ffmpeg_log(GhmFfmpegLogFn fn);

/* FFmpeg logs through one process-wide callback (av_log_set_callback), which belongs to the
 * application: the library never sets or calls it. An application that wants the decoder's own
 * words in the message of a damaged frame ("frame 98 is damaged (ac-tex damaged at 12 7);
 * skipped") installs a callback that offers every line to this function first, with the
 * callback's own arguments. Returns 1 when the line came from the demuxer or decoder of an
 * open GhmVideo, on any thread (a decoder thread's own context included; an error line is then
 * kept for that video's next message; the callback may still print or drop it), 0 for any
 * other line (the application's own FFmpeg work): it is left alone, nothing is read through
 * avcl but its AVClass and, for a codec context, the value of its opaque field. ap may
 * have been used when it returns 1: va_copy it first to print the line as well. Always 0 in a
 * build without FFmpeg. */
GHM_API int ghm_video_log_ffmpeg(void *avcl, int level, const char *fmt, va_list ap);

/* 1 when path should be read as a video: "-", or a file whose first bytes are neither a PNG
 * nor a JPEG signature (an empty file or a text file counts as a video, so that the error
 * names both possibilities). In a build without FFmpeg: "-", a YUV4MPEG2 file, or a file with
 * the signature of a common video container (which is then refused with "no FFmpeg"). 0 for
 * everything else and for files that cannot be opened (the image loader then says why). */
GHM_API int ghm_video_is_video_path(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* GHM_VIDEO_H */
