/* check_video.c - video decoding (FFmpeg), the frame queue and the decoding thread, and bad
 * video inputs (the YUV4MPEG2 reader: check_video_y4m.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ghm_frame_queue.h"
#include "ghm_image.h"
#include "ghm_video.h"
#include "test_support.h"

#define MEGAMIND "video/Megamind.avi"

/* Opens a data file that FFmpeg must decode; in a build without FFmpeg checks the refusal
 * instead and returns NULL (the caller then returns). */
static GhmVideo *open_ffmpeg_video(const char *relative)
{
    GhmVideo *v = NULL;
    char why[256] = "";
    int ret = ghm_video_open(ghm_test_data(relative), &v, why, sizeof why);
    if (!ghm_video_have_ffmpeg()) {
        ck_assert_int_eq(ret, GHM_ERR_UNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(why, "no FFmpeg"));
        return NULL;
    }
    ck_assert_msg(ret == GHM_OK, "%s: %s", relative, why);
    return v;
}

/* ---------------------------------------------------------------------------------- decode */

START_TEST(test_megamind_frames)
{
    GhmVideo *v = open_ffmpeg_video(MEGAMIND);
    if (!v)
        return;
    const GhmVideoInfo *info = ghm_video_info(v);
    ck_assert_int_eq(info->width, 720);
    ck_assert_int_eq(info->height, 528);
    ck_assert_int_eq(info->frames, 270);
    ck_assert_double_eq_tol(info->fps, 23.976, 0.001);
    ck_assert_str_eq(info->codec, "mpeg4");
    GhmVideoFrame f;
    char why[256];
    double last_pts = -1;
    int count = 0, ret;
    while ((ret = ghm_video_read(v, &f, why, sizeof why)) == GHM_VIDEO_FRAME) {
        ck_assert_int_eq(f.index, count);
        ck_assert_int_eq(f.image->width, 720);
        ck_assert_int_eq(f.image->height, 528);
        ck_assert(f.pts > last_pts);
        ck_assert_double_eq_tol(f.pts, count / (2997.0 / 125.0), 1e-6);
        last_pts = f.pts;
        count++;
        ghm_image_free(&f.image);
    }
    ck_assert_msg(ret == GHM_VIDEO_END, "status %d: %s", ret, why);
    ck_assert_int_eq(count, 270);
    /* The end is sticky. */
    ck_assert_int_eq(ghm_video_read(v, &f, why, sizeof why), GHM_VIDEO_END);
    ghm_video_free(&v);
    ck_assert_ptr_null(v);
}
END_TEST

/* Frame 50 against megamind_frame050.png, which FFmpeg wrote as RGB and the image loader turns
 * grey by BT.601 luma. Our frames are full-range GRAY8 from libswscale, i.e. the same luma
 * computed from Y directly. Measured: mean |difference| 1.11 grey levels (FFmpeg's YUV->RGB
 * rounds about one level darker), largest 9, and 330 of 380,160 pixels (0.09 %) differ by more
 * than 2, where saturated colours were clipped in RGB. We assert bounds just above that. */
START_TEST(test_megamind_frame50_matches_png)
{
    GhmVideo *v = open_ffmpeg_video(MEGAMIND);
    if (!v)
        return;
    ck_assert_int_eq(ghm_video_select(v, 50, 50, 1), GHM_OK);
    GhmVideoFrame f;
    char why[256];
    ck_assert_int_eq(ghm_video_read(v, &f, why, sizeof why), GHM_VIDEO_FRAME);
    ck_assert_int_eq(f.index, 50);
    GhmImage *png = NULL;
    ck_assert_int_eq(ghm_image_load(ghm_test_data("video/megamind_frame050.png"), &png, why,
                                    sizeof why),
                     GHM_OK);
    ck_assert_int_eq(png->width, f.image->width);
    ck_assert_int_eq(png->height, f.image->height);
    long total = 0, far = 0;
    int worst = 0;
    for (int y = 0; y < png->height; y++)
        for (int x = 0; x < png->width; x++) {
            int d = f.image->pixels[y * f.image->stride + x] - png->pixels[y * png->stride + x];
            d = abs(d);
            total += d;
            far += d > 2;
            worst = d > worst ? d : worst;
        }
    double mean = (double)total / (png->width * png->height);
    ck_assert_msg(mean < 1.3, "mean difference %.3f", mean);
    ck_assert_msg(worst <= 12, "largest difference %d", worst);
    ck_assert_msg(far < 1000, "%ld pixels differ by more than 2", far);
    ghm_image_free(&f.image);
    ck_assert_int_eq(ghm_video_read(v, &f, why, sizeof why), GHM_VIDEO_END);
    ghm_image_free(&png);
    ghm_video_free(&v);
}
END_TEST

START_TEST(test_select_frames)
{
    GhmVideo *v = open_ffmpeg_video(MEGAMIND);
    if (!v)
        return;
    ck_assert_int_eq(ghm_video_select(v, -1, 5, 1), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_video_select(v, 0, 5, 0), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_video_select(v, 10, 22, 5), GHM_OK);
    GhmVideoFrame f;
    char why[256];
    const int64_t want[] = {10, 15, 20};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ghm_video_read(v, &f, why, sizeof why), GHM_VIDEO_FRAME);
        ck_assert_int_eq(f.index, want[i]);
        ck_assert_double_eq_tol(f.pts, want[i] * 125.0 / 2997.0, 1e-6);
        ghm_image_free(&f.image);
    }
    ck_assert_int_eq(ghm_video_read(v, &f, why, sizeof why), GHM_VIDEO_END);
    ghm_video_free(&v);
}
END_TEST

START_TEST(test_synthetic_pts_match_truth)
{
    GhmVideo *v = open_ffmpeg_video("video/synthetic_rubberwhale.mp4");
    if (!v)
        return;
    json_error_t jerr;
    json_t *truth = json_load_file(ghm_test_data("video/synthetic_rubberwhale_truth.json"), 0,
                                   &jerr);
    ck_assert_msg(truth != NULL, "truth: %s", jerr.text);
    json_t *frames = json_object_get(truth, "truth");
    ck_assert_int_eq(json_array_size(frames), 48);
    ck_assert_str_eq(ghm_video_info(v)->codec, "h264");
    GhmVideoFrame f;
    char why[256];
    int count = 0, ret;
    while ((ret = ghm_video_read(v, &f, why, sizeof why)) == GHM_VIDEO_FRAME) {
        ck_assert_int_lt(count, 48);
        json_t *t = json_array_get(frames, (size_t)count);
        ck_assert_int_eq(f.index, json_integer_value(json_object_get(t, "frame")));
        ck_assert_double_eq_tol(f.pts, json_real_value(json_object_get(t, "pts")), 1e-4);
        ck_assert_int_eq(f.image->width, 320);
        ck_assert_int_eq(f.image->height, 240);
        count++;
        ghm_image_free(&f.image);
    }
    ck_assert_msg(ret == GHM_VIDEO_END, "%s", why);
    ck_assert_int_eq(count, 48);
    json_decref(truth);
    ghm_video_free(&v);
}
END_TEST

/* The decoding thread gives the same frames, in order, as reading directly. */
START_TEST(test_reader_thread_same_frames)
{
    GhmVideo *direct = open_ffmpeg_video("video/synthetic_rubberwhale.mp4");
    if (!direct)
        return;
    GhmVideo *threaded = open_ffmpeg_video("video/synthetic_rubberwhale.mp4");
    GhmVideoReader *r = NULL;
    ck_assert_int_eq(ghm_video_reader_start(threaded, 2, &r), GHM_OK);
    GhmVideoFrame f;
    GhmQueuedFrame item;
    char why[256];
    int count = 0;
    while (ghm_video_read(direct, &f, why, sizeof why) == GHM_VIDEO_FRAME) {
        ck_assert_int_eq(ghm_video_reader_next(r, &item), GHM_VIDEO_FRAME);
        ck_assert_int_eq(item.frame.index, f.index);
        ck_assert_double_eq(item.frame.pts, f.pts);
        ck_assert_int_eq(memcmp(item.frame.image->pixels, f.image->pixels,
                                (size_t)f.image->stride * (size_t)f.image->height),
                         0);
        ghm_image_free(&f.image);
        ghm_image_free(&item.frame.image);
        count++;
    }
    ck_assert_int_eq(count, 48);
    ck_assert_int_eq(ghm_video_reader_next(r, &item), GHM_VIDEO_END);
    ck_assert_int_eq(ghm_video_reader_next(r, &item), GHM_VIDEO_END); /* repeats */
    ghm_video_reader_stop(&r);
    ck_assert_ptr_null(r);
    ghm_video_free(&threaded);
    ghm_video_free(&direct);
}
END_TEST

/* Stopping after a few frames, with the decoder blocked on a full queue, ends the thread. */
/* Stored pixel (sx, sy) of a w x h stored frame shown at (x, y), for the display matrices the
 * files below carry (players' and FFmpeg's reading; written out here, not taken from the
 * library): rot90 turns the stored frame a quarter counterclockwise, rot270 clockwise (a
 * phone's portrait video), mirror swaps left and right. */
static void shown_from(const char *kind, int w, int h, int x, int y, int *sx, int *sy)
{
    if (strcmp(kind, "rot90") == 0)
        *sx = w - 1 - y, *sy = x;
    else if (strcmp(kind, "rot270") == 0)
        *sx = y, *sy = h - 1 - x;
    else
        *sx = w - 1 - x, *sy = y;
}

/* A stream with a display matrix gives its frames turned as they are shown: every frame of the
 * turned and mirrored copies of megamind_gop12.mp4 (the same packets) against the plain file's
 * frame, pixel for pixel, and the sizes the info gives. */
START_TEST(test_display_matrix_turns_frames)
{
    static const char *const kinds[3] = {"rot90", "rot270", "mirror"};
    for (int k = 0; k < 3; k++) {
        char rel[64];
        snprintf(rel, sizeof rel, "video/megamind_gop12_%s.mp4", kinds[k]);
        GhmVideo *plain = open_ffmpeg_video("video/megamind_gop12.mp4"), *shown = NULL;
        if (!plain)
            return;
        shown = open_ffmpeg_video(rel);
        const GhmVideoInfo *pi = ghm_video_info(plain), *si = ghm_video_info(shown);
        int turned = k < 2;
        ck_assert_int_eq(si->width, turned ? pi->height : pi->width);
        ck_assert_int_eq(si->height, turned ? pi->width : pi->height);
        GhmVideoFrame a, b;
        char why[256];
        int frames = 0;
        while (ghm_video_read(plain, &a, why, sizeof why) == GHM_VIDEO_FRAME) {
            ck_assert_int_eq(ghm_video_read(shown, &b, why, sizeof why), GHM_VIDEO_FRAME);
            ck_assert_int_eq(b.image->width, si->width);
            ck_assert_int_eq(b.image->height, si->height);
            for (int y = 0; y < b.image->height; y++)
                for (int x = 0; x < b.image->width; x++) {
                    int sx, sy;
                    shown_from(kinds[k], a.image->width, a.image->height, x, y, &sx, &sy);
                    ck_assert_msg(b.image->pixels[(size_t)y * b.image->stride + x] ==
                                      a.image->pixels[(size_t)sy * a.image->stride + sx],
                                  "%s frame %d (%d, %d)", rel, frames, x, y);
                }
            ghm_image_free(&a.image);
            ghm_image_free(&b.image);
            frames++;
        }
        ck_assert_int_gt(frames, 10);
        ck_assert_int_eq(ghm_video_read(shown, &b, why, sizeof why), GHM_VIDEO_END);
        ghm_video_free(&plain);
        ghm_video_free(&shown);
    }
}
END_TEST

START_TEST(test_reader_stop_early)
{
    GhmVideo *v = open_ffmpeg_video(MEGAMIND);
    if (!v)
        return;
    GhmVideoReader *r = NULL;
    ck_assert_int_eq(ghm_video_reader_start(v, 3, &r), GHM_OK);
    GhmQueuedFrame item;
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(ghm_video_reader_next(r, &item), GHM_VIDEO_FRAME);
        ck_assert_int_eq(item.frame.index, i);
        ghm_image_free(&item.frame.image);
    }
    struct timespec pause = {0, 50 * 1000 * 1000}; /* let the decoder fill the queue, block */
    nanosleep(&pause, NULL);
    ghm_video_reader_stop(&r);
    ghm_video_reader_stop(&r); /* NULL is fine */
    ghm_video_free(&v);
}
END_TEST

START_TEST(test_queue_semantics)
{
    GhmFrameQueue *q = NULL;
    ck_assert_int_eq(ghm_frame_queue_create(0, &q), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_frame_queue_create(2, &q), GHM_OK);
    GhmQueuedFrame in, out;
    memset(&in, 0, sizeof in);
    for (int i = 0; i < 2; i++) {
        in.frame.index = i;
        ck_assert_int_eq(ghm_image_create(8, 4, &in.frame.image), GHM_OK);
        ck_assert_int_eq(ghm_frame_queue_push(q, &in), GHM_OK);
    }
    ck_assert_int_eq(ghm_frame_queue_pop(q, &out), GHM_OK);
    ck_assert_int_eq(out.frame.index, 0);
    ghm_image_free(&out.frame.image);
    ghm_frame_queue_close(q);
    ghm_frame_queue_close(q);
    in.frame.image = NULL;
    ck_assert_int_eq(ghm_frame_queue_push(q, &in), 1); /* refused after close */
    ck_assert_int_eq(ghm_frame_queue_pop(q, &out), GHM_OK); /* what was queued drains */
    ck_assert_int_eq(out.frame.index, 1);
    ghm_image_free(&out.frame.image);
    ck_assert_int_eq(ghm_frame_queue_pop(q, &out), 1); /* closed and empty: no wait */
    /* An item left in the queue is freed with it (ASan would see a leak otherwise). */
    ghm_frame_queue_free(&q);
    ck_assert_int_eq(ghm_frame_queue_create(1, &q), GHM_OK);
    ck_assert_int_eq(ghm_image_create(8, 4, &in.frame.image), GHM_OK);
    ck_assert_int_eq(ghm_frame_queue_push(q, &in), GHM_OK);
    ghm_frame_queue_free(&q);
    ck_assert_ptr_null(q);
}
END_TEST

/* ------------------------------------------------------------------------------------- bad */

static int open_status(const char *path, char *why, size_t n)
{
    GhmVideo *v = NULL;
    int ret = ghm_video_open(path, &v, why, n);
    ck_assert_ptr_null(v);
    return ret;
}

START_TEST(test_empty_missing_text_dir)
{
    char why[256];
    ck_assert_int_eq(open_status(ghm_test_data("bad/empty.mp4"), why, sizeof why),
                     GHM_ERR_FORMAT);
    ck_assert_msg(strstr(why, "empty"), "%s", why);
    ck_assert_int_eq(open_status(ghm_test_data("video/no_such.mp4"), why, sizeof why),
                     GHM_ERR_IO);
    ck_assert_msg(strstr(why, "No such file"), "%s", why);
    ck_assert_int_eq(open_status(ghm_test_data("video"), why, sizeof why), GHM_ERR_IO);
    ck_assert_msg(strstr(why, "directory"), "%s", why);
    int ret = open_status(ghm_test_data("bad/not_an_image.jpg"), why, sizeof why);
    if (ghm_video_have_ffmpeg()) {
        ck_assert_int_eq(ret, GHM_ERR_FORMAT);
        ck_assert_msg(strstr(why, "not a PNG or JPEG image, nor a video"), "%s", why);
    } else {
        ck_assert_int_eq(ret, GHM_ERR_UNSUPPORTED);
    }
}
END_TEST

START_TEST(test_truncated_avi)
{
    GhmVideo *v = open_ffmpeg_video("bad/truncated.avi");
    if (!v)
        return;
    char why[256] = "";
    int damaged = 0, final = 0;
    int frames = ghm_test_read_video(v, &damaged, &final, why, sizeof why);
    /* The first quarter of the file holds 62 whole frames (ffprobe -count_frames agrees). */
    ck_assert_int_eq(frames + damaged, 62);
    ck_assert_int_eq(final, GHM_ERR_TRUNCATED);
    ck_assert_msg(strstr(why, "ends early") && strstr(why, "270"), "%s", why);
    GhmVideoFrame f;
    ck_assert_int_eq(ghm_video_read(v, &f, why, sizeof why), GHM_ERR_TRUNCATED); /* sticky */
    ghm_video_free(&v);
}
END_TEST

/* Writes data to NAME in the test's scratch folder and returns its path (ghm_test_tmp's
 * buffer). The name is ours to choose, so a test can make it lie. */
static const char *temp_file(const void *data, size_t n, const char *name)
{
    const char *path = ghm_test_tmp(name);
    ghm_test_write_file(path, data, n);
    return path;
}

/* A copy of Megamind.avi with the payload of one video chunk ("00dc") overwritten by noise:
 * that frame is reported damaged and skipped, the others still come, numbered as before. */
START_TEST(test_damaged_frame_in_middle)
{
    if (!ghm_video_have_ffmpeg())
        return;
    const char *path = ghm_test_tmp("damaged.avi");
    ghm_test_damaged_megamind(path);
    GhmVideo *v = NULL;
    char why[256] = "", damaged_why[256] = "";
    ck_assert_int_eq(ghm_video_open(path, &v, why, sizeof why), GHM_OK);
    GhmVideoFrame f;
    int frames = 0, damaged = 0, ret;
    int64_t expect = 0;
    while ((ret = ghm_video_read(v, &f, why, sizeof why)) != GHM_VIDEO_END) {
        ck_assert_msg(ret >= 0, "error %d: %s", ret, why);
        ck_assert_int_eq(f.index, expect++); /* damaged frames keep their number */
        ck_assert_double_eq_tol(f.pts, f.index * 125.0 / 2997.0, 1e-6);
        if (ret == GHM_VIDEO_DAMAGED) {
            damaged++;
            snprintf(damaged_why, sizeof damaged_why, "%s", why);
        } else {
            frames++;
            ghm_image_free(&f.image);
        }
    }
    ck_assert_int_ge(damaged, 1);
    ck_assert_int_le(damaged, 3);
    ck_assert_int_eq(frames + damaged, 270);
    ck_assert_msg(strstr(damaged_why, "damaged") || strstr(damaged_why, "cannot be decoded"),
                  "%s", damaged_why);
    ghm_video_free(&v);
}
END_TEST

/* A valid media file with no video: a one-second WAV of silence, written here. */
START_TEST(test_audio_only)
{
    enum { RATE = 8000, SAMPLES = 8000 };
    uint8_t wav[44 + 2 * SAMPLES];
    memset(wav, 0, sizeof wav);
    const uint32_t data_bytes = 2 * SAMPLES;
    const uint32_t fields[] = {36 + data_bytes, 16, 1 | 1u << 16, RATE, RATE * 2, 2 | 16u << 16,
                               data_bytes};
    memcpy(wav, "RIFF", 4);
    memcpy(wav + 8, "WAVEfmt ", 8);
    memcpy(wav + 36, "data", 4);
    const size_t where[] = {4, 16, 20, 24, 28, 32, 40};
    for (int i = 0; i < 7; i++)
        for (int b = 0; b < 4; b++)
            wav[where[i] + (size_t)b] = (uint8_t)(fields[i] >> (8 * b));
    const char *path = temp_file(wav, sizeof wav, "clip.mp4"); /* the name lies; content decides */
    char why[256] = "";
    int ret = open_status(path, why, sizeof why);
    if (!ghm_video_have_ffmpeg()) {
        ck_assert_int_eq(ret, GHM_ERR_UNSUPPORTED);
        return;
    }
    ck_assert_int_eq(ret, GHM_ERR_FORMAT);
    ck_assert_msg(strstr(why, "no video stream"), "%s", why);
}
END_TEST

/* Noise is either refused at open or ends in an error: never a hang or a crash. */
START_TEST(test_noise_file)
{
    enum { N = 200000 };
    uint8_t *data = malloc(N);
    uint32_t state = 99;
    for (int i = 0; i < N; i++) {
        state = state * 1664525u + 1013904223u;
        data[i] = (uint8_t)(state >> 24);
    }
    const char *path = temp_file(data, N, "noise.avi");
    free(data);
    GhmVideo *v = NULL;
    char why[256] = "";
    int ret = ghm_video_open(path, &v, why, sizeof why);
    if (ret == GHM_OK) {
        int damaged = 0, final = 0;
        ghm_test_read_video(v, &damaged, &final, why, sizeof why);
        ghm_video_free(&v);
    } else {
        ck_assert_int_lt(ret, 0);
        ck_assert_msg(why[0] != '\0', "no reason given");
    }
}
END_TEST

START_TEST(test_is_video_path)
{
    int ff = ghm_video_have_ffmpeg();
    ck_assert_int_eq(ghm_video_is_video_path("-"), 1);
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data(MEGAMIND)), 1);
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data("video/synthetic_rubberwhale.mp4")),
                     1);
    /* Without FFmpeg, foreign files go to the image loader and its message. */
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data("bad/empty.mp4")), ff);
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data("bad/not_an_image.jpg")), ff);
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data("images/box.png")), 0);
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data("images/butterfly.jpg")), 0);
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data("bad/corrupt_signature.png")), 0);
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data("bad/truncated.jpg")), 0);
    ck_assert_int_eq(ghm_video_is_video_path(ghm_test_data("images/no_such.png")), 0);
    ck_assert_int_eq(ghm_video_is_video_path(NULL), 0);
}
END_TEST

static Suite *video_suite(void)
{
    Suite *s = suite_create("video");
    TCase *decode = tcase_create("decode");
    tcase_set_timeout(decode, 120);
    tcase_add_test(decode, test_megamind_frames);
    tcase_add_test(decode, test_megamind_frame50_matches_png);
    tcase_add_test(decode, test_select_frames);
    tcase_add_test(decode, test_synthetic_pts_match_truth);
    tcase_add_test(decode, test_reader_thread_same_frames);
    tcase_add_test(decode, test_reader_stop_early);
    tcase_add_test(decode, test_display_matrix_turns_frames);
    tcase_add_test(decode, test_queue_semantics);
    suite_add_tcase(s, decode);
    TCase *bad = tcase_create("bad");
    tcase_add_checked_fixture(bad, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_set_timeout(bad, 120);
    tcase_add_test(bad, test_empty_missing_text_dir);
    tcase_add_test(bad, test_truncated_avi);
    tcase_add_test(bad, test_damaged_frame_in_middle);
    tcase_add_test(bad, test_audio_only);
    tcase_add_test(bad, test_noise_file);
    tcase_add_test(bad, test_is_video_path);
    suite_add_tcase(s, bad);
    return s;
}

int main(void)
{
    return ghm_test_main(video_suite());
}
