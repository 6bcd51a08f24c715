/* image_warp.c - affine resampling of grey images (see ghm_image_warp_affine). */
#include "ghm_image.h"

static double sample_bilinear(const GhmImage *img, double x, double y)
{
    if (x < 0.0 || y < 0.0 || x > img->width - 1 || y > img->height - 1)
        return 0.0;
    int x0 = (int)x, y0 = (int)y;
    int x1 = x0 + 1 < img->width ? x0 + 1 : x0, y1 = y0 + 1 < img->height ? y0 + 1 : y0;
    double fx = x - x0, fy = y - y0;
    const uint8_t *r0 = img->pixels + (size_t)y0 * (size_t)img->stride;
    const uint8_t *r1 = img->pixels + (size_t)y1 * (size_t)img->stride;
    return (r0[x0] * (1 - fx) + r0[x1] * fx) * (1 - fy) + (r1[x0] * (1 - fx) + r1[x1] * fx) * fy;
}

int ghm_image_warp_affine(const GhmImage *src, int width, int height, const double t[2][3],
                          GhmImage **out)
{
    if (!src || !t || !out)
        return GHM_ERR_INVALID;
    int ret = ghm_image_create(width, height, out);
    if (ret < 0)
        return ret;
    GhmImage *dst = *out;
#pragma omp parallel for schedule(static)
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            double v = sample_bilinear(src, t[0][0] * x + t[0][1] * y + t[0][2],
                                       t[1][0] * x + t[1][1] * y + t[1][2]);
            dst->pixels[(size_t)y * (size_t)dst->stride + (size_t)x] = (uint8_t)(v + 0.5);
        }
    return GHM_OK;
}
