/*
 * cmd_voxel.c - `geohash-match voxel [OPTIONS] A B`: option parsing and output of the voxel
 * Boolean intersection. The pipeline lives in vision/.
 */
#include <stdio.h>

#include "cli.h"

static const struct option long_options[] = {GHM_COMMON_LONG_OPTIONS, {NULL, 0, NULL, 0}};

int ghm_cmd_voxel(int argc, char **argv)
{
    GhmCommonOptions common = ghm_cli_common_defaults();
    int id;
    optind = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&common, id, optarg);
        if (used <= 0) {
            if (used == 0)
                ghm_cli_usage_hint("voxel");
            return GHM_EXIT_ERROR;
        }
    }
    if (common.help) {
        ghm_cli_print_help(stdout);
        return GHM_EXIT_FOUND;
    }
    ghm_cli_error("voxel", "the voxel mode is not available in this build yet");
    return GHM_EXIT_ERROR;
}
