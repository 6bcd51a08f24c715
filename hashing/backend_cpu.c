/*
 * backend_cpu.c - the CPU backend: backend memory is host memory, parallel loops use OpenMP
 * with ctx->threads workers. The hash structures' CPU op tables live beside their public APIs.
 */
#include "ghm_backend_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cpu_probe(char *why, size_t why_size)
{
    (void)why, (void)why_size;
    return GHM_OK;
}

static int cpu_init(GhmContext *ctx, void **state)
{
    (void)ctx; /* ghm_context_create has set its threads */
    *state = NULL;
    return GHM_OK;
}

static void cpu_describe(const GhmContext *ctx, char *buf, size_t size)
{
    snprintf(buf, size, "CPU, %d thread%s", ctx->threads, ctx->threads == 1 ? "" : "s");
}

static int cpu_alloc(GhmContext *ctx, size_t bytes, void **out)
{
    (void)ctx;
    *out = calloc(1, bytes ? bytes : 1);
    return *out ? GHM_OK : GHM_ERR_NOMEM;
}

static void cpu_free(GhmContext *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static int cpu_copy(GhmContext *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    memmove(dst, src, bytes);
    return GHM_OK;
}

static int cpu_zero(GhmContext *ctx, void *dst, size_t bytes)
{
    (void)ctx;
    memset(dst, 0, bytes);
    return GHM_OK;
}

/* The CPU's backend memory is host memory. */
static int cpu_in_place(const void *p)
{
    (void)p;
    return 1;
}

static int cpu_sync(GhmContext *ctx)
{
    (void)ctx;
    return GHM_OK;
}

const GhmBackend ghm_cpu_backend = {
    .name = "cpu",
    .kind = GHM_BACKEND_CPU,
    .probe = cpu_probe,
    .init = cpu_init,
    .shutdown = NULL,
    .describe = cpu_describe,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .upload = cpu_copy,
    .download = cpu_copy,
    .copy = cpu_copy,
    .zero = cpu_zero,
    .sync = cpu_sync,
    .in_place = cpu_in_place,
    .wait_stream = NULL,
    .maps = {[GHM_MAP_CUCKOO] = &ghm_cpu_map_ops,
             [GHM_MAP_LINEAR] = &ghm_cpu_open_map_ops,
             [GHM_MAP_QUADRATIC] = &ghm_cpu_open_map_ops,
             [GHM_MAP_DOUBLE] = &ghm_cpu_open_map_ops,
             [GHM_MAP_ROBIN_HOOD] = &ghm_cpu_robin_map_ops,
             [GHM_MAP_ROBIN_HOOD_RANDOM] = &ghm_cpu_robin_map_ops,
             [GHM_MAP_CHAINING] = &ghm_cpu_chain_map_ops,
             [GHM_MAP_TWO_LEVEL] = &ghm_cpu_two_level_map_ops},
    .set = &ghm_cpu_set_ops,
    .multimap = &ghm_cpu_multimap_ops,
    .index = &ghm_cpu_index_ops,
    .sorted = &ghm_cpu_sorted_ops,
    .dynmap = &ghm_cpu_dynmap_ops,
    .dist = &ghm_cpu_dist_ops,
};
