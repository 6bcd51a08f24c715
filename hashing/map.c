/*
 * map.c - GhmMap's public API: option defaults and checks, then dispatch through the op table of
 * the context's backend for the chosen scheme (cuckoo: map_cpu.c and map_cpu_insert.c, and
 * kernels/hashing/map*.cu; open addressing: map_open_cpu.c and kernels/hashing/map_open.cu;
 * Robin Hood: map_robin_cpu.c and kernels/hashing/map_robin.cu; chaining: map_chain_cpu.c and
 * kernels/hashing/map_chain.cu; two-level cuckoo: map_two_level_cpu.c and
 * kernels/hashing/map_two_level.cu). Both backends hash with hash_family.h and probe with
 * probe_family.h (two-level: two_level_family.h), so they draw the same constants for a seed.
 */
#include "ghm_map.h"

#include <stdlib.h>
#include <string.h>

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
    GhmMapOptions opt = {.load_factor = 0.0,
                         .layout = GHM_MAP_BUCKETED,
                         .hash_functions = 0,
                         .max_rebuilds = 8,
                         .scheme = GHM_MAP_CUCKOO};
    return opt;
}

static const char *const scheme_names[GHM_MAP_SCHEMES] = {
    [GHM_MAP_CUCKOO] = "cuckoo",
    [GHM_MAP_LINEAR] = "linear",
    [GHM_MAP_QUADRATIC] = "quadratic",
    [GHM_MAP_DOUBLE] = "double",
    [GHM_MAP_ROBIN_HOOD] = "robin-hood",
    [GHM_MAP_ROBIN_HOOD_RANDOM] = "robin-hood-random",
    [GHM_MAP_CHAINING] = "chaining",
    [GHM_MAP_TWO_LEVEL] = "two-level",
};

const char *ghm_map_scheme_name(GhmMapScheme scheme)
{
    return (unsigned)scheme < GHM_MAP_SCHEMES ? scheme_names[scheme] : NULL;
}

int ghm_map_scheme_from_name(const char *name)
{
    for (int i = 0; name && i < GHM_MAP_SCHEMES; i++)
        if (scheme_names[i] && strcmp(name, scheme_names[i]) == 0)
            return i;
    return -1;
}

/* Fills in the layout defaults, so that every backend receives complete options. */
static int resolve_options(const GhmMapOptions *in, GhmMapOptions *out)
{
    *out = *in;
    if (!(in->load_factor >= 0.0 && in->load_factor <= MAX_LOAD) || in->max_rebuilds < 0 ||
        in->max_rebuilds > GHM_MAP_MAX_REBUILDS || (unsigned)in->scheme >= GHM_MAP_SCHEMES)
        return GHM_ERR_INVALID;
    if (in->scheme == GHM_MAP_TWO_LEVEL) {
        if (out->load_factor == 0.0)
            out->load_factor = GHM_MAP_TWO_LEVEL_MAX_LOAD;
        if (out->load_factor > GHM_MAP_TWO_LEVEL_MAX_LOAD)
            return GHM_ERR_INVALID;
    }
    if (out->load_factor == 0.0)
        out->load_factor = DEFAULT_LOAD;
    if (in->scheme != GHM_MAP_CUCKOO) /* one probe sequence each: nothing else to choose */
        return in->hash_functions == 0 && in->layout == GHM_MAP_BUCKETED ? GHM_OK
                                                                         : GHM_ERR_INVALID;
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
    GhmMapOptions defaults = ghm_map_defaults();
    int ret = resolve_options(opt ? opt : &defaults, &full);
    if (ret < 0)
        return ret;
    const GhmMapOps *ops = ctx->backend->maps[full.scheme];
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

int ghmi_map_find_queued(const GhmMap *map, const uint32_t *keys, size_t n, uint32_t *out)
{
    if (!map || (n && (!keys || !out)))
        return GHM_ERR_INVALID;
    if (!map->ops->find_queued)
        return map->ops->find(map->impl, keys, n, out);
    return map->ops->find_queued(map->impl, keys, n, out);
}

int ghmi_map_build_after(GhmMap *map, const uint32_t *keys, const uint32_t *values, size_t ready,
                         size_t n, int (*wait)(void *arg), void *arg)
{
    if (!map || ready > n || (n && (!keys || !values)))
        return GHM_ERR_INVALID;
    if (map->ops->build_after)
        return map->ops->build_after(map->impl, keys, values, ready, n, wait, arg);
    int ret = wait(arg);
    return ret < 0 ? ret : map->ops->build(map->impl, keys, values, n);
}

int ghm_map_stats(const GhmMap *map, GhmMapStats *out)
{
    if (!map || !out)
        return GHM_ERR_INVALID;
    memset(out, 0, sizeof *out);
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
