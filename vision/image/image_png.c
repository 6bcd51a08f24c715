/*
 * image_png.c - PNG through libpng: decoding any colour type and bit depth from memory into
 * the grey 8-bit GhmImage, and writing grey or RGB images through the file-I/O unit's atomic
 * writer (a temporary file beside the target, renamed into place).
 *
 * libpng reports errors by calling an error function that must not return; ours records the
 * message and longjmps back to the setjmp in the one function that drives libpng. Everything
 * that function touches after setjmp lives in a struct owned by its caller, so no local
 * variable is changed between setjmp and longjmp (C11 7.13.2.1p3). Warnings are ignored:
 * libpng only warns about damage it can safely skip (ancillary chunks), while critical-chunk
 * CRC errors, bad zlib data and short data are errors.
 */
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_file_io.h"
#include "image_internal.h"

/* State shared with the libpng callbacks and kept across the longjmp. */
typedef struct PngDecoder {
    const uint8_t *data;
    size_t size;
    size_t pos;
    int truncated;      /* the read callback ran out of data */
    int status;         /* GHM_ERR_* to return when libpng longjmps */
    char message[192];  /* libpng's (or our) error text */
    png_structp png;
    png_infop info;
    uint8_t *decoded;   /* interleaved 8-bit samples, when the image is not plain grey */
    png_bytep *rows;
    GhmImage *img;
} PngDecoder;

static void on_png_error(png_structp png, png_const_charp msg)
{
    PngDecoder *d = png_get_error_ptr(png);
    snprintf(d->message, sizeof d->message, "%s", msg);
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void read_from_memory(png_structp png, png_bytep out, size_t length)
{
    PngDecoder *d = png_get_io_ptr(png);
    if (length > d->size - d->pos) {
        d->truncated = 1;
        png_error(png, "premature end of file");
    }
    memcpy(out, d->data + d->pos, length);
    d->pos += length;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Checks the IHDR size fields before libpng sees them, so that a huge image gets our
 * message (with its dimensions) rather than libpng's user-limit error. */
static int peek_ihdr_size(const uint8_t *data, size_t size, char *why, size_t why_size)
{
    if (size < 24 || memcmp(data + 12, "IHDR", 4) != 0)
        return GHM_OK; /* let libpng say what is wrong */
    return ghmi_image_check_size(be32(data + 16), be32(data + 20), why, why_size);
}

/* Sets up the transforms that leave 8-bit samples: grey, grey+alpha, RGB or RGBA. */
static void request_8bit(PngDecoder *d)
{
    int color = png_get_color_type(d->png, d->info);
    int depth = png_get_bit_depth(d->png, d->info);
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(d->png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(d->png);
    /* A tRNS chunk becomes a real alpha channel so that it is composited like one. */
    if (png_get_valid(d->png, d->info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(d->png);
    if (depth == 16)
        png_set_scale_16(d->png); /* rounds: 0xFFFF -> 255, 0x8080 -> 128 */
    png_set_interlace_handling(d->png);
    png_read_update_info(d->png, d->info);
}

/* Converts the decoded rows (channels 2, 3 or 4) to grey: BT.601 luma, then alpha
 * composited on black. */
static void to_grey(PngDecoder *d, int channels)
{
    GhmImage *img = d->img;
    for (int y = 0; y < img->height; y++) {
        const uint8_t *src = d->rows[y];
        uint8_t *dst = img->pixels + (size_t)y * (size_t)img->stride;
        for (int x = 0; x < img->width; x++, src += channels)
            dst[x] = ghmi_grey_sample(src, channels);
    }
}

/* Points d->rows at the image itself (plain grey) or at a scratch buffer (other layouts). */
static int allocate_rows(PngDecoder *d, int channels)
{
    GhmImage *img = d->img;
    size_t rowbytes = png_get_rowbytes(d->png, d->info);
    if (rowbytes != (size_t)img->width * (size_t)channels) {
        snprintf(d->message, sizeof d->message, "unexpected row size after conversion");
        return GHM_ERR_FORMAT;
    }
    d->rows = malloc((size_t)img->height * sizeof *d->rows);
    if (d->rows == NULL)
        return GHM_ERR_NOMEM;
    uint8_t *base = img->pixels;
    size_t step = (size_t)img->stride;
    if (channels != 1) {
        d->decoded = malloc((size_t)img->height * rowbytes);
        if (d->decoded == NULL)
            return GHM_ERR_NOMEM;
        base = d->decoded;
        step = rowbytes;
    }
    for (int y = 0; y < img->height; y++)
        d->rows[y] = base + (size_t)y * step;
    return GHM_OK;
}

/* The only function that calls into libpng's reader; returns GHM_OK or a GHM_ERR_*. */
static int decode_with_libpng(PngDecoder *d, char *why, size_t why_size)
{
    if (setjmp(png_jmpbuf(d->png)))
        return d->truncated ? GHM_ERR_TRUNCATED : d->status;
    d->status = GHM_ERR_FORMAT;
    /* Backstop for our own header check, and a cap on memory for ancillary chunks. */
    png_set_user_limits(d->png, GHM_IMAGE_MAX_SIDE, GHM_IMAGE_MAX_SIDE);
    png_set_chunk_malloc_max(d->png, 8u << 20);
    png_set_read_fn(d->png, d, read_from_memory);
    png_read_info(d->png, d->info);
    uint32_t width = png_get_image_width(d->png, d->info);
    uint32_t height = png_get_image_height(d->png, d->info);
    int ret = ghmi_image_check_size(width, height, why, why_size);
    if (ret < 0)
        return ret;
    request_8bit(d);
    int channels = png_get_channels(d->png, d->info);
    if ((ret = ghm_image_create((int)width, (int)height, &d->img)) < 0)
        return ret;
    if ((ret = allocate_rows(d, channels)) < 0)
        return ret;
    png_read_image(d->png, d->rows);
    /* Reading to IEND catches a file cut after its last image row. */
    png_read_end(d->png, NULL);
    if (channels != 1)
        to_grey(d, channels);
    return GHM_OK;
}

static void describe_failure(const PngDecoder *d, int ret, char *why, size_t why_size)
{
    if (ret == GHM_ERR_TRUNCATED)
        ghmi_why(why, why_size, "truncated PNG data (premature end of file)");
    else if (ret == GHM_ERR_NOMEM)
        ghmi_why(why, why_size, "out of memory decoding PNG");
    else if (d->message[0] != '\0')
        ghmi_why(why, why_size, "damaged PNG data: %s", d->message);
}

int ghmi_png_decode(const uint8_t *data, size_t size, GhmImage **out, char *why,
                    size_t why_size)
{
    PngDecoder d = {.data = data, .size = size};
    int ret = peek_ihdr_size(data, size, why, why_size);
    if (ret < 0)
        return ret;
    d.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &d, on_png_error, on_png_warning);
    if (d.png == NULL || (d.info = png_create_info_struct(d.png)) == NULL) {
        ret = GHM_ERR_NOMEM;
    } else {
        ret = decode_with_libpng(&d, why, why_size);
    }
    if (ret < 0) {
        /* Size errors already wrote why; the rest is described from libpng's message. */
        if (ret != GHM_ERR_TOO_LARGE && !(ret == GHM_ERR_FORMAT && d.message[0] == '\0'))
            describe_failure(&d, ret, why, why_size);
        ghm_image_free(&d.img);
    }
    png_destroy_read_struct(&d.png, &d.info, NULL);
    free(d.rows);
    free(d.decoded);
    *out = d.img;
    return ret;
}

/* --- writing ------------------------------------------------------------------------------ */

typedef struct PngEncoder {
    FILE *file; /* the atomic writer's stream */
    char message[192];
    png_structp png;
    png_infop info;
    const uint8_t *pixels;
    size_t stride;
    int width, height, channels;
} PngEncoder;

static void on_png_write_error(png_structp png, png_const_charp msg)
{
    PngEncoder *e = png_get_error_ptr(png);
    snprintf(e->message, sizeof e->message, "%s", msg);
    png_longjmp(png, 1);
}

/* The only function that calls into libpng's writer. */
static int encode_with_libpng(PngEncoder *e)
{
    if (setjmp(png_jmpbuf(e->png)))
        return GHM_ERR_EXTERNAL;
    png_init_io(e->png, e->file);
    png_set_IHDR(e->png, e->info, (png_uint_32)e->width, (png_uint_32)e->height, 8,
                 e->channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(e->png, e->info);
    for (int y = 0; y < e->height; y++)
        png_write_row(e->png, e->pixels + (size_t)y * e->stride);
    png_write_end(e->png, NULL);
    return GHM_OK;
}

int ghmi_png_write(const char *path, int width, int height, int channels, const uint8_t *pixels,
                   size_t stride, char *why, size_t why_size)
{
    if (width < 1 || height < 1 || (channels != 1 && channels != 3)) {
        ghmi_why(why, why_size, "invalid image to write");
        return GHM_ERR_INVALID;
    }
    PngEncoder e = {.pixels = pixels, .stride = stride, .width = width, .height = height,
                    .channels = channels};
    GhmFileWriter *w = NULL;
    int ret = ghm_file_writer_create(path, &w, why, why_size);
    if (ret < 0)
        return ret;
    e.file = ghm_file_writer_stream(w);
    e.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &e, on_png_write_error,
                                    on_png_warning);
    if (e.png == NULL || (e.info = png_create_info_struct(e.png)) == NULL) {
        ghmi_why(why, why_size, "out of memory writing PNG");
        ret = GHM_ERR_NOMEM;
    } else if ((ret = encode_with_libpng(&e)) < 0) {
        /* libpng's write callback fails with "Write Error" when the disk is full. */
        ghmi_why(why, why_size, "cannot write PNG: %s", e.message);
        ret = ferror(e.file) ? GHM_ERR_IO : ret;
    }
    png_destroy_write_struct(&e.png, &e.info);
    if (ret < 0) {
        ghm_file_writer_free(&w); /* the temporary file goes, path is untouched */
        return ret;
    }
    return ghm_file_writer_commit(&w, why, why_size);
}
