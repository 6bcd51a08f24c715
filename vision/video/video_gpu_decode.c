/*
 * video_gpu_decode.c - decoding on a GPU's video engines (NVDEC) through FFmpeg's CUDA hwaccel:
 * the decoder of video_ffmpeg.c gets a CUDA device and picks CUDA frames, and each frame is
 * copied back to host memory (NV12, whose luma plane video_frame.c takes as it takes YUV's).
 * Only in builds with FFmpeg; video_ffmpeg.c is its one caller.
 *
 * Why the hwaccel and not FFmpeg's h264_cuvid decoders: the hwaccel leaves parsing, frame
 * order, timestamps and error flags to the same software decoder the CPU path uses, so that
 * the reader's numbering, its gaps and its damaged frames mean the same on either path; only
 * the pixels come from NVDEC. H.264, HEVC, VP9 and AV1 specify their output bit for bit, so
 * those frames equal the CPU's (checked by the tests on the device); MPEG-2 and MPEG-4 leave
 * the inverse transform's rounding to the decoder. Why copy back instead of matching the
 * frame where it is: the matcher takes host images, and the copy (3 MB a 1080p frame) is a
 * small share of a frame's time; NVDEC's gain is the CPU it frees (about 16 cores' worth for
 * one 1080p H.264 stream at 1600 frames/s), so that several streams decode at once.
 */
#if GHM_HAVE_FFMPEG
#include <pthread.h>
#include <stdio.h>

#include "ffmpeg_libs_internal.h"
#include "video_ffmpeg_internal.h"
#include "why_internal.h"

/* The decoder's choice of output format: CUDA frames when FFmpeg offers them for this stream,
 * else its first software format (the list may name other hardware first), so that a stream
 * NVDEC cannot take (a profile it lacks) is still decoded, on the CPU. */
static enum AVPixelFormat pick_cuda(AVCodecContext *dec, const enum AVPixelFormat *formats)
{
    (void)dec;
    for (const enum AVPixelFormat *f = formats; *f != AV_PIX_FMT_NONE; f++)
        if (*f == AV_PIX_FMT_CUDA)
            return *f;
    for (const enum AVPixelFormat *f = formats; *f != AV_PIX_FMT_NONE; f++) {
        const AVPixFmtDescriptor *d = ghmi_ff.av_pix_fmt_desc_get(*f);
        if (d && !(d->flags & AV_PIX_FMT_FLAG_HWACCEL))
            return *f;
    }
    return AV_PIX_FMT_NONE;
}

/* Whether FFmpeg's decoder for codec can hand out CUDA frames from a CUDA device. */
static int has_cuda_hwaccel(const AVCodec *codec)
{
    for (int i = 0;; i++) {
        const AVCodecHWConfig *c = ghmi_ff.avcodec_get_hw_config(codec, i);
        if (!c)
            return 0;
        if (c->device_type == AV_HWDEVICE_TYPE_CUDA && c->pix_fmt == AV_PIX_FMT_CUDA &&
            (c->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX))
            return 1;
    }
}

/* One CUDA device context per device, shared by every decoder on it (the parts of a video on
 * one GPU): making one takes ~0.4 s of driver start-up, and contexts made at once are made in
 * turn (8 of them on 2 GPUs took ~1 s before the first frame; docs/BENCHMARKS.md). users counts
 * the decoders that hold it; the last one to go frees it. It is not the matcher's: two
 * contexts on a GPU take turns on it (decoding beside the matcher runs at about half the rate
 * it has alone), but FFmpeg's decoding inside the matcher's primary context, on a stream of
 * its own, made the matcher's stream captures fail now and then ("operation failed due to a
 * previous error during capture": one of 8 runs of 8 parts and one test on the H200 machine
 * stopped with it), and a run that fails now and then costs more than the speed. */
#define MOST_DEVICES 64
typedef struct SharedDevice {
    pthread_mutex_t lock;
    AVBufferRef *ref;
    int users;
} SharedDevice;

static SharedDevice shared[MOST_DEVICES];
static pthread_once_t shared_once = PTHREAD_ONCE_INIT;

static void init_shared(void)
{
    for (int d = 0; d < MOST_DEVICES; d++)
        pthread_mutex_init(&shared[d].lock, NULL);
}

/* FFmpeg's own CUDA context on device (not its primary_ctx option either: FFmpeg takes the
 * primary context only with blocking waits, and the matcher's spin, which is faster for it). */
static int create_device(int device, AVBufferRef **ref, char *why, size_t n)
{
    char name[16];
    snprintf(name, sizeof name, "%d", device);
    int ret = ghmi_ff.av_hwdevice_ctx_create(ref, AV_HWDEVICE_TYPE_CUDA, name, NULL, 0);
    if (ret < 0) {
        char text[128];
        ghmi_av_error_text(ret, text, sizeof text);
        ghmi_why(why, n, "cannot open CUDA device %d for decoding: %s", device, text);
        return GHM_ERR_NO_DEVICE;
    }
    return GHM_OK;
}

int ghmi_gpu_decoder_attach(AVCodecContext *dec, const AVCodec *codec, int device, char *why,
                            size_t n)
{
    if (!has_cuda_hwaccel(codec)) {
        ghmi_why(why, n, "this FFmpeg cannot decode %s on a GPU (no CUDA hwaccel for it)",
                 codec->name);
        return GHM_ERR_UNSUPPORTED;
    }
    if (device >= MOST_DEVICES) {
        ghmi_why(why, n, "CUDA device %d: decoding is limited to devices 0-%d", device,
                 MOST_DEVICES - 1);
        return GHM_ERR_NO_DEVICE;
    }
    pthread_once(&shared_once, init_shared);
    SharedDevice *sd = &shared[device];
    pthread_mutex_lock(&sd->lock);
    int ret = sd->ref ? GHM_OK : create_device(device, &sd->ref, why, n);
    if (ret == GHM_OK && !(dec->hw_device_ctx = ghmi_ff.av_buffer_ref(sd->ref)))
        ret = GHM_ERR_NOMEM;
    if (ret == GHM_OK)
        sd->users++;
    else if (sd->users == 0)
        ghmi_ff.av_buffer_unref(&sd->ref);
    pthread_mutex_unlock(&sd->lock);
    if (ret == GHM_OK)
        dec->get_format = pick_cuda;
    return ret;
}

void ghmi_decoder_free(AVCodecContext **dec)
{
    if (!*dec)
        return;
    const void *device = (*dec)->hw_device_ctx ? (*dec)->hw_device_ctx->data : NULL;
    ghmi_ff.avcodec_free_context(dec);
    for (int d = 0; device && d < MOST_DEVICES; d++) {
        SharedDevice *sd = &shared[d];
        pthread_mutex_lock(&sd->lock);
        int mine = sd->ref && (const void *)sd->ref->data == device;
        if (mine && --sd->users == 0)
            ghmi_ff.av_buffer_unref(&sd->ref);
        pthread_mutex_unlock(&sd->lock);
        if (mine)
            break;
    }
}

const AVFrame *ghmi_gpu_frame_to_host(const AVFrame *frame, AVFrame *host, char *why, size_t n)
{
    if (frame->format != AV_PIX_FMT_CUDA)
        return frame;
    /* The host frame keeps its buffer from one frame to the next (a new 3 MB buffer a frame
     * would be pages mapped and faulted in every time). */
    if (host->buf[0] && (host->width != frame->width || host->height != frame->height))
        ghmi_ff.av_frame_unref(host);
    int ret = ghmi_ff.av_hwframe_transfer_data(host, frame, 0);
    if (ret >= 0)
        ret = ghmi_ff.av_frame_copy_props(host, frame); /* its range: video_frame.c reads it */
    if (ret < 0) {
        char text[128];
        ghmi_av_error_text(ret, text, sizeof text);
        ghmi_why(why, n, "cannot copy a decoded frame from the GPU: %s", text);
        return NULL;
    }
    return host;
}

#endif /* GHM_HAVE_FFMPEG */
