/*
 * fuzz_image.c - libFuzzer target: PNG and JPEG decoding from memory (ghm_image_decode), the
 * readers every image query starts with. Any input must give an image or an error with a
 * message, never a crash, a leak or undefined behaviour.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ghm_image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GhmImage *img = NULL;
    char why[256] = "";
    int ret = ghm_image_decode(data, size, &img, why, sizeof why);
    if ((ret == GHM_OK) != (img != NULL) || (ret < 0 && why[0] == '\0'))
        abort(); /* the contract: an image, or an error that says why */
    ghm_image_free(&img);
    return 0;
}
