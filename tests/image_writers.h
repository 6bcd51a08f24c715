/*
 * image_writers.h - PNG and JPEG files written for the image tests with libpng and libjpeg
 * themselves (check_image.c, check_image_jpeg.c, check_image_bad.c): every colour type, bit
 * depth and layout a test needs, independent of the library's own writer; and what those tests
 * compare the decoded grey images with (a pixel, the luma of a colour, a set of colours).
 */
#ifndef GHM_TEST_IMAGE_WRITERS_H
#define GHM_TEST_IMAGE_WRITERS_H

#include <png.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jpeglib.h>

#include "ghm_image.h"

/* The grey value at (x, y). */
static inline uint8_t ghm_test_pixel(const GhmImage *img, int x, int y)
{
    return img->pixels[(size_t)y * (size_t)img->stride + (size_t)x];
}

/* BT.601 luma of an RGB colour, rounded: what the decoders make of it. */
int ghm_test_luma(int r, int g, int b);

/* Colours the tests write: primaries, white, black and two in between. */
enum { GHM_TEST_NCOLOURS = 7 };
extern const int ghm_test_colours[GHM_TEST_NCOLOURS][3];

/* A PNG to write: its header fields, rows and optional palette and transparency. */
typedef struct GhmTestPng {
    int width, height, color_type, bit_depth, interlace;
    const uint8_t *rows; /* packed PNG rows (16-bit samples big-endian), stride bytes apart */
    size_t stride;
    const png_color *palette;
    int num_palette;
    const uint8_t *trans; /* palette alpha */
    int num_trans;
    const png_color_16 *trans_color; /* grey or RGB colour key */
} GhmTestPng;

/* Writes p to path, failing the test on any error. */
void ghm_test_write_png(const char *path, const GhmTestPng *p);

/* Encodes width x height samples (components 1, 3 or 4 with the given colour space) as JPEG in
 * memory; the caller frees *out. */
void ghm_test_encode_jpeg(const uint8_t *samples, int width, int height, int components,
                          J_COLOR_SPACE space, int progressive, uint8_t **out, size_t *size);

/* A grey JPEG with the given scan script (progressive scans of libjpeg's jpeg_scan_info). */
void ghm_test_encode_jpeg_scans(const uint8_t *grey, int width, int height,
                                const jpeg_scan_info *scans, int n_scans, uint8_t **out,
                                size_t *size);

#endif /* GHM_TEST_IMAGE_WRITERS_H */
