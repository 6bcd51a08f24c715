/*
 * dynmap_runs.c - the GhmDynmap suites' reference runs (dynmap_runs.h).
 */
#include <stdlib.h>
#include <string.h>

#include "dynmap_runs.h"
#include "ghm_backend_internal.h"
#include "test_support.h"

void ghm_test_dyn_item(uint32_t id, int w, int mode, uint32_t *out)
{
    uint64_t a = ghmi_mix64(id);
    if (w == 1) {
        out[0] = id + 1;
        return;
    }
    out[0] = (uint32_t)a;
    out[1] = (uint32_t)(a >> 32);
    for (int j = 2; j < w; j++)
        out[j] = (uint32_t)ghmi_mix64(a + (uint64_t)j);
    if (mode == MODE_SHARED_HEAD && w >= 3) {
        out[0] = 7;
        out[1] = id % 5 + 1;
        out[2] = id;
    }
    if (out[0] == 0 && out[1] == 0)
        out[0] = 1;
}

GhmBackendKind ghm_test_dyn_backend = GHM_BACKEND_CPU;

GhmContext *ghm_test_dyn_context(int threads)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = ghm_test_dyn_backend;
    opt.threads = threads;
    GhmContext *ctx = NULL;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_OK);
    return ctx;
}

GhmDynmapVariant ghm_test_dyn_variant = GHM_DYNMAP_ATOMIC64;

GhmDynmap *ghm_test_dyn_table(GhmContext *ctx, int w, int key_words, size_t capacity)
{
    GhmDynmapOptions opt = ghm_dynmap_defaults();
    opt.variant = ghm_test_dyn_variant;
    opt.item_words = w;
    opt.key_words = key_words;
    opt.capacity = capacity;
    GhmDynmap *dm = NULL;
    ck_assert_int_eq(ghm_dynmap_create(ctx, &opt, &dm), GHM_OK);
    return dm;
}

void ghm_test_run_init(GhmTestRun *r, GhmDynmap *dm, int w, int mode, uint32_t universe,
                       size_t batch)
{
    memset(r, 0, sizeof *r);
    r->dm = dm;
    r->w = w;
    r->mode = mode;
    r->universe = universe;
    r->present = calloc(universe, 1);
    r->handle = malloc(universe * sizeof *r->handle);
    size_t m = batch > universe ? batch : universe;
    r->ids = malloc(m * sizeof *r->ids);
    r->items = malloc(m * (size_t)w * sizeof *r->items);
    r->out = malloc(m * sizeof *r->out);
    r->flags = malloc(m);
    r->found_items = malloc(m * (size_t)w * sizeof *r->found_items);
    ck_assert(r->present && r->handle && r->ids && r->items && r->out && r->flags &&
              r->found_items);
}

void ghm_test_run_free(GhmTestRun *r)
{
    free(r->present);
    free(r->handle);
    free(r->ids);
    free(r->items);
    free(r->out);
    free(r->flags);
    free(r->found_items);
}

static void fill_items(GhmTestRun *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ghm_test_dyn_item(r->ids[i], r->w, r->mode, r->items + i * (size_t)r->w);
}

void ghm_test_run_insert(GhmTestRun *r, size_t n)
{
    fill_items(r, n);
    ck_assert_int_eq(ghm_dynmap_insert(r->dm, r->items, n, r->out, r->flags), GHM_OK);
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = r->ids[i];
        int ok;
        if (r->present[id]) {
            ok = !r->flags[i] && r->out[i] == r->handle[id];
        } else {
            ok = r->flags[i] && r->out[i] != GHM_DYNMAP_NO_HANDLE;
            r->present[id] = 1;
            r->handle[id] = r->out[i];
            r->count++;
        }
        if (!ok && bad++ == 0)
            first_bad = i;
    }
    ck_assert_msg(bad == 0, "insert: %zu of %zu answers wrong, first at %zu", bad, n, first_bad);
    ck_assert_uint_eq(ghm_dynmap_size(r->dm), r->count);
}

void ghm_test_run_erase(GhmTestRun *r, size_t n)
{
    fill_items(r, n);
    ck_assert_int_eq(ghm_dynmap_erase(r->dm, r->items, n, r->flags), GHM_OK);
    size_t bad = 0, first_bad = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = r->ids[i];
        int expect = r->present[id];
        if (expect) {
            r->present[id] = 0;
            r->count--;
        }
        if (r->flags[i] != expect && bad++ == 0)
            first_bad = i;
    }
    ck_assert_msg(bad == 0, "erase: %zu of %zu flags wrong, first at %zu", bad, n, first_bad);
    ck_assert_uint_eq(ghm_dynmap_size(r->dm), r->count);
}

static int cmp_handle(const void *a, const void *b)
{
    GhmDynmapHandle x = *(const GhmDynmapHandle *)a, y = *(const GhmDynmapHandle *)b;
    return (x > y) - (x < y);
}

void ghm_test_run_gc(GhmTestRun *r, size_t *released)
{
    size_t m = 0, held = 0;
    GhmDynmapHandle *slab = malloc((r->count + 1) * sizeof *slab);
    ck_assert_ptr_nonnull(slab);
    ck_assert_int_eq(ghm_dynmap_gc(r->dm, released), GHM_OK);
    for (uint32_t id = 0; id < r->universe; id++)
        if (r->present[id])
            slab[m++] = r->handle[id] >> 32;
    qsort(slab, m, sizeof *slab, cmp_handle);
    for (size_t i = 0; i < m; i++)
        held += i == 0 || slab[i] != slab[i - 1];
    GhmDynmapStats st;
    ck_assert_int_eq(ghm_dynmap_stats(r->dm, &st), GHM_OK);
    ck_assert_uint_eq(st.slabs_used, held);
    free(slab);
}

/* ghm_dynmap_items lists each stored item once: its handles are the stored ones, and each
 * listed item is the one at its handle. */
static void run_check_items(GhmTestRun *r)
{
    size_t n = 0, w = (size_t)r->w, cap = r->count;
    uint32_t *items = malloc((cap * w + 1) * sizeof *items);
    uint32_t *read = malloc((cap * w + 1) * sizeof *read);
    GhmDynmapHandle *got = malloc((cap + 1) * sizeof *got);
    GhmDynmapHandle *want = malloc((cap + 1) * sizeof *want);
    ck_assert(items && read && got && want);
    if (cap > 0)
        ck_assert_int_eq(ghm_dynmap_items(r->dm, items, got, cap - 1, &n), GHM_ERR_TOO_LARGE);
    ck_assert_int_eq(ghm_dynmap_items(r->dm, items, got, cap, &n), GHM_OK);
    ck_assert_uint_eq(n, r->count);
    ck_assert_int_eq(ghm_dynmap_read(r->dm, got, n, read), GHM_OK);
    ck_assert(memcmp(items, read, n * w * sizeof *items) == 0);
    size_t m = 0;
    for (uint32_t id = 0; id < r->universe; id++)
        if (r->present[id])
            want[m++] = r->handle[id];
    qsort(got, n, sizeof *got, cmp_handle);
    qsort(want, m, sizeof *want, cmp_handle);
    CHECK_EACH(n, got[i] == want[i]);
    free(items);
    free(read);
    free(got);
    free(want);
}

void ghm_test_run_check_all(GhmTestRun *r)
{
    size_t u = r->universe, w = (size_t)r->w;
    for (uint32_t id = 0; id < u; id++)
        r->ids[id] = id;
    fill_items(r, u);
    ck_assert_int_eq(ghm_dynmap_find(r->dm, r->items, u, r->out, r->found_items), GHM_OK);
    CHECK_EACH(u, r->present[i] ? r->out[i] == r->handle[i] : r->out[i] == GHM_DYNMAP_NO_HANDLE);
    CHECK_EACH(u * w, r->present[i / w] ? r->found_items[i] == r->items[i]
                                        : r->found_items[i] == 0);
    /* Reading by handle gives the same items. */
    size_t m = 0;
    for (uint32_t id = 0; id < u; id++)
        if (r->present[id])
            r->out[m++] = r->handle[id];
    ck_assert_int_eq(ghm_dynmap_read(r->dm, r->out, m, r->found_items), GHM_OK);
    m = 0;
    size_t bad = 0;
    for (uint32_t id = 0; id < u; id++)
        if (r->present[id])
            bad += memcmp(r->found_items + m++ * w, r->items + (size_t)id * w, w * 4) != 0;
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(ghm_dynmap_size(r->dm), r->count);
    run_check_items(r);
}

int ghm_test_dyn_pick(int i)
{
    ghm_test_dyn_variant = (GhmDynmapVariant)(i % GHM_DYNMAP_VARIANTS);
    ghm_test_dyn_backend = i / GHM_DYNMAP_VARIANTS ? GHM_BACKEND_CUDA : GHM_BACKEND_CPU;
    return ghm_test_dyn_backend == GHM_BACKEND_CPU || ghm_test_have_cuda();
}

void ghm_test_random_ids(GhmTestRun *r, size_t n, uint64_t *s)
{
    for (size_t i = 0; i < n; i++)
        r->ids[i] = rng_next(s) % r->universe;
}

void ghm_test_random_rounds(GhmContext *ctx, int w, int mode, uint32_t universe, size_t first,
                            size_t batch, int rounds, int check_every)
{
    GhmDynmap *dm = ghm_test_dyn_table(ctx, w, 0, universe / 2);
    GhmTestRun r;
    ghm_test_run_init(&r, dm, w, mode, universe, first > batch ? first : batch);
    uint64_t s = 0x1234u + (uint64_t)w * 77 + (uint64_t)mode;
    ghm_test_random_ids(&r, first, &s);
    ghm_test_run_insert(&r, first);
    ghm_test_run_check_all(&r);
    for (int k = 0; k < rounds; k++) {
        size_t ni = 1 + rng_next(&s) % batch, ne = 1 + rng_next(&s) % batch;
        ghm_test_random_ids(&r, ni, &s);
        ghm_test_run_insert(&r, ni);
        ghm_test_random_ids(&r, ne, &s);
        ghm_test_run_erase(&r, ne);
        if (k % check_every == check_every - 1)
            ghm_test_run_check_all(&r);
        if (k % 4 == 3) {
            size_t released = 0;
            ghm_test_run_gc(&r, &released);
        }
    }
    size_t released = 0;
    ghm_test_run_gc(&r, &released);
    ghm_test_run_check_all(&r);
    GhmDynmapStats st;
    ck_assert_int_eq(ghm_dynmap_stats(dm, &st), GHM_OK);
    ck_assert_uint_eq(st.items, r.count);
    ck_assert_uint_ge(st.slabs_used * st.slots_per_slab, r.count);
    ck_assert_uint_gt(st.bytes, st.slabs_used * 128);
    ghm_test_run_free(&r);
    ghm_dynmap_free(&dm);
    ck_assert_ptr_null(dm);
}
