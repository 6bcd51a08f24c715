/*
 * image_orient.c - an image turned or mirrored into the form it is shown in: a JPEG's EXIF
 * orientation (image_jpeg.c) and a video stream's display matrix (vision/video/video_frame.c)
 * both come here as an EXIF orientation code.
 */
#include <stdlib.h>

#include "image_internal.h"

/* Where the shown pixel (x, y) is stored, as sx = x0 + xx x + xy y, sy = y0 + yx x + yy y. */
typedef struct StoredAt {
    int x0, xx, xy, y0, yx, yy;
} StoredAt;

/* For orientation o of a stored w x h image (the EXIF definitions: 2 mirrored, 3 turned 180
 * degrees, 4 flipped, 5 transposed, 6 to be turned 90 degrees clockwise, 7 transversed, 8 to
 * be turned 90 degrees counterclockwise). */
static StoredAt stored_at(int o, int w, int h)
{
    int swap = o >= 5; /* the shown x runs along the stored y */
    int mirror_u = o == 2 || o == 3 || o == 7 || o == 8; /* along the stored x */
    int mirror_v = o == 3 || o == 4 || o == 6 || o == 7; /* along the stored y */
    StoredAt s = {0};
    /* u, v = the shown coordinate that runs along the stored x, y */
    int ux = swap ? 0 : 1, uy = swap ? 1 : 0, vx = swap ? 1 : 0, vy = swap ? 0 : 1;
    s.x0 = mirror_u ? w - 1 : 0;
    s.xx = mirror_u ? -ux : ux;
    s.xy = mirror_u ? -uy : uy;
    s.y0 = mirror_v ? h - 1 : 0;
    s.yx = mirror_v ? -vx : vx;
    s.yy = mirror_v ? -vy : vy;
    return s;
}

/* Tiles of the shown image, so that a turn's reads down the stored columns stay in lines
 * the cache holds (a 1080p frame read column by column misses on every pixel). */
enum { TILE = 64 };

int ghmi_image_orient(int o, GhmImage **img)
{
    if (o <= 1 || o > 8)
        return GHM_OK;
    const GhmImage *s = *img;
    int turned = o >= 5;
    GhmImage *d = NULL;
    int ret = ghmi_image_create_unset(turned ? s->height : s->width,
                                      turned ? s->width : s->height, &d);
    if (ret < 0)
        return ret;
    StoredAt m = stored_at(o, s->width, s->height);
    const ptrdiff_t stride = (ptrdiff_t)s->stride;
    const ptrdiff_t step_x = m.xx + m.yx * stride, step_y = m.xy + m.yy * stride;
    for (int ty = 0; ty < d->height; ty += TILE)
        for (int tx = 0; tx < d->width; tx += TILE)
            for (int y = ty; y < ty + TILE && y < d->height; y++) {
                const uint8_t *src = s->pixels + m.x0 + m.y0 * stride + tx * step_x + y * step_y;
                uint8_t *dst = d->pixels + (size_t)y * d->stride;
                for (int x = tx; x < tx + TILE && x < d->width; x++, src += step_x)
                    dst[x] = *src;
            }
    ghm_image_free(img);
    *img = d;
    return GHM_OK;
}
