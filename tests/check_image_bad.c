/*
 * check_image_bad.c - damaged image inputs: every bad file of data/bad, every prefix of valid
 * PNGs and JPEGs, random bytes, sizes and scan counts past the limits give their error code and a
 * one-line message, never a crash or an image. (The formats themselves: check_image.c.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <zlib.h>

#include "ghm_image.h"
#include "image_writers.h"
#include "test_support.h"

typedef struct BadFile {
    const char *path;
    int status;
    const char *why; /* a substring of the message */
} BadFile;

static const BadFile bad_files[] = {
    {"bad/empty.png", GHM_ERR_FORMAT, "empty file"},
    {"bad/corrupt_signature.png", GHM_ERR_FORMAT, "not a PNG or JPEG image"},
    {"bad/corrupt_ihdr_crc.png", GHM_ERR_FORMAT, "CRC error"},
    {"bad/huge_dimensions.png", GHM_ERR_TOO_LARGE,
     "image is 1000000x1000000 pixels, above the limit of 100000000 pixels"},
    {"bad/truncated.jpg", GHM_ERR_TRUNCATED, "truncated JPEG data"},
    {"bad/not_an_image.jpg", GHM_ERR_FORMAT, "not a PNG or JPEG image"},
};

START_TEST(test_bad_files)
{
    const BadFile *b = &bad_files[_i];
    GhmImage *img = NULL;
    char why[256] = "";
    int ret = ghm_image_load(ghm_test_data(b->path), &img, why, sizeof why);
    ck_assert_msg(ret == b->status, "%s: got %s (%s), want %s", b->path, ghm_strerror(ret), why,
                  ghm_strerror(b->status));
    ck_assert_msg(strstr(why, b->why) != NULL, "%s: message '%s'", b->path, why);
    ck_assert_ptr_eq(strchr(why, '\n'), NULL);
    ck_assert_ptr_null(img);
}
END_TEST

START_TEST(test_truncated_prefixes)
{
    static const char *files[] = {"images/box.png", "images/rubberwhale1.png",
                                  "images/butterfly.jpg", "images/Blender_Suzanne1.jpg",
                                  "pairs/dev_03_query.jpg"};
    size_t size = 0;
    uint8_t *data = ghm_test_read_file(ghm_test_data(files[_i]), &size);
    ghm_test_truncations(data, size, files[_i]);
    free(data);
}
END_TEST

START_TEST(test_garbage)
{
    static uint8_t buf[4096];
    char why[256];
    GhmImage *img = NULL;
    /* Random bytes (first byte forced away from both signatures). */
    ghm_test_noise(buf, 0, sizeof buf, 7);
    buf[0] = 0x42;
    ghm_test_write_file(ghm_test_tmp("random.bin"), buf, sizeof buf);
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("random.bin"), &img, why, sizeof why),
                     GHM_ERR_FORMAT);
    ck_assert_str_eq(why, "not a PNG or JPEG image");
    /* A valid PNG signature followed by garbage, for several garbage seeds. */
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    for (unsigned seed = 1; seed <= 50; seed++) {
        ghm_test_noise(buf, 0, sizeof buf, seed);
        memcpy(buf, sig, sizeof sig);
        why[0] = '\0';
        int ret = ghm_image_decode(buf, sizeof buf, &img, why, sizeof why);
        ck_assert_msg(ret == GHM_ERR_FORMAT, "seed %u: %s (%s)", seed, ghm_strerror(ret), why);
        ck_assert_ptr_nonnull(strstr(why, "damaged PNG data"));
        ck_assert_ptr_null(img);
    }
    /* A JPEG start of image followed by garbage. */
    for (unsigned seed = 1; seed <= 50; seed++) {
        ghm_test_noise(buf, 0, sizeof buf, seed);
        buf[0] = 0xff, buf[1] = 0xd8, buf[2] = 0xff;
        why[0] = '\0';
        int ret = ghm_image_decode(buf, sizeof buf, &img, why, sizeof why);
        ck_assert_msg(ret < 0, "seed %u decoded garbage", seed);
        ck_assert_str_ne(why, "");
        ck_assert_ptr_null(img);
    }
}
END_TEST

/* Overwrites the IHDR width and height of a valid PNG (and its CRC, so only the size is odd). */
static void set_png_size(uint8_t *png, uint32_t w, uint32_t h)
{
    for (int i = 0; i < 4; i++) {
        png[16 + i] = (uint8_t)(w >> (24 - 8 * i));
        png[20 + i] = (uint8_t)(h >> (24 - 8 * i));
    }
    uint32_t crc = (uint32_t)crc32(0, png + 12, 17);
    for (int i = 0; i < 4; i++)
        png[29 + i] = (uint8_t)(crc >> (24 - 8 * i));
}

START_TEST(test_size_limits_in_headers)
{
    size_t size = 0;
    uint8_t *png = ghm_test_read_file(ghm_test_data("images/box.png"), &size);
    GhmImage *img = NULL;
    char why[256] = "";
    set_png_size(png, 0, 223);
    ck_assert_int_eq(ghm_image_decode(png, size, &img, why, sizeof why), GHM_ERR_FORMAT);
    ck_assert_ptr_nonnull(strstr(why, "zero"));
    set_png_size(png, GHM_IMAGE_MAX_SIDE + 1, 2);
    ck_assert_int_eq(ghm_image_decode(png, size, &img, why, sizeof why), GHM_ERR_TOO_LARGE);
    ck_assert_ptr_nonnull(strstr(why, "32769x2"));
    set_png_size(png, 20000, 20000);
    ck_assert_int_eq(ghm_image_decode(png, size, &img, why, sizeof why), GHM_ERR_TOO_LARGE);
    ck_assert_ptr_null(img);
    free(png);

    /* A JPEG whose frame header claims 60000 x 60000: refused before any decoding. */
    uint8_t v = 0;
    uint8_t *jpeg = NULL;
    ghm_test_encode_jpeg(&v, 1, 1, 1, JCS_GRAYSCALE, 0, &jpeg, &size);
    size_t sof = 0;
    for (size_t i = 2; i + 8 < size && sof == 0; i++)
        if (jpeg[i] == 0xff && jpeg[i + 1] == 0xc0)
            sof = i;
    ck_assert_uint_gt(sof, 0);
    jpeg[sof + 5] = jpeg[sof + 7] = 60000 >> 8;
    jpeg[sof + 6] = jpeg[sof + 8] = 60000 & 0xff;
    ck_assert_int_eq(ghm_image_decode(jpeg, size, &img, why, sizeof why), GHM_ERR_TOO_LARGE);
    ck_assert_ptr_nonnull(strstr(why, "60000x60000"));
    ck_assert_ptr_null(img);
    free(jpeg);
}
END_TEST

/* A valid progressive grey JPEG with one scan per AC coefficient and successive-approximation
 * bit (1 + 63 * scans_per_band scans). */
static void encode_many_scans(int scans_per_band, uint8_t **out, size_t *size)
{
    enum { W = 16, H = 16 };
    static uint8_t grey[W * H];
    for (int i = 0; i < W * H; i++)
        grey[i] = (uint8_t)(i * 37);
    static jpeg_scan_info scans[1 + 63 * 9];
    int n = 0;
    scans[n++] = (jpeg_scan_info){.comps_in_scan = 1, .Ss = 0, .Se = 0, .Ah = 0, .Al = 0};
    for (int k = 1; k <= 63; k++) {
        int al = scans_per_band - 1;
        scans[n++] = (jpeg_scan_info){.comps_in_scan = 1, .Ss = k, .Se = k, .Ah = 0, .Al = al};
        for (; al > 0; al--)
            scans[n++] =
                (jpeg_scan_info){.comps_in_scan = 1, .Ss = k, .Se = k, .Ah = al, .Al = al - 1};
    }
    ghm_test_encode_jpeg_scans(grey, W, H, scans, n, out, size);
}

/* Thousands of tiny scans are a known way to make a small JPEG cost minutes of CPU: refused
 * above libjpeg-turbo's own limit of 500, while an ordinary many-scan file still decodes. */
START_TEST(test_jpeg_scan_limit)
{
    uint8_t *data = NULL;
    size_t size = 0;
    GhmImage *img = NULL;
    char why[256] = "";
    encode_many_scans(1, &data, &size); /* 64 scans */
    ck_assert_int_eq(ghm_image_decode(data, size, &img, why, sizeof why), GHM_OK);
    ck_assert_int_eq(img->width, 16);
    ghm_image_free(&img);
    free(data);
    encode_many_scans(9, &data, &size); /* 568 scans */
    ck_assert_int_eq(ghm_image_decode(data, size, &img, why, sizeof why), GHM_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(why, "progressive scans"));
    ck_assert_ptr_null(img);
    free(data);
}
END_TEST

static Suite *image_bad_suite(void)
{
    Suite *s = suite_create("image_bad");
    TCase *bad = tcase_create("bad");
    tcase_add_checked_fixture(bad, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_set_timeout(bad, 300);
    tcase_add_loop_test(bad, test_bad_files, 0, (int)(sizeof bad_files / sizeof bad_files[0]));
    tcase_add_loop_test(bad, test_truncated_prefixes, 0, 5);
    tcase_add_test(bad, test_garbage);
    tcase_add_test(bad, test_size_limits_in_headers);
    tcase_add_test(bad, test_jpeg_scan_limit);
    suite_add_tcase(s, bad);
    return s;
}

int main(void) { return ghm_test_main(image_bad_suite()); }
