/*
 * fuzz_reference.c - libFuzzer target: reference files (ghm_matcher_load). The input is the
 * payload; the target puts the header in front of it with the right length and checksum, so
 * that the fuzzer reaches the checks of every count and value instead of stopping at the
 * checksum (vision/match/match_file.c has the layout).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ghm_context.h"
#include "ghm_match.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t fnv1a64(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static GhmContext *ctx;
    if (!ctx) {
        GhmContextOptions o = ghm_context_defaults();
        o.backend = GHM_BACKEND_CPU;
        o.threads = 1;
        if (ghm_context_create(&o, &ctx) < 0)
            abort();
    }
    uint8_t head[32];
    memcpy(head, "GHMREF\r\n", 8);
    put_le(head + 8, 2, 4);
    put_le(head + 12, 0, 4);
    put_le(head + 16, size, 8);
    put_le(head + 24, fnv1a64(data, size), 8);
    int fd = memfd_create("ref", 0);
    if (fd < 0 || write(fd, head, sizeof head) != (ssize_t)sizeof head ||
        (size && write(fd, data, size) != (ssize_t)size))
        abort();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    GhmMatcher *m = NULL;
    char why[256] = "";
    int ret = ghm_matcher_load(ctx, path, NULL, &m, why, sizeof why);
    if ((ret == GHM_OK) != (m != NULL) || (ret < 0 && why[0] == '\0'))
        abort();
    ghm_matcher_free(&m);
    close(fd);
    return 0;
}
