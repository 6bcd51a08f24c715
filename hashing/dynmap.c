/*
 * dynmap.c - GhmDynmap's public API: argument checks (items whose first 8 bytes are zero
 * included, for items in host memory; the CUDA backend checks device arrays itself) and
 * dispatch to the context backend's op table; erase_if's listing path for a backend without a
 * pass of its own.
 */
#include "ghm_dynmap.h"

#include <stdlib.h>
#include <string.h>

#include "dynmap_internal.h"

struct GhmDynmap {
    GhmContext *ctx;
    const GhmDynmapOps *ops;
    void *impl;
    int item_words, key_words;
};

static const char *const variant_names[GHM_DYNMAP_VARIANTS] = {
    [GHM_DYNMAP_ATOMIC64] = "atomic64",
    [GHM_DYNMAP_ACCEL32] = "accel32",
    [GHM_DYNMAP_ACCEL8] = "accel8",
};

const char *ghm_dynmap_variant_name(GhmDynmapVariant variant)
{
    return (unsigned)variant < GHM_DYNMAP_VARIANTS ? variant_names[variant] : NULL;
}

int ghm_dynmap_variant_from_name(const char *name)
{
    for (int i = 0; name && i < GHM_DYNMAP_VARIANTS; i++)
        if (strcmp(name, variant_names[i]) == 0)
            return i;
    return -1;
}

GhmDynmapOptions ghm_dynmap_defaults(void)
{
    GhmDynmapOptions o = {.item_words = 6, .key_words = 0, .capacity = 0,
                          .variant = GHM_DYNMAP_ATOMIC64};
    return o;
}

int ghm_dynmap_create(GhmContext *ctx, const GhmDynmapOptions *opt, GhmDynmap **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !opt || !out || opt->item_words < 1 || opt->item_words > GHM_DYNMAP_MAX_WORDS ||
        opt->key_words < 0 || opt->key_words > opt->item_words ||
        (unsigned)opt->variant >= GHM_DYNMAP_VARIANTS)
        return GHM_ERR_INVALID;
    const GhmDynmapOps *ops = ctx->backend->dynmap;
    if (!ops)
        return GHM_ERR_UNSUPPORTED;
    GhmDynmap *dm = calloc(1, sizeof *dm);
    if (!dm)
        return GHM_ERR_NOMEM;
    GhmDynmapOptions o = *opt;
    if (o.key_words == 0)
        o.key_words = o.item_words;
    dm->ctx = ctx;
    dm->ops = ops;
    dm->item_words = o.item_words;
    dm->key_words = o.key_words;
    int ret = ops->create(ctx, &o, &dm->impl);
    if (ret < 0) {
        free(dm);
        return ret;
    }
    *out = dm;
    return GHM_OK;
}

int ghm_dynmap_insert(GhmDynmap *dm, const uint32_t *items, size_t n, GhmDynmapHandle *handles,
                      uint8_t *inserted)
{
    if (!dm || (n && !items))
        return GHM_ERR_INVALID;
    if (n > GHM_DYNMAP_MAX_BATCH) /* the duplicate table's positions are 32-bit */
        return GHM_ERR_TOO_LARGE;
    size_t w = (size_t)dm->item_words;
    int one = dm->item_words == 1;
    /* Items in device memory (CUDA) are checked by the backend, before it changes anything. */
    int on_device = dm->ctx->backend->kind != GHM_BACKEND_CPU && n &&
                    dm->ctx->backend->in_place(items);
    for (size_t i = 0; i < n && !on_device; i++)
        if (items[i * w] == 0 && (one || items[i * w + 1] == 0))
            return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    return dm->ops->insert(dm->impl, items, n, handles, inserted);
}

int ghm_dynmap_erase(GhmDynmap *dm, const uint32_t *keys, size_t n, uint8_t *erased)
{
    if (!dm || (n && !keys))
        return GHM_ERR_INVALID;
    if (n > GHM_DYNMAP_MAX_BATCH)
        return GHM_ERR_TOO_LARGE;
    if (n == 0)
        return GHM_OK;
    return dm->ops->erase(dm->impl, keys, n, erased);
}

/* erase_if where the backend has no pass of its own: every item listed, tested here, erased by
 * key (the keys packed in place over the items, key_words <= item_words). */
static int erase_if_listed(GhmDynmap *dm, GhmDynmapTest test, void *user, size_t *erased)
{
    size_t n = ghm_dynmap_size(dm), w = (size_t)dm->item_words, kw = (size_t)dm->key_words;
    uint32_t *items = malloc((n ? n : 1) * w * sizeof *items);
    if (!items)
        return GHM_ERR_NOMEM;
    int ret = ghm_dynmap_items(dm, items, NULL, n, &n);
    size_t m = 0;
    for (size_t i = 0; i < n && ret == GHM_OK; i++)
        if (test(items + i * w, user))
            memmove(items + m++ * kw, items + i * w, kw * sizeof *items);
    if (ret == GHM_OK)
        ret = ghm_dynmap_erase(dm, items, m, NULL);
    free(items);
    *erased = ret == GHM_OK ? m : 0;
    return ret;
}

int ghm_dynmap_erase_if(GhmDynmap *dm, GhmDynmapTest test, void *user, size_t *erased)
{
    if (!dm || !test)
        return GHM_ERR_INVALID;
    size_t gone = 0;
    int ret = dm->ops->erase_if ? dm->ops->erase_if(dm->impl, test, user, &gone)
                                : erase_if_listed(dm, test, user, &gone);
    if (erased)
        *erased = gone;
    return ret;
}

int ghm_dynmap_find(const GhmDynmap *dm, const uint32_t *keys, size_t n,
                    GhmDynmapHandle *handles, uint32_t *items_out)
{
    if (!dm || (n && !keys))
        return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    return dm->ops->find(dm->impl, keys, n, handles, items_out);
}

int ghm_dynmap_read(const GhmDynmap *dm, const GhmDynmapHandle *handles, size_t n,
                    uint32_t *items_out)
{
    if (!dm || (n && (!handles || !items_out)))
        return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    return dm->ops->read(dm->impl, handles, n, items_out);
}

int ghm_dynmap_preload(const GhmDynmap *dm)
{
    if (!dm)
        return GHM_ERR_INVALID;
    return dm->ops->preload ? dm->ops->preload(dm->impl) : GHM_OK;
}

int ghm_dynmap_items(const GhmDynmap *dm, uint32_t *items_out, GhmDynmapHandle *handles_out,
                     size_t cap, size_t *count)
{
    if (!dm || !count || (cap && !items_out))
        return GHM_ERR_INVALID;
    *count = dm->ops->size(dm->impl);
    if (!dm->ops->items)
        return GHM_ERR_UNSUPPORTED;
    if (*count > cap)
        return GHM_ERR_TOO_LARGE;
    return *count ? dm->ops->items(dm->impl, items_out, handles_out, cap, count) : GHM_OK;
}

size_t ghm_dynmap_size(const GhmDynmap *dm) { return dm ? dm->ops->size(dm->impl) : 0; }

int ghm_dynmap_gc(GhmDynmap *dm, size_t *released)
{
    if (!dm)
        return GHM_ERR_INVALID;
    size_t r = 0;
    int ret = dm->ops->gc(dm->impl, &r);
    if (released)
        *released = r;
    return ret;
}

int ghm_dynmap_stats(const GhmDynmap *dm, GhmDynmapStats *out)
{
    if (!dm || !out)
        return GHM_ERR_INVALID;
    return dm->ops->stats(dm->impl, out);
}

void ghm_dynmap_free(GhmDynmap **dm)
{
    if (!dm || !*dm)
        return;
    (*dm)->ops->destroy((*dm)->impl);
    free(*dm);
    *dm = NULL;
}
