/* hw_probe.c - not part of the project: one stream's decoding rate through FFmpeg's h264
 * decoder with the CUDA hwaccel (frames left on the GPU, or copied to the host as the reader
 * does) against h264_cuvid, each frame read like the probe in ../h200x2_2026-11-28_parts. */
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static enum AVPixelFormat pick(AVCodecContext *d, const enum AVPixelFormat *f) { (void)d; for (; *f != AV_PIX_FMT_NONE; f++) if (*f == AV_PIX_FMT_CUDA) return *f; return AV_PIX_FMT_NONE; }
int main(int argc, char **argv)
{
    const char *path = argv[1], *mode = argv[2]; /* cuvid | hw | hwcopy */
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    AVFormatContext *fmt = NULL;
    if (avformat_open_input(&fmt, path, NULL, NULL) < 0 || avformat_find_stream_info(fmt, NULL) < 0) return 2;
    int s = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    const AVCodec *c = !strcmp(mode, "cuvid") ? avcodec_find_decoder_by_name("h264_cuvid") : avcodec_find_decoder(fmt->streams[s]->codecpar->codec_id);
    AVCodecContext *d = avcodec_alloc_context3(c);
    avcodec_parameters_to_context(d, fmt->streams[s]->codecpar);
    d->pkt_timebase = fmt->streams[s]->time_base;
    d->thread_count = threads;
    double t00 = now();
    if (strcmp(mode, "cuvid")) {
        AVBufferRef *hw = NULL;
        if (av_hwdevice_ctx_create(&hw, AV_HWDEVICE_TYPE_CUDA, "0", NULL, 0) < 0) { printf("no device\n"); return 3; }
        d->hw_device_ctx = hw; d->get_format = pick;
    }
    if (avcodec_open2(d, c, NULL) < 0) return 4;
    double topen = now() - t00;
    AVPacket *p = av_packet_alloc(); AVFrame *f = av_frame_alloc(), *h = av_frame_alloc();
    long n = 0; double t0 = now(); int copy = !strcmp(mode, "hwcopy"), fmtseen = -1;
    for (int eof = 0;;) {
        int r = avcodec_receive_frame(d, f);
        if (r == 0) { n++; fmtseen = f->format; if (copy && av_hwframe_transfer_data(h, f, 0) < 0) return 5; av_frame_unref(f); continue; }
        if (r == AVERROR_EOF || eof) break;
        if (av_read_frame(fmt, p) < 0) { avcodec_send_packet(d, NULL); eof = 1; continue; }
        if (p->stream_index == s) avcodec_send_packet(d, p);
        av_packet_unref(p);
    }
    double t = now() - t0;
    printf("%s threads %d: %ld frames in %.3f s, %.1f frames/s (format %d, open %.0f ms)\n", mode, threads, n, t, n / t, fmtseen, 1e3 * topen);
    return 0;
}
