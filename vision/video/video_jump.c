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
 * read once, without decoding (the demuxer only: a small fraction of decoding them), and a
 * jump is planned only when every packet of the stream has a timestamp on the constant
 * rate's grid, no two packets share a grid position, no packet is marked corrupt, and the
 * first packet is a key frame with the earliest timestamp (a reading from the start then calls
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
    int key;
} Packet;

typedef struct Packets {
    Packet *at;
    size_t n, cap;
} Packets;

static int push(Packets *p, const AVPacket *pkt)
{
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 4096;
        Packet *at = realloc(p->at, cap * sizeof *at);
        if (!at)
            return GHM_ERR_NOMEM;
        p->at = at;
        p->cap = cap;
    }
    p->at[p->n++] = (Packet){pkt->pts, pkt->dts, (pkt->flags & AV_PKT_FLAG_KEY) != 0};
    return GHM_OK;
}

/* The stream's packets in decode order; 0 when one has no presentation timestamp or is marked
 * corrupt (no plan can be made; a decoding timestamp may be missing, as in Matroska), 1 when
 * all were read, or a negative error. */
static int read_packets(AVFormatContext *fmt, int stream, Packets *p)
{
    AVPacket *pkt = ghmi_ff.av_packet_alloc();
    if (!pkt)
        return GHM_ERR_NOMEM;
    int ret = 1, read;
    while (ret == 1 && (read = ghmi_ff.av_read_frame(fmt, pkt)) >= 0) {
        if (pkt->stream_index == stream) {
            if (pkt->pts == AV_NOPTS_VALUE ||
                (pkt->flags & (AV_PKT_FLAG_CORRUPT | AV_PKT_FLAG_DISCARD)))
                ret = 0;
            else if (push(p, pkt) < 0)
                ret = GHM_ERR_NOMEM;
        }
        ghmi_ff.av_packet_unref(pkt);
    }
    if (ret == 1 && read != AVERROR_EOF && !ghmi_ff.avio_feof(fmt->pb))
        ret = 0; /* a read error before the end: the count of frames is not known */
    ghmi_ff.av_packet_free(&pkt);
    return ret;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Each packet's position on the frame grid from the first packet's timestamp, into grid[]; 0
 * when one is off the grid (by the quarter frame that video_ffmpeg.c's gap test allows), two
 * share a position, or the first is not the earliest key frame. */
static int grid_positions(const Packets *p, double frame_ticks, int64_t *grid)
{
    const Packet *first = &p->at[0];
    if (!first->key)
        return 0;
    for (size_t i = 0; i < p->n; i++) {
        double steps = (double)(p->at[i].pts - first->pts) / frame_ticks;
        double k = floor(steps + 0.5);
        if (k < 0 || fabs(steps - k) > 0.25)
            return 0;
        grid[i] = (int64_t)k;
    }
    int64_t *sorted = malloc(p->n * sizeof *sorted);
    if (!sorted)
        return GHM_ERR_NOMEM;
    memcpy(sorted, grid, p->n * sizeof *sorted);
    qsort(sorted, p->n, sizeof *sorted, by_value);
    int unique = 1;
    for (size_t i = 1; i < p->n && unique; i++)
        unique = sorted[i] > sorted[i - 1];
    free(sorted);
    return unique;
}

/* The last key packet numbered 1 .. start with every packet before it on an earlier position;
 * -1 when none. */
static ptrdiff_t pick_key(const Packets *p, const int64_t *grid, int64_t start)
{
    ptrdiff_t best = -1;
    int64_t before = -1; /* the latest position among the packets so far */
    for (size_t i = 0; i < p->n; i++) {
        if (p->at[i].key && grid[i] > before && grid[i] > 0 && grid[i] <= start)
            best = (ptrdiff_t)i;
        if (grid[i] > before)
            before = grid[i];
    }
    return best;
}

int ghmi_av_plan_jump(const char *path, void *opaque, double fps, int64_t start, GhmiJump *jump)
{
    AVFormatContext *fmt = NULL;
    int stream = -1;
    Packets p = {0};
    int64_t *grid = NULL;
    int ret = ghmi_av_open_demuxer(path, opaque, &fmt, &stream, NULL, 0);
    if (ret >= 0 && fps > 0)
        ret = read_packets(fmt, stream, &p);
    else
        ret = 0;
    if (ret == 1 && p.n >= 2 && !(grid = malloc(p.n * sizeof *grid)))
        ret = GHM_ERR_NOMEM;
    if (ret == 1 && grid) {
        AVRational tb = fmt->streams[stream]->time_base;
        ret = grid_positions(&p, 1.0 / (fps * av_q2d(tb)), grid);
    }
    ptrdiff_t key = ret == 1 && grid ? pick_key(&p, grid, start) : -1;
    if (key >= 0)
        *jump = (GhmiJump){.index = grid[key], .pts = p.at[key].pts, .dts = p.at[key].dts,
                           .origin = p.at[0].pts};
    else if (ret > 0)
        ret = 0;
    free(grid);
    free(p.at);
    ghmi_ff.avformat_close_input(&fmt);
    return ret;
}

#endif /* GHM_HAVE_FFMPEG */
