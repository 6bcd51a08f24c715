/* check_video_ffmpeg.c - the library and FFmpeg's process-wide log callback: the library never
 * sets it, an application's own FFmpeg contexts are never taken for the library's, and the
 * decoder's lines reach the damaged-frame messages when the application passes them on (from
 * the decoder's threads too). The library's grey frames against libswscale's GRAY8 of the same
 * frames decoded by the test itself, and the decoder's threads against one thread. Built only
 * with FFmpeg (it calls FFmpeg itself, as an application would). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <libswscale/swscale.h>

#include "ghm_video.h"
#include "test_support.h"

/* What the test's callback saw; each test runs in its own process (Check forks). */
static int forward;        /* pass lines to ghm_video_log_ffmpeg() */
static int lines_seen;     /* every line */
static int lines_taken;    /* lines ghm_video_log_ffmpeg() said were a video's */
static int probe_seen;     /* the test's own marker line */
static void *foreign;      /* an application context offered while a video's line comes in */
static int foreign_offered, foreign_taken;

static int offer(void *avcl, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int taken = ghm_video_log_ffmpeg(avcl, AV_LOG_ERROR, fmt, ap);
    va_end(ap);
    return taken;
}

static void app_callback(void *avcl, int level, const char *fmt, va_list ap)
{
    lines_seen++;
    if (strcmp(fmt, "probe %d\n") == 0)
        probe_seen = 1;
    if (!forward || !ghm_video_log_ffmpeg(avcl, level, fmt, ap))
        return;
    lines_taken++;
    /* In the middle of a video's read, on its thread: an application line still is not its. */
    if (foreign) {
        foreign_offered++;
        foreign_taken += offer(foreign, "application error %d\n", 9);
    }
}

/* A copy of Megamind.avi with one video chunk from the 100th on overwritten by noise
 * (ghm_test_damaged_megamind) in the test's scratch folder: the decoder complains about it. */
static const char *damaged_video(void)
{
    const char *path = ghm_test_tmp("damaged.avi");
    ghm_test_damaged_megamind(path);
    return path;
}

/* Reads the whole video; returns how many damaged frames there were and, in said, how many of
 * their messages carry a line of the decoder's rather than a fallback. */
static int read_damaged(const char *file, int *said)
{
    GhmVideo *v = NULL;
    char why[256] = "";
    ck_assert_msg(ghm_video_open(file, &v, why, sizeof why) == GHM_OK, "%s", why);
    GhmVideoFrame f;
    int damaged = 0, ret;
    *said = 0;
    while ((ret = ghm_video_read(v, &f, why, sizeof why)) != GHM_VIDEO_END) {
        ck_assert_msg(ret >= 0, "%s", why);
        if (ret == GHM_VIDEO_DAMAGED) {
            damaged++;
            *said += !strstr(why, "(the decoder concealed errors)") &&
                     !strstr(why, "(damaged data)");
        }
        ghm_image_free(&f.image);
    }
    ghm_video_free(&v);
    return damaged;
}

/* Opening and reading a video leaves the application's callback in place. */
START_TEST(test_library_sets_no_callback)
{
    av_log_set_callback(app_callback);
    int said = 0;
    ck_assert_int_ge(read_damaged(damaged_video(), &said), 1);
    ck_assert_int_gt(lines_seen, 0); /* the decoder's complaints came to us */
    av_log(NULL, AV_LOG_ERROR, "probe %d\n", 1);
    ck_assert_int_eq(probe_seen, 1);
    /* Nothing passed on: the messages fall back to what the frames' flags say. */
    ck_assert_int_eq(said, 0);
}
END_TEST

/* Passed on, the decoder's own lines reach the damaged frames' messages. */
START_TEST(test_forwarded_lines_reach_the_message)
{
    av_log_set_callback(app_callback);
    forward = 1;
    int said = 0;
    ck_assert_int_ge(read_damaged(damaged_video(), &said), 1);
    ck_assert_int_gt(lines_taken, 0);
    ck_assert_int_ge(said, 1);
}
END_TEST

/* An application's own context, whose opaque points at anything, is never taken for a video's:
 * not outside a read, not while a video is open, not in the middle of a video's read. */
START_TEST(test_foreign_context_is_left_alone)
{
    av_log_set_callback(app_callback);
    forward = 1;
    AVCodecContext *mine = avcodec_alloc_context3(NULL);
    ck_assert_ptr_nonnull(mine);
    mine->opaque = (void *)(uintptr_t)0x1; /* not a pointer at all */
    av_log(mine, AV_LOG_ERROR, "application error %d\n", 7);
    ck_assert_int_eq(lines_taken, 0);
    GhmVideo *v = NULL;
    char why[256] = "";
    ck_assert_msg(ghm_video_open(ghm_test_data("video/Megamind.avi"), &v, why, sizeof why) ==
                      GHM_OK,
                  "%s", why);
    int before = lines_taken;
    av_log(mine, AV_LOG_ERROR, "application error %d\n", 8);
    ck_assert_int_eq(lines_taken, before);
    ghm_video_free(&v);
    foreign = mine;
    int said = 0;
    ck_assert_int_ge(read_damaged(damaged_video(), &said), 1);
    ck_assert_int_gt(foreign_offered, 0);
    ck_assert_int_eq(foreign_taken, 0);
    avcodec_free_context(&mine);
}
END_TEST

/* --- grey frames ------------------------------------------------------------------------ */

/* The test's own decoder of a limited-range yuv420p video, one thread, as an application would
 * write it. */
typedef struct AppVideo {
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVPacket *pkt;
    AVFrame *frame;
    struct SwsContext *sws;
    int stream, draining;
} AppVideo;

static void app_open(AppVideo *a, const char *file)
{
    memset(a, 0, sizeof *a);
    ck_assert_int_eq(avformat_open_input(&a->fmt, file, NULL, NULL), 0);
    ck_assert_int_ge(avformat_find_stream_info(a->fmt, NULL), 0);
    const AVCodec *codec = NULL;
    a->stream = av_find_best_stream(a->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    ck_assert_int_ge(a->stream, 0);
    a->dec = avcodec_alloc_context3(codec);
    ck_assert_int_ge(avcodec_parameters_to_context(a->dec, a->fmt->streams[a->stream]->codecpar),
                     0);
    a->dec->thread_count = 1;
    ck_assert_int_eq(avcodec_open2(a->dec, codec, NULL), 0);
    a->pkt = av_packet_alloc();
    a->frame = av_frame_alloc();
}

/* The next frame as libswscale's full-range GRAY8 (BT.601, limited range expanded) in grey
 * (w x h); 0 at the end. */
static int app_next(AppVideo *a, uint8_t *grey, int w, int h)
{
    for (;;) {
        int ret = avcodec_receive_frame(a->dec, a->frame);
        if (ret == 0)
            break;
        if (ret == AVERROR_EOF)
            return 0;
        ck_assert_int_eq(ret, AVERROR(EAGAIN));
        if (av_read_frame(a->fmt, a->pkt) < 0) {
            avcodec_send_packet(a->dec, NULL);
            continue;
        }
        if (a->pkt->stream_index == a->stream)
            ck_assert_int_eq(avcodec_send_packet(a->dec, a->pkt), 0);
        av_packet_unref(a->pkt);
    }
    ck_assert_int_eq(a->frame->format, AV_PIX_FMT_YUV420P);
    ck_assert_int_ne(a->frame->color_range, AVCOL_RANGE_JPEG);
    ck_assert_int_eq(a->frame->width, w);
    ck_assert_int_eq(a->frame->height, h);
    if (!a->sws) {
        a->sws = sws_getContext(w, h, AV_PIX_FMT_YUV420P, w, h, AV_PIX_FMT_GRAY8, SWS_BICUBIC,
                                NULL, NULL, NULL);
        const int *c = sws_getCoefficients(SWS_CS_ITU601);
        sws_setColorspaceDetails(a->sws, c, 0, c, 1, 0, 1 << 16, 1 << 16);
    }
    uint8_t *dst[4] = {grey, NULL, NULL, NULL};
    int stride[4] = {w, 0, 0, 0};
    ck_assert_int_eq(sws_scale(a->sws, (const uint8_t *const *)a->frame->data,
                               a->frame->linesize, 0, h, dst, stride),
                     h);
    av_frame_unref(a->frame);
    return 1;
}

static void app_close(AppVideo *a)
{
    sws_freeContext(a->sws);
    av_frame_free(&a->frame);
    av_packet_free(&a->pkt);
    avcodec_free_context(&a->dec);
    avformat_close_input(&a->fmt);
}

/* Every frame of the library (threads as given) equals the test's libswscale grey, pixel for
 * pixel: the library's table of luma values is libswscale's conversion. */
static void check_grey_frames(const char *file, int threads, int expect_frames)
{
    GhmVideo *v = NULL;
    char why[256] = "";
    ck_assert_msg(ghm_video_open(file, &v, why, sizeof why) == GHM_OK, "%s", why);
    ck_assert_int_eq(ghm_video_set_decode_threads(v, threads), GHM_OK);
    int w = ghm_video_info(v)->width, h = ghm_video_info(v)->height;
    AppVideo a;
    app_open(&a, file);
    uint8_t *grey = malloc((size_t)w * (size_t)h);
    ck_assert_ptr_nonnull(grey);
    GhmVideoFrame f;
    int frames = 0, ret;
    while ((ret = ghm_video_read(v, &f, why, sizeof why)) == GHM_VIDEO_FRAME) {
        ck_assert_int_eq(f.index, frames);
        ck_assert_int_eq(app_next(&a, grey, w, h), 1);
        for (int y = 0; y < h; y++)
            ck_assert_msg(memcmp(f.image->pixels + (size_t)y * (size_t)f.image->stride,
                                 grey + (size_t)y * (size_t)w, (size_t)w) == 0,
                          "%s: frame %d row %d differs", file, frames, y);
        ghm_image_free(&f.image);
        frames++;
    }
    ck_assert_msg(ret == GHM_VIDEO_END, "%s", why);
    ck_assert_int_eq(app_next(&a, grey, w, h), 0);
    ck_assert_int_eq(frames, expect_frames);
    free(grey);
    app_close(&a);
    ghm_video_free(&v);
}

START_TEST(test_grey_is_libswscale_gray8)
{
    check_grey_frames(ghm_test_data("video/Megamind.avi"), 1, 270);      /* MPEG-4 part 2 */
    check_grey_frames(ghm_test_data("video/synthetic_rubberwhale.mp4"), 1, 48); /* H.264 */
}
END_TEST

/* The decoder's threads give the same frames as one thread (bit-exact decoding). */
START_TEST(test_decoder_threads_same_frames)
{
    check_grey_frames(ghm_test_data("video/Megamind.avi"), 4, 270);
    check_grey_frames(ghm_test_data("video/synthetic_rubberwhale.mp4"), 0, 48);
    GhmVideo *v = NULL;
    char why[256] = "";
    ck_assert_int_eq(ghm_video_open(ghm_test_data("video/Megamind.avi"), &v, why, sizeof why),
                     GHM_OK);
    ck_assert_int_eq(ghm_video_set_decode_threads(v, -1), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_video_set_decode_threads(v, 1000), GHM_OK); /* taken as 16 */
    GhmVideoFrame f;
    ck_assert_int_eq(ghm_video_read(v, &f, why, sizeof why), GHM_VIDEO_FRAME);
    ghm_image_free(&f.image);
    ck_assert_int_eq(ghm_video_set_decode_threads(v, 2), GHM_ERR_INVALID); /* after a read */
    ck_assert_int_eq(ghm_video_read(v, &f, why, sizeof why), GHM_VIDEO_FRAME);
    ck_assert_int_eq(f.index, 1);
    ghm_image_free(&f.image);
    ghm_video_free(&v);
    ck_assert_int_eq(ghm_video_set_decode_threads(NULL, 1), GHM_ERR_INVALID);
}
END_TEST

/* With the decoder's threads, a damaged stream's damaged frames keep their numbers and the
 * decoder's words (logged on its threads) still reach their messages. */
START_TEST(test_decoder_threads_damaged_frames)
{
    av_log_set_callback(app_callback);
    forward = 1;
    int damaged[2], said[2];
    const char *file = damaged_video();
    for (int k = 0; k < 2; k++) {
        GhmVideo *v = NULL;
        char why[256] = "";
        ck_assert_msg(ghm_video_open(file, &v, why, sizeof why) == GHM_OK, "%s", why);
        ck_assert_int_eq(ghm_video_set_decode_threads(v, k ? 8 : 1), GHM_OK);
        GhmVideoFrame f;
        int ret, next = 0;
        damaged[k] = said[k] = 0;
        while ((ret = ghm_video_read(v, &f, why, sizeof why)) != GHM_VIDEO_END) {
            ck_assert_msg(ret >= 0, "%s", why);
            ck_assert_int_eq(f.index, next++);
            if (ret == GHM_VIDEO_DAMAGED) {
                damaged[k] += 1000 * (int)f.index; /* which frames, not only how many */
                said[k] += !strstr(why, "(the decoder concealed errors)") &&
                           !strstr(why, "(damaged data)");
            }
            ghm_image_free(&f.image);
        }
        ck_assert_int_eq(next, 270);
        ghm_video_free(&v);
    }
    ck_assert_int_gt(damaged[0], 0);
    ck_assert_int_eq(damaged[0], damaged[1]);
    ck_assert_int_ge(said[1], 1);
}
END_TEST

static Suite *video_ffmpeg_suite(void)
{
    Suite *s = suite_create("video_ffmpeg");
    TCase *logs = tcase_create("log");
    tcase_add_checked_fixture(logs, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_add_test(logs, test_library_sets_no_callback);
    tcase_add_test(logs, test_forwarded_lines_reach_the_message);
    tcase_add_test(logs, test_foreign_context_is_left_alone);
    suite_add_tcase(s, logs);
    TCase *grey = tcase_create("grey");
    tcase_add_checked_fixture(grey, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_set_timeout(grey, 120);
    tcase_add_test(grey, test_grey_is_libswscale_gray8);
    tcase_add_test(grey, test_decoder_threads_same_frames);
    tcase_add_test(grey, test_decoder_threads_damaged_frames);
    suite_add_tcase(s, grey);
    return s;
}

int main(void) { return ghm_test_main(video_ffmpeg_suite()); }
