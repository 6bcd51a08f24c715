/* check_video_ffmpeg.c - the library and FFmpeg's process-wide log callback: the library never
 * sets it, an application's own FFmpeg contexts are never taken for the library's, and the
 * decoder's lines reach the damaged-frame messages when the application passes them on. Built
 * only with FFmpeg (it calls FFmpeg itself, as an application would). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libavcodec/avcodec.h>
#include <libavutil/log.h>

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

static char dir[64], path[128];

/* A copy of Megamind.avi with one video chunk from the 100th on overwritten by noise (as
 * check_video's test_damaged_frame_in_middle makes it): the decoder complains about it. */
static const char *damaged_video(void)
{
    FILE *f = fopen(ghm_test_data("video/Megamind.avi"), "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    rewind(f);
    uint8_t *data = malloc(n);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_eq(fread(data, 1, n, f), n);
    fclose(f);
    int chunk = 0;
    size_t at = 0;
    for (size_t i = 0; i + 8 < n && !at; i++) {
        if (memcmp(data + i, "00dc", 4) != 0)
            continue;
        uint32_t size = data[i + 4] | data[i + 5] << 8 | data[i + 6] << 16 |
                        (uint32_t)data[i + 7] << 24;
        if (++chunk >= 100 && size > 2000 && size < 200000 && i + 8 + size <= n)
            at = i;
    }
    ck_assert_uint_gt(at, 0);
    uint32_t state = 12345;
    for (size_t i = at + 8 + 40; i < at + 8 + 400; i++) {
        state = state * 1103515245u + 12345u;
        data[i] = (uint8_t)(state >> 16);
    }
    snprintf(dir, sizeof dir, "/tmp/ghm_video_ffmpeg_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/damaged.avi", dir);
    f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    fclose(f);
    free(data);
    return path;
}

static void remove_video(void)
{
    unlink(path);
    rmdir(dir);
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
    remove_video();
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
    remove_video();
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
    remove_video();
    avcodec_free_context(&mine);
}
END_TEST

static Suite *video_ffmpeg_suite(void)
{
    Suite *s = suite_create("video_ffmpeg");
    TCase *logs = tcase_create("log");
    tcase_add_test(logs, test_library_sets_no_callback);
    tcase_add_test(logs, test_forwarded_lines_reach_the_message);
    tcase_add_test(logs, test_foreign_context_is_left_alone);
    suite_add_tcase(s, logs);
    return s;
}

int main(void) { return ghm_test_main(video_ffmpeg_suite()); }
