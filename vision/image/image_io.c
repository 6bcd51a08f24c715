/*
 * image_io.c - images from and to files and memory: the decoder is chosen by the first bytes of
 * the content (never the file name) through the file-I/O unit's sniffing, and PNG is written
 * through its atomic writer (image_png.c). See ghm_image.h.
 */
#include "ghm_file_io.h"
#include "image_internal.h"

/* Encoded files above this are refused before reading: even a 100-megapixel RGBA PNG stored
 * uncompressed stays below it, so only garbage or a wrong file gets here. */
#define MAX_FILE_BYTES ((size_t)1 << 30)

int ghm_image_decode(const uint8_t *data, size_t size, GhmImage **out, char *why,
                     size_t why_size)
{
    if (out == NULL || (data == NULL && size > 0)) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    *out = NULL;
    if (size == 0) {
        ghmi_why(why, why_size, "empty file");
        return GHM_ERR_FORMAT;
    }
    /* A file cut inside its signature goes to its decoder, which reports it as truncated. */
    switch (ghm_file_sniff(data, size, GHM_SNIFF_PREFIX)) {
    case GHM_FILE_PNG:
        return ghmi_png_decode(data, size, out, why, why_size);
    case GHM_FILE_JPEG:
        return ghmi_jpeg_decode(data, size, out, why, why_size);
    default:
        ghmi_why(why, why_size, "not a PNG or JPEG image");
        return GHM_ERR_FORMAT;
    }
}

int ghm_image_load(const char *path, GhmImage **out, char *why, size_t why_size)
{
    if (path == NULL || out == NULL) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    *out = NULL;
    GhmFileData in;
    int ret = ghm_file_read(path, MAX_FILE_BYTES, 0, &in, why, why_size);
    if (ret < 0)
        return ret;
    ret = ghm_image_decode(in.data, in.size, out, why, why_size);
    if (ret == GHM_ERR_NOMEM)
        ghmi_why(why, why_size, "out of memory");
    ghm_file_data_free(&in);
    return ret;
}

int ghm_image_save_png(const GhmImage *img, const char *path, char *why, size_t why_size)
{
    if (img == NULL || path == NULL || img->pixels == NULL || img->stride < img->width) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    return ghmi_png_write(path, img->width, img->height, 1, img->pixels, (size_t)img->stride,
                          why, why_size);
}

int ghm_rgb_image_save_png(const GhmRgbImage *img, const char *path, char *why, size_t why_size)
{
    if (img == NULL || path == NULL || img->pixels == NULL) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    return ghmi_png_write(path, img->width, img->height, 3, img->pixels, (size_t)img->width * 3,
                          why, why_size);
}
