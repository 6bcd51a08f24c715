/*
 * fuzz_pointcloud.c - libFuzzer target: the PLY (ASCII and binary, either byte order) and XYZ
 * readers (ghm_pointcloud_decode), which pick the format from the content.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ghm_pointcloud.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    GhmPointCloud *pc = NULL;
    char why[256] = "";
    int ret = ghm_pointcloud_decode(data, size, &pc, why, sizeof why);
    if ((ret == GHM_OK) != (pc != NULL) || (ret < 0 && why[0] == '\0'))
        abort();
    ghm_pointcloud_free(&pc);
    return 0;
}
