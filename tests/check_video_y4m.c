/* check_video_y4m.c - the YUV4MPEG2 reader: colour spaces and ranges, bad and truncated headers
 * and frames, selections, the frame count of a file from its size, and the same frames as
 * FFmpeg's reader of the same file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_image.h"
#include "ghm_video.h"
#include "test_support.h"

/* A YUV4MPEG2 stream in a temporary file: the header, then frames whose Y plane is
 * y0 + frame + x (mod 256) and whose chroma planes hold 0x80. */
static FILE *make_y4m(const char *header, int w, int h, size_t chroma, int frames, int y0)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    fputs(header, f);
    for (int i = 0; i < frames; i++) {
        fputs("FRAME\n", f);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                fputc((y0 + i + x) & 0xff, f);
        for (size_t c = 0; c < chroma; c++)
            fputc(0x80, f);
    }
    rewind(f);
    return f;
}

static uint8_t limited_to_full(int v)
{
    double g = floor((v - 16) * 255.0 / 219.0 + 0.5);
    return (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
}

/* Reads all frames of a generated stream and checks size, pts and pixels. */
static void check_y4m_stream(FILE *f, int w, int h, int frames, int y0, int full_range,
                             double fps)
{
    GhmVideo *v = NULL;
    char why[256] = "";
    ck_assert_msg(ghm_video_open_y4m(f, &v, why, sizeof why) == GHM_OK, "%s", why);
    ck_assert_int_eq(ghm_video_info(v)->width, w);
    ck_assert_int_eq(ghm_video_info(v)->height, h);
    ck_assert_double_eq_tol(ghm_video_info(v)->fps, fps, 1e-9);
    GhmVideoFrame fr;
    for (int i = 0; i < frames; i++) {
        ck_assert_int_eq(ghm_video_read(v, &fr, why, sizeof why), GHM_VIDEO_FRAME);
        ck_assert_int_eq(fr.index, i);
        ck_assert_double_eq_tol(fr.pts, i / fps, 1e-9);
        ck_assert_int_eq(fr.image->width, w);
        ck_assert_int_eq(fr.image->height, h);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int stored = (y0 + i + x) & 0xff;
                int want = full_range ? stored : limited_to_full(stored);
                ck_assert_int_eq(fr.image->pixels[y * fr.image->stride + x], want);
            }
        ghm_image_free(&fr.image);
    }
    ck_assert_int_eq(ghm_video_read(v, &fr, why, sizeof why), GHM_VIDEO_END);
    ghm_video_free(&v);
    fclose(f);
}

START_TEST(test_y4m_420)
{
    /* Odd sizes: the chroma planes are ceil(w/2) x ceil(h/2). */
    const int w = 33, h = 17;
    size_t chroma = 2 * 17 * 9;
    check_y4m_stream(make_y4m("YUV4MPEG2 W33 H17 F30000:1001 Ip A1:1 C420jpeg XYSCSS=420JPEG\n",
                              w, h, chroma, 3, 0),
                     w, h, 3, 0, 0, 30000.0 / 1001.0);
    check_y4m_stream(make_y4m("YUV4MPEG2 W33 H17 F25:1 C420mpeg2\n", w, h, chroma, 2, 200), w, h,
                     2, 200, 0, 25.0);
    /* No C field: 420jpeg is the format's default. */
    check_y4m_stream(make_y4m("YUV4MPEG2 W33 H17 F25:1\n", w, h, chroma, 2, 7), w, h, 2, 7, 0,
                     25.0);
    check_y4m_stream(make_y4m("YUV4MPEG2 W33 H17 F25:1 C420 XCOLORRANGE=FULL\n", w, h, chroma, 2,
                              9),
                     w, h, 2, 9, 1, 25.0);
}
END_TEST

START_TEST(test_y4m_mono_422_444)
{
    check_y4m_stream(make_y4m("YUV4MPEG2 W20 H10 F24:1 Cmono\n", 20, 10, 0, 3, 100), 20, 10, 3,
                     100, 1, 24.0);
    check_y4m_stream(make_y4m("YUV4MPEG2 W21 H10 F24:1 C422\n", 21, 10, 2 * 11 * 10, 3, 50), 21,
                     10, 3, 50, 0, 24.0);
    check_y4m_stream(make_y4m("YUV4MPEG2 W21 H10 F24:1 C444 It\n", 21, 10, 2 * 21 * 10, 3, 60),
                     21, 10, 3, 60, 0, 24.0);
}
END_TEST

START_TEST(test_y4m_bad_headers)
{
    static const struct {
        const char *header;
        int status;
        const char *says;
    } cases[] = {
        {"", GHM_ERR_FORMAT, "empty"},
        {"YUV4MPEG W8 H8 F25:1\n", GHM_ERR_FORMAT, "not a YUV4MPEG2"},
        {"YUV4MPEG2 H8 F25:1\n", GHM_ERR_FORMAT, "width"},
        {"YUV4MPEG2 W8 F25:1\n", GHM_ERR_FORMAT, "height"},
        {"YUV4MPEG2 W8 H8\n", GHM_ERR_FORMAT, "frame rate"},
        {"YUV4MPEG2 W8  H8 F25:1\n", GHM_ERR_FORMAT, "unknown field"},
        {"YUV4MPEG2 W8 H8 F25:1 \n", GHM_ERR_FORMAT, "unknown field"},
        {"YUV4MPEG2 W-8 H8 F25:1\n", GHM_ERR_FORMAT, "width"},
        {"YUV4MPEG2 W0 H8 F25:1\n", GHM_ERR_FORMAT, "width"},
        {"YUV4MPEG2 W8x H8 F25:1\n", GHM_ERR_FORMAT, "width"},
        {"YUV4MPEG2 W40000 H8 F25:1\n", GHM_ERR_FORMAT, "width"},
        {"YUV4MPEG2 W30000 H30000 F25:1\n", GHM_ERR_TOO_LARGE, "exceed"},
        {"YUV4MPEG2 W8 H8 F25:0\n", GHM_ERR_FORMAT, "frame rate"},
        {"YUV4MPEG2 W8 H8 F25\n", GHM_ERR_FORMAT, "frame rate"},
        {"YUV4MPEG2 W8 H8 W8 F25:1\n", GHM_ERR_FORMAT, "repeats"},
        {"YUV4MPEG2 W8 H8 F25:1 Z3\n", GHM_ERR_FORMAT, "unknown field"},
        {"YUV4MPEG2 W8 H8 F25:1 Iq\n", GHM_ERR_FORMAT, "interlacing"},
        {"YUV4MPEG2 W8 H8 F25:1 C420p10\n", GHM_ERR_UNSUPPORTED, "C420p10"},
        {"YUV4MPEG2 W8 H8 F25:1 Cmono16\n", GHM_ERR_UNSUPPORTED, "not supported"},
        {"YUV4MPEG2 W8 H8 F25:1", GHM_ERR_TRUNCATED, "ends inside"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = make_y4m(cases[i].header, 0, 0, 0, 0, 0);
        GhmVideo *v = NULL;
        char why[256] = "";
        int ret = ghm_video_open_y4m(f, &v, why, sizeof why);
        ck_assert_msg(ret == cases[i].status, "header '%s': status %d (%s), expected %d",
                      cases[i].header, ret, why, cases[i].status);
        ck_assert_ptr_null(v);
        ck_assert_msg(strstr(why, cases[i].says), "header '%s': '%s' does not say '%s'",
                      cases[i].header, why, cases[i].says);
        fclose(f);
    }
    /* A header line with no end (binary data) is refused without reading it all. */
    FILE *f = tmpfile();
    fputs("YUV4MPEG2 W8 H8 F25:1 X", f);
    for (int i = 0; i < 100000; i++)
        fputc('a', f);
    rewind(f);
    GhmVideo *v = NULL;
    ck_assert_int_eq(ghm_video_open_y4m(f, &v, NULL, 0), GHM_ERR_FORMAT);
    fclose(f);
}
END_TEST

/* Opens a stream and reads it to the end: frames read and the final status. */
static int y4m_frames_then(FILE *f, int *final, char *why, size_t n)
{
    GhmVideo *v = NULL;
    ck_assert_int_eq(ghm_video_open_y4m(f, &v, why, n), GHM_OK);
    int damaged = 0;
    int frames = ghm_test_read_video(v, &damaged, final, why, n);
    ck_assert_int_eq(damaged, 0);
    ghm_video_free(&v);
    fclose(f);
    return frames;
}

START_TEST(test_y4m_truncated_and_damaged)
{
    char why[256];
    int final = 0;
    /* Two whole frames, then a third with half its Y plane. */
    FILE *f = make_y4m("YUV4MPEG2 W16 H8 F25:1 Cmono\n", 16, 8, 0, 2, 0);
    fseek(f, 0, SEEK_END);
    fputs("FRAME\n", f);
    for (int i = 0; i < 64; i++)
        fputc(1, f);
    rewind(f);
    ck_assert_int_eq(y4m_frames_then(f, &final, why, sizeof why), 2);
    ck_assert_int_eq(final, GHM_ERR_TRUNCATED);
    ck_assert_msg(strstr(why, "inside frame 2") && strstr(why, "64 of 128"), "%s", why);
    /* A stream cut inside the FRAME line. */
    f = make_y4m("YUV4MPEG2 W16 H8 F25:1 Cmono\n", 16, 8, 0, 1, 0);
    fseek(f, 0, SEEK_END);
    fputs("FRA", f);
    rewind(f);
    ck_assert_int_eq(y4m_frames_then(f, &final, why, sizeof why), 1);
    ck_assert_int_eq(final, GHM_ERR_TRUNCATED);
    /* Chroma cut short in a 420 stream is truncation too. */
    f = make_y4m("YUV4MPEG2 W16 H8 F25:1 C420\n", 16, 8, 63, 1, 0);
    ck_assert_int_eq(y4m_frames_then(f, &final, why, sizeof why), 0);
    ck_assert_int_eq(final, GHM_ERR_TRUNCATED);
    /* A frame that does not start with FRAME (bytes lost in a pipe). */
    f = make_y4m("YUV4MPEG2 W16 H8 F25:1 Cmono\n", 16, 8, 0, 2, 0);
    fseek(f, 0, SEEK_END);
    fputs("FRAMX\n", f);
    rewind(f);
    ck_assert_int_eq(y4m_frames_then(f, &final, why, sizeof why), 2);
    ck_assert_int_eq(final, GHM_ERR_FORMAT);
    ck_assert_msg(strstr(why, "frame 2"), "%s", why);
}
END_TEST

START_TEST(test_y4m_select)
{
    FILE *f = make_y4m("YUV4MPEG2 W16 H8 F10:1 C420\n", 16, 8, 2 * 8 * 4, 10, 0);
    GhmVideo *v = NULL;
    ck_assert_int_eq(ghm_video_open_y4m(f, &v, NULL, 0), GHM_OK);
    ck_assert_int_eq(ghm_video_select(v, 1, -1, 4), GHM_OK);
    GhmVideoFrame fr;
    const int want[] = {1, 5, 9};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ghm_video_read(v, &fr, NULL, 0), GHM_VIDEO_FRAME);
        ck_assert_int_eq(fr.index, want[i]);
        ck_assert_double_eq_tol(fr.pts, want[i] / 10.0, 1e-12);
        ck_assert_int_eq(fr.image->pixels[0], limited_to_full(want[i]));
        ghm_image_free(&fr.image);
    }
    ck_assert_int_eq(ghm_video_read(v, &fr, NULL, 0), GHM_VIDEO_END);
    ghm_video_free(&v);
    fclose(f);
}
END_TEST

/* A regular file of whole bare-marker frames declares its frame count (so MPI ranks can split
 * it) and skips frames by seeking: a selection that starts late gives the frames and pixels a
 * read from the start gives. Markers with parameters, a partial last frame or a pipe: -1. */
START_TEST(test_y4m_file_frame_count)
{
    FILE *f = make_y4m("YUV4MPEG2 W16 H8 F10:1 C420\n", 16, 8, 2 * 8 * 4, 10, 0);
    GhmVideo *v = NULL;
    ck_assert_int_eq(ghm_video_open_y4m(f, &v, NULL, 0), GHM_OK);
    ck_assert_int_eq(ghm_video_info(v)->frames, 10);
    ck_assert_int_eq(ghm_video_select(v, 7, -1, 2), GHM_OK);
    GhmVideoFrame fr;
    for (int want = 7; want <= 9; want += 2) {
        ck_assert_int_eq(ghm_video_read(v, &fr, NULL, 0), GHM_VIDEO_FRAME);
        ck_assert_int_eq(fr.index, want);
        for (int x = 0; x < 16; x++)
            ck_assert_int_eq(fr.image->pixels[7 * fr.image->stride + x],
                             limited_to_full((want + x) & 0xff));
        ghm_image_free(&fr.image);
    }
    ck_assert_int_eq(ghm_video_read(v, &fr, NULL, 0), GHM_VIDEO_END);
    ghm_video_free(&v);
    fclose(f);

    f = make_y4m("YUV4MPEG2 W16 H8 F10:1 Cmono\n", 16, 8, 0, 3, 0);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    fputs("FRAME\n", f); /* a fourth frame cut short */
    rewind(f);
    ck_assert_int_eq(ghm_video_open_y4m(f, &v, NULL, 0), GHM_OK);
    ck_assert_int_eq(ghm_video_info(v)->frames, -1);
    ck_assert_int_eq(ghm_video_select(v, 2, -1, 1), GHM_OK);
    ck_assert_int_eq(ghm_video_read(v, &fr, NULL, 0), GHM_VIDEO_FRAME);
    ck_assert_int_eq(fr.index, 2);
    ghm_image_free(&fr.image);
    char why[256] = "";
    ck_assert_int_eq(ghm_video_read(v, &fr, why, sizeof why), GHM_ERR_TRUNCATED);
    ghm_video_free(&v);
    fclose(f);

    f = tmpfile();
    ck_assert_ptr_nonnull(f);
    fputs("YUV4MPEG2 W4 H2 F10:1 Cmono\nFRAME Ip\n01234567", f);
    rewind(f);
    ck_assert_int_eq(ghm_video_open_y4m(f, &v, NULL, 0), GHM_OK);
    ck_assert_int_eq(ghm_video_info(v)->frames, -1);
    ck_assert_int_eq(ghm_video_read(v, &fr, NULL, 0), GHM_VIDEO_FRAME);
    ghm_image_free(&fr.image);
    ghm_video_free(&v);
    fclose(f);
}
END_TEST

/* A Y4M file read by FFmpeg (libswscale to GRAY8) and by our reader gives the same pixels, so
 * "ffmpeg -f yuv4mpegpipe - | geohash-match ref.png -" sees what the file itself would give.
 * In a build without FFmpeg the file goes to our reader, and the check is trivially true. */
START_TEST(test_y4m_file_same_as_ffmpeg)
{
    const char *path = ghm_test_tmp("clip.y4m");
    FILE *f = fopen(path, "w+b");
    ck_assert_ptr_nonnull(f);
    fputs("YUV4MPEG2 W64 H48 F25:1 Ip A1:1 C420jpeg\n", f);
    for (int i = 0; i < 3; i++) {
        fputs("FRAME\n", f);
        for (int p = 0; p < 64 * 48; p++)
            fputc((p * 7 + i * 31) & 0xff, f); /* every value 0..255 occurs */
        for (int p = 0; p < 2 * 32 * 24; p++)
            fputc((p * 13) & 0xff, f);
    }
    fflush(f);
    rewind(f);
    GhmVideo *ours = NULL, *file = NULL;
    char why[256] = "";
    ck_assert_int_eq(ghm_video_open_y4m(f, &ours, why, sizeof why), GHM_OK);
    ck_assert_msg(ghm_video_open(path, &file, why, sizeof why) == GHM_OK, "%s", why);
    ck_assert_int_eq(ghm_video_info(file)->frames, 3); /* counted: MPI ranks split by it */
    GhmVideoFrame a, b;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ghm_video_read(ours, &a, why, sizeof why), GHM_VIDEO_FRAME);
        ck_assert_msg(ghm_video_read(file, &b, why, sizeof why) == GHM_VIDEO_FRAME, "%s", why);
        ck_assert_int_eq(a.index, b.index);
        ck_assert_double_eq_tol(a.pts, b.pts, 1e-9);
        for (int y = 0; y < 48; y++)
            for (int x = 0; x < 64; x++)
                ck_assert_int_eq(a.image->pixels[y * a.image->stride + x],
                                 b.image->pixels[y * b.image->stride + x]);
        ghm_image_free(&a.image);
        ghm_image_free(&b.image);
    }
    ck_assert_int_eq(ghm_video_read(file, &b, why, sizeof why), GHM_VIDEO_END);
    ghm_video_free(&ours);
    ghm_video_free(&file);
    fclose(f);
}
END_TEST

/* A file whose last frame is cut short ends with that error whichever reader has it: FFmpeg's
 * drops the partial frame without a word, so the library says what ours says. */
START_TEST(test_y4m_file_cut_short)
{
    static const char *const tails[] = {"FRAME\n0123456789", "FRA"};
    static const char *const said[] = {"inside frame 2 (10 of 192 bytes)",
                                       "inside the header of frame 2"};
    for (int t = 0; t < 2; t++) {
        const char *path = ghm_test_tmp("cut.y4m");
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fputs("YUV4MPEG2 W16 H8 F25:1 C420jpeg\n", f);
        for (int i = 0; i < 2; i++) {
            fputs("FRAME\n", f);
            for (int p = 0; p < 16 * 8 + 2 * 8 * 4; p++)
                fputc((p + i) & 0xff, f);
        }
        fputs(tails[t], f);
        ck_assert_int_eq(fclose(f), 0);
        GhmVideo *v = NULL;
        char why[256] = "";
        ck_assert_msg(ghm_video_open(path, &v, why, sizeof why) == GHM_OK, "%s", why);
        GhmVideoFrame fr;
        for (int i = 0; i < 2; i++) {
            ck_assert_msg(ghm_video_read(v, &fr, why, sizeof why) == GHM_VIDEO_FRAME, "%s", why);
            ghm_image_free(&fr.image);
        }
        ck_assert_int_eq(ghm_video_read(v, &fr, why, sizeof why), GHM_ERR_TRUNCATED);
        ck_assert_msg(strstr(why, said[t]) != NULL, "%s", why);
        ghm_video_free(&v);
    }
}
END_TEST

static Suite *video_y4m_suite(void)
{
    Suite *s = suite_create("video_y4m");
    TCase *y4m = tcase_create("y4m");
    tcase_add_checked_fixture(y4m, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_add_test(y4m, test_y4m_420);
    tcase_add_test(y4m, test_y4m_mono_422_444);
    tcase_add_test(y4m, test_y4m_bad_headers);
    tcase_add_test(y4m, test_y4m_truncated_and_damaged);
    tcase_add_test(y4m, test_y4m_file_frame_count);
    tcase_add_test(y4m, test_y4m_select);
    tcase_add_test(y4m, test_y4m_file_same_as_ffmpeg);
    tcase_add_test(y4m, test_y4m_file_cut_short);
    suite_add_tcase(s, y4m);
    return s;
}

int main(void) { return ghm_test_main(video_y4m_suite()); }
