/*
 * video_ffmpeg.c - the FFmpeg reader behind a GhmVideo: libavformat probes the file's content
 * and demuxes, libavcodec decodes the best video stream, frames get their timestamps and their
 * damaged or missing ones are counted, and each selected frame goes to video_frame.c to become
 * a grey image. Compiled only with FFmpeg (GHM_HAVE_FFMPEG, set by CMake for the library's
 * sources), as video_frame.c and video_gpu_decode.c are; without it video_ffmpeg_none.c
 * stands in. Every FFmpeg call goes through ghmi_ff (ffmpeg_libs.c loads the libraries when
 * the first video is opened).
 *
 * Logging: FFmpeg has one process-wide log callback, and it belongs to the application: the
 * library never sets one of its own (an application that uses FFmpeg itself would lose its
 * own, and a library callback could only guess which contexts are its own). The application
 * may pass each line to ghm_video_log_ffmpeg() (the program does, in src/ffmpeg_log.c, whose
 * callback the library installs when it loads FFmpeg: ghm_video_set_ffmpeg_log); a line from
 * this video's demuxer or decoder then lands in the video's own buffer, so that a damaged
 * frame's message can say what the decoder saw. Without that the message says what the
 * frame's flags say.
 *
 * Decoding threads: FFmpeg's frame threads (a frame per thread, in order), so that one
 * stream's decoder keeps up with matchers on a GPU (one thread decodes about 100-300 1080p
 * H.264 frames a second, where one H100 matches 1400). They change no number: the decoder
 * hands frames, damaged ones and refusals back in packet order. A fixed count by default
 * (ghm_video.h), not one per core: frames concealed after damaged data depend on the count,
 * and a run should give the same lines on every machine. A decoder thread logs with its own
 * copy of the decoder's context, which carries the context's opaque field: the library sets
 * the demuxer's and the decoder's opaque to its reader and finds the reader again among the
 * open ones (by the pointer's value; nothing is read through an opaque that is not one of them).
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "video_internal.h"
#include "why_internal.h"

#if GHM_HAVE_FFMPEG
#include "ffmpeg_libs_internal.h"
#include "video_ffmpeg_internal.h"

/* Frame threads of a decoder whose pictures NVDEC decodes (ghm_video_set_gpu_decoding): its CPU
 * share is parsing and bookkeeping, which a few threads overlap with the engine's work (1080p
 * H.264 copied to the host: 630 -> 700 frames/s a stream with 4; docs/BENCHMARKS.md); more
 * streams at once, not more threads, use a GPU's several engines. */
#define GPU_DECODE_THREADS 4

struct GhmiAv {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    AVFrame *host_frame; /* a GPU-decoded frame's copy in host memory (video_gpu_decode.c) */
    GhmiGrey grey; /* frame -> grey image (video_frame.c) */
    int threads;   /* the decoder's (ghm_video_set_decode_threads) */
    int gpu;       /* the CUDA device that decodes, -1: the CPU */
    int stream;
    int64_t first_ts; /* timestamp of the first frame out of the decoder: pts 0 */
    double last_pts;  /* of the previous frame out of the decoder, NAN before */
    int cfr;          /* constant frame rate: gaps in timestamps are missing frames */
    int held;         /* av->frame holds a frame to hand out after the missing ones */
    double held_pts;
    int64_t missing;  /* frames to report as damaged before the held one */
    int flushing;     /* the demuxer is done; draining the decoder */
    char *path;       /* for the plan of a jump (video_jump.c) and a demuxer opened again */
    int planned;      /* the first read has decided where decoding starts */
    int pending;      /* pkt holds the key packet a jump found, to be fed first */
    int64_t skip_before; /* after a jump: frames timed before its key frame are not ours */
    int read_error;   /* the AVERROR that ended demuxing, when not a clean EOF */
    int corrupt_packets;
    /* Under open_lock: the last error line this reader's contexts logged (when the application
     * passes lines to ghm_video_log_ffmpeg), and the list of open readers. */
    char last_log[192];
    struct GhmiAv *next_open;
};

/* The readers whose contexts may log, for ghm_video_log_ffmpeg (any thread). */
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static GhmiAv *open_readers;

int ghm_video_have_ffmpeg(void)
{
    return ghmi_ffmpeg_load(NULL, 0) == GHM_OK;
}

int ghmi_video_built_with_ffmpeg(void)
{
    return 1;
}

void ghmi_av_error_text(int err, char *buf, size_t n)
{
    if (ghmi_ff.av_strerror(err, buf, n) < 0)
        snprintf(buf, n, "FFmpeg error %d", err);
}

/* Lists av among the open readers, whose contexts' lines ghm_video_log_ffmpeg takes. */
static void list(GhmiAv *av)
{
    pthread_mutex_lock(&open_lock);
    av->next_open = open_readers;
    open_readers = av;
    pthread_mutex_unlock(&open_lock);
}

static void unlist(GhmiAv *av)
{
    pthread_mutex_lock(&open_lock);
    for (GhmiAv **at = &open_readers; *at; at = &(*at)->next_open)
        if (*at == av) {
            *at = av->next_open;
            break;
        }
    pthread_mutex_unlock(&open_lock);
}

/* The open reader a line's context belongs to: a demuxer or decoder context (a decoder
 * thread's copy included) whose opaque is the reader. Under open_lock. */
static GhmiAv *reader_of(const void *avcl)
{
    if (!open_readers) /* then FFmpeg may not even be loaded */
        return NULL;
    const AVClass *class = *(const AVClass *const *)avcl;
    const void *opaque = NULL;
    if (class == ghmi_ff.avcodec_get_class())
        opaque = ((const AVCodecContext *)avcl)->opaque;
    else if (class == ghmi_ff.avformat_get_class())
        opaque = ((const AVFormatContext *)avcl)->opaque;
    for (GhmiAv *av = open_readers; av && opaque; av = av->next_open)
        if (opaque == av)
            return av;
    return NULL;
}

int ghm_video_log_ffmpeg(void *avcl, int level, const char *fmt, va_list ap)
{
    if (!avcl)
        return 0;
    pthread_mutex_lock(&open_lock);
    GhmiAv *av = reader_of(avcl);
    if (av && level <= AV_LOG_ERROR) {
        vsnprintf(av->last_log, sizeof av->last_log, fmt, ap);
        size_t len = strlen(av->last_log);
        while (len > 0 && (av->last_log[len - 1] == '\n' || av->last_log[len - 1] == ' '))
            av->last_log[--len] = '\0';
    }
    pthread_mutex_unlock(&open_lock);
    return av != NULL;
}

/* The last line logged for av, or fallback when there is none; the line is used up. */
static void take_log(GhmiAv *av, const char *fallback, char *out, size_t n)
{
    pthread_mutex_lock(&open_lock);
    snprintf(out, n, "%s", av->last_log[0] ? av->last_log : fallback);
    av->last_log[0] = '\0';
    pthread_mutex_unlock(&open_lock);
}

/* Keeps FFmpeg's words for err as av's line when nothing was logged. */
static void note_error(GhmiAv *av, int err)
{
    char text[sizeof av->last_log];
    ghmi_av_error_text(err, text, sizeof text);
    pthread_mutex_lock(&open_lock);
    if (!av->last_log[0])
        snprintf(av->last_log, sizeof av->last_log, "%s", text);
    pthread_mutex_unlock(&open_lock);
}

void ghmi_av_free(GhmiAv **p)
{
    if (!p || !*p)
        return;
    GhmiAv *av = *p;
    unlist(av); /* before the decoder's threads are joined: their last lines are dropped */
    ghmi_grey_release(&av->grey);
    ghmi_ff.av_frame_free(&av->frame);
    ghmi_ff.av_frame_free(&av->host_frame);
    ghmi_ff.av_packet_free(&av->pkt);
    ghmi_decoder_free(&av->dec);
    ghmi_ff.avformat_close_input(&av->fmt);
    free(av->path);
    free(av);
    *p = NULL;
}

/* Probes by content only: the URL given to the probe is empty, so no demuxer can pick the file
 * by its extension (a text file named .mp4 is not a video). */
static int probe_format(const char *path, const AVInputFormat **fmt, char *why, size_t n)
{
    AVIOContext *pb = NULL;
    char err[128];
    int ret = ghmi_ff.avio_open(&pb, path, AVIO_FLAG_READ);
    if (ret < 0) {
        ghmi_av_error_text(ret, err, sizeof err);
        ghmi_why(why, n, "cannot open: %s", err);
        return GHM_ERR_IO;
    }
    ret = ghmi_ff.av_probe_input_buffer2(pb, fmt, "", NULL, 0, 0);
    ghmi_ff.avio_closep(&pb);
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

/* A decoder for av's stream with av->threads threads (0 = FFmpeg's choice: one per core), on
 * av->gpu's video engines where that is a device, ready; NULL on failure, with why. */
static AVCodecContext *new_decoder(GhmiAv *av, int *err, char *why, size_t n)
{
    AVStream *st = av->fmt->streams[av->stream];
    const AVCodec *codec = ghmi_ff.avcodec_find_decoder(st->codecpar->codec_id);
    if (!codec) {
        ghmi_why(why, n, "no decoder in this FFmpeg for its video codec '%s'",
            ghmi_ff.avcodec_get_name(st->codecpar->codec_id));
        *err = GHM_ERR_UNSUPPORTED;
        return NULL;
    }
    AVCodecContext *dec = ghmi_ff.avcodec_alloc_context3(codec);
    *err = GHM_ERR_NOMEM;
    if (!dec || ghmi_ff.avcodec_parameters_to_context(dec, st->codecpar) < 0) {
        ghmi_decoder_free(&dec);
        return NULL;
    }
    dec->pkt_timebase = st->time_base;
    dec->thread_count = av->gpu >= 0 ? GPU_DECODE_THREADS : av->threads;
    dec->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    dec->opaque = av; /* what the decoder's threads log with: see reader_of */
    if (av->gpu >= 0 && (*err = ghmi_gpu_decoder_attach(dec, codec, av->gpu, why, n)) < 0) {
        ghmi_decoder_free(&dec);
        return NULL;
    }
    int ret = ghmi_ff.avcodec_open2(dec, codec, NULL);
    if (ret < 0) {
        char text[128];
        ghmi_av_error_text(ret, text, sizeof text);
        ghmi_why(why, n, "cannot start the %s decoder: %s", codec->name, text);
        ghmi_decoder_free(&dec);
        *err = GHM_ERR_EXTERNAL;
    }
    return dec;
}

/* av's decoder, replaced by one as av->threads and av->gpu say; on failure the old one stays. */
static int open_decoder(GhmiAv *av, char *why, size_t n)
{
    int err;
    AVCodecContext *dec = new_decoder(av, &err, why, n);
    if (!dec)
        return err;
    ghmi_decoder_free(&av->dec);
    av->dec = dec;
    return GHM_OK;
}

static void fill_info(GhmVideo *v, const GhmiAv *av)
{
    const AVStream *st = av->fmt->streams[av->stream];
    GhmVideoInfo *info = &v->info;
    int turned = av->grey.orientation >= 5; /* shown a quarter turn from how it is stored */
    info->width = turned ? st->codecpar->height : st->codecpar->width;
    info->height = turned ? st->codecpar->width : st->codecpar->height;
    AVRational rate = st->avg_frame_rate.num > 0 ? st->avg_frame_rate : st->r_frame_rate;
    info->fps = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
    info->frames = st->nb_frames > 0 ? st->nb_frames : -1;
    snprintf(info->format, sizeof info->format, "%s", av->fmt->iformat->name);
    snprintf(info->codec, sizeof info->codec, "%s",
             ghmi_ff.avcodec_get_name(st->codecpar->codec_id));
}

int ghmi_av_open_demuxer(const char *path, void *opaque, AVFormatContext **out, int *stream,
                         char *why, size_t n)
{
    const AVInputFormat *ifmt = NULL;
    int ret = probe_format(path, &ifmt, why, n);
    if (ret < 0)
        return ret;
    AVFormatContext *fmt = ghmi_ff.avformat_alloc_context();
    if (!fmt)
        return GHM_ERR_NOMEM;
    fmt->opaque = opaque; /* its lines are this reader's: see reader_of */
    if ((ret = ghmi_ff.avformat_open_input(&fmt, path, ifmt, NULL)) < 0) {
        char err[128];
        ghmi_av_error_text(ret, err, sizeof err);
        ghmi_why(why, n, "cannot read it as %s: %s", ifmt->name, err);
        return GHM_ERR_FORMAT; /* avformat_open_input freed the context on failure */
    }
    *out = fmt;
    if ((ret = ghmi_ff.avformat_find_stream_info(fmt, NULL)) < 0) {
        char err[128];
        ghmi_av_error_text(ret, err, sizeof err);
        ghmi_why(why, n, "damaged %s file: %s", ifmt->name, err);
        return GHM_ERR_FORMAT;
    }
    if ((*stream = pick_stream(fmt)) < 0) {
        ghmi_why(why, n, "has no video stream (%u stream%s of other kinds)", fmt->nb_streams,
            fmt->nb_streams == 1 ? "" : "s");
        return GHM_ERR_FORMAT;
    }
    /* Every other stream (audio, subtitles) is dropped by the demuxer instead of by us. */
    for (unsigned i = 0; i < fmt->nb_streams; i++)
        if ((int)i != *stream)
            fmt->streams[i]->discard = AVDISCARD_ALL;
    return GHM_OK;
}

static int open_av(const char *path, GhmVideo *v, char *why, size_t n)
{
    GhmiAv *av = calloc(1, sizeof *av);
    if (!av)
        return GHM_ERR_NOMEM;
    v->av = av;
    list(av);
    av->skip_before = AV_NOPTS_VALUE;
    if (!(av->path = strdup(path)))
        return GHM_ERR_NOMEM;
    int ret = ghmi_av_open_demuxer(path, av, &av->fmt, &av->stream, why, n);
    if (ret < 0)
        return ret;
    av->threads = GHM_VIDEO_DECODE_THREADS;
    av->gpu = -1;
    if ((ret = open_decoder(av, why, n)) < 0)
        return ret;
    if (!(av->pkt = ghmi_ff.av_packet_alloc()) || !(av->frame = ghmi_ff.av_frame_alloc()) ||
        !(av->host_frame = ghmi_ff.av_frame_alloc()))
        return GHM_ERR_NOMEM;
    av->first_ts = AV_NOPTS_VALUE;
    av->last_pts = NAN;
    const AVStream *st = av->fmt->streams[av->stream];
    /* Containers give a variable-rate stream an average rate unlike its base rate. */
    av->cfr = st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0 &&
              av_cmp_q(st->avg_frame_rate, st->r_frame_rate) == 0;
    av->grey.orientation = ghmi_display_orientation(st);
    fill_info(v, av);
    return GHM_OK;
}

/* Seconds from the first frame. Not from the stream's start_time: in an AVI with packed
 * B-frames (Megamind.avi) FFmpeg's best-effort timestamp of frame 0 is one tick, and frame n
 * should be at n / fps as in every other container. A frame without a timestamp (the last one
 * flushed out of that AVI's decoder) is placed one frame after the previous one. */
static double frame_time(GhmiAv *av, const AVFrame *frame, double fps)
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
static int64_t missing_before(const GhmiAv *av, double pts, double fps)
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
    GhmiAv *av = v->av;
    AVFrame *frame = av->frame;
    int64_t index = v->next_index++;
    double pts = av->held_pts;
    int ret = -1;
    if (frame->decode_error_flags || (frame->flags & AV_FRAME_FLAG_CORRUPT)) {
        f->index = index;
        f->pts = pts;
        /* The log line may come from the packet fed before this frame came out (decoders
         * with delay, threads), so it is kept until a damaged frame uses it. */
        char said[sizeof av->last_log];
        take_log(av, "the decoder concealed errors", said, sizeof said);
        ghmi_why(why, n, "frame %lld is damaged (%s); skipped", (long long)index, said);
        ret = GHM_VIDEO_DAMAGED;
    } else if (ghmi_video_wanted(v, index)) {
        const AVFrame *host = ghmi_gpu_frame_to_host(frame, av->host_frame, why, n);
        ret = host ? ghmi_grey_from_frame(&av->grey, host, &f->image, why, n) : GHM_ERR_EXTERNAL;
        if (ret == GHM_OK) {
            f->index = index;
            f->pts = pts;
            ret = GHM_VIDEO_FRAME;
        }
    }
    ghmi_ff.av_frame_unref(frame);
    return ret;
}

/* The decoder has given its last frame: a clean end, or a file that stopped early. */
static int end_of_stream(GhmVideo *v, char *why, size_t n)
{
    GhmiAv *av = v->av;
    const AVStream *st = av->fmt->streams[av->stream];
    if (av->read_error) {
        char err[128];
        ghmi_av_error_text(av->read_error, err, sizeof err);
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
    if (v->y4m_cut[0]) { /* FFmpeg's Y4M demuxer drops a frame cut short without a word */
        ghmi_why(why, n, "%s", v->y4m_cut);
        return GHM_ERR_TRUNCATED;
    }
    return GHM_VIDEO_END;
}

/* A frame the decoder refused or dropped: reported with the next number. */
static int report_missing(GhmVideo *v, GhmVideoFrame *f, const char *what, char *why, size_t n)
{
    char said[sizeof v->av->last_log];
    take_log(v->av, "damaged data", said, sizeof said);
    f->index = v->next_index++;
    ghmi_why(why, n, "frame %lld %s (%s); skipped", (long long)f->index, what, said);
    return GHM_VIDEO_DAMAGED;
}

/* Feeds the decoder one packet of our stream. Returns GHM_OK, or GHM_VIDEO_DAMAGED when the
 * decoder refuses the packet (the frame it held is counted as damaged). */
static int feed_packet(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    GhmiAv *av = v->av;
    int ret = av->pending ? 0 : ghmi_ff.av_read_frame(av->fmt, av->pkt);
    av->pending = 0;
    if (ret < 0) {
        if (ret != AVERROR_EOF && !ghmi_ff.avio_feof(av->fmt->pb))
            av->read_error = ret;
        av->flushing = 1;
        ghmi_ff.avcodec_send_packet(av->dec, NULL);
        return GHM_OK;
    }
    if (av->pkt->stream_index != av->stream) {
        ghmi_ff.av_packet_unref(av->pkt);
        return GHM_OK;
    }
    if (av->pkt->flags & AV_PKT_FLAG_CORRUPT)
        av->corrupt_packets++;
    ret = ghmi_ff.avcodec_send_packet(av->dec, av->pkt);
    ghmi_ff.av_packet_unref(av->pkt);
    if (ret < 0 && ret != AVERROR(EAGAIN) && ret != AVERROR_EOF) {
        note_error(av, ret);
        if (!av->cfr) /* else the gap in timestamps reports it, with the right number */
            return report_missing(v, f, "cannot be decoded", why, n);
    }
    return GHM_OK;
}

/* Reads the stream's packets from where av_seek_frame left the demuxer up to the jump's key
 * packet, which stays in av->pkt; 0 when it is not met (the seek went past it, or the file
 * ended). Every packet before the key packet is timed before it (video_jump.c), so a later one
 * means the demuxer is past it. */
static int find_key_packet(GhmiAv *av, const GhmiJump *j)
{
    while (ghmi_ff.av_read_frame(av->fmt, av->pkt) >= 0) {
        const AVPacket *pkt = av->pkt;
        if (pkt->stream_index == av->stream) {
            if (pkt->pts == j->pts && (pkt->flags & AV_PKT_FLAG_KEY))
                return 1;
            if (pkt->pts == AV_NOPTS_VALUE || pkt->pts > j->pts)
                break;
        }
        ghmi_ff.av_packet_unref(av->pkt);
    }
    ghmi_ff.av_packet_unref(av->pkt);
    return 0;
}

/* Starts decoding at the key frame of j, numbered and timed as a reading from the start would
 * (video_jump.c). When the demuxer cannot be put there, it is opened again at the start, as if
 * no jump had been planned. */
static int enter_at(GhmVideo *v, const GhmiJump *j, char *why, size_t n)
{
    GhmiAv *av = v->av;
    /* Demuxers seek by decoding time (MP4) or by presentation time (Matroska): the earlier of
     * the two lands on the key packet or on one before it. */
    int64_t target = j->dts != AV_NOPTS_VALUE && j->dts < j->pts ? j->dts : j->pts;
    if (ghmi_ff.av_seek_frame(av->fmt, av->stream, target, AVSEEK_FLAG_BACKWARD) < 0 ||
        !find_key_packet(av, j)) {
        ghmi_ff.avformat_close_input(&av->fmt);
        return ghmi_av_open_demuxer(av->path, av, &av->fmt, &av->stream, why, n);
    }
    av->pending = 1;
    av->first_ts = j->origin;
    av->skip_before = j->pts;
    v->next_index = j->index;
    double tb = av_q2d(av->fmt->streams[av->stream]->time_base);
    av->last_pts = (double)(j->pts - j->origin) * tb - 1.0 / v->info.fps;
    return GHM_OK;
}

/* At the first read of a selection that starts past frame 0: decoding starts at the last key
 * frame before it where the file's timestamps allow (video_jump.c), else at the start. */
static int plan_start(GhmVideo *v, char *why, size_t n)
{
    GhmiAv *av = v->av;
    av->planned = 1;
    if (v->start <= 0 || !av->cfr)
        return GHM_OK;
    GhmiJump j;
    int ret = ghmi_av_plan_jump(av->path, av, v->info.fps, v->start, &j);
    return ret == 1 ? enter_at(v, &j, why, n) : ret;
}

/* A frame out of the decoder after a jump that comes before its key frame (a frame of the
 * group before it, which decoding from the key frame cannot give): dropped unnumbered. 0 from
 * the key frame on. */
static int before_jump(GhmiAv *av)
{
    if (av->skip_before == AV_NOPTS_VALUE)
        return 0;
    int64_t ts = av->frame->best_effort_timestamp;
    if (ts != AV_NOPTS_VALUE && ts < av->skip_before)
        return 1;
    av->skip_before = AV_NOPTS_VALUE;
    /* What the decoder said until now is about entering the stream in its middle (H.264:
     * "mmco: unref short failure" for the references it never saw), not about a frame. */
    char said[sizeof av->last_log];
    take_log(av, "", said, sizeof said);
    return 0;
}

static int next_frame(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    GhmiAv *av = v->av;
    if (!av->planned) {
        int ret = plan_start(v, why, n);
        if (ret < 0)
            return ret;
    }
    for (;;) {
        if (ghmi_video_past_end(v, v->next_index))
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
        int ret = ghmi_ff.avcodec_receive_frame(av->dec, av->frame);
        if (ret == 0 && before_jump(av)) {
            ghmi_ff.av_frame_unref(av->frame);
            continue;
        }
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
            note_error(av, ret);
            if (!av->cfr) /* else the gap in timestamps reports it, with the right number */
                return report_missing(v, f, "cannot be decoded", why, n);
            continue;
        }
        if ((ret = feed_packet(v, f, why, n)) != GHM_OK)
            return ret;
    }
}

int ghmi_av_open(const char *path, GhmVideo *v, char *why, size_t n)
{
    if (ghmi_ffmpeg_load(why, n) < 0)
        return GHM_ERR_UNSUPPORTED;
    return open_av(path, v, why, n);
}

int ghmi_av_next(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    return next_frame(v, f, why, n);
}

int ghmi_av_can_jump(GhmVideo *v)
{
    GhmiJump j;
    return v->av->cfr && ghmi_av_plan_jump(v->av->path, v->av, v->info.fps, -1, &j) == 1;
}

int ghmi_av_set_threads(GhmVideo *v, int threads)
{
    char why[256];
    int old = v->av->threads;
    v->av->threads = threads;
    int ret = open_decoder(v->av, why, sizeof why);
    if (ret < 0)
        v->av->threads = old;
    return ret;
}

int ghmi_av_set_gpu(GhmVideo *v, int device, char *why, size_t n)
{
    int old = v->av->gpu;
    v->av->gpu = device;
    int ret = open_decoder(v->av, why, n);
    if (ret < 0)
        v->av->gpu = old;
    return ret;
}

#endif /* GHM_HAVE_FFMPEG */
