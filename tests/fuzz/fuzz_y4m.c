/*
 * fuzz_y4m.c - libFuzzer target: the YUV4MPEG2 reader (ghm_video_open_y4m), header and every
 * frame to the end of the stream.
 */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ghm_image.h"
#include "ghm_video.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* fmemopen refuses an empty buffer */
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f)
        return 0;
    GhmVideo *v = NULL;
    char why[256] = "";
    if (ghm_video_open_y4m(f, &v, why, sizeof why) == GHM_OK) {
        /* A frame cap keeps one input quick: a tiny header can declare many tiny frames. */
        for (int i = 0; i < 64; i++) {
            GhmVideoFrame fr = {0};
            int ret = ghm_video_read(v, &fr, why, sizeof why);
            ghm_image_free(&fr.image);
            if (ret != GHM_VIDEO_FRAME && ret != GHM_VIDEO_DAMAGED)
                break;
        }
        ghm_video_free(&v);
    } else if (v || why[0] == '\0') {
        abort();
    }
    fclose(f);
    return 0;
}
