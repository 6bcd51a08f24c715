/*
 * fuzz_options.c - libFuzzer target: the command line of image and video matching
 * (ghm_match_parse_options in src/match_cli.c, with the common and video options). The input is
 * the argument list, arguments separated by NUL bytes. Parsing must end in options, a usage
 * error (one line on stderr) or --help / --version, never a crash or undefined behaviour; the
 * program's sources are linked in without its main(). Its error lines and help text are
 * silenced by scripts/fuzz.sh (-close_fd_mask; sanitizer reports still get through).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match_cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    enum { MAX_ARGS = 64 };
    char *copy = malloc(size + 1), *argv[MAX_ARGS + 2] = {"geohash-match"};
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    int argc = 1;
    for (size_t at = 0; at <= size && argc <= MAX_ARGS; at += strlen(copy + at) + 1)
        argv[argc++] = copy + at;
    argv[argc] = NULL;
    GhmMatchOptions opt;
    int ret = ghm_match_parse_options(argc, argv, &opt);
    if (ret < -1 || ret > 1)
        abort(); /* the contract: -1 usage error, 0 options, 1 --help or --version */
    free(copy);
    return 0;
}
