/* loop.c - writes the video stream of IN N times in a row into OUT (stream copy, timestamps
 * shifted by the clip's length each time): a longer 1080p H.264 clip for the device's runs. */
#include <libavformat/avformat.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int times = atoi(argv[3]);
    AVFormatContext *oc = NULL;
    AVStream *os = NULL;
    AVPacket *p = av_packet_alloc();
    int64_t span = 0;
    for (int t = 0; t < times; t++) {
        AVFormatContext *ic = NULL;
        if (avformat_open_input(&ic, argv[1], NULL, NULL) < 0 || avformat_find_stream_info(ic, NULL) < 0)
            return 1;
        int vs = av_find_best_stream(ic, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
        AVStream *is = ic->streams[vs];
        if (!oc) {
            avformat_alloc_output_context2(&oc, NULL, NULL, argv[2]);
            os = avformat_new_stream(oc, NULL);
            avcodec_parameters_copy(os->codecpar, is->codecpar);
            os->codecpar->codec_tag = 0;
            os->time_base = is->time_base;
            os->avg_frame_rate = is->avg_frame_rate;
            os->r_frame_rate = is->r_frame_rate;
            if (avio_open(&oc->pb, argv[2], AVIO_FLAG_WRITE) < 0 || avformat_write_header(oc, NULL) < 0)
                return 1;
        }
        int64_t end = 0;
        while (av_read_frame(ic, p) >= 0) {
            if (p->stream_index != vs) {
                av_packet_unref(p);
                continue;
            }
            if (p->pts + p->duration > end)
                end = p->pts + p->duration;
            p->pts += t * span;
            p->dts += t * span;
            av_packet_rescale_ts(p, is->time_base, os->time_base);
            p->stream_index = 0;
            p->pos = -1;
            if (av_interleaved_write_frame(oc, p) < 0)
                return 1;
        }
        if (t == 0)
            span = end;
        avformat_close_input(&ic);
    }
    av_write_trailer(oc);
    avio_closep(&oc->pb);
    avformat_free_context(oc);
    av_packet_free(&p);
    return 0;
}
