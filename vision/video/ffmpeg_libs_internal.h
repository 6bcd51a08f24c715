/*
 * ffmpeg_libs_internal.h - FFmpeg's libraries, loaded when the first video is opened instead of
 * at program start (ffmpeg_libs.c). Linking them made every process load some 130 shared
 * libraries (FFmpeg's codecs and theirs): 50 ms of a 2-core machine's start-up before any work,
 * for a one-shot image pair 130 ms instead of 75 (docs/BENCHMARKS.md, "Cold start"). The video
 * files call FFmpeg only through ghmi_ff, whose members have the headers' own prototypes.
 * Included only where GHM_HAVE_FFMPEG is true.
 */
#ifndef GHM_FFMPEG_LIBS_INTERNAL_H
#define GHM_FFMPEG_LIBS_INTERNAL_H

#include <stddef.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

/* Every FFmpeg function the library calls, as X(name). */
#define GHMI_FFMPEG_FUNCTIONS(X)                                                              \
    X(av_frame_alloc) X(av_frame_free) X(av_frame_unref) X(av_get_pix_fmt_name)               \
    X(av_frame_copy_props) X(av_buffer_ref) X(av_buffer_unref)                                \
    X(av_hwdevice_ctx_create) X(av_hwframe_transfer_data) X(avcodec_get_hw_config)            \
    X(av_pix_fmt_desc_get) X(av_strerror) X(av_log_set_callback)                              \
    X(av_packet_alloc) X(av_packet_free) X(av_packet_unref)                                   \
    X(avcodec_alloc_context3) X(avcodec_find_decoder) X(avcodec_free_context)                 \
    X(avcodec_get_class) X(avcodec_get_name) X(avcodec_open2)                                 \
    X(avcodec_parameters_to_context) X(avcodec_receive_frame) X(avcodec_send_packet)          \
    X(av_probe_input_buffer2) X(av_read_frame) X(av_seek_frame) X(avformat_alloc_context)     \
    X(avformat_close_input) X(avformat_find_stream_info) X(avformat_get_class)                \
    X(avformat_open_input)                                                                    \
    X(avio_closep) X(avio_feof) X(avio_open)                                                  \
    X(sws_freeContext) X(sws_getCoefficients) X(sws_getContext) X(sws_scale)                  \
    X(sws_setColorspaceDetails)

#define GHMI_FFMPEG_MEMBER(name) __typeof__(&name) name;
typedef struct GhmiFfmpeg {
    GHMI_FFMPEG_FUNCTIONS(GHMI_FFMPEG_MEMBER)
} GhmiFfmpeg;
#undef GHMI_FFMPEG_MEMBER

/* Filled by ghmi_ffmpeg_load; read-only afterwards. */
extern GhmiFfmpeg ghmi_ff;

/* Loads the libraries (the sonames of the headers this build was compiled with) once per
 * process; later calls return the first call's answer. 0 when ghmi_ff is ready, else
 * GHM_ERR_UNSUPPORTED with why naming the library or function that could not be had. */
int ghmi_ffmpeg_load(char *why, size_t why_size);

#endif /* GHM_FFMPEG_LIBS_INTERNAL_H */
