/*
 * features_device.c - the feature chain on the backend's device (GhmVisionOps features_*,
 * kernels/vision/features/features.cu): its parameters from the CPU's own functions, and
 * ghm_edges_detect_ctx, which downloads the device's edges into the CPU's layout.
 */
#include <stdlib.h>
#include <string.h>

#include "edges_internal.h"

int ghmi_feature_params(const GhmEdgeParams *ep, const GhmCornerParams *cp, int w, int h,
                        GhmFeatureParams *out)
{
    if (!ep || ep->blur_sigma < 0.0 || ep->blur_sigma > 5.0 || ep->percentile < 0.0 ||
        ep->percentile >= 1.0 || ep->noise_factor < 0.0 || (cp && ghmi_corner_params_check(cp) < 0))
        return GHM_ERR_INVALID;
    memset(out, 0, sizeof *out);
    out->blur.radius = ghmi_gaussian_taps(ep->blur_sigma, out->blur.g);
    out->noise_gain = ghmi_gradient_noise_gain(out->blur.g, out->blur.radius);
    out->noise_factor = ep->noise_factor;
    out->percentile = ep->percentile;
    out->corners = cp && ghmi_corners_fit(w, h, cp);
    if (out->corners) {
        out->tensor.radius = ghmi_gaussian_taps(cp->sigma, out->tensor.g);
        out->harris_k = (float)cp->k;
        out->rel_threshold = (float)cp->rel_threshold;
        out->radius = cp->radius;
    }
    return GHM_OK;
}

/* Copies the device chain's edges into a GhmEdges of the CPU's layout. */
static int download_edges(GhmContext *ctx, const GhmDeviceFeatures *f, GhmEdges *e)
{
    size_t npix = (size_t)f->width * f->height;
    e->threshold = f->threshold;
    e->noise = f->noise;
    e->count = f->npoints;
    e->points = malloc((f->npoints ? f->npoints : 1) * sizeof *e->points);
    if (!e->points)
        return GHM_ERR_NOMEM;
    int ret = ghm_buffer_download(ctx, e->gx, f->gx, npix * sizeof *e->gx);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(ctx, e->gy, f->gy, npix * sizeof *e->gy);
    if (ret == GHM_OK)
        ret = ghm_buffer_download(ctx, e->pixel_point, f->pixel_point,
                                  npix * sizeof *e->pixel_point);
    if (ret == GHM_OK && f->npoints)
        ret = ghm_buffer_download(ctx, e->points, f->points, f->npoints * sizeof *e->points);
    return ret;
}

int ghm_edges_detect_ctx(GhmContext *ctx, const GhmImage *img, const GhmEdgeParams *p,
                         GhmEdges **out)
{
    const GhmVisionOps *ops = ctx ? ghmi_vision_ops(ctx) : NULL;
    if (!ops || !ops->features_run)
        return ghm_edges_detect(img, p, out);
    if (!img || !p || !out || !img->pixels || img->width < 1 || img->height < 1)
        return GHM_ERR_INVALID;
    GhmFeatureParams fp;
    int ret = ghmi_feature_params(p, NULL, img->width, img->height, &fp);
    if (ret < 0)
        return ret;
    *out = NULL;
    size_t npix = (size_t)img->width * img->height;
    GhmFeatureWorkspace *ws = NULL;
    GhmDeviceFeatures f;
    GhmEdges *e = calloc(1, sizeof *e);
    if (!e)
        return GHM_ERR_NOMEM;
    e->width = img->width;
    e->height = img->height;
    e->gx = malloc(npix * sizeof *e->gx);
    e->gy = malloc(npix * sizeof *e->gy);
    e->pixel_point = malloc(npix * sizeof *e->pixel_point);
    ret = GHM_ERR_NOMEM;
    if (!e->gx || !e->gy || !e->pixel_point)
        goto fail;
    if ((ret = ops->features_create(ctx, &ws)) < 0 ||
        (ret = ops->features_run(ctx, ws, img->pixels, img->width, img->height, img->stride, &fp,
                                 &f)) < 0 ||
        (ret = download_edges(ctx, &f, e)) < 0)
        goto fail;
    ops->features_free(ctx, &ws);
    *out = e;
    return GHM_OK;
fail:
    if (ws)
        ops->features_free(ctx, &ws);
    ghm_edges_free(&e);
    return ret;
}
