/*
 * check_image_jpeg.c - JPEG input: grey, RGB and progressive files (written with libjpeg itself,
 * image_writers.c) decode to the expected grey values, a photo's EXIF orientation turns the
 * decoded image as viewers show it, and CMYK is refused (damaged JPEGs: check_image_bad.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>

#include "ghm_image.h"
#include "image_writers.h"
#include "test_support.h"

START_TEST(test_jpeg_grey_rgb_progressive)
{
    enum { W = 48, H = 40 };
    static uint8_t grey[W * H], rgb[W * H * 3];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            grey[y * W + x] = (uint8_t)(x * 4 + y);
            /* Flat 8x8-aligned colour blocks, so that quality 100 keeps them nearly exact. */
            const int *c = ghm_test_colours[((y / 8) * (W / 8) + x / 8) % GHM_TEST_NCOLOURS];
            for (int k = 0; k < 3; k++)
                rgb[(y * W + x) * 3 + k] = (uint8_t)c[k];
        }
    uint8_t *data = NULL;
    size_t size = 0;
    GhmImage *img = NULL;
    ghm_test_encode_jpeg(grey, W, H, 1, JCS_GRAYSCALE, 0, &data, &size);
    ck_assert_int_eq(ghm_image_decode(data, size, &img, NULL, 0), GHM_OK);
    for (int i = 0; i < W * H; i++)
        ck_assert_int_le(abs(ghm_test_pixel(img, i % W, i / W) - grey[i]), 2);
    ghm_image_free(&img);
    free(data);

    GhmImage *base = NULL, *prog = NULL;
    ghm_test_encode_jpeg(rgb, W, H, 3, JCS_RGB, 0, &data, &size);
    ck_assert_int_eq(ghm_image_decode(data, size, &base, NULL, 0), GHM_OK);
    free(data);
    ghm_test_encode_jpeg(rgb, W, H, 3, JCS_RGB, 1, &data, &size);
    ck_assert_int_eq(ghm_image_decode(data, size, &prog, NULL, 0), GHM_OK);
    free(data);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *c = rgb + (y * W + x) * 3;
            /* Chroma subsampling blurs colour at block edges; luma is kept at full size. */
            ck_assert_int_le(abs(ghm_test_pixel(base, x, y) - ghm_test_luma(c[0], c[1], c[2])), 3);
            ck_assert_int_eq(ghm_test_pixel(prog, x, y), ghm_test_pixel(base, x, y));
        }
    ghm_image_free(&base);
    ghm_image_free(&prog);
}
END_TEST

/* A JPEG with an APP1 EXIF block after its SOI giving orientation o (in the TIFF byte order
 * "II" or "MM"; o = 0 writes a block without the tag), the TIFF data cut to its first keep bytes
 * (26: whole). The caller frees the result. */
static uint8_t *with_orientation(const uint8_t *jpeg, size_t size, int o, int big, size_t keep,
                                 size_t *out)
{
    uint8_t tiff[26] = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0,
                        (uint8_t)o, 0, 0, 0, 0, 0, 0, 0};
    if (o == 0)
        tiff[10] = 0x13; /* another tag */
    if (big) { /* each field's bytes swapped */
        static const int fields[][2] = {{0, 2}, {2, 2}, {4, 4}, {8, 2}, {10, 2}, {12, 2},
                                        {14, 4}, {18, 2}};
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++)
            for (int a = fields[f][0], b = fields[f][0] + fields[f][1] - 1; a < b; a++, b--) {
                uint8_t t = tiff[a];
                tiff[a] = tiff[b];
                tiff[b] = t;
            }
        tiff[0] = tiff[1] = 'M';
    }
    size_t seg = 2 + 6 + keep;
    uint8_t *d = malloc(size + 2 + seg);
    ck_assert_ptr_nonnull(d);
    memcpy(d, jpeg, 2); /* SOI */
    uint8_t head[4] = {0xFF, 0xE1, (uint8_t)(seg >> 8), (uint8_t)seg};
    memcpy(d + 2, head, 4);
    memcpy(d + 6, "Exif\0\0", 6);
    memcpy(d + 12, tiff, keep);
    memcpy(d + 12 + keep, jpeg + 2, size - 2);
    *out = size + 2 + seg;
    return d;
}

/* A photo taken with the camera turned is shown turned, as its EXIF orientation says: the
 * decoded image is the stored one turned or mirrored, pixel for pixel, for each of the 8
 * values in either byte order; a block without the tag, or with a value out of range, leaves
 * it as stored. */
START_TEST(test_jpeg_exif_orientation)
{
    enum { W = 24, H = 16 };
    static uint8_t grey[W * H];
    for (int i = 0; i < W * H; i++)
        grey[i] = (uint8_t)(i * 7 % 251);
    uint8_t *plain = NULL;
    size_t plain_size = 0;
    ghm_test_encode_jpeg(grey, W, H, 1, JCS_GRAYSCALE, 0, &plain, &plain_size);
    GhmImage *s = NULL;
    ck_assert_int_eq(ghm_image_decode(plain, plain_size, &s, NULL, 0), GHM_OK);
    for (int o = 0; o <= 9; o++)
        for (int big = 0; big < 2; big++) {
            size_t size = 0;
            uint8_t *data = with_orientation(plain, plain_size, o, big, 26, &size);
            GhmImage *d = NULL;
            char why[256] = "";
            ck_assert_msg(ghm_image_decode(data, size, &d, why, sizeof why) == GHM_OK, "%s", why);
            int turned = o >= 5 && o <= 8, shown = o >= 1 && o <= 8 ? o : 1;
            ck_assert_int_eq(d->width, turned ? H : W);
            ck_assert_int_eq(d->height, turned ? W : H);
            for (int y = 0; y < d->height; y++)
                for (int x = 0; x < d->width; x++) {
                    /* the EXIF definitions, one by one */
                    int sx = x, sy = y;
                    switch (shown) {
                    case 2: sx = W - 1 - x; break;
                    case 3: sx = W - 1 - x, sy = H - 1 - y; break;
                    case 4: sy = H - 1 - y; break;
                    case 5: sx = y, sy = x; break;
                    case 6: sx = y, sy = H - 1 - x; break;
                    case 7: sx = W - 1 - y, sy = H - 1 - x; break;
                    case 8: sx = W - 1 - y, sy = x; break;
                    }
                    ck_assert_msg(ghm_test_pixel(d, x, y) == ghm_test_pixel(s, sx, sy),
                                  "orientation %d (%s) at (%d, %d)", o, big ? "MM" : "II", x, y);
                }
            ghm_image_free(&d);
            free(data);
        }
    /* A block cut short inside its entry: shown as stored. */
    size_t size = 0;
    uint8_t *data = with_orientation(plain, plain_size, 6, 0, 16, &size);
    GhmImage *d = NULL;
    ck_assert_int_eq(ghm_image_decode(data, size, &d, NULL, 0), GHM_OK);
    ck_assert_int_eq(d->width, W);
    ck_assert_int_eq(memcmp(d->pixels, s->pixels, (size_t)H * (size_t)s->stride), 0);
    ghm_image_free(&d);
    free(data);
    ghm_image_free(&s);
    free(plain);
}
END_TEST

START_TEST(test_jpeg_cmyk_unsupported)
{
    static uint8_t cmyk[16 * 16 * 4];
    memset(cmyk, 40, sizeof cmyk);
    uint8_t *data = NULL;
    size_t size = 0;
    ghm_test_encode_jpeg(cmyk, 16, 16, 4, JCS_CMYK, 0, &data, &size);
    GhmImage *img = NULL;
    char why[256] = "";
    ck_assert_int_eq(ghm_image_decode(data, size, &img, why, sizeof why), GHM_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(why, "CMYK"));
    ck_assert_ptr_null(img);
    free(data);
}
END_TEST

static Suite *image_jpeg_suite(void)
{
    Suite *s = suite_create("image_jpeg");
    TCase *jpeg = tcase_create("jpeg");
    tcase_add_test(jpeg, test_jpeg_grey_rgb_progressive);
    tcase_add_test(jpeg, test_jpeg_exif_orientation);
    tcase_add_test(jpeg, test_jpeg_cmyk_unsupported);
    suite_add_tcase(s, jpeg);
    return s;
}

int main(void) { return ghm_test_main(image_jpeg_suite()); }
