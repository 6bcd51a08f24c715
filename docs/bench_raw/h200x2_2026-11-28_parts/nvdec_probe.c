/* nvdec_probe.c - not part of the project: how fast one stream decodes through FFmpeg's
 * h264_cuvid (NVDEC) against the software decoder with N frame threads, frames to host memory. */
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(int argc, char **argv)
{
    const char *path = argv[1], *name = argc > 2 ? argv[2] : "";
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    AVFormatContext *fmt = NULL;
    if (avformat_open_input(&fmt, path, NULL, NULL) < 0 || avformat_find_stream_info(fmt, NULL) < 0) return 2;
    int s = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    const AVCodec *c = *name ? avcodec_find_decoder_by_name(name) : avcodec_find_decoder(fmt->streams[s]->codecpar->codec_id);
    if (!c) { printf("no decoder %s\n", name); return 3; }
    AVCodecContext *d = avcodec_alloc_context3(c);
    avcodec_parameters_to_context(d, fmt->streams[s]->codecpar);
    d->thread_count = threads;
    int r = avcodec_open2(d, c, NULL);
    if (r < 0) { char e[128]; av_strerror(r, e, sizeof e); printf("open %s: %s\n", c->name, e); return 4; }
    AVPacket *p = av_packet_alloc(); AVFrame *f = av_frame_alloc();
    long n = 0; double t0 = now(); unsigned sum = 0; int fmtseen = -1;
    for (int eof = 0;;) {
        r = avcodec_receive_frame(d, f);
        if (r == 0) { n++; fmtseen = f->format; sum += f->data[0][f->linesize[0] * 100 + 100]; av_frame_unref(f); continue; }
        if (r == AVERROR_EOF) break;
        if (eof) break;
        if (av_read_frame(fmt, p) < 0) { avcodec_send_packet(d, NULL); eof = 1; continue; }
        if (p->stream_index == s) avcodec_send_packet(d, p);
        av_packet_unref(p);
    }
    double t = now() - t0;
    printf("%s threads %d: %ld frames in %.3f s, %.1f frames/s (format %d, check %u)\n", c->name, threads, n, t, n / t, fmtseen, sum);
    return 0;
}
