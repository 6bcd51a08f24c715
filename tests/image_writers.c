/* image_writers.c - see image_writers.h. */
#include "image_writers.h"

#include <math.h>
#include <setjmp.h>
#include <stdlib.h>

#include "test_support.h"

const int ghm_test_colours[GHM_TEST_NCOLOURS][3] = {
    {255, 0, 0}, {0, 255, 0}, {0, 0, 255}, {10, 200, 50}, {255, 255, 255}, {0, 0, 0},
    {123, 45, 67}};

int ghm_test_luma(int r, int g, int b)
{
    return (int)lround(0.299 * r + 0.587 * g + 0.114 * b);
}

void ghm_test_write_png(const char *path, const GhmTestPng *p)
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

/* ghm_test_encode_jpeg, with a scan script of its own when scans is not NULL. */
static void encode_jpeg(const uint8_t *samples, int width, int height, int components,
                        J_COLOR_SPACE space, int progressive, const jpeg_scan_info *scans,
                        int n_scans, uint8_t **out, size_t *size)
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
    if (scans) {
        c.scan_info = scans;
        c.num_scans = n_scans;
    } else if (progressive) {
        jpeg_simple_progression(&c);
    }
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

void ghm_test_encode_jpeg(const uint8_t *samples, int width, int height, int components,
                          J_COLOR_SPACE space, int progressive, uint8_t **out, size_t *size)
{
    encode_jpeg(samples, width, height, components, space, progressive, NULL, 0, out, size);
}

void ghm_test_encode_jpeg_scans(const uint8_t *grey, int width, int height,
                                const jpeg_scan_info *scans, int n_scans, uint8_t **out,
                                size_t *size)
{
    encode_jpeg(grey, width, height, 1, JCS_GRAYSCALE, 0, scans, n_scans, out, size);
}
