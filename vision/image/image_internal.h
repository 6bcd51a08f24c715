/*
 * image_internal.h - what the image files share: the size check every decoder runs on the
 * header before it allocates pixels (image.c), the "why" message writer, the luma formula, and
 * the per-format decoders and writer that image_io.c dispatches to.
 */
#ifndef GHM_IMAGE_INTERNAL_H
#define GHM_IMAGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_image.h"
#include "why_internal.h"


/* GHM_OK when a width x height image is allowed, GHM_ERR_FORMAT for a zero side,
 * GHM_ERR_TOO_LARGE above GHM_IMAGE_MAX_SIDE or GHM_IMAGE_MAX_PIXELS; writes why on failure.
 * Takes 64-bit sizes so that a header's raw 32-bit fields can be checked before any cast. */
int ghmi_image_check_size(uint64_t width, uint64_t height, char *why, size_t why_size);

/* ghm_image_create without zeroing the pixels, for a reader that writes every one of them: a
 * 1080p video frame's 2 MB of zeros, overwritten at once, were a fifth of the time one thread
 * took to read a frame from a Y4M file on the 2 x H100 host (2026-11-28, docs/BENCHMARKS.md). */
int ghmi_image_create_unset(int width, int height, GhmImage **out);

/* Replaces *img by the image shown for EXIF orientation o (image_orient.c): 1 (or a value
 * outside 1..8) keeps it; 2 mirrored, 3 turned 180 degrees, 4 flipped, 5 transposed, 6 to be
 * turned 90 degrees clockwise, 7 transversed, 8 to be turned 90 degrees counterclockwise.
 * GHM_ERR_NOMEM leaves *img as it was. */
int ghmi_image_orient(int o, GhmImage **img);

/* ITU-R BT.601 luma, rounded: the weights libjpeg uses for YCbCr and OpenCV for RGB2GRAY. */
static inline uint8_t ghmi_luma(unsigned r, unsigned g, unsigned b)
{
    return (uint8_t)((299u * r + 587u * g + 114u * b + 500u) / 1000u);
}

/* One sample of channels bytes (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA) as grey: luma, then
 * alpha composited on black. The PNG decoder and ghm_image_from_pixels share it, so an array
 * decoded elsewhere becomes the same grey image as the file loaded here. */
static inline uint8_t ghmi_grey_sample(const uint8_t *src, int channels)
{
    unsigned v = channels >= 3 ? ghmi_luma(src[0], src[1], src[2]) : src[0];
    if (channels == 2 || channels == 4) {
        unsigned a = src[channels - 1];
        v = (v * a + 127u) / 255u;
    }
    return (uint8_t)v;
}

/* Decoders for a whole file in memory whose signature already matched. Same contract as
 * ghm_image_decode. */
int ghmi_png_decode(const uint8_t *data, size_t size, GhmImage **out, char *why,
                    size_t why_size);
int ghmi_jpeg_decode(const uint8_t *data, size_t size, GhmImage **out, char *why,
                     size_t why_size);

/* Writes 8-bit rows (channels 1 = grey, 3 = RGB) as a PNG at path through the file-I/O unit's
 * atomic writer: path is complete or untouched, nothing is left behind on failure. */
int ghmi_png_write(const char *path, int width, int height, int channels, const uint8_t *pixels,
                   size_t stride, char *why, size_t why_size);

#endif /* GHM_IMAGE_INTERNAL_H */
