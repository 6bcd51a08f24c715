/*
 * cmd_match.c - `geohash-match [OPTIONS] REFERENCE QUERY`: option parsing and output of the
 * image (and video) mode. The pipeline itself lives in vision/.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "ghm_image.h"

static const struct option long_options[] = {GHM_COMMON_LONG_OPTIONS, {NULL, 0, NULL, 0}};

static void print_help(void)
{
    ghm_cli_print_help(stdout);
}

int ghm_cmd_match(int argc, char **argv)
{
    GhmCommonOptions common = ghm_cli_common_defaults();
    int id;
    optind = 1;
    opterr = 1;
    while ((id = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
        int used = ghm_cli_common_option(&common, id, optarg);
        if (used < 0)
            return GHM_EXIT_ERROR;
        if (used == 0) {
            ghm_cli_usage_hint(NULL);
            return GHM_EXIT_ERROR;
        }
    }
    if (common.help) {
        print_help();
        return GHM_EXIT_FOUND;
    }
    if (common.version) {
        ghm_cli_print_version(stdout);
        return GHM_EXIT_FOUND;
    }
    if (argc - optind != 2) {
        ghm_cli_error(NULL, argc - optind < 2 ? "missing REFERENCE and QUERY arguments"
                                              : "too many arguments (expected REFERENCE QUERY)");
        ghm_cli_usage_hint(NULL);
        return GHM_EXIT_ERROR;
    }
    GhmContext *ctx = NULL;
    if (ghm_cli_context(&common, &ctx) < 0)
        return GHM_EXIT_ERROR;
    int status = GHM_EXIT_ERROR;
    GhmImage *images[2] = {NULL, NULL};
    for (int i = 0; i < 2; i++) {
        char why[256];
        if (ghm_image_load(argv[optind + i], &images[i], why, sizeof why) < 0) {
            ghm_cli_error(argv[optind + i], "%s", why);
            goto done;
        }
    }
    ghm_cli_error(NULL, "image matching is not available in this build yet");
done:
    ghm_image_free(&images[0]);
    ghm_image_free(&images[1]);
    ghm_context_free(&ctx);
    return status;
}
