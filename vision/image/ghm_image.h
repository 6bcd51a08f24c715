/*
 * ghm_image.h - the one grey 8-bit image type the pipelines use, read from PNG or JPEG (chosen
 * by the file's content, never its name) and written as PNG for overlays.
 *
 * Usage:
 *     GhmImage *img = NULL;
 *     char why[256];
 *     if ((ret = ghm_image_load("photo.jpg", &img, why, sizeof why)) < 0) {
 *         fprintf(stderr, "photo.jpg: %s\n", why);     // e.g. "truncated JPEG data"
 *         goto fail;
 *     }
 *     // img->pixels[y * img->stride + x], 0 = black, 255 = white
 *     ghm_image_free(&img);
 *
 * Colour inputs become grey by ITU-R BT.601 luma (as libjpeg and OpenCV do); 16-bit samples are
 * reduced to 8 bits; alpha is dropped (composited on black). A JPEG whose EXIF orientation says
 * how the camera was turned is returned turned for display, as viewers and OpenCV's imread
 * show it (image_jpeg.c). Images with more than GHM_IMAGE_MAX_PIXELS pixels, or a side longer
 * than GHM_IMAGE_MAX_SIDE, are refused with GHM_ERR_TOO_LARGE before any pixel memory is
 * allocated.
 */
#ifndef GHM_IMAGE_H
#define GHM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHM_IMAGE_MAX_SIDE 32768
#define GHM_IMAGE_MAX_PIXELS (100u * 1000u * 1000u) /* 100 megapixels */

typedef struct GhmImage {
    int width;
    int height;
    int stride; /* bytes between rows, >= width */
    uint8_t *pixels;
} GhmImage;

/* An RGB image, used only for drawing overlays. */
typedef struct GhmRgbImage {
    int width;
    int height;
    uint8_t *pixels; /* width * height * 3 bytes, row-major, no padding */
} GhmRgbImage;

/* Creates a zeroed grey image. GHM_ERR_INVALID for sizes < 1, GHM_ERR_TOO_LARGE above the limits. */
GHM_API int ghm_image_create(int width, int height, GhmImage **out);

/* Builds a grey image from pixels in memory (a NumPy array, a frame from another decoder):
 * height rows, row_stride bytes apart, of width samples of channels bytes each (1 grey,
 * 2 grey + alpha, 3 RGB, 4 RGBA, in that order). Colour and alpha become grey as the PNG loader
 * makes them (BT.601 luma, then alpha composited on black), so the array of a PNG file gives
 * the image ghm_image_load gives. pixels is only read. GHM_ERR_INVALID for a NULL pointer, a
 * size below 1, channels outside 1..4 or row_stride < width * channels; GHM_ERR_TOO_LARGE above
 * the limits; GHM_ERR_NOMEM. *out is NULL after a failure; the caller frees it with
 * ghm_image_free(). */
GHM_API int ghm_image_from_pixels(const uint8_t *pixels, int width, int height, int channels,
                                  size_t row_stride, GhmImage **out);

/* Reads a PNG or JPEG file. On failure returns GHM_ERR_IO (cannot open/read), GHM_ERR_FORMAT
 * (not PNG or JPEG, or damaged), GHM_ERR_TRUNCATED, GHM_ERR_TOO_LARGE or GHM_ERR_NOMEM and, when
 * why is not NULL, writes one line saying what is wrong (without the file name).
 * GHM_ERR_UNSUPPORTED for valid JPEGs we cannot make grey (CMYK/YCCK, more than 500 progressive
 * scans). Files above 1 GiB are refused with GHM_ERR_TOO_LARGE before they are read. *out is
 * NULL after any failure. */
GHM_API int ghm_image_load(const char *path, GhmImage **out, char *why, size_t why_size);

/* The same from a buffer in memory (the whole encoded file). */
GHM_API int ghm_image_decode(const uint8_t *data, size_t size, GhmImage **out, char *why,
                             size_t why_size);

/* Writes a grey image as PNG, atomically (ghm_file_io.h: a temporary file beside PATH, renamed
 * into place, mode from the umask); on any failure the temporary file is removed and PATH is
 * untouched. GHM_ERR_IO (with why) when the file cannot be created, written or renamed;
 * GHM_ERR_INVALID for a NULL or malformed image. ghm_rgb_image_save_png does the same for RGB. */
GHM_API int ghm_image_save_png(const GhmImage *img, const char *path, char *why, size_t why_size);

GHM_API void ghm_image_free(GhmImage **img);

/* The next level of an image pyramid: each pixel the rounded mean of a 2x2 block of src, so
 * *out is floor(w / 2) x floor(h / 2) and its pixel (x, y) is centred on src's
 * (2x + 0.5, 2y + 0.5). GHM_ERR_INVALID when src is smaller than 2x2, GHM_ERR_NOMEM. The caller
 * frees *out with ghm_image_free(). */
GHM_API int ghm_image_halve(const GhmImage *src, GhmImage **out);

/* Resamples src through an affine map: out pixel (x, y) shows src at t * (x, y, 1), bilinear,
 * black outside src. Used to make known-transform queries (benchmarks, tests). */
GHM_API int ghm_image_warp_affine(const GhmImage *src, int width, int height, const double t[2][3],
                                  GhmImage **out);

GHM_API int ghm_rgb_image_from_grey(const GhmImage *grey, GhmRgbImage **out);
GHM_API int ghm_rgb_image_save_png(const GhmRgbImage *img, const char *path, char *why,
                                   size_t why_size);
GHM_API void ghm_rgb_image_free(GhmRgbImage **img);

/* Creates a black RGB image; the same size rules and codes as ghm_image_create. */
GHM_API int ghm_rgb_image_create(int width, int height, GhmRgbImage **out);

/* Sets one pixel; coordinates outside the image are ignored (drawing clips, never fails). */
GHM_API void ghm_rgb_image_set(GhmRgbImage *img, int x, int y, uint8_t r, uint8_t g, uint8_t b);

/* Draws a filled square of side 2 * radius + 1 centred on the pixel nearest (x, y), clipped.
 * Non-finite coordinates draw nothing. */
GHM_API void ghm_rgb_image_draw_point(GhmRgbImage *img, double x, double y, int radius, uint8_t r,
                                      uint8_t g, uint8_t b);

/* Draws a one-pixel line from (x0, y0) to (x1, y1) (pixel centres at integer coordinates),
 * clipped to the image first, so far-away or huge endpoints cost nothing. Non-finite
 * coordinates draw nothing. */
GHM_API void ghm_rgb_image_draw_line(GhmRgbImage *img, double x0, double y0, double x1, double y1,
                                     uint8_t r, uint8_t g, uint8_t b);

#ifdef __cplusplus
}
#endif

#endif /* GHM_IMAGE_H */
