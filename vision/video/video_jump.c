/*
 * video_jump.c - where a reader asked for the frames from number `start` on may begin decoding:
 * a key frame at or before `start`, instead of the first frame. A video's frames can only be
 * decoded in order from a key frame, so a reader that starts at frame 0 decodes everything
 * before its range: an MPI rank or a GPU given the second half of a video decoded the first half
 * for nothing (docs/BENCHMARKS.md: one stream's decoder is what a GPU waits for).
 *
 * The numbers must stay those of a reading from the first frame, which counts the frames out of
 * the decoder and reports the gaps in a constant-rate stream's timestamps as missing frames
 * (video_ffmpeg.c). Entering at a key frame, the reader counts from the key frame's number
 * instead, which is right where timestamps alone number the frames. So the file's packets are
 * read up to the key frame after the entry, without decoding (the demuxer only: a small
 * fraction of decoding them), and a jump is planned only when every one of them has a
 * timestamp on the constant rate's grid, no two share a grid position, none is marked corrupt,
 * and the first packet is a key frame with the earliest timestamp (a reading from the start then calls
 * it frame 0; a capture that begins inside a group of pictures, whose first frames the decoder
 * drops, is read from the start). The key frame chosen also has every packet before it in
 * decode order on an earlier grid position, so none of its range is decoded before it. What
 * this does not see: a first key frame so damaged that the decoder refuses it outright (a
 * reading from the start then calls the next frame frame 0).
 */
#include <math.h>
#include <stdlib.h>

#include "video_internal.h"

#if GHM_HAVE_FFMPEG
#include "ffmpeg_libs_internal.h"
#include "video_ffmpeg_internal.h"

typedef struct Packet {
    int64_t pts, dts;
    int64_t grid; /* its frame number by its timestamp */
    int key;
} Packet;

/* The stream's packets as read, and what decides where reading them stops. */
typedef struct Scan {
    Packet *at;
    size_t n, cap;
    double frame_ticks; /* a frame's duration in the stream's time base */
    int64_t limit;      /* the latest frame number a reader may enter at */
    int any;            /* enter at the first key frame after frame 0, whatever its number */
    int candidate;      /* a key packet numbered 1 .. limit has been read */
} Scan;

static int push(Scan *s, const AVPacket *pkt, int64_t grid)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4096;
        Packet *at = realloc(s->at, cap * sizeof *at);
        if (!at)
            return GHM_ERR_NOMEM;
        s->at = at;
        s->cap = cap;
    }
    s->at[s->n++] = (Packet){pkt->pts, pkt->dts, grid, (pkt->flags & AV_PKT_FLAG_KEY) != 0};
    return GHM_OK;
}

/* A timestamp's frame number from the first packet's (frame 0); -1 when it is before it or off
 * the frame grid by more than the quarter frame that video_ffmpeg.c's gap test allows. */
static int64_t grid_of(const Scan *s, int64_t pts)
{
    double steps = (double)(pts - s->at[0].pts) / s->frame_ticks;
    double k = floor(steps + 0.5);
    return k < 0 || fabs(steps - k) > 0.25 ? -1 : (int64_t)k;
}

/* 1 when the packet ends the scan: a key packet after those a reader may enter at. The packets
 * before it are all a plan needs: a key frame's number is that of a reading from the start when
 * every packet before it, and those after it that are shown before it (which come before the
 * next key frame), are on the grid. */
static int ends_scan(Scan *s, int64_t grid, int key)
{
    if (!key || s->n == 0)
        return 0;
    if (grid > s->limit || (s->any && s->candidate))
        return 1;
    s->candidate |= grid > 0;
    return 0;
}

/* Reads the stream's packets in decode order until ends_scan. 1 when they were read, 0 when one
 * rules a plan out (no presentation timestamp, marked corrupt, off the grid, a first packet that
 * is not a key frame or is shown after a later one, a read error), or a negative error. */
static int scan_packets(AVFormatContext *fmt, int stream, Scan *s)
{
    AVPacket *pkt = ghmi_ff.av_packet_alloc();
    if (!pkt)
        return GHM_ERR_NOMEM;
    int ret = 1, read, ended = 0;
    while (ret == 1 && !ended && (read = ghmi_ff.av_read_frame(fmt, pkt)) >= 0) {
        if (pkt->stream_index == stream) {
            int key = (pkt->flags & AV_PKT_FLAG_KEY) != 0;
            int64_t grid = s->n ? grid_of(s, pkt->pts) : 0;
            if (pkt->pts == AV_NOPTS_VALUE || grid < 0 || (s->n == 0 && !key) ||
                (pkt->flags & (AV_PKT_FLAG_CORRUPT | AV_PKT_FLAG_DISCARD)))
                ret = 0;
            else if (!(ended = ends_scan(s, grid, key)) && push(s, pkt, grid) < 0)
                ret = GHM_ERR_NOMEM;
        }
        ghmi_ff.av_packet_unref(pkt);
    }
    if (ret == 1 && !ended && read != AVERROR_EOF && !ghmi_ff.avio_feof(fmt->pb))
        ret = 0; /* a read error before the end */
    ghmi_ff.av_packet_free(&pkt);
    return ret;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* 1 when no two packets read share a frame number. */
static int unique_numbers(const Scan *s)
{
    int64_t *sorted = malloc(s->n * sizeof *sorted);
    if (!sorted)
        return GHM_ERR_NOMEM;
    for (size_t i = 0; i < s->n; i++)
        sorted[i] = s->at[i].grid;
    qsort(sorted, s->n, sizeof *sorted, by_value);
    int unique = 1;
    for (size_t i = 1; i < s->n && unique; i++)
        unique = sorted[i] > sorted[i - 1];
    free(sorted);
    return unique;
}

/* The last key packet numbered 1 .. limit with every packet before it on an earlier number;
 * -1 when none. */
static ptrdiff_t pick_key(const Scan *s)
{
    ptrdiff_t best = -1;
    int64_t before = -1; /* the latest number among the packets so far */
    for (size_t i = 0; i < s->n; i++) {
        const Packet *p = &s->at[i];
        if (p->key && p->grid > before && p->grid > 0 && p->grid <= s->limit)
            best = (ptrdiff_t)i;
        if (p->grid > before)
            before = p->grid;
    }
    return best;
}

int ghmi_av_plan_jump(const char *path, void *opaque, double fps, int64_t start, GhmiJump *jump)
{
    AVFormatContext *fmt = NULL;
    int stream = -1;
    Scan s = {.limit = start < 0 ? INT64_MAX : start, .any = start < 0};
    int ret = ghmi_av_open_demuxer(path, opaque, &fmt, &stream, NULL, 0);
    if (ret >= 0 && fps > 0) {
        s.frame_ticks = 1.0 / (fps * av_q2d(fmt->streams[stream]->time_base));
        ret = scan_packets(fmt, stream, &s);
    } else {
        ret = 0;
    }
    if (ret == 1)
        ret = unique_numbers(&s);
    ptrdiff_t key = ret == 1 ? pick_key(&s) : -1;
    if (key >= 0)
        *jump = (GhmiJump){.index = s.at[key].grid, .pts = s.at[key].pts, .dts = s.at[key].dts,
                           .origin = s.at[0].pts};
    else if (ret > 0)
        ret = 0;
    free(s.at);
    ghmi_ff.avformat_close_input(&fmt);
    return ret;
}

#endif /* GHM_HAVE_FFMPEG */
