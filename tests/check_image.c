/*
 * check_image.c - image input and output: the sample images decode to their known sizes, PNGs
 * of every colour type and bit depth (written with libpng itself, image_writers.c) convert to
 * the expected grey values, grey images survive a save/load round trip, and an interlaced PNG
 * cut short is an error (JPEGs: check_image_jpeg.c; other damaged inputs: check_image_bad.c).
 */
#include <dirent.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>

#include "ghm_image.h"
#include "image_writers.h"
#include "test_support.h"

/* Writes p to ghm_test_tmpdir()/name and loads it back, failing the test on any error. */
static GhmImage *png_round(const char *name, const GhmTestPng *p)
{
    ghm_test_write_png(ghm_test_tmp(name), p);
    GhmImage *img = NULL;
    char why[256] = "";
    int ret = ghm_image_load(ghm_test_tmp(name), &img, why, sizeof why);
    ck_assert_msg(ret == GHM_OK, "%s: %s (%s)", name, ghm_strerror(ret), why);
    ck_assert_int_eq(img->width, p->width);
    ck_assert_int_eq(img->height, p->height);
    return img;
}

/* --- core ---------------------------------------------------------------------------------- */

START_TEST(test_create_and_free)
{
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_create(0, 5, &img), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_image_create(5, -1, &img), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_image_create(GHM_IMAGE_MAX_SIDE + 1, 1, &img), GHM_ERR_TOO_LARGE);
    ck_assert_int_eq(ghm_image_create(10000, 10001, &img), GHM_ERR_TOO_LARGE);
    ck_assert_ptr_null(img);
    ck_assert_int_eq(ghm_image_create(7, 3, &img), GHM_OK);
    ck_assert_int_eq(img->width, 7);
    ck_assert_int_eq(img->height, 3);
    ck_assert_int_ge(img->stride, 7);
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 7; x++)
            ck_assert_uint_eq(ghm_test_pixel(img, x, y), 0);
    ghm_image_free(&img);
    ck_assert_ptr_null(img);
    ghm_image_free(&img);
    ghm_image_free(NULL);
}
END_TEST

typedef struct KnownImage {
    const char *path;
    int width, height;
} KnownImage;

static const KnownImage known_images[] = {
    {"images/box.png", 324, 223},           {"images/box_in_scene.png", 512, 384},
    {"images/Blender_Suzanne1.jpg", 640, 480}, {"images/Blender_Suzanne2.jpg", 640, 480},
    {"images/butterfly.jpg", 493, 356},     {"images/rubberwhale1.png", 584, 388},
    {"pairs/dev_00_query.png", 151, 142},   {"pairs/dev_01_query.png", 245, 228},
    {"pairs/dev_02_query.png", 188, 260},   {"pairs/dev_03_query.jpg", 155, 134},
    {"pairs/dev_04_query.png", 242, 279},   {"pairs/dev_05_query.png", 341, 460},
};

START_TEST(test_sample_images)
{
    const KnownImage *k = &known_images[_i];
    GhmImage *img = NULL;
    char why[256] = "";
    int ret = ghm_image_load(ghm_test_data(k->path), &img, why, sizeof why);
    ck_assert_msg(ret == GHM_OK, "%s: %s", k->path, why);
    ck_assert_int_eq(img->width, k->width);
    ck_assert_int_eq(img->height, k->height);
    /* A real photograph has both dark and bright pixels: catches an all-zero decode. */
    int lo = 255, hi = 0;
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            int v = ghm_test_pixel(img, x, y);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    ck_assert_int_gt(hi - lo, 100);
    ghm_image_free(&img);
}
END_TEST

/* The same bytes decoded from memory and from the file give the same pixels. */
START_TEST(test_decode_matches_load)
{
    size_t size = 0;
    uint8_t *data = ghm_test_read_file(ghm_test_data("images/butterfly.jpg"), &size);
    GhmImage *a = NULL, *b = NULL;
    ck_assert_int_eq(ghm_image_decode(data, size, &a, NULL, 0), GHM_OK);
    ck_assert_int_eq(ghm_image_load(ghm_test_data("images/butterfly.jpg"), &b, NULL, 0), GHM_OK);
    ck_assert_int_eq(a->width, b->width);
    for (int y = 0; y < a->height; y++)
        ck_assert_int_eq(memcmp(a->pixels + (size_t)y * a->stride,
                                b->pixels + (size_t)y * b->stride, (size_t)a->width), 0);
    ghm_image_free(&a);
    ghm_image_free(&b);
    free(data);
}
END_TEST

START_TEST(test_grey_round_trip)
{
    /* A hand-made image with padding after each row: the writer must honour stride. */
    enum { W = 37, H = 23, STRIDE = 48 };
    uint8_t *pixels = malloc(STRIDE * H);
    ck_assert_ptr_nonnull(pixels);
    unsigned s = 12345;
    for (int i = 0; i < STRIDE * H; i++) {
        s = s * 1103515245u + 12345u;
        pixels[i] = (uint8_t)(s >> 16);
    }
    GhmImage src = {.width = W, .height = H, .stride = STRIDE, .pixels = pixels};
    char why[256] = "";
    ck_assert_int_eq(ghm_image_save_png(&src, ghm_test_tmp("grey.png"), why, sizeof why), GHM_OK);
    GhmImage *back = NULL;
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("grey.png"), &back, why, sizeof why), GHM_OK);
    ck_assert_int_eq(back->width, W);
    ck_assert_int_eq(back->height, H);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            ck_assert_uint_eq(ghm_test_pixel(back, x, y), pixels[y * STRIDE + x]);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    /* Saving again replaces the file in place. */
    pixels[0] ^= 0xff;
    ck_assert_int_eq(ghm_image_save_png(&src, ghm_test_tmp("grey.png"), why, sizeof why), GHM_OK);
    ghm_image_free(&back);
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("grey.png"), &back, why, sizeof why), GHM_OK);
    ck_assert_uint_eq(ghm_test_pixel(back, 0, 0), pixels[0]);
    ghm_image_free(&back);
    free(pixels);
}
END_TEST

START_TEST(test_rgb_save_and_draw)
{
    GhmImage *grey = NULL;
    ck_assert_int_eq(ghm_image_create(40, 30, &grey), GHM_OK);
    memset(grey->pixels, 90, (size_t)grey->stride * 30);
    GhmRgbImage *rgb = NULL;
    ck_assert_int_eq(ghm_rgb_image_from_grey(grey, &rgb), GHM_OK);
    ck_assert_uint_eq(rgb->pixels[0], 90);
    ck_assert_uint_eq(rgb->pixels[3 * 40 * 30 - 1], 90);
    /* Horizontal line, clipped on both ends; a point near the corner; nonsense coordinates. */
    ghm_rgb_image_draw_line(rgb, -1e9, 5, 1e9, 5, 255, 0, 0);
    ghm_rgb_image_draw_point(rgb, 38.6, 28.4, 1, 0, 255, 0);
    ghm_rgb_image_draw_line(rgb, NAN, 0, 10, 10, 0, 0, 255);
    ghm_rgb_image_draw_line(rgb, -50, -50, -10, 100, 0, 0, 255); /* entirely outside */
    ghm_rgb_image_draw_point(rgb, 1e300, -1e300, 3, 0, 0, 255);
    ghm_rgb_image_set(rgb, -1, 0, 0, 0, 255);
    ghm_rgb_image_set(rgb, 40, 0, 0, 0, 255);
    char why[256] = "";
    ck_assert_int_eq(ghm_rgb_image_save_png(rgb, ghm_test_tmp("rgb.png"), why, sizeof why), GHM_OK);
    GhmImage *back = NULL;
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("rgb.png"), &back, why, sizeof why), GHM_OK);
    for (int x = 0; x < 40; x++)
        ck_assert_int_eq(ghm_test_pixel(back, x, 5), ghm_test_luma(255, 0, 0));
    for (int y = 27; y < 30; y++)
        for (int x = 38; x < 40; x++)
            ck_assert_int_eq(ghm_test_pixel(back, x, y), ghm_test_luma(0, 255, 0));
    ck_assert_int_eq(ghm_test_pixel(back, 37, 28), 90);
    ck_assert_int_eq(ghm_test_pixel(back, 0, 0), 90);
    ck_assert_int_eq(ghm_test_pixel(back, 20, 20), 90);
    ghm_image_free(&back);
    ghm_image_free(&grey);

    /* A diagonal has one pixel per column, endpoints included. */
    GhmRgbImage *canvas = NULL;
    ck_assert_int_eq(ghm_rgb_image_create(10, 10, &canvas), GHM_OK);
    ghm_rgb_image_draw_line(canvas, 2, 1, 8, 7, 255, 255, 255);
    int lit = 0;
    for (int i = 0; i < 10 * 10; i++)
        lit += canvas->pixels[3 * i] == 255;
    ck_assert_int_eq(lit, 7);
    ck_assert_uint_eq(canvas->pixels[3 * (1 * 10 + 2)], 255);
    ck_assert_uint_eq(canvas->pixels[3 * (7 * 10 + 8)], 255);
    ghm_rgb_image_free(&canvas);
    ghm_rgb_image_free(&rgb);
    ck_assert_ptr_null(rgb);
    ghm_rgb_image_free(NULL);
}
END_TEST

START_TEST(test_write_errors)
{
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_create(4, 4, &img), GHM_OK);
    char why[256] = "";
    ck_assert_int_eq(ghm_image_save_png(img, ghm_test_tmp("no/such/dir/out.png"), why,
                                        sizeof why),
                     GHM_ERR_IO);
    ck_assert_ptr_nonnull(strstr(why, "No such file or directory"));
    /* The temporary file is written, then rename onto a directory fails: it must go. */
    ck_assert_int_eq(mkdir(ghm_test_tmp("a_directory"), 0755), 0);
    why[0] = '\0';
    ck_assert_int_eq(ghm_image_save_png(img, ghm_test_tmp("a_directory"), why, sizeof why),
                     GHM_ERR_IO);
    ck_assert_str_ne(why, "");
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    ck_assert_int_eq(ghm_image_save_png(NULL, ghm_test_tmp("x.png"), why, sizeof why),
                     GHM_ERR_INVALID);
    ghm_image_free(&img);
}
END_TEST

START_TEST(test_read_errors)
{
    GhmImage *img = NULL;
    char why[256] = "";
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("missing.png"), &img, why, sizeof why),
                     GHM_ERR_IO);
    ck_assert_ptr_nonnull(strstr(why, "cannot open"));
    ck_assert_int_eq(ghm_image_load(ghm_test_tmpdir(), &img, why, sizeof why), GHM_ERR_IO);
    ck_assert_ptr_nonnull(strstr(why, "directory"));
    ck_assert_ptr_null(img);
    ck_assert_int_eq(ghm_image_decode(NULL, 0, &img, why, sizeof why), GHM_ERR_FORMAT);
    ck_assert_str_eq(why, "empty file");
    /* why may be NULL. */
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("missing.png"), &img, NULL, 0), GHM_ERR_IO);
    /* A (sparse) file above the 1 GiB limit is refused without being read. */
    FILE *f = fopen(ghm_test_tmp("huge.png"), "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ftruncate(fileno(f), ((off_t)1 << 30) + 1), 0);
    fclose(f);
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("huge.png"), &img, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
    ck_assert_ptr_nonnull(strstr(why, "above the limit"));
}
END_TEST

/* --- formats ------------------------------------------------------------------------------- */

/* Packs values (each < 2^bits) into a PNG row of 1, 2 or 4 bit samples, most significant first. */
static void pack_row(const int *values, int n, int bits, uint8_t *out)
{
    memset(out, 0, (size_t)(n * bits + 7) / 8);
    for (int i = 0; i < n; i++) {
        int bit = i * bits;
        out[bit / 8] |= (uint8_t)(values[i] << (8 - bits - bit % 8));
    }
}

START_TEST(test_png_grey_low_depths)
{
    static const int depths[] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        int bits = depths[k], levels = 1 << bits;
        int values[16];
        for (int i = 0; i < levels; i++)
            values[i] = i;
        uint8_t row[8];
        pack_row(values, levels, bits, row);
        GhmTestPng p = {.width = levels, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY,
                     .bit_depth = bits, .rows = row, .stride = sizeof row};
        GhmImage *img = png_round("grey_low.png", &p);
        for (int i = 0; i < levels; i++)
            ck_assert_int_eq(ghm_test_pixel(img, i, 0), i * 255 / (levels - 1));
        ghm_image_free(&img);
    }
}
END_TEST

START_TEST(test_png_grey_16)
{
    static const uint16_t v[] = {0x0000, 0xffff, 0x8080, 0x1234, 0x00ff};
    uint8_t row[10];
    for (int i = 0; i < 5; i++) {
        row[2 * i] = (uint8_t)(v[i] >> 8);
        row[2 * i + 1] = (uint8_t)v[i];
    }
    GhmTestPng p = {.width = 5, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 16,
                 .rows = row, .stride = sizeof row};
    GhmImage *img = png_round("grey16.png", &p);
    for (int i = 0; i < 5; i++)
        ck_assert_int_le(abs(ghm_test_pixel(img, i, 0) - (int)lround(v[i] * 255.0 / 65535.0)), 1);
    ck_assert_int_eq(ghm_test_pixel(img, 1, 0), 255);
    ck_assert_int_eq(ghm_test_pixel(img, 0, 0), 0);
    ghm_image_free(&img);
}
END_TEST


START_TEST(test_png_rgb_8_and_16)
{
    uint8_t row8[GHM_TEST_NCOLOURS * 3], row16[GHM_TEST_NCOLOURS * 6];
    for (int i = 0; i < GHM_TEST_NCOLOURS; i++)
        for (int c = 0; c < 3; c++) {
            row8[3 * i + c] = (uint8_t)ghm_test_colours[i][c];
            row16[6 * i + 2 * c] = row16[6 * i + 2 * c + 1] = (uint8_t)ghm_test_colours[i][c];
        }
    GhmTestPng p8 = {.width = GHM_TEST_NCOLOURS, .height = 1, .color_type = PNG_COLOR_TYPE_RGB,
                  .bit_depth = 8, .rows = row8, .stride = sizeof row8};
    GhmTestPng p16 = p8;
    p16.bit_depth = 16;
    p16.rows = row16;
    p16.stride = sizeof row16;
    GhmImage *a = png_round("rgb8.png", &p8);
    GhmImage *b = png_round("rgb16.png", &p16);
    for (int i = 0; i < GHM_TEST_NCOLOURS; i++) {
        const int *rgb = ghm_test_colours[i];
        int want = ghm_test_luma(rgb[0], rgb[1], rgb[2]);
        ck_assert_int_le(abs(ghm_test_pixel(a, i, 0) - want), 1);
        ck_assert_int_le(abs(ghm_test_pixel(b, i, 0) - want), 1);
    }
    ck_assert_int_eq(ghm_test_pixel(b, 4, 0), 255);
    ghm_image_free(&a);
    ghm_image_free(&b);
}
END_TEST

START_TEST(test_png_alpha)
{
    /* Grey+alpha and RGBA: alpha composites on black. */
    static const int ga[][2] = {{200, 255}, {200, 0}, {200, 128}, {255, 51}};
    uint8_t row_ga[8], row_ga16[16], row_rgba[16];
    for (int i = 0; i < 4; i++) {
        row_ga[2 * i] = (uint8_t)ga[i][0];
        row_ga[2 * i + 1] = (uint8_t)ga[i][1];
        for (int c = 0; c < 2; c++)
            row_ga16[4 * i + 2 * c] = row_ga16[4 * i + 2 * c + 1] = (uint8_t)ga[i][c];
        row_rgba[4 * i] = (uint8_t)ghm_test_colours[i][0];
        row_rgba[4 * i + 1] = (uint8_t)ghm_test_colours[i][1];
        row_rgba[4 * i + 2] = (uint8_t)ghm_test_colours[i][2];
        row_rgba[4 * i + 3] = (uint8_t)ga[i][1];
    }
    GhmTestPng p = {.width = 4, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY_ALPHA,
                 .bit_depth = 8, .rows = row_ga, .stride = sizeof row_ga};
    GhmImage *g = png_round("ga8.png", &p);
    p.bit_depth = 16;
    p.rows = row_ga16;
    p.stride = sizeof row_ga16;
    GhmImage *g16 = png_round("ga16.png", &p);
    GhmTestPng q = {.width = 4, .height = 1, .color_type = PNG_COLOR_TYPE_RGB_ALPHA, .bit_depth = 8,
                 .rows = row_rgba, .stride = sizeof row_rgba};
    GhmImage *c = png_round("rgba8.png", &q);
    for (int i = 0; i < 4; i++) {
        double a = ga[i][1] / 255.0;
        ck_assert_int_le(abs(ghm_test_pixel(g, i, 0) - (int)lround(ga[i][0] * a)), 1);
        ck_assert_int_le(abs(ghm_test_pixel(g16, i, 0) - (int)lround(ga[i][0] * a)), 1);
        const int *rgb = ghm_test_colours[i];
        int l = ghm_test_luma(rgb[0], rgb[1], rgb[2]);
        ck_assert_int_le(abs(ghm_test_pixel(c, i, 0) - (int)lround(l * a)), 1);
    }
    ck_assert_int_eq(ghm_test_pixel(g, 0, 0), 200);
    ck_assert_int_eq(ghm_test_pixel(g, 1, 0), 0);
    ghm_image_free(&g);
    ghm_image_free(&g16);
    ghm_image_free(&c);
}
END_TEST

/* Pixels in memory (ghm_image_from_pixels): every layout, rows with padding, becomes exactly
 * the grey image the PNG loader makes of the same samples, and bad arguments are refused. */
START_TEST(test_from_pixels)
{
    enum { W = GHM_TEST_NCOLOURS, H = 2, PAD = 5 };
    static const int layout[4] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                  PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    for (int ch = 1; ch <= 4; ch++) {
        uint8_t buf[H][W * 4 + PAD];
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                for (int c = 0; c < ch; c++) /* colour samples, then alpha 255, 0, 128, ... */
                    buf[y][x * ch + c] = (uint8_t)((ch == 2 || ch == 4) && c == ch - 1
                                                       ? (x * 127 + y * 64) % 256
                                                       : ghm_test_colours[(x + y) % W][c]);
        GhmTestPng p = {.width = W, .height = H, .color_type = layout[ch - 1], .bit_depth = 8,
                     .rows = &buf[0][0], .stride = sizeof buf[0]};
        GhmImage *want = png_round("pixels.png", &p), *got = NULL;
        ck_assert_int_eq(ghm_image_from_pixels(&buf[0][0], W, H, ch, sizeof buf[0], &got), GHM_OK);
        ck_assert_int_eq(got->width, W);
        ck_assert_int_eq(got->height, H);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                ck_assert_msg(ghm_test_pixel(got, x, y) == ghm_test_pixel(want, x, y),
                              "channels %d (%d,%d): %d, PNG %d", ch, x, y,
                              ghm_test_pixel(got, x, y), ghm_test_pixel(want, x, y));
        ghm_image_free(&want);
        ghm_image_free(&got);
    }
    uint8_t rgb[3] = {255, 0, 0};
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 1, 1, 3, 3, &img), GHM_OK);
    ck_assert_int_eq(ghm_test_pixel(img, 0, 0), 76); /* (299 * 255 + 500) / 1000 */
    ghm_image_free(&img);
    ck_assert_int_eq(ghm_image_from_pixels(NULL, 1, 1, 3, 3, &img), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 1, 1, 5, 5, &img), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 1, 1, 0, 3, &img), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 1, 1, 3, 2, &img), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 0, 1, 3, 3, &img), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 1, 0, 3, 3, &img), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 1, GHM_IMAGE_MAX_SIDE + 1, 3, 3, &img),
                     GHM_ERR_TOO_LARGE);
    ck_assert_ptr_null(img);
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 1, 1, 3, 3, NULL), GHM_ERR_INVALID);
}
END_TEST

START_TEST(test_png_palette)
{
    png_color palette[GHM_TEST_NCOLOURS];
    for (int i = 0; i < GHM_TEST_NCOLOURS; i++) {
        palette[i].red = (png_byte)ghm_test_colours[i][0];
        palette[i].green = (png_byte)ghm_test_colours[i][1];
        palette[i].blue = (png_byte)ghm_test_colours[i][2];
    }
    static const int depths[] = {8, 4, 2, 1};
    for (int k = 0; k < 4; k++) {
        int bits = depths[k];
        int n = bits >= 4 ? GHM_TEST_NCOLOURS : 1 << bits; /* indices the depth can hold */
        int idx[GHM_TEST_NCOLOURS];
        for (int i = 0; i < n; i++)
            idx[i] = n - 1 - i;
        uint8_t row[GHM_TEST_NCOLOURS];
        if (bits == 8)
            for (int i = 0; i < n; i++)
                row[i] = (uint8_t)idx[i];
        else
            pack_row(idx, n, bits, row);
        GhmTestPng p = {.width = n, .height = 1, .color_type = PNG_COLOR_TYPE_PALETTE,
                     .bit_depth = bits, .rows = row, .stride = sizeof row,
                     .palette = palette, .num_palette = n};
        GhmImage *img = png_round("palette.png", &p);
        for (int i = 0; i < n; i++) {
            const int *c = ghm_test_colours[idx[i]];
            ck_assert_int_le(abs(ghm_test_pixel(img, i, 0) - ghm_test_luma(c[0], c[1], c[2])), 1);
        }
        ghm_image_free(&img);
    }
}
END_TEST

START_TEST(test_png_transparency_chunks)
{
    /* Palette with per-entry alpha, and grey with a transparent colour key. */
    png_color palette[2] = {{255, 255, 255}, {255, 255, 255}};
    uint8_t alpha[2] = {255, 0};
    uint8_t row_p[2] = {0, 1};
    GhmTestPng p = {.width = 2, .height = 1, .color_type = PNG_COLOR_TYPE_PALETTE, .bit_depth = 8,
                 .rows = row_p, .stride = 2, .palette = palette, .num_palette = 2,
                 .trans = alpha, .num_trans = 2};
    GhmImage *a = png_round("trns_palette.png", &p);
    ck_assert_int_eq(ghm_test_pixel(a, 0, 0), 255);
    ck_assert_int_eq(ghm_test_pixel(a, 1, 0), 0);
    png_color_16 key = {.gray = 77};
    uint8_t row_g[3] = {77, 78, 255};
    GhmTestPng g = {.width = 3, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 8,
                 .rows = row_g, .stride = 3, .trans_color = &key};
    GhmImage *b = png_round("trns_grey.png", &g);
    ck_assert_int_eq(ghm_test_pixel(b, 0, 0), 0);
    ck_assert_int_eq(ghm_test_pixel(b, 1, 0), 78);
    ck_assert_int_eq(ghm_test_pixel(b, 2, 0), 255);
    ghm_image_free(&a);
    ghm_image_free(&b);
}
END_TEST

/* Adam7 interlacing changes the file, not the pixels. */
START_TEST(test_png_interlaced)
{
    enum { W = 61, H = 45 };
    static uint8_t rgb[W * H * 3];
    for (int i = 0; i < W * H * 3; i++)
        rgb[i] = (uint8_t)(i * 7 + i / 11);
    GhmTestPng p = {.width = W, .height = H, .color_type = PNG_COLOR_TYPE_RGB, .bit_depth = 8,
                 .rows = rgb, .stride = W * 3};
    GhmImage *flat = png_round("flat.png", &p);
    p.interlace = PNG_INTERLACE_ADAM7;
    GhmImage *laced = png_round("laced.png", &p);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *c = rgb + (y * W + x) * 3;
            ck_assert_int_eq(ghm_test_pixel(laced, x, y), ghm_test_pixel(flat, x, y));
            ck_assert_int_le(abs(ghm_test_pixel(flat, x, y) - ghm_test_luma(c[0], c[1], c[2])), 1);
        }
    p.color_type = PNG_COLOR_TYPE_GRAY;
    p.stride = W;
    GhmImage *grey = png_round("laced_grey.png", &p);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            ck_assert_int_eq(ghm_test_pixel(grey, x, y), rgb[y * W + x]);
    ghm_image_free(&flat);
    ghm_image_free(&laced);
    ghm_image_free(&grey);
}
END_TEST

START_TEST(test_one_pixel_images)
{
    uint8_t v = 201;
    GhmTestPng p = {.width = 1, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 8,
                 .rows = &v, .stride = 1};
    GhmImage *img = png_round("one.png", &p);
    ck_assert_int_eq(ghm_test_pixel(img, 0, 0), 201);
    ghm_image_free(&img);
    uint8_t *jpeg = NULL;
    size_t size = 0;
    ghm_test_encode_jpeg(&v, 1, 1, 1, JCS_GRAYSCALE, 0, &jpeg, &size);
    ck_assert_int_eq(ghm_image_decode(jpeg, size, &img, NULL, 0), GHM_OK);
    ck_assert_int_eq(img->width, 1);
    ck_assert_int_le(abs(ghm_test_pixel(img, 0, 0) - 201), 1);
    ghm_image_free(&img);
    free(jpeg);
}
END_TEST

START_TEST(test_truncated_interlaced_png_file)
{
    enum { W = 30, H = 20 };
    static uint8_t rgba[W * H * 4];
    for (int i = 0; i < W * H * 4; i++)
        rgba[i] = (uint8_t)(i * 13);
    GhmTestPng p = {.width = W, .height = H, .color_type = PNG_COLOR_TYPE_RGB_ALPHA, .bit_depth = 8,
                 .interlace = PNG_INTERLACE_ADAM7, .rows = rgba, .stride = W * 4};
    ghm_test_write_png(ghm_test_tmp("laced.png"), &p);
    size_t size = 0;
    uint8_t *data = ghm_test_read_file(ghm_test_tmp("laced.png"), &size);
    ghm_test_truncations(data, size, "interlaced RGBA PNG");
    /* Through a file as well: the loader reads what is there and reports the same. */
    ghm_test_write_file(ghm_test_tmp("cut.png"), data, size / 2);
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("cut.png"), &img, NULL, 0), GHM_ERR_TRUNCATED);
    free(data);
}
END_TEST

static Suite *image_suite(void)
{
    Suite *s = suite_create("image");
    TCase *core = tcase_create("core");
    tcase_add_checked_fixture(core, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_add_test(core, test_create_and_free);
    tcase_add_loop_test(core, test_sample_images, 0,
                        (int)(sizeof known_images / sizeof known_images[0]));
    tcase_add_test(core, test_decode_matches_load);
    tcase_add_test(core, test_grey_round_trip);
    tcase_add_test(core, test_rgb_save_and_draw);
    tcase_add_test(core, test_write_errors);
    tcase_add_test(core, test_read_errors);
    suite_add_tcase(s, core);

    TCase *formats = tcase_create("formats");
    tcase_add_checked_fixture(formats, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_add_test(formats, test_png_grey_low_depths);
    tcase_add_test(formats, test_png_grey_16);
    tcase_add_test(formats, test_png_rgb_8_and_16);
    tcase_add_test(formats, test_png_alpha);
    tcase_add_test(formats, test_png_palette);
    tcase_add_test(formats, test_png_transparency_chunks);
    tcase_add_test(formats, test_png_interlaced);
    tcase_add_test(formats, test_one_pixel_images);
    tcase_add_test(formats, test_from_pixels);
    tcase_add_test(formats, test_truncated_interlaced_png_file);
    suite_add_tcase(s, formats);

    return s;
}

int main(void) { return ghm_test_main(image_suite()); }
