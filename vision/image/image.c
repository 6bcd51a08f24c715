/*
 * image.c - the GhmImage and GhmRgbImage types, the size limits every decoder checks, and the
 * small drawing helpers used for overlays. A leaf: the decoders (image_png.c, image_jpeg.c) call
 * it, and image_io.c, which reads and writes files, calls them, so no two files call each other.
 */
#include <math.h>
#include <stdlib.h>

#include "image_internal.h"

int ghmi_image_check_size(uint64_t width, uint64_t height, char *why, size_t why_size)
{
    if (width == 0 || height == 0) {
        ghmi_why(why, why_size, "image has zero width or height (%llux%llu)",
                 (unsigned long long)width, (unsigned long long)height);
        return GHM_ERR_FORMAT;
    }
    /* Both sides are below 2^32 here in practice, but check the sides first so that the
     * product below cannot overflow whatever the caller passed. */
    if (width > GHM_IMAGE_MAX_SIDE || height > GHM_IMAGE_MAX_SIDE) {
        if (width <= UINT32_MAX && height <= UINT32_MAX && width * height > GHM_IMAGE_MAX_PIXELS)
            ghmi_why(why, why_size, "image is %llux%llu pixels, above the limit of %u pixels",
                     (unsigned long long)width, (unsigned long long)height,
                     GHM_IMAGE_MAX_PIXELS);
        else
            ghmi_why(why, why_size,
                     "image is %llux%llu pixels, a side is above the limit of %d pixels",
                     (unsigned long long)width, (unsigned long long)height, GHM_IMAGE_MAX_SIDE);
        return GHM_ERR_TOO_LARGE;
    }
    if (width * height > GHM_IMAGE_MAX_PIXELS) {
        ghmi_why(why, why_size, "image is %llux%llu pixels, above the limit of %u pixels",
                 (unsigned long long)width, (unsigned long long)height, GHM_IMAGE_MAX_PIXELS);
        return GHM_ERR_TOO_LARGE;
    }
    return GHM_OK;
}

/* The public create reports a zero or negative size as an argument error, not a bad file. */
static int check_create_size(int width, int height)
{
    if (width < 1 || height < 1)
        return GHM_ERR_INVALID;
    return ghmi_image_check_size((uint64_t)width, (uint64_t)height, NULL, 0);
}

static int create(int width, int height, int zeroed, GhmImage **out)
{
    if (out == NULL)
        return GHM_ERR_INVALID;
    *out = NULL;
    int ret = check_create_size(width, height);
    if (ret < 0)
        return ret;
    GhmImage *img = calloc(1, sizeof *img);
    if (img == NULL)
        return GHM_ERR_NOMEM;
    size_t bytes = (size_t)width * (size_t)height;
    img->pixels = zeroed ? calloc(bytes, 1) : malloc(bytes);
    if (img->pixels == NULL) {
        free(img);
        return GHM_ERR_NOMEM;
    }
    img->width = width;
    img->height = height;
    img->stride = width;
    *out = img;
    return GHM_OK;
}

int ghm_image_create(int width, int height, GhmImage **out)
{
    return create(width, height, 1, out);
}

int ghmi_image_create_unset(int width, int height, GhmImage **out)
{
    return create(width, height, 0, out);
}

int ghm_image_from_pixels(const uint8_t *pixels, int width, int height, int channels,
                          size_t row_stride, GhmImage **out)
{
    if (out == NULL)
        return GHM_ERR_INVALID;
    *out = NULL;
    if (pixels == NULL || channels < 1 || channels > 4 || width < 1 ||
        row_stride < (size_t)width * (size_t)channels)
        return GHM_ERR_INVALID;
    int ret = ghm_image_create(width, height, out);
    if (ret < 0)
        return ret;
    for (int y = 0; y < height; y++) {
        const uint8_t *src = pixels + (size_t)y * row_stride;
        uint8_t *dst = (*out)->pixels + (size_t)y * (size_t)(*out)->stride;
        for (int x = 0; x < width; x++, src += channels)
            dst[x] = ghmi_grey_sample(src, channels);
    }
    return GHM_OK;
}

int ghm_image_halve(const GhmImage *src, GhmImage **out)
{
    if (!src || !out || !src->pixels || src->width < 2 || src->height < 2)
        return GHM_ERR_INVALID;
    int w = src->width / 2, h = src->height / 2;
    int ret = ghm_image_create(w, h, out);
    if (ret < 0)
        return ret;
    for (int y = 0; y < h; y++) {
        const uint8_t *a = src->pixels + (size_t)(2 * y) * src->stride, *b = a + src->stride;
        uint8_t *d = (*out)->pixels + (size_t)y * (*out)->stride;
        for (int x = 0; x < w; x++)
            d[x] = (uint8_t)((a[2 * x] + a[2 * x + 1] + b[2 * x] + b[2 * x + 1] + 2) >> 2);
    }
    return GHM_OK;
}

void ghm_image_free(GhmImage **img)
{
    if (img == NULL || *img == NULL)
        return;
    free((*img)->pixels);
    free(*img);
    *img = NULL;
}

/* --- RGB images for overlays ------------------------------------------------------------- */

int ghm_rgb_image_create(int width, int height, GhmRgbImage **out)
{
    if (out == NULL)
        return GHM_ERR_INVALID;
    *out = NULL;
    int ret = check_create_size(width, height);
    if (ret < 0)
        return ret;
    GhmRgbImage *img = calloc(1, sizeof *img);
    if (img == NULL)
        return GHM_ERR_NOMEM;
    img->pixels = calloc((size_t)width * (size_t)height, 3);
    if (img->pixels == NULL) {
        free(img);
        return GHM_ERR_NOMEM;
    }
    img->width = width;
    img->height = height;
    *out = img;
    return GHM_OK;
}

int ghm_rgb_image_from_grey(const GhmImage *grey, GhmRgbImage **out)
{
    if (grey == NULL || grey->pixels == NULL || out == NULL)
        return GHM_ERR_INVALID;
    int ret = ghm_rgb_image_create(grey->width, grey->height, out);
    if (ret < 0)
        return ret;
    uint8_t *dst = (*out)->pixels;
    for (int y = 0; y < grey->height; y++) {
        const uint8_t *row = grey->pixels + (size_t)y * (size_t)grey->stride;
        for (int x = 0; x < grey->width; x++, dst += 3)
            dst[0] = dst[1] = dst[2] = row[x];
    }
    return GHM_OK;
}

void ghm_rgb_image_free(GhmRgbImage **img)
{
    if (img == NULL || *img == NULL)
        return;
    free((*img)->pixels);
    free(*img);
    *img = NULL;
}

void ghm_rgb_image_set(GhmRgbImage *img, int x, int y, uint8_t r, uint8_t g, uint8_t b)
{
    if (img == NULL || x < 0 || y < 0 || x >= img->width || y >= img->height)
        return;
    uint8_t *p = img->pixels + ((size_t)y * (size_t)img->width + (size_t)x) * 3;
    p[0] = r;
    p[1] = g;
    p[2] = b;
}

void ghm_rgb_image_draw_point(GhmRgbImage *img, double x, double y, int radius, uint8_t r,
                              uint8_t g, uint8_t b)
{
    if (img == NULL || !isfinite(x) || !isfinite(y) || radius < 0)
        return;
    /* Reject far-away points before converting, so that the int casts below are defined. */
    double reach = (double)radius + 1.0;
    if (x < -reach || y < -reach || x > img->width + reach || y > img->height + reach)
        return;
    int cx = (int)lround(x), cy = (int)lround(y);
    for (int dy = -radius; dy <= radius; dy++)
        for (int dx = -radius; dx <= radius; dx++)
            ghm_rgb_image_set(img, cx + dx, cy + dy, r, g, b);
}

/* Liang-Barsky: narrows [t0, t1] to the part of p + t * d inside [lo, hi]; 0 when empty. */
static int clip_axis(double p, double d, double lo, double hi, double *t0, double *t1)
{
    if (d == 0.0)
        return p >= lo && p <= hi;
    double a = (lo - p) / d, b = (hi - p) / d;
    if (a > b) {
        double t = a;
        a = b;
        b = t;
    }
    if (a > *t0)
        *t0 = a;
    if (b < *t1)
        *t1 = b;
    return *t0 <= *t1;
}

/* Rounds a clipped coordinate (within [-0.5, size - 0.5]) to a pixel index in [0, size). */
static int snap(double v, int size)
{
    int i = (int)floor(v + 0.5);
    return i < 0 ? 0 : i >= size ? size - 1 : i;
}

void ghm_rgb_image_draw_line(GhmRgbImage *img, double x0, double y0, double x1, double y1,
                             uint8_t r, uint8_t g, uint8_t b)
{
    if (img == NULL || !isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
        return;
    double dx = x1 - x0, dy = y1 - y0, t0 = 0.0, t1 = 1.0;
    if (!clip_axis(x0, dx, -0.5, img->width - 0.5, &t0, &t1) ||
        !clip_axis(y0, dy, -0.5, img->height - 0.5, &t0, &t1))
        return;
    int ax = snap(x0 + t0 * dx, img->width), ay = snap(y0 + t0 * dy, img->height);
    int bx = snap(x0 + t1 * dx, img->width), by = snap(y0 + t1 * dy, img->height);
    /* Bresenham between the clipped, snapped ends: one pixel per step of the longer axis. */
    int sx = ax < bx ? 1 : -1, sy = ay < by ? 1 : -1;
    int ex = abs(bx - ax), ey = -abs(by - ay), err = ex + ey;
    for (;;) {
        ghm_rgb_image_set(img, ax, ay, r, g, b);
        if (ax == bx && ay == by)
            break;
        int e2 = 2 * err;
        if (e2 >= ey) {
            err += ey;
            ax += sx;
        }
        if (e2 <= ex) {
            err += ex;
            ay += sy;
        }
    }
}
