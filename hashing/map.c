/*
 * map.c - GhmMap's public API: option defaults and checks, then dispatch through the context's
 * backend (the CPU table: map_cpu.c and map_cpu_insert.c; the CUDA table: kernels/hashing/map*.cu).
 * Both backends hash with hash_family.h, so they draw the same constants for a seed.
 */
#include "ghm_map.h"

#include <stdlib.h>

#include "ghm_backend_internal.h"
#include "hash_internal.h"

struct GhmMap {
    GhmContext *ctx;
    const GhmMapOps *ops;
    void *impl;
};

#define DEFAULT_LOAD 0.8
#define MAX_LOAD 0.99

GhmMapOptions ghm_map_defaults(void)
{
    GhmMapOptions opt = {
        .load_factor = 0.0, .layout = GHM_MAP_BUCKETED, .hash_functions = 0, .max_rebuilds = 8};
    return opt;
}

/* Fills in the layout defaults, so that every backend receives complete options. */
static int resolve_options(const GhmMapOptions *in, GhmMapOptions *out)
{
    *out = *in;
    if (!(in->load_factor >= 0.0 && in->load_factor <= MAX_LOAD) || in->max_rebuilds < 0 ||
        in->max_rebuilds > GHM_MAP_MAX_REBUILDS)
        return GHM_ERR_INVALID;
    if (out->load_factor == 0.0)
        out->load_factor = DEFAULT_LOAD;
    if (in->layout == GHM_MAP_BUCKETED) {
        if (out->hash_functions == 0)
            out->hash_functions = 2;
        return out->hash_functions == 2 || out->hash_functions == 3 ? GHM_OK : GHM_ERR_INVALID;
    }
    if (in->layout == GHM_MAP_THESIS) {
        if (out->hash_functions == 0)
            out->hash_functions = 4;
        return out->hash_functions >= 2 && out->hash_functions <= GHMI_MAX_HASH ? GHM_OK
                                                                               : GHM_ERR_INVALID;
    }
    return GHM_ERR_INVALID;
}

int ghm_map_create(GhmContext *ctx, const GhmMapOptions *opt, GhmMap **out)
{
    if (!ctx || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmMapOptions full;
    int ret = resolve_options(opt ? opt : &(GhmMapOptions){.max_rebuilds = 8}, &full);
    if (ret < 0)
        return ret;
    const GhmMapOps *ops = ctx->backend->map;
    if (!ops)
        return GHM_ERR_UNSUPPORTED;
    GhmMap *map = calloc(1, sizeof *map);
    if (!map)
        return GHM_ERR_NOMEM;
    map->ctx = ctx;
    map->ops = ops;
    if ((ret = ops->create(ctx, &full, &map->impl)) < 0) {
        free(map);
        return ret;
    }
    *out = map;
    return GHM_OK;
}

int ghm_map_build(GhmMap *map, const uint32_t *keys, const uint32_t *values, size_t n)
{
    if (!map || (n && (!keys || !values)))
        return GHM_ERR_INVALID;
    return map->ops->build(map->impl, keys, values, n);
}

int ghm_map_find(const GhmMap *map, const uint32_t *keys, size_t n, uint32_t *out)
{
    if (!map || (n && (!keys || !out)))
        return GHM_ERR_INVALID;
    return map->ops->find(map->impl, keys, n, out);
}

int ghm_map_stats(const GhmMap *map, GhmMapStats *out)
{
    if (!map || !out)
        return GHM_ERR_INVALID;
    return map->ops->stats(map->impl, out);
}

void ghm_map_free(GhmMap **map)
{
    if (!map || !*map)
        return;
    (*map)->ops->destroy((*map)->impl);
    free(*map);
    *map = NULL;
}
