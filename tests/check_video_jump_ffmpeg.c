/* check_video_jump_ffmpeg.c - a reader whose selection starts past frame 0 enters the file at a
 * key frame (vision/video/video_jump.c) and still gives every selected frame the number, time
 * and pixels of a reading from the first frame: closed and open groups of pictures, MP4 and
 * Matroska (millisecond timestamps), selections with steps and ends, and files that must be
 * read from the start (an AVI without presentation times, an MP4 with one key frame). That it
 * does enter late shows in a copy with a damaged packet before the key frame: a reading from
 * the start hears the decoder complain, a reading from the key frame does not. The same frames
 * again decoded on a GPU (ghm_video_set_gpu_decoding, case "cuda_decode"), and a clean refusal
 * where there is none. Built only with FFmpeg (the test finds the packet to damage with
 * FFmpeg's demuxer). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavformat/avformat.h>
#include <libavutil/log.h>

#include "ghm_video.h"
#include "test_support.h"

enum { MOST_ITEMS = 512 };

/* One thing a reader gave: a frame (with a hash of its pixels) or a damaged frame. */
typedef struct Item {
    int status;
    int64_t index;
    double pts;
    uint64_t hash;
} Item;

static uint64_t pixel_hash(const GhmImage *img)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            h ^= img->pixels[(size_t)y * (size_t)img->stride + (size_t)x];
            h *= 1099511628211ull;
        }
    return h;
}

static int decode_threads; /* 0: the library's default */
static int decode_device = -1; /* the CUDA device that decodes, -1: the CPU */

/* Every item v (opened from file) gives until its end, into out; returns how many. */
static int read_to_end(GhmVideo *v, const char *file, Item *out)
{
    char why[256] = "";
    GhmVideoFrame f;
    int n = 0, ret;
    while ((ret = ghm_video_read(v, &f, why, sizeof why)) != GHM_VIDEO_END) {
        ck_assert_msg(ret >= 0, "%s: %s", file, why);
        ck_assert_int_lt(n, MOST_ITEMS);
        out[n++] = (Item){ret, f.index, f.pts, f.image ? pixel_hash(f.image) : 0};
        ghm_image_free(&f.image);
    }
    return n;
}

static int same_item(const Item *a, const Item *b)
{
    return a->status == b->status && a->index == b->index && a->pts == b->pts &&
           a->hash == b->hash;
}

/* Every item a reader of file with this selection gives, into out; returns how many. */
static int read_items(const char *file, int64_t start, int64_t end, int64_t step, Item *out)
{
    GhmVideo *v = NULL;
    char why[256] = "";
    ck_assert_msg(ghm_video_open(file, &v, why, sizeof why) == GHM_OK, "%s: %s", file, why);
    ck_assert_int_eq(ghm_video_select(v, start, end, step), GHM_OK);
    if (decode_threads)
        ck_assert_int_eq(ghm_video_set_decode_threads(v, decode_threads), GHM_OK);
    if (decode_device >= 0)
        ck_assert_msg(ghm_video_set_gpu_decoding(v, decode_device, why, sizeof why) == GHM_OK,
                      "%s: %s", file, why);
    int n = read_to_end(v, file, out);
    ghm_video_free(&v);
    return n;
}

static int wanted(int64_t i, int64_t start, int64_t end, int64_t step)
{
    return i >= start && (end < 0 || i <= end) && (i - start) % step == 0;
}

/* The selection's items from a reader with that selection against those of a reading of every
 * frame (all, n_all), item by item. Damaged frames outside the selection may differ (a reader
 * that entered late does not see those before its key frame). */
static void check_selection(const char *file, const Item *all, int n_all, int64_t start,
                            int64_t end, int64_t step)
{
    static Item got[MOST_ITEMS];
    int n = read_items(file, start, end, step, got), k = 0;
    for (int i = 0; i < n_all; i++) {
        if (!wanted(all[i].index, start, end, step))
            continue;
        while (k < n && !wanted(got[k].index, start, end, step))
            k++;
        ck_assert_msg(k < n, "%s from %lld step %lld: frame %lld missing", file,
                      (long long)start, (long long)step, (long long)all[i].index);
        const Item *a = &all[i], *b = &got[k++];
        ck_assert_msg(same_item(a, b),
                      "%s from %lld step %lld: frame %lld (%.6f s) came back as frame %lld "
                      "(%.6f s)%s", file, (long long)start, (long long)step, (long long)a->index,
                      a->pts, (long long)b->index, b->pts,
                      a->hash != b->hash ? " with other pixels" : "");
    }
    for (; k < n; k++)
        ck_assert_msg(!wanted(got[k].index, start, end, step), "%s: frame %lld given twice",
                      file, (long long)got[k].index);
}

static void check_file(const char *name, int64_t frames)
{
    static Item all[MOST_ITEMS];
    const char *file = ghm_test_data(name);
    int n = read_items(file, 0, -1, 1, all);
    ck_assert_int_eq(n, frames);
    const int64_t starts[] = {1, 5, 11, 12, 13, 24, 37, 60, frames - 1, frames, frames + 50};
    for (size_t s = 0; s < sizeof starts / sizeof starts[0]; s++) {
        check_selection(file, all, n, starts[s], -1, 1);
        check_selection(file, all, n, starts[s], -1, 7);
    }
    check_selection(file, all, n, 30, 40, 1);
    check_selection(file, all, n, 25, 26, 3);
}

START_TEST(test_jump_same_frames)
{
    check_file("video/megamind_gop12.mp4", 96);      /* closed groups, B-frames */
    check_file("video/megamind_gop12.mkv", 96);      /* Matroska: milliseconds, no early dts */
    check_file("video/megamind_gop12_open.mp4", 96); /* open groups */
    check_file("video/synthetic_rubberwhale.mp4", 48); /* one key frame: read from the start */
}
END_TEST

START_TEST(test_avi_read_from_start)
{
    check_file("video/Megamind.avi", 270); /* AVI: no presentation times, read from the start */
}
END_TEST

/* ---------------------------------------------------------------- the jump is taken */

static int decoder_lines; /* lines the library said were a video's */

static void app_callback(void *avcl, int level, const char *fmt, va_list ap)
{
    decoder_lines += ghm_video_log_ffmpeg(avcl, level, fmt, ap);
}

/* A copy of file in the test's scratch folder with the middle of its video stream's packet
 * number `which` (decode order) overwritten by noise. */
static const char *damage_packet(const char *file, int which)
{
    AVFormatContext *fmt = NULL;
    ck_assert_int_ge(avformat_open_input(&fmt, file, NULL, NULL), 0);
    ck_assert_int_ge(avformat_find_stream_info(fmt, NULL), 0);
    int stream = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, NULL, 0);
    AVPacket *pkt = av_packet_alloc();
    int64_t pos = -1, size = 0;
    for (int seen = 0; pos < 0 && av_read_frame(fmt, pkt) >= 0; av_packet_unref(pkt))
        if (pkt->stream_index == stream && seen++ == which) {
            pos = pkt->pos;
            size = pkt->size;
        }
    av_packet_free(&pkt);
    avformat_close_input(&fmt);
    ck_assert_int_ge(pos, 0);
    ck_assert_int_ge(size, 64);
    size_t n = 0;
    uint8_t *data = ghm_test_read_file(file, &n);
    ghm_test_noise(data, (size_t)(pos + size / 4), (size_t)(pos + size * 3 / 4), 12345);
    static char path[512]; /* ghm_test_tmp's buffer is reused by the next call */
    snprintf(path, sizeof path, "%s", ghm_test_tmp("damaged.mp4"));
    ghm_test_write_file(path, data, n);
    free(data);
    return path;
}

/* The lines the library takes from a reading of file with this selection, on one decoding thread
 * (the lines are then the same from run to run). */
static int lines_of(const char *file, int64_t start)
{
    static Item items[MOST_ITEMS];
    decoder_lines = 0;
    read_items(file, start, -1, 1, items);
    return decoder_lines;
}

START_TEST(test_jump_skips_what_comes_before)
{
    av_log_set_callback(app_callback);
    decode_threads = 1;
    static Item all[MOST_ITEMS];
    const char *clean = ghm_test_data("video/megamind_gop12.mp4");
    /* Packet 4 is frame 6's, a P-frame of the first group (key frames at 0, 12, 24, ...). */
    const char *file = damage_packet(clean, 4);
    int n = read_items(file, 0, -1, 1, all);
    ck_assert_int_eq(n, 96);
    check_selection(file, all, n, 30, -1, 1);
    /* The decoder has more to say about the damaged copy than about the file from the start and
     * from frame 8 (whose key frame is frame 0), but not from frame 30 (key frame 24): an entry
     * at a key frame in the middle of a stream has lines of its own, the same for both. */
    ck_assert_int_gt(lines_of(file, 0), lines_of(clean, 0));
    ck_assert_int_gt(lines_of(file, 8), lines_of(clean, 8));
    ck_assert_int_eq(lines_of(file, 30), lines_of(clean, 30));
}
END_TEST

/* H.264 decoded by NVDEC: the CPU's frames, numbers and times, read from the start and
 * entered at key frames. */
START_TEST(test_gpu_decoding_same_frames)
{
    static Item all[MOST_ITEMS];
    const char *names[] = {"video/megamind_gop12.mp4", "video/megamind_gop12_open.mp4",
                           "video/megamind_gop12.mkv"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *file = ghm_test_data(names[i]);
        decode_device = -1;
        int n = read_items(file, 0, -1, 1, all);
        ck_assert_int_eq(n, 96);
        decode_device = 0;
        check_selection(file, all, n, 0, -1, 1);
        check_selection(file, all, n, 13, -1, 1);
        check_selection(file, all, n, 37, -1, 5);
        check_selection(file, all, n, 30, 40, 1);
    }
    decode_device = -1;
}
END_TEST

/* The choice is refused before a read and for a bad device; without a device (this machine's
 * CI) it fails with a reason and the video reads on, on the CPU, as if never asked. */
START_TEST(test_gpu_decoding_refused_cleanly)
{
    static Item all[MOST_ITEMS], got[MOST_ITEMS];
    const char *file = ghm_test_data("video/megamind_gop12.mp4");
    int n = read_items(file, 0, -1, 1, all);
    GhmVideo *v = NULL;
    char why[256] = "";
    ck_assert_int_eq(ghm_video_open(file, &v, why, sizeof why), GHM_OK);
    ck_assert_int_eq(ghm_video_set_gpu_decoding(v, -2, why, sizeof why), GHM_ERR_INVALID);
    if (!ghm_test_have_cuda()) {
        why[0] = '\0';
        int ret = ghm_video_set_gpu_decoding(v, 0, why, sizeof why);
        ck_assert_msg(ret == GHM_ERR_NO_DEVICE || ret == GHM_ERR_UNSUPPORTED, "%d: %s", ret, why);
        ck_assert_msg(why[0] != '\0', "no reason given");
    }
    int k = read_to_end(v, file, got);
    ck_assert_int_eq(k, n);
    for (int i = 0; i < n; i++)
        ck_assert(same_item(&got[i], &all[i]));
    ck_assert_int_eq(ghm_video_set_gpu_decoding(v, 0, why, sizeof why), GHM_ERR_INVALID);
    ghm_video_free(&v);
}
END_TEST

static Suite *video_jump_suite(void)
{
    Suite *s = suite_create("video_jump_ffmpeg");
    TCase *jump = tcase_create("jump");
    tcase_add_checked_fixture(jump, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_set_timeout(jump, 120);
    tcase_add_test(jump, test_jump_same_frames);
    tcase_add_test(jump, test_avi_read_from_start);
    tcase_add_test(jump, test_jump_skips_what_comes_before);
    suite_add_tcase(s, jump);
    TCase *gpu = tcase_create("cuda_decode");
    tcase_set_timeout(gpu, 120);
    tcase_add_test(gpu, test_gpu_decoding_same_frames);
    suite_add_tcase(s, gpu);
    TCase *refused = tcase_create("gpu_refused");
    tcase_add_test(refused, test_gpu_decoding_refused_cleanly);
    suite_add_tcase(s, refused);
    return s;
}

int main(void) { return ghm_test_main(video_jump_suite()); }
