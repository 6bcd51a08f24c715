/*
 * video.c - ghm_video_*: frames of a video as grey images (see ghm_video.h).
 *
 * Two readers behind one handle: FFmpeg (libavformat probes the file's content, libavcodec
 * decodes the best video stream, libswscale turns each frame into full-range GRAY8) and the
 * YUV4MPEG2 reader of video_y4m.c for standard input. This file is the only one that knows
 * whether the build has FFmpeg (GHM_HAVE_FFMPEG, set by CMake for the library's sources).
 *
 * FFmpeg logs through a process-wide callback. We replace it once with one that never prints
 * (library code does not print) and keeps the last error line of the video that logged it, so
 * that a damaged frame's warning can say what the decoder saw.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "video_internal.h"
#include "why_internal.h"

#if GHM_HAVE_FFMPEG
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <pthread.h>
#endif

typedef struct AvState AvState;

struct GhmVideo {
    GhmVideoInfo info;
    int64_t start, end, step; /* the selection; end < 0 = to the last frame */
    int64_t next_index;       /* number the next frame out of the decoder gets */
    int damaged_run;          /* damaged frames since the last good one */
    int finished;             /* after END or an error: further reads repeat the result */
    int final_status;
    char final_why[256];
    int fps_num, fps_den; /* Y4M frame rate, for pts */
    GhmiY4m *y4m;
    FILE *y4m_file; /* opened by us (a Y4M file in a build without FFmpeg), or NULL */
    AvState *av;
    char last_log[192]; /* last error FFmpeg logged for this video */
};

static int wanted(const GhmVideo *v, int64_t index)
{
    return index >= v->start && (v->end < 0 || index <= v->end) &&
           (index - v->start) % v->step == 0;
}

static int past_end(const GhmVideo *v, int64_t index)
{
    return v->end >= 0 && index > v->end;
}

static int video_alloc(GhmVideo **out)
{
    GhmVideo *v = calloc(1, sizeof *v);
    if (!v)
        return GHM_ERR_NOMEM;
    v->end = -1;
    v->step = 1;
    *out = v;
    return GHM_OK;
}

int ghm_video_open_y4m(FILE *f, GhmVideo **out, char *why, size_t why_size)
{
    if (!f || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmVideo *v = NULL;
    int ret = video_alloc(&v);
    if (ret < 0)
        return ret;
    if ((ret = ghmi_y4m_open(f, &v->y4m, &v->info, why, why_size)) < 0) {
        free(v);
        return ret;
    }
    ghmi_y4m_rate(v->y4m, &v->fps_num, &v->fps_den);
    *out = v;
    return GHM_OK;
}

static int y4m_next(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    for (;;) {
        if (past_end(v, v->next_index))
            return GHM_VIDEO_END;
        int want = wanted(v, v->next_index);
        GhmImage *img = NULL;
        int ret = ghmi_y4m_read(v->y4m, want, &img, why, n);
        if (ret != GHM_OK)
            return ret;
        int64_t index = v->next_index++;
        if (!want)
            continue;
        f->image = img;
        f->index = index;
        f->pts = (double)index * v->fps_den / v->fps_num;
        return GHM_VIDEO_FRAME;
    }
}

/* The open checks both builds share: "cannot open" and "empty" come before any format talk. */
static int check_file(const char *path, char *why, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        ghmi_why(why, n, "cannot open: %s", strerror(errno));
        return GHM_ERR_IO;
    }
    if (S_ISDIR(st.st_mode)) {
        ghmi_why(why, n, "is a directory, not a video");
        return GHM_ERR_IO;
    }
    if (S_ISREG(st.st_mode) && st.st_size == 0) {
        ghmi_why(why, n, "empty file (0 bytes), not a video");
        return GHM_ERR_FORMAT;
    }
    return GHM_OK;
}

/* Opens path as a YUV4MPEG2 file when it starts with the signature. Returns 1 when it does not
 * (nothing opened), GHM_OK when *out is the video, or an error. */
static int open_y4m_file(const char *path, GhmVideo **out, char *why, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        ghmi_why(why, n, "cannot open: %s", strerror(errno));
        return GHM_ERR_IO;
    }
    uint8_t head[16];
    size_t got = fread(head, 1, sizeof head, f);
    if (!ghmi_y4m_signature(head, got) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return 1;
    }
    int ret = ghm_video_open_y4m(f, out, why, n);
    if (ret < 0) {
        fclose(f);
        return ret;
    }
    (*out)->y4m_file = f;
    return GHM_OK;
}

#if GHM_HAVE_FFMPEG

struct AvState {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    struct SwsContext *sws;
    int sws_w, sws_h, sws_fmt, sws_full; /* what sws was set up for */
    int stream;
    int64_t first_ts; /* timestamp of the first frame out of the decoder: pts 0 */
    double last_pts;  /* of the previous frame out of the decoder, NAN before */
    int cfr;          /* constant frame rate: gaps in timestamps are missing frames */
    int held;         /* av->frame holds a frame to hand out after the missing ones */
    double held_pts;
    int64_t missing;  /* frames to report as damaged before the held one */
    int flushing;     /* the demuxer is done; draining the decoder */
    int read_error;   /* the AVERROR that ended demuxing, when not a clean EOF */
    int corrupt_packets;
};

int ghm_video_have_ffmpeg(void)
{
    return 1;
}

static void av_error_text(int err, char *buf, size_t n)
{
    if (av_strerror(err, buf, n) < 0)
        snprintf(buf, n, "FFmpeg error %d", err);
}

/* FFmpeg's log callback: silent; keeps error lines of our videos (see the file comment). */
static void log_callback(void *avcl, int level, const char *fmt, va_list ap)
{
    if (level > AV_LOG_ERROR || !avcl)
        return;
    const AVClass *cls = *(const AVClass **)avcl;
    GhmVideo *v = NULL;
    if (cls == avcodec_get_class())
        v = ((AVCodecContext *)avcl)->opaque;
    else if (cls == avformat_get_class())
        v = ((AVFormatContext *)avcl)->opaque;
    if (!v)
        return;
    vsnprintf(v->last_log, sizeof v->last_log, fmt, ap);
    size_t len = strlen(v->last_log);
    while (len > 0 && (v->last_log[len - 1] == '\n' || v->last_log[len - 1] == ' '))
        v->last_log[--len] = '\0';
}

static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static void install_log_callback(void)
{
    av_log_set_callback(log_callback);
}

static void av_state_free(AvState **p)
{
    if (!p || !*p)
        return;
    AvState *av = *p;
    sws_freeContext(av->sws);
    av_frame_free(&av->frame);
    av_packet_free(&av->pkt);
    avcodec_free_context(&av->dec);
    avformat_close_input(&av->fmt);
    free(av);
    *p = NULL;
}

/* Probes by content only: the URL given to the probe is empty, so no demuxer can pick the file
 * by its extension (a text file named .mp4 is not a video). */
static int probe_format(const char *path, const AVInputFormat **fmt, char *why, size_t n)
{
    AVIOContext *pb = NULL;
    char err[128];
    int ret = avio_open(&pb, path, AVIO_FLAG_READ);
    if (ret < 0) {
        av_error_text(ret, err, sizeof err);
        ghmi_why(why, n, "cannot open: %s", err);
        return GHM_ERR_IO;
    }
    ret = av_probe_input_buffer2(pb, fmt, "", NULL, 0, 0);
    avio_closep(&pb);
    if (ret < 0) {
        ghmi_why(why, n, "not a PNG or JPEG image, nor a video FFmpeg recognises");
        return GHM_ERR_FORMAT;
    }
    return GHM_OK;
}

/* The video stream with the most pixels, cover pictures (attached pics) excluded. */
static int pick_stream(const AVFormatContext *fmt)
{
    int best = -1;
    int64_t best_pixels = -1;
    for (unsigned i = 0; i < fmt->nb_streams; i++) {
        const AVStream *st = fmt->streams[i];
        if (st->codecpar->codec_type != AVMEDIA_TYPE_VIDEO ||
            (st->disposition & AV_DISPOSITION_ATTACHED_PIC))
            continue;
        int64_t pixels = (int64_t)st->codecpar->width * st->codecpar->height;
        if (pixels > best_pixels) {
            best = (int)i;
            best_pixels = pixels;
        }
    }
    return best;
}

static int open_decoder(GhmVideo *v, AvState *av, char *why, size_t n)
{
    AVStream *st = av->fmt->streams[av->stream];
    const AVCodec *codec = avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec) {
        ghmi_why(why, n, "no decoder in this FFmpeg for its video codec '%s'",
            avcodec_get_name(st->codecpar->codec_id));
        return GHM_ERR_UNSUPPORTED;
    }
    if (!(av->dec = avcodec_alloc_context3(codec)))
        return GHM_ERR_NOMEM;
    if (avcodec_parameters_to_context(av->dec, st->codecpar) < 0)
        return GHM_ERR_NOMEM;
    av->dec->opaque = v;
    av->dec->pkt_timebase = st->time_base;
    /* One decoding thread: the decoder already runs beside the matcher (frame_queue.c), and
     * frame threading would hand back errors frames after the packet that caused them. */
    av->dec->thread_count = 1;
    int ret = avcodec_open2(av->dec, codec, NULL);
    if (ret < 0) {
        char err[128];
        av_error_text(ret, err, sizeof err);
        ghmi_why(why, n, "cannot start the %s decoder: %s", codec->name, err);
        return GHM_ERR_EXTERNAL;
    }
    return GHM_OK;
}

static void fill_info(GhmVideo *v, const AvState *av)
{
    const AVStream *st = av->fmt->streams[av->stream];
    GhmVideoInfo *info = &v->info;
    info->width = st->codecpar->width;
    info->height = st->codecpar->height;
    AVRational rate = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
    info->fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
    info->frames = st->nb_frames > 0 ? st->nb_frames : -1;
    snprintf(info->format, sizeof info->format, "%s", av->fmt->iformat->name);
    snprintf(info->codec, sizeof info->codec, "%s", avcodec_get_name(st->codecpar->codec_id));
}

static int open_demuxer(GhmVideo *v, AvState *av, const char *path, char *why, size_t n)
{
    const AVInputFormat *ifmt = NULL;
    int ret = probe_format(path, &ifmt, why, n);
    if (ret < 0)
        return ret;
    if (!(av->fmt = avformat_alloc_context()))
        return GHM_ERR_NOMEM;
    av->fmt->opaque = v;
    if ((ret = avformat_open_input(&av->fmt, path, ifmt, NULL)) < 0) {
        char err[128];
        av_error_text(ret, err, sizeof err);
        ghmi_why(why, n, "cannot read it as %s: %s", ifmt->name, err);
        return GHM_ERR_FORMAT; /* avformat_open_input freed the context on failure */
    }
    if ((ret = avformat_find_stream_info(av->fmt, NULL)) < 0) {
        char err[128];
        av_error_text(ret, err, sizeof err);
        ghmi_why(why, n, "damaged %s file: %s", ifmt->name, err);
        return GHM_ERR_FORMAT;
    }
    if ((av->stream = pick_stream(av->fmt)) < 0) {
        ghmi_why(why, n, "has no video stream (%u stream%s of other kinds)", av->fmt->nb_streams,
            av->fmt->nb_streams == 1 ? "" : "s");
        return GHM_ERR_FORMAT;
    }
    return GHM_OK;
}

static int open_ffmpeg(const char *path, GhmVideo *v, char *why, size_t n)
{
    pthread_once(&log_once, install_log_callback);
    AvState *av = calloc(1, sizeof *av);
    if (!av)
        return GHM_ERR_NOMEM;
    v->av = av;
    int ret = open_demuxer(v, av, path, why, n);
    if (ret < 0)
        return ret;
    if ((ret = open_decoder(v, av, why, n)) < 0)
        return ret;
    if (!(av->pkt = av_packet_alloc()) || !(av->frame = av_frame_alloc()))
        return GHM_ERR_NOMEM;
    /* Every other stream (audio, subtitles) is dropped by the demuxer instead of by us. */
    for (unsigned i = 0; i < av->fmt->nb_streams; i++)
        if ((int)i != av->stream)
            av->fmt->streams[i]->discard = AVDISCARD_ALL;
    av->first_ts = AV_NOPTS_VALUE;
    av->last_pts = NAN;
    const AVStream *st = av->fmt->streams[av->stream];
    /* Containers give a variable-rate stream an average rate unlike its base rate. */
    av->cfr = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 &&
              av_cmp_q(st->avg_frame_rate, st->r_frame_rate) == 0;
    fill_info(v, av);
    return GHM_OK;
}

static int is_full_range(const AVFrame *frame)
{
    const AVPixFmtDescriptor *d = av_pix_fmt_desc_get(frame->format);
    /* Grey and RGB sources are full range; the yuvj* formats say so in their name. */
    if (frame->color_range == AVCOL_RANGE_JPEG || !d || d->nb_components < 3 ||
        (d->flags & AV_PIX_FMT_FLAG_RGB))
        return 1;
    return strncmp(d->name, "yuvj", 4) == 0;
}

/* libswscale to full-range GRAY8: a limited-range Y of 16-235 becomes 0-255, as the PNG of a
 * frame (RGB) would give through BT.601 luma. */
static int convert_frame(AvState *av, const AVFrame *frame, GhmImage **out, char *why, size_t n)
{
    int full = is_full_range(frame);
    if (!av->sws || av->sws_w != frame->width || av->sws_h != frame->height ||
        av->sws_fmt != frame->format || av->sws_full != full) {
        sws_freeContext(av->sws);
        av->sws = sws_getContext(frame->width, frame->height, frame->format, frame->width,
                                 frame->height, AV_PIX_FMT_GRAY8, SWS_BICUBIC, NULL, NULL, NULL);
        if (!av->sws) {
            ghmi_why(why, n, "cannot convert %s frames to grey",
                av_get_pix_fmt_name(frame->format) ? av_get_pix_fmt_name(frame->format) : "?");
            return GHM_ERR_UNSUPPORTED;
        }
        const int *coeffs = sws_getCoefficients(SWS_CS_ITU601);
        sws_setColorspaceDetails(av->sws, coeffs, full, coeffs, 1, 0, 1 << 16, 1 << 16);
        av->sws_w = frame->width;
        av->sws_h = frame->height;
        av->sws_fmt = frame->format;
        av->sws_full = full;
    }
    GhmImage *img = NULL;
    int ret = ghm_image_create(frame->width, frame->height, &img);
    if (ret < 0) {
        ghmi_why(why, n, "cannot hold a %dx%d frame: %s", frame->width, frame->height,
            ghm_strerror(ret));
        return ret;
    }
    uint8_t *dst[4] = {img->pixels, NULL, NULL, NULL};
    int dst_stride[4] = {img->stride, 0, 0, 0};
    if (sws_scale(av->sws, (const uint8_t *const *)frame->data, frame->linesize, 0,
                  frame->height, dst, dst_stride) != frame->height) {
        ghm_image_free(&img);
        ghmi_why(why, n, "libswscale failed on a %dx%d frame", frame->width, frame->height);
        return GHM_ERR_EXTERNAL;
    }
    *out = img;
    return GHM_OK;
}

/* Seconds from the first frame. Not from the stream's start_time: in an AVI with packed
 * B-frames (Megamind.avi) FFmpeg's best-effort timestamp of frame 0 is one tick, and frame n
 * should be at n / fps as in every other container. A frame without a timestamp (the last one
 * flushed out of that AVI's decoder) is placed one frame after the previous one. */
static double frame_time(AvState *av, const AVFrame *frame, double fps)
{
    int64_t ts = frame->best_effort_timestamp;
    double pts = NAN;
    if (ts != AV_NOPTS_VALUE) {
        if (av->first_ts == AV_NOPTS_VALUE)
            av->first_ts = ts;
        pts = (double)(ts - av->first_ts) * av_q2d(av->fmt->streams[av->stream]->time_base);
    } else if (!isnan(av->last_pts) && fps > 0) {
        pts = av->last_pts + 1.0 / fps;
    }
    return pts;
}

/* Frames the decoder dropped without a word (damaged data it could not even conceal) show as
 * a gap in the timestamps of a constant-rate stream: how many frames are missing before a
 * frame at pts. 0 when the rate is variable or a timestamp unknown. */
static int64_t missing_before(const AvState *av, double pts, double fps)
{
    if (!av->cfr || isnan(pts) || isnan(av->last_pts) || fps <= 0)
        return 0;
    double steps = (pts - av->last_pts) * fps;
    double k = floor(steps + 0.5);
    if (k < 2 || k > 100000 || fabs(steps - k) > 0.25)
        return 0;
    return (int64_t)k - 1;
}

/* A frame the decoder returned: damaged (errors were concealed), skipped (not selected) or
 * converted. Returns GHM_VIDEO_FRAME, GHM_VIDEO_DAMAGED, -1 to read on, or an error. */
static int take_frame(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    AvState *av = v->av;
    AVFrame *frame = av->frame;
    int64_t index = v->next_index++;
    double pts = av->held_pts;
    int ret = -1;
    if (frame->decode_error_flags || (frame->flags & AV_FRAME_FLAG_CORRUPT)) {
        f->index = index;
        f->pts = pts;
        ghmi_why(why, n, "frame %lld is damaged (%s); skipped", (long long)index,
            v->last_log[0] ? v->last_log : "the decoder concealed errors");
        /* The log line may come from the packet fed before this frame came out (decoders
         * with delay), so it is kept until a damaged frame uses it. */
        v->last_log[0] = '\0';
        ret = GHM_VIDEO_DAMAGED;
    } else if (wanted(v, index)) {
        if ((ret = convert_frame(av, frame, &f->image, why, n)) == GHM_OK) {
            f->index = index;
            f->pts = pts;
            ret = GHM_VIDEO_FRAME;
        }
    }
    av_frame_unref(frame);
    return ret;
}

/* The decoder has given its last frame: a clean end, or a file that stopped early. */
static int end_of_stream(GhmVideo *v, char *why, size_t n)
{
    AvState *av = v->av;
    const AVStream *st = av->fmt->streams[av->stream];
    if (av->read_error) {
        char err[128];
        av_error_text(av->read_error, err, sizeof err);
        ghmi_why(why, n, "reading stopped after %lld frames: %s", (long long)v->next_index, err);
        return GHM_ERR_IO;
    }
    /* One frame short is tolerated: FFmpeg's own AVI muxer can declare one frame more than it
     * writes (a complete file re-encoded from Megamind.avi declares 271 and holds 270). */
    if (st->nb_frames > 0 && v->next_index + 1 < st->nb_frames) {
        ghmi_why(why, n, "file ends early: %lld of the %lld frames it declares%s",
            (long long)v->next_index, (long long)st->nb_frames,
            av->corrupt_packets ? " (the last packet is cut short)" : "");
        return GHM_ERR_TRUNCATED;
    }
    if (av->corrupt_packets) {
        ghmi_why(why, n, "file ends early: its last packet is cut short");
        return GHM_ERR_TRUNCATED;
    }
    return GHM_VIDEO_END;
}

/* A frame the decoder refused or dropped: reported with the next number. */
static int report_missing(GhmVideo *v, GhmVideoFrame *f, const char *what, char *why, size_t n)
{
    f->index = v->next_index++;
    ghmi_why(why, n, "frame %lld %s (%s); skipped", (long long)f->index, what,
        v->last_log[0] ? v->last_log : "damaged data");
    v->last_log[0] = '\0';
    return GHM_VIDEO_DAMAGED;
}

/* Feeds the decoder one packet of our stream. Returns GHM_OK, or GHM_VIDEO_DAMAGED when the
 * decoder refuses the packet (the frame it held is counted as damaged). */
static int feed_packet(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    AvState *av = v->av;
    int ret = av_read_frame(av->fmt, av->pkt);
    if (ret < 0) {
        if (ret != AVERROR_EOF && !avio_feof(av->fmt->pb))
            av->read_error = ret;
        av->flushing = 1;
        avcodec_send_packet(av->dec, NULL);
        return GHM_OK;
    }
    if (av->pkt->stream_index != av->stream) {
        av_packet_unref(av->pkt);
        return GHM_OK;
    }
    if (av->pkt->flags & AV_PKT_FLAG_CORRUPT)
        av->corrupt_packets++;
    ret = avcodec_send_packet(av->dec, av->pkt);
    av_packet_unref(av->pkt);
    if (ret < 0 && ret != AVERROR(EAGAIN) && ret != AVERROR_EOF) {
        if (!v->last_log[0])
            av_error_text(ret, v->last_log, sizeof v->last_log);
        if (!av->cfr) /* else the gap in timestamps reports it, with the right number */
            return report_missing(v, f, "cannot be decoded", why, n);
    }
    return GHM_OK;
}

static int av_next(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    AvState *av = v->av;
    for (;;) {
        if (past_end(v, v->next_index))
            return GHM_VIDEO_END;
        if (av->missing > 0) {
            av->missing--;
            int ret = report_missing(v, f, "is missing: the decoder dropped it", why, n);
            f->pts = av->held_pts - (double)(av->missing + 1) / v->info.fps; /* gap: cfr */
            return ret;
        }
        if (av->held) {
            av->held = 0;
            int ret = take_frame(v, f, why, n);
            if (ret != -1)
                return ret;
        }
        int ret = avcodec_receive_frame(av->dec, av->frame);
        if (ret == 0) {
            av->held_pts = frame_time(av, av->frame, v->info.fps);
            av->missing = missing_before(av, av->held_pts, v->info.fps);
            if (!isnan(av->held_pts))
                av->last_pts = av->held_pts;
            av->held = 1;
            continue;
        }
        if (ret == AVERROR_EOF || (ret == AVERROR(EAGAIN) && av->flushing))
            return end_of_stream(v, why, n);
        if (ret != AVERROR(EAGAIN)) {
            if (!v->last_log[0])
                av_error_text(ret, v->last_log, sizeof v->last_log);
            if (!av->cfr) /* else the gap in timestamps reports it, with the right number */
                return report_missing(v, f, "cannot be decoded", why, n);
            continue;
        }
        if ((ret = feed_packet(v, f, why, n)) != GHM_OK)
            return ret;
    }
}

#else /* !GHM_HAVE_FFMPEG */

struct AvState {
    int unused;
};

int ghm_video_have_ffmpeg(void)
{
    return 0;
}

static void av_state_free(AvState **p)
{
    (void)p;
}

static int open_ffmpeg(const char *path, GhmVideo *v, char *why, size_t n)
{
    (void)path;
    (void)v;
    ghmi_why(why, n, "this build has no FFmpeg, so it reads YUV4MPEG2 video only (rebuild with "
                "-DGEOHASH_FFMPEG=ON, or pipe: ffmpeg -i FILE -f yuv4mpegpipe - | "
                "geohash-match REFERENCE -)");
    return GHM_ERR_UNSUPPORTED;
}

static int av_next(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    (void)v;
    (void)f;
    ghmi_why(why, n, "this build has no FFmpeg");
    return GHM_ERR_UNSUPPORTED;
}

#endif /* GHM_HAVE_FFMPEG */

int ghm_video_open(const char *path, GhmVideo **out, char *why, size_t why_size)
{
    if (!path || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    if (strcmp(path, "-") == 0)
        return ghm_video_open_y4m(stdin, out, why, why_size);
    int ret = check_file(path, why, why_size);
    if (ret < 0)
        return ret;
    if (!ghm_video_have_ffmpeg() && (ret = open_y4m_file(path, out, why, why_size)) != 1)
        return ret;
    GhmVideo *v = NULL;
    if ((ret = video_alloc(&v)) < 0)
        return ret;
    if ((ret = open_ffmpeg(path, v, why, why_size)) < 0) {
        ghm_video_free(&v);
        return ret;
    }
    *out = v;
    return GHM_OK;
}

const GhmVideoInfo *ghm_video_info(const GhmVideo *v)
{
    return v ? &v->info : NULL;
}

int ghm_video_select(GhmVideo *v, int64_t start, int64_t end, int64_t step)
{
    if (!v || start < 0 || step < 1 || v->next_index > 0)
        return GHM_ERR_INVALID;
    v->start = start;
    v->end = end < 0 ? -1 : end;
    v->step = step;
    return GHM_OK;
}

int ghm_video_read(GhmVideo *v, GhmVideoFrame *f, char *why, size_t why_size)
{
    if (!v || !f)
        return GHM_ERR_INVALID;
    f->image = NULL;
    f->index = -1;
    f->pts = NAN;
    if (v->finished) {
        ghmi_why(why, why_size, "%s", v->final_why);
        return v->final_status;
    }
    char msg[256] = "";
    int ret = v->y4m ? y4m_next(v, f, msg, sizeof msg) : av_next(v, f, msg, sizeof msg);
    if (ret == GHM_VIDEO_DAMAGED && ++v->damaged_run >= GHM_VIDEO_MAX_DAMAGED_RUN) {
        snprintf(msg, sizeof msg, "%d damaged frames in a row (last: frame %lld); giving up",
                 v->damaged_run, (long long)f->index);
        ret = GHM_ERR_FORMAT;
    } else if (ret == GHM_VIDEO_FRAME) {
        v->damaged_run = 0;
    }
    if (ret < 0 || ret == GHM_VIDEO_END) {
        v->finished = 1;
        v->final_status = ret;
        snprintf(v->final_why, sizeof v->final_why, "%s", msg);
    }
    ghmi_why(why, why_size, "%s", msg);
    return ret;
}

void ghm_video_free(GhmVideo **v)
{
    if (!v || !*v)
        return;
    av_state_free(&(*v)->av);
    ghmi_y4m_free(&(*v)->y4m);
    if ((*v)->y4m_file)
        fclose((*v)->y4m_file);
    free(*v);
    *v = NULL;
}

/* Signatures of common video containers, for a build without FFmpeg: such a file is sent
 * to the video reader, which then says that this build cannot decode it (more helpful than
 * "not a PNG or JPEG image"). */
static int looks_like_container(const uint8_t *h, size_t n)
{
    return (n >= 12 && memcmp(h, "RIFF", 4) == 0 && memcmp(h + 8, "AVI ", 4) == 0) ||
           (n >= 8 && memcmp(h + 4, "ftyp", 4) == 0) ||
           (n >= 4 && memcmp(h, "\x1a\x45\xdf\xa3", 4) == 0) || /* Matroska, WebM */
           (n >= 4 && memcmp(h, "OggS", 4) == 0) || (n >= 3 && memcmp(h, "FLV", 3) == 0) ||
           (n >= 4 && memcmp(h, "\x00\x00\x01\xba", 4) == 0); /* MPEG program stream */
}

int ghm_video_is_video_path(const char *path)
{
    if (!path)
        return 0;
    if (strcmp(path, "-") == 0)
        return 1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    uint8_t head[16];
    size_t n = fread(head, 1, sizeof head, f);
    int err = ferror(f);
    fclose(f);
    if (err)
        return 0;
    /* Without FFmpeg only what this build can read, or will explain it cannot, is a video;
     * anything else (text, an empty file) gets the image loader's message. */
    if (!ghm_video_have_ffmpeg())
        return ghmi_y4m_signature(head, n) || looks_like_container(head, n);
    /* Loose on purpose: a PNG with a damaged signature ("\x89PNX") or a JPEG cut after its
     * first marker still goes to the image loader, which says what is wrong with it. No
     * video container starts with 0x89 or with 0xFF 0xD8. */
    int is_png = n >= 1 && head[0] == 0x89;
    int is_jpeg = n >= 2 && head[0] == 0xff && head[1] == 0xd8;
    return !is_png && !is_jpeg;
}
