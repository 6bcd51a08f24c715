/*
 * check_image.c - image input and output: the sample images decode to their known sizes, PNGs
 * of every colour type and bit depth (written here with libpng) and JPEGs (written here with
 * libjpeg) convert to the expected grey values, grey images survive a save/load round trip,
 * and every damaged input gives its error code and message without crashing.
 */
#include <dirent.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>
#include <zlib.h>

#include "ghm_image.h"
#include "test_support.h"

/* --- a temporary directory per test (checked fixture: runs in the test's own process) ----- */

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, size, f), size);
    ck_assert_int_eq(fclose(f), 0);
}

static uint8_t pixel(const GhmImage *img, int x, int y)
{
    return img->pixels[(size_t)y * (size_t)img->stride + (size_t)x];
}

static int luma(int r, int g, int b)
{
    return (int)lround(0.299 * r + 0.587 * g + 0.114 * b);
}

/* --- PNG and JPEG writers for test inputs -------------------------------------------------- */

typedef struct TestPng {
    int width, height, color_type, bit_depth, interlace;
    const uint8_t *rows; /* packed PNG rows (16-bit samples big-endian), stride bytes apart */
    size_t stride;
    const png_color *palette;
    int num_palette;
    const uint8_t *trans; /* palette alpha */
    int num_trans;
    const png_color_16 *trans_color; /* grey or RGB colour key */
} TestPng;

static void write_test_png(const char *path, const TestPng *p)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    ck_assert_ptr_nonnull(info);
    if (setjmp(png_jmpbuf(png)))
        ck_abort_msg("libpng failed writing %s", path);
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)p->width, (png_uint_32)p->height, p->bit_depth,
                 p->color_type, p->interlace, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (p->palette)
        png_set_PLTE(png, info, p->palette, p->num_palette);
    if (p->trans || p->trans_color)
        png_set_tRNS(png, info, p->trans, p->num_trans, p->trans_color);
    png_write_info(png, info);
    png_bytep *rows = malloc((size_t)p->height * sizeof *rows);
    ck_assert_ptr_nonnull(rows);
    for (int y = 0; y < p->height; y++)
        rows[y] = (png_bytep)(p->rows + (size_t)y * p->stride);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    free(rows);
    png_destroy_write_struct(&png, &info);
    ck_assert_int_eq(fclose(f), 0);
}

/* Writes p to ghm_test_tmpdir()/name and loads it back, failing the test on any error. */
static GhmImage *png_round(const char *name, const TestPng *p)
{
    write_test_png(ghm_test_tmp(name), p);
    GhmImage *img = NULL;
    char why[256] = "";
    int ret = ghm_image_load(ghm_test_tmp(name), &img, why, sizeof why);
    ck_assert_msg(ret == GHM_OK, "%s: %s (%s)", name, ghm_strerror(ret), why);
    ck_assert_int_eq(img->width, p->width);
    ck_assert_int_eq(img->height, p->height);
    return img;
}

/* Encodes width x height samples (components 1, 3 or 4 with the given colour space) as JPEG in
 * memory; the caller frees *out. */
static void encode_jpeg(const uint8_t *samples, int width, int height, int components,
                        J_COLOR_SPACE space, int progressive, uint8_t **out, size_t *size)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char *buf = NULL;
    unsigned long n = 0;
    jpeg_mem_dest(&c, &buf, &n);
    c.image_width = (JDIMENSION)width;
    c.image_height = (JDIMENSION)height;
    c.input_components = components;
    c.in_color_space = space;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 100, TRUE);
    if (progressive)
        jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = (JSAMPROW)(samples + (size_t)c.next_scanline * width * components);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *out = buf;
    *size = n;
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
            ck_assert_uint_eq(pixel(img, x, y), 0);
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
            int v = pixel(img, x, y);
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
            ck_assert_uint_eq(pixel(back, x, y), pixels[y * STRIDE + x]);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    /* Saving again replaces the file in place. */
    pixels[0] ^= 0xff;
    ck_assert_int_eq(ghm_image_save_png(&src, ghm_test_tmp("grey.png"), why, sizeof why), GHM_OK);
    ghm_image_free(&back);
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("grey.png"), &back, why, sizeof why), GHM_OK);
    ck_assert_uint_eq(pixel(back, 0, 0), pixels[0]);
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
        ck_assert_int_eq(pixel(back, x, 5), luma(255, 0, 0));
    for (int y = 27; y < 30; y++)
        for (int x = 38; x < 40; x++)
            ck_assert_int_eq(pixel(back, x, y), luma(0, 255, 0));
    ck_assert_int_eq(pixel(back, 37, 28), 90);
    ck_assert_int_eq(pixel(back, 0, 0), 90);
    ck_assert_int_eq(pixel(back, 20, 20), 90);
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
        TestPng p = {.width = levels, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY,
                     .bit_depth = bits, .rows = row, .stride = sizeof row};
        GhmImage *img = png_round("grey_low.png", &p);
        for (int i = 0; i < levels; i++)
            ck_assert_int_eq(pixel(img, i, 0), i * 255 / (levels - 1));
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
    TestPng p = {.width = 5, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 16,
                 .rows = row, .stride = sizeof row};
    GhmImage *img = png_round("grey16.png", &p);
    for (int i = 0; i < 5; i++)
        ck_assert_int_le(abs(pixel(img, i, 0) - (int)lround(v[i] * 255.0 / 65535.0)), 1);
    ck_assert_int_eq(pixel(img, 1, 0), 255);
    ck_assert_int_eq(pixel(img, 0, 0), 0);
    ghm_image_free(&img);
}
END_TEST

static const int colours[][3] = {{255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {10, 200, 50},
                                 {255, 255, 255}, {0, 0, 0}, {123, 45, 67}};
enum { NCOLOURS = sizeof colours / sizeof colours[0] };

START_TEST(test_png_rgb_8_and_16)
{
    uint8_t row8[NCOLOURS * 3], row16[NCOLOURS * 6];
    for (int i = 0; i < NCOLOURS; i++)
        for (int c = 0; c < 3; c++) {
            row8[3 * i + c] = (uint8_t)colours[i][c];
            row16[6 * i + 2 * c] = row16[6 * i + 2 * c + 1] = (uint8_t)colours[i][c];
        }
    TestPng p8 = {.width = NCOLOURS, .height = 1, .color_type = PNG_COLOR_TYPE_RGB,
                  .bit_depth = 8, .rows = row8, .stride = sizeof row8};
    TestPng p16 = p8;
    p16.bit_depth = 16;
    p16.rows = row16;
    p16.stride = sizeof row16;
    GhmImage *a = png_round("rgb8.png", &p8);
    GhmImage *b = png_round("rgb16.png", &p16);
    for (int i = 0; i < NCOLOURS; i++) {
        int want = luma(colours[i][0], colours[i][1], colours[i][2]);
        ck_assert_int_le(abs(pixel(a, i, 0) - want), 1);
        ck_assert_int_le(abs(pixel(b, i, 0) - want), 1);
    }
    ck_assert_int_eq(pixel(b, 4, 0), 255);
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
        row_rgba[4 * i] = (uint8_t)colours[i][0];
        row_rgba[4 * i + 1] = (uint8_t)colours[i][1];
        row_rgba[4 * i + 2] = (uint8_t)colours[i][2];
        row_rgba[4 * i + 3] = (uint8_t)ga[i][1];
    }
    TestPng p = {.width = 4, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY_ALPHA,
                 .bit_depth = 8, .rows = row_ga, .stride = sizeof row_ga};
    GhmImage *g = png_round("ga8.png", &p);
    p.bit_depth = 16;
    p.rows = row_ga16;
    p.stride = sizeof row_ga16;
    GhmImage *g16 = png_round("ga16.png", &p);
    TestPng q = {.width = 4, .height = 1, .color_type = PNG_COLOR_TYPE_RGB_ALPHA, .bit_depth = 8,
                 .rows = row_rgba, .stride = sizeof row_rgba};
    GhmImage *c = png_round("rgba8.png", &q);
    for (int i = 0; i < 4; i++) {
        double a = ga[i][1] / 255.0;
        ck_assert_int_le(abs(pixel(g, i, 0) - (int)lround(ga[i][0] * a)), 1);
        ck_assert_int_le(abs(pixel(g16, i, 0) - (int)lround(ga[i][0] * a)), 1);
        int l = luma(colours[i][0], colours[i][1], colours[i][2]);
        ck_assert_int_le(abs(pixel(c, i, 0) - (int)lround(l * a)), 1);
    }
    ck_assert_int_eq(pixel(g, 0, 0), 200);
    ck_assert_int_eq(pixel(g, 1, 0), 0);
    ghm_image_free(&g);
    ghm_image_free(&g16);
    ghm_image_free(&c);
}
END_TEST

/* Pixels in memory (ghm_image_from_pixels): every layout, rows with padding, becomes exactly
 * the grey image the PNG loader makes of the same samples, and bad arguments are refused. */
START_TEST(test_from_pixels)
{
    enum { W = NCOLOURS, H = 2, PAD = 5 };
    static const int layout[4] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                  PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    for (int ch = 1; ch <= 4; ch++) {
        uint8_t buf[H][W * 4 + PAD];
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                for (int c = 0; c < ch; c++) /* colour samples, then alpha 255, 0, 128, ... */
                    buf[y][x * ch + c] = (uint8_t)((ch == 2 || ch == 4) && c == ch - 1
                                                       ? (x * 127 + y * 64) % 256
                                                       : colours[(x + y) % W][c]);
        TestPng p = {.width = W, .height = H, .color_type = layout[ch - 1], .bit_depth = 8,
                     .rows = &buf[0][0], .stride = sizeof buf[0]};
        GhmImage *want = png_round("pixels.png", &p), *got = NULL;
        ck_assert_int_eq(ghm_image_from_pixels(&buf[0][0], W, H, ch, sizeof buf[0], &got), GHM_OK);
        ck_assert_int_eq(got->width, W);
        ck_assert_int_eq(got->height, H);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                ck_assert_msg(pixel(got, x, y) == pixel(want, x, y),
                              "channels %d (%d,%d): %d, PNG %d", ch, x, y, pixel(got, x, y),
                              pixel(want, x, y));
        ghm_image_free(&want);
        ghm_image_free(&got);
    }
    uint8_t rgb[3] = {255, 0, 0};
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_from_pixels(rgb, 1, 1, 3, 3, &img), GHM_OK);
    ck_assert_int_eq(pixel(img, 0, 0), 76); /* (299 * 255 + 500) / 1000 */
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
    png_color palette[NCOLOURS];
    for (int i = 0; i < NCOLOURS; i++) {
        palette[i].red = (png_byte)colours[i][0];
        palette[i].green = (png_byte)colours[i][1];
        palette[i].blue = (png_byte)colours[i][2];
    }
    static const int depths[] = {8, 4, 2, 1};
    for (int k = 0; k < 4; k++) {
        int bits = depths[k];
        int n = bits >= 4 ? NCOLOURS : 1 << bits; /* indices the depth can hold */
        int idx[NCOLOURS];
        for (int i = 0; i < n; i++)
            idx[i] = n - 1 - i;
        uint8_t row[NCOLOURS];
        if (bits == 8)
            for (int i = 0; i < n; i++)
                row[i] = (uint8_t)idx[i];
        else
            pack_row(idx, n, bits, row);
        TestPng p = {.width = n, .height = 1, .color_type = PNG_COLOR_TYPE_PALETTE,
                     .bit_depth = bits, .rows = row, .stride = sizeof row,
                     .palette = palette, .num_palette = n};
        GhmImage *img = png_round("palette.png", &p);
        for (int i = 0; i < n; i++) {
            const int *c = colours[idx[i]];
            ck_assert_int_le(abs(pixel(img, i, 0) - luma(c[0], c[1], c[2])), 1);
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
    TestPng p = {.width = 2, .height = 1, .color_type = PNG_COLOR_TYPE_PALETTE, .bit_depth = 8,
                 .rows = row_p, .stride = 2, .palette = palette, .num_palette = 2,
                 .trans = alpha, .num_trans = 2};
    GhmImage *a = png_round("trns_palette.png", &p);
    ck_assert_int_eq(pixel(a, 0, 0), 255);
    ck_assert_int_eq(pixel(a, 1, 0), 0);
    png_color_16 key = {.gray = 77};
    uint8_t row_g[3] = {77, 78, 255};
    TestPng g = {.width = 3, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 8,
                 .rows = row_g, .stride = 3, .trans_color = &key};
    GhmImage *b = png_round("trns_grey.png", &g);
    ck_assert_int_eq(pixel(b, 0, 0), 0);
    ck_assert_int_eq(pixel(b, 1, 0), 78);
    ck_assert_int_eq(pixel(b, 2, 0), 255);
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
    TestPng p = {.width = W, .height = H, .color_type = PNG_COLOR_TYPE_RGB, .bit_depth = 8,
                 .rows = rgb, .stride = W * 3};
    GhmImage *flat = png_round("flat.png", &p);
    p.interlace = PNG_INTERLACE_ADAM7;
    GhmImage *laced = png_round("laced.png", &p);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *c = rgb + (y * W + x) * 3;
            ck_assert_int_eq(pixel(laced, x, y), pixel(flat, x, y));
            ck_assert_int_le(abs(pixel(flat, x, y) - luma(c[0], c[1], c[2])), 1);
        }
    p.color_type = PNG_COLOR_TYPE_GRAY;
    p.stride = W;
    GhmImage *grey = png_round("laced_grey.png", &p);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            ck_assert_int_eq(pixel(grey, x, y), rgb[y * W + x]);
    ghm_image_free(&flat);
    ghm_image_free(&laced);
    ghm_image_free(&grey);
}
END_TEST

START_TEST(test_one_pixel_images)
{
    uint8_t v = 201;
    TestPng p = {.width = 1, .height = 1, .color_type = PNG_COLOR_TYPE_GRAY, .bit_depth = 8,
                 .rows = &v, .stride = 1};
    GhmImage *img = png_round("one.png", &p);
    ck_assert_int_eq(pixel(img, 0, 0), 201);
    ghm_image_free(&img);
    uint8_t *jpeg = NULL;
    size_t size = 0;
    encode_jpeg(&v, 1, 1, 1, JCS_GRAYSCALE, 0, &jpeg, &size);
    ck_assert_int_eq(ghm_image_decode(jpeg, size, &img, NULL, 0), GHM_OK);
    ck_assert_int_eq(img->width, 1);
    ck_assert_int_le(abs(pixel(img, 0, 0) - 201), 1);
    ghm_image_free(&img);
    free(jpeg);
}
END_TEST

START_TEST(test_jpeg_grey_rgb_progressive)
{
    enum { W = 48, H = 40 };
    static uint8_t grey[W * H], rgb[W * H * 3];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            grey[y * W + x] = (uint8_t)(x * 4 + y);
            /* Flat 8x8-aligned colour blocks, so that quality 100 keeps them nearly exact. */
            const int *c = colours[((y / 8) * (W / 8) + x / 8) % NCOLOURS];
            for (int k = 0; k < 3; k++)
                rgb[(y * W + x) * 3 + k] = (uint8_t)c[k];
        }
    uint8_t *data = NULL;
    size_t size = 0;
    GhmImage *img = NULL;
    encode_jpeg(grey, W, H, 1, JCS_GRAYSCALE, 0, &data, &size);
    ck_assert_int_eq(ghm_image_decode(data, size, &img, NULL, 0), GHM_OK);
    for (int i = 0; i < W * H; i++)
        ck_assert_int_le(abs(pixel(img, i % W, i / W) - grey[i]), 2);
    ghm_image_free(&img);
    free(data);

    GhmImage *base = NULL, *prog = NULL;
    encode_jpeg(rgb, W, H, 3, JCS_RGB, 0, &data, &size);
    ck_assert_int_eq(ghm_image_decode(data, size, &base, NULL, 0), GHM_OK);
    free(data);
    encode_jpeg(rgb, W, H, 3, JCS_RGB, 1, &data, &size);
    ck_assert_int_eq(ghm_image_decode(data, size, &prog, NULL, 0), GHM_OK);
    free(data);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *c = rgb + (y * W + x) * 3;
            /* Chroma subsampling blurs colour at block edges; luma is kept at full size. */
            ck_assert_int_le(abs(pixel(base, x, y) - luma(c[0], c[1], c[2])), 3);
            ck_assert_int_eq(pixel(prog, x, y), pixel(base, x, y));
        }
    ghm_image_free(&base);
    ghm_image_free(&prog);
}
END_TEST

START_TEST(test_jpeg_cmyk_unsupported)
{
    static uint8_t cmyk[16 * 16 * 4];
    memset(cmyk, 40, sizeof cmyk);
    uint8_t *data = NULL;
    size_t size = 0;
    encode_jpeg(cmyk, 16, 16, 4, JCS_CMYK, 0, &data, &size);
    GhmImage *img = NULL;
    char why[256] = "";
    ck_assert_int_eq(ghm_image_decode(data, size, &img, why, sizeof why), GHM_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(why, "CMYK"));
    ck_assert_ptr_null(img);
    free(data);
}
END_TEST

/* --- bad inputs ---------------------------------------------------------------------------- */

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

/* Every prefix length tried of a valid file is an error that says "truncated". */
static void check_prefixes(const uint8_t *data, size_t size, const char *what)
{
    size_t step = size / 400 + 1;
    for (size_t n = 1; n < size; n += (n < 300 || n > size - 300) ? 1 : step) {
        GhmImage *img = NULL;
        char why[256] = "";
        int ret = ghm_image_decode(data, n, &img, why, sizeof why);
        ck_assert_msg(ret == GHM_ERR_TRUNCATED, "%s cut at %zu of %zu: %s (%s)", what, n, size,
                      ghm_strerror(ret), why);
        ck_assert_ptr_nonnull(strstr(why, "truncated"));
        ck_assert_ptr_null(img);
    }
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_decode(data, size, &img, NULL, 0), GHM_OK);
    ghm_image_free(&img);
}

START_TEST(test_truncated_prefixes)
{
    static const char *files[] = {"images/box.png", "images/rubberwhale1.png",
                                  "images/butterfly.jpg", "images/Blender_Suzanne1.jpg",
                                  "pairs/dev_03_query.jpg"};
    size_t size = 0;
    uint8_t *data = ghm_test_read_file(ghm_test_data(files[_i]), &size);
    check_prefixes(data, size, files[_i]);
    free(data);
}
END_TEST

START_TEST(test_truncated_interlaced_png_file)
{
    enum { W = 30, H = 20 };
    static uint8_t rgba[W * H * 4];
    for (int i = 0; i < W * H * 4; i++)
        rgba[i] = (uint8_t)(i * 13);
    TestPng p = {.width = W, .height = H, .color_type = PNG_COLOR_TYPE_RGB_ALPHA, .bit_depth = 8,
                 .interlace = PNG_INTERLACE_ADAM7, .rows = rgba, .stride = W * 4};
    write_test_png(ghm_test_tmp("laced.png"), &p);
    size_t size = 0;
    uint8_t *data = ghm_test_read_file(ghm_test_tmp("laced.png"), &size);
    check_prefixes(data, size, "interlaced RGBA PNG");
    /* Through a file as well: the loader reads what is there and reports the same. */
    write_file(ghm_test_tmp("cut.png"), data, size / 2);
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("cut.png"), &img, NULL, 0), GHM_ERR_TRUNCATED);
    free(data);
}
END_TEST

static void fill_random(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (uint8_t)(seed >> 16);
    }
}

START_TEST(test_garbage)
{
    static uint8_t buf[4096];
    char why[256];
    GhmImage *img = NULL;
    /* Random bytes (first byte forced away from both signatures). */
    fill_random(buf, sizeof buf, 7);
    buf[0] = 0x42;
    write_file(ghm_test_tmp("random.bin"), buf, sizeof buf);
    ck_assert_int_eq(ghm_image_load(ghm_test_tmp("random.bin"), &img, why, sizeof why),
                     GHM_ERR_FORMAT);
    ck_assert_str_eq(why, "not a PNG or JPEG image");
    /* A valid PNG signature followed by garbage, for several garbage seeds. */
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
    for (unsigned seed = 1; seed <= 50; seed++) {
        fill_random(buf, sizeof buf, seed);
        memcpy(buf, sig, sizeof sig);
        why[0] = '\0';
        int ret = ghm_image_decode(buf, sizeof buf, &img, why, sizeof why);
        ck_assert_msg(ret == GHM_ERR_FORMAT, "seed %u: %s (%s)", seed, ghm_strerror(ret), why);
        ck_assert_ptr_nonnull(strstr(why, "damaged PNG data"));
        ck_assert_ptr_null(img);
    }
    /* A JPEG start of image followed by garbage. */
    for (unsigned seed = 1; seed <= 50; seed++) {
        fill_random(buf, sizeof buf, seed);
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
    encode_jpeg(&v, 1, 1, 1, JCS_GRAYSCALE, 0, &jpeg, &size);
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
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr err;
    c.err = jpeg_std_error(&err);
    jpeg_create_compress(&c);
    unsigned char *buf = NULL;
    unsigned long len = 0;
    jpeg_mem_dest(&c, &buf, &len);
    c.image_width = W;
    c.image_height = H;
    c.input_components = 1;
    c.in_color_space = JCS_GRAYSCALE;
    jpeg_set_defaults(&c);
    c.scan_info = scans;
    c.num_scans = n;
    jpeg_start_compress(&c, TRUE);
    while (c.next_scanline < c.image_height) {
        JSAMPROW row = grey + (size_t)c.next_scanline * W;
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *out = buf;
    *size = len;
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
    tcase_add_test(formats, test_jpeg_grey_rgb_progressive);
    tcase_add_test(formats, test_jpeg_cmyk_unsupported);
    suite_add_tcase(s, formats);

    TCase *bad = tcase_create("bad");
    tcase_add_checked_fixture(bad, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_set_timeout(bad, 300);
    tcase_add_loop_test(bad, test_bad_files, 0, (int)(sizeof bad_files / sizeof bad_files[0]));
    tcase_add_loop_test(bad, test_truncated_prefixes, 0, 5);
    tcase_add_test(bad, test_truncated_interlaced_png_file);
    tcase_add_test(bad, test_garbage);
    tcase_add_test(bad, test_size_limits_in_headers);
    tcase_add_test(bad, test_jpeg_scan_limit);
    suite_add_tcase(s, bad);
    return s;
}

int main(void) { return ghm_test_main(image_suite()); }
