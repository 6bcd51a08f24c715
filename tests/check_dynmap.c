/* check_dynmap.c - GhmDynmap against a simple reference (dynmap_runs.c: items made from ids of a
 * universe [0, U), and per id whether it is stored and its handle). Round trips of
 * random batches (inserts with duplicates in and across batches, erases, finds), stable handles
 * across later inserts, erases and garbage collection, item sizes 1 to 10 words, items sharing
 * their first 8 bytes, keys shorter than the item, every item listed once (ghm_dynmap_items),
 * erase_if, bad arguments, thread counts, the CPU insert's bucket order; the Atomic64, Accel32
 * and Accel8 variants. The "cuda" case runs the same scenarios on the CUDA backend, and runs
 * the same batches on both backends side by side, comparing every answer (flags, found or not,
 * items, sizes) item by item; handles are compared within a backend only (which slab a warp or
 * a thread gets differs), and device arrays as inputs and outputs. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynmap_internal.h"
#include "dynmap_runs.h"
#include "ghm_backend_internal.h"
#include "ghm_dynmap.h"
#include "test_support.h"

START_TEST(test_round_trip_large)
{
    ghm_test_dyn_backend = GHM_BACKEND_CPU;
    GhmContext *ctx = ghm_test_dyn_context(0);
    /* About 10^6 items of 6 words after the first batch of 1.3 M ids (with repeats). */
    ghm_test_random_rounds(ctx, 6, MODE_MIXED, 1u << 21, 1300000, 200000, 12, 4);
    ghm_test_dyn_variant = GHM_DYNMAP_ACCEL32;
    ghm_test_random_rounds(ctx, 6, MODE_SHARED_HEAD, 1u << 20, 650000, 100000, 8, 4);
    ghm_test_dyn_variant = GHM_DYNMAP_ACCEL8; /* 255 tags: many equal ones in a bucket */
    ghm_test_random_rounds(ctx, 2, MODE_MIXED, 1u << 20, 650000, 100000, 8, 4);
    ghm_test_dyn_variant = GHM_DYNMAP_ATOMIC64;
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_item_sizes)
{
    if (!ghm_test_dyn_pick(_i))
        return;
    GhmContext *ctx = ghm_test_dyn_context(0);
    for (int v = 0; v < GHM_DYNMAP_VARIANTS; v++) {
        ghm_test_dyn_variant = (GhmDynmapVariant)v;
        for (int w = 1; w <= GHM_DYNMAP_MAX_WORDS; w++)
            for (int mode = 0; mode < 2; mode++)
                ghm_test_random_rounds(ctx, w, mode, 40000, 30000, 8000, 12, 3);
    }
    ghm_test_dyn_variant = GHM_DYNMAP_ATOMIC64;
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_duplicates)
{
    if (!ghm_test_dyn_pick(_i))
        return;
    GhmContext *ctx = ghm_test_dyn_context(4);
    for (int w = 1; w <= GHM_DYNMAP_MAX_WORDS; w += 3) {
        GhmDynmap *dm = ghm_test_dyn_table(ctx, w, 0, 0);
        enum { N = 10000 };
        uint32_t *items = malloc((size_t)N * w * sizeof *items);
        GhmDynmapHandle *h = malloc(N * sizeof *h), *h2 = malloc(N * sizeof *h2);
        uint8_t *ins = malloc(N);
        ck_assert(items && h && h2 && ins);
        /* 10000 copies of 7 items: each stored once, its first occurrence flagged. */
        for (size_t i = 0; i < N; i++)
            ghm_test_dyn_item((uint32_t)((i * 2654435761u) % 7), w, MODE_MIXED, items + i * w);
        ck_assert_int_eq(ghm_dynmap_insert(dm, items, N, h, ins), GHM_OK);
        ck_assert_uint_eq(ghm_dynmap_size(dm), 7);
        size_t flagged = 0;
        for (size_t i = 0; i < N; i++) {
            size_t first = 0;
            while (memcmp(items + first * w, items + i * w, (size_t)w * 4))
                first++;
            ck_assert_uint_eq(ins[i], first == i);
            ck_assert(h[i] == h[first]);
            flagged += ins[i];
        }
        ck_assert_uint_eq(flagged, 7);
        /* Again: nothing new, the same handles. */
        ck_assert_int_eq(ghm_dynmap_insert(dm, items, N, h2, ins), GHM_OK);
        ck_assert_uint_eq(ghm_dynmap_size(dm), 7);
        CHECK_EACH(N, h2[i] == h[i] && ins[i] == 0);
        /* An erase batch with repeats erases each once, flagging the first occurrence. */
        ck_assert_int_eq(ghm_dynmap_erase(dm, items, N, ins), GHM_OK);
        ck_assert_uint_eq(ghm_dynmap_size(dm), 0);
        size_t erased = 0;
        for (size_t i = 0; i < N; i++)
            erased += ins[i];
        ck_assert_uint_eq(erased, 7);
        free(items);
        free(h);
        free(h2);
        free(ins);
        ghm_dynmap_free(&dm);
    }
    ghm_context_free(&ctx);
}
END_TEST

/* key_words 2 of 5: the first item of a key in a batch wins; later payloads do not overwrite. */
START_TEST(test_short_keys)
{
    if (!ghm_test_dyn_pick(_i))
        return;
    GhmContext *ctx = ghm_test_dyn_context(2);
    GhmDynmap *dm = ghm_test_dyn_table(ctx, 5, 2, 0);
    uint32_t items[4 * 5] = {1, 2, 10, 11, 12, /* leader of key (1,2) */
                             3, 0, 20, 21, 22, /* key (3,0) */
                             1, 2, 30, 31, 32, /* same key, another payload */
                             0, 4, 40, 41, 42};
    GhmDynmapHandle h[4];
    uint8_t ins[4];
    ck_assert_int_eq(ghm_dynmap_insert(dm, items, 4, h, ins), GHM_OK);
    ck_assert_uint_eq(ghm_dynmap_size(dm), 3);
    ck_assert(ins[0] && ins[1] && !ins[2] && ins[3]);
    ck_assert(h[2] == h[0]);
    uint32_t keys[3 * 2] = {1, 2, 0, 4, 9, 9}, out[3 * 5];
    GhmDynmapHandle fh[3];
    ck_assert_int_eq(ghm_dynmap_find(dm, keys, 3, fh, out), GHM_OK);
    ck_assert(fh[0] == h[0] && fh[1] == h[3] && fh[2] == GHM_DYNMAP_NO_HANDLE);
    ck_assert_mem_eq(out, items, 5 * 4);
    ck_assert_mem_eq(out + 5, items + 15, 5 * 4);
    uint32_t again[5] = {1, 2, 50, 51, 52};
    ck_assert_int_eq(ghm_dynmap_insert(dm, again, 1, h, ins), GHM_OK);
    ck_assert(!ins[0] && h[0] == fh[0]);
    ck_assert_int_eq(ghm_dynmap_read(dm, h, 1, out), GHM_OK);
    ck_assert_mem_eq(out, items, 5 * 4);
    ck_assert_int_eq(ghm_dynmap_erase(dm, keys, 3, ins), GHM_OK);
    ck_assert(ins[0] && ins[1] && !ins[2]);
    ck_assert_uint_eq(ghm_dynmap_size(dm), 1);
    ghm_dynmap_free(&dm);
    ghm_context_free(&ctx);
}
END_TEST

/* r's batch: the ids first .. first + n - 1. */
static void id_range(GhmTestRun *r, uint32_t first, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        r->ids[i] = first + i;
}

/* Handles stay put across later inserts, erases of other items and gc; gc returns empty slabs,
 * and the allocator hands them out again. */
START_TEST(test_stable_handles_and_gc)
{
    if (!ghm_test_dyn_pick(_i))
        return;
    GhmContext *ctx = ghm_test_dyn_context(0);
    GhmDynmap *dm = ghm_test_dyn_table(ctx, 6, 0, 1000);
    GhmTestRun r;
    ghm_test_run_init(&r, dm, 6, MODE_MIXED, 200000, 200000);
    id_range(&r, 0, 50000);
    ghm_test_run_insert(&r, 50000);
    GhmDynmapHandle *keep = malloc(50000 * sizeof *keep);
    ck_assert_ptr_nonnull(keep);
    memcpy(keep, r.handle, 50000 * sizeof *keep);
    /* Many more items into the same buckets (the table was sized for 1000). */
    id_range(&r, 50000, 150000);
    ghm_test_run_insert(&r, 150000);
    GhmDynmapStats full;
    ck_assert_int_eq(ghm_dynmap_stats(dm, &full), GHM_OK);
    /* Erase all the later items and every other early one, collect. */
    id_range(&r, 50000, 150000);
    ghm_test_run_erase(&r, 150000);
    for (uint32_t i = 0; i < 25000; i++)
        r.ids[i] = 2 * i + 1;
    ghm_test_run_erase(&r, 25000);
    size_t released = 0;
    ghm_test_run_gc(&r, &released);
    ck_assert_uint_gt(released, 0);
    GhmDynmapStats after;
    ck_assert_int_eq(ghm_dynmap_stats(dm, &after), GHM_OK);
    ck_assert_uint_eq(after.slabs_used, full.slabs_used - released);
    ck_assert_uint_eq(after.slabs_used + after.slabs_free, full.slabs_used + full.slabs_free);
    CHECK_EACH(25000, r.handle[2 * i] == keep[2 * i]);
    ghm_test_run_check_all(&r);
    /* The freed slabs are reused: inserting again needs no new super block. */
    id_range(&r, 100000, 25000);
    ghm_test_run_insert(&r, 25000);
    GhmDynmapStats again;
    ck_assert_int_eq(ghm_dynmap_stats(dm, &again), GHM_OK);
    ck_assert_uint_eq(again.bytes, after.bytes);
    CHECK_EACH(25000, r.handle[2 * i] == keep[2 * i]);
    ghm_test_run_check_all(&r);
    /* Everything erased: gc leaves no slab in use. */
    id_range(&r, 0, 200000);
    ghm_test_run_erase(&r, 200000);
    ghm_test_run_gc(&r, &released);
    ck_assert_int_eq(ghm_dynmap_stats(dm, &after), GHM_OK);
    ck_assert_uint_eq(after.slabs_used, 0);
    ck_assert_uint_eq(ghm_dynmap_size(dm), 0);
    ghm_test_run_check_all(&r);
    free(keep);
    ghm_test_run_free(&r);
    ghm_dynmap_free(&dm);
    ghm_context_free(&ctx);
}
END_TEST

/* gc after erases that each empty slabs (of some buckets twice) returns every empty slab: a
 * table of many buckets where they are a few of them, then everything erased. */
/* erase_if's test in the suite: items whose last word is a multiple of `every` (0: none),
 * counting its calls (made from several threads). */
typedef struct EveryNth {
    int w;
    uint32_t every;
    _Atomic size_t calls;
} EveryNth;

static int every_nth(const uint32_t *item, void *user)
{
    EveryNth *t = user;
    atomic_fetch_add_explicit(&t->calls, 1, memory_order_relaxed);
    return t->every && item[t->w - 1] % t->every == 0;
}

/* erase_if against the reference: the items its test picks go (the count returned), the others
 * stay at their handles; gc returns the slabs it emptied; picking none and then every item. */
START_TEST(test_erase_if)
{
    if (!ghm_test_dyn_pick(_i))
        return;
    GhmContext *ctx = ghm_test_dyn_context(0);
    for (int w = 1; w <= GHM_DYNMAP_MAX_WORDS; w += 5) {
        GhmDynmap *dm = ghm_test_dyn_table(ctx, w, 0, 60000);
        GhmTestRun r;
        ghm_test_run_init(&r, dm, w, MODE_SHARED_HEAD, 80000, 80000);
        id_range(&r, 0, 80000);
        ghm_test_run_insert(&r, 80000);
        ck_assert_int_eq(ghm_dynmap_erase_if(NULL, every_nth, NULL, NULL), GHM_ERR_INVALID);
        ck_assert_int_eq(ghm_dynmap_erase_if(dm, NULL, NULL, NULL), GHM_ERR_INVALID);
        static const uint32_t every[3] = {3, 0, 1}; /* a third, none, all */
        for (int k = 0; k < 3; k++) {
            EveryNth t = {w, every[k], 0};
            size_t stored = r.count, erased = 1, expect = 0;
            uint32_t item[GHM_DYNMAP_MAX_WORDS];
            for (uint32_t id = 0; id < r.universe; id++) {
                ghm_test_dyn_item(id, w, MODE_SHARED_HEAD, item);
                if (r.present[id] && t.every && item[w - 1] % t.every == 0) {
                    r.present[id] = 0;
                    r.count--;
                    expect++;
                }
            }
            ck_assert_int_eq(ghm_dynmap_erase_if(dm, every_nth, &t, &erased), GHM_OK);
            ck_assert_uint_eq(erased, expect);
            ck_assert_uint_eq(atomic_load(&t.calls), stored);
            ck_assert_uint_eq(ghm_dynmap_size(dm), r.count);
            size_t released = 0;
            ghm_test_run_gc(&r, &released);
            ghm_test_run_check_all(&r);
        }
        ck_assert_uint_eq(r.count, 0);
        ghm_test_run_free(&r);
        ghm_dynmap_free(&dm);
    }
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_gc_after_erases)
{
    if (!ghm_test_dyn_pick(_i))
        return;
    GhmContext *ctx = ghm_test_dyn_context(0);
    GhmDynmap *dm = ghm_test_dyn_table(ctx, 6, 0, 400000);
    GhmTestRun r;
    ghm_test_run_init(&r, dm, 6, MODE_MIXED, 100000, 100000);
    id_range(&r, 0, 100000);
    ghm_test_run_insert(&r, 100000);
    uint64_t s = 7;
    size_t released = 0, total = 0;
    for (int round = 0; round < 3; round++) {
        for (int e = 0; e < 2; e++) {
            ghm_test_random_ids(&r, 3000, &s);
            ghm_test_run_erase(&r, 3000);
        }
        ghm_test_run_gc(&r, &released);
        total += released;
        ghm_test_run_check_all(&r);
    }
    ck_assert_uint_gt(total, 0);
    id_range(&r, 0, 100000);
    ghm_test_run_erase(&r, 100000);
    ghm_test_run_gc(&r, &released);
    ck_assert_uint_gt(released, 0);
    ck_assert_uint_eq(ghm_dynmap_size(dm), 0);
    ghm_test_run_free(&r);
    ghm_dynmap_free(&dm);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_bad_arguments)
{
    if (!ghm_test_dyn_pick(_i))
        return;
    GhmContext *ctx = ghm_test_dyn_context(1);
    GhmDynmapOptions opt = ghm_dynmap_defaults();
    GhmDynmap *dm = (GhmDynmap *)1;
    ck_assert_int_eq(ghm_dynmap_create(NULL, &opt, &dm), GHM_ERR_INVALID);
    ck_assert_ptr_null(dm);
    ck_assert_int_eq(ghm_dynmap_create(ctx, NULL, &dm), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_create(ctx, &opt, NULL), GHM_ERR_INVALID);
    int bad_words[] = {0, -1, GHM_DYNMAP_MAX_WORDS + 1};
    for (int i = 0; i < 3; i++) {
        opt = ghm_dynmap_defaults();
        opt.item_words = bad_words[i];
        ck_assert_int_eq(ghm_dynmap_create(ctx, &opt, &dm), GHM_ERR_INVALID);
    }
    opt = ghm_dynmap_defaults();
    opt.key_words = opt.item_words + 1;
    ck_assert_int_eq(ghm_dynmap_create(ctx, &opt, &dm), GHM_ERR_INVALID);
    opt.key_words = -1;
    ck_assert_int_eq(ghm_dynmap_create(ctx, &opt, &dm), GHM_ERR_INVALID);
    opt = ghm_dynmap_defaults();
    opt.variant = (GhmDynmapVariant)7;
    ck_assert_int_eq(ghm_dynmap_create(ctx, &opt, &dm), GHM_ERR_INVALID);
    /* Slots per slab of each variant (dynmap_internal.h's layouts) at 1, 6 and 10 words. */
    static const int words[3] = {1, 6, 10}, slots[GHM_DYNMAP_VARIANTS][3] = {
        {30, 5, 3}, {15, 4, 2}, {24, 4, 2}};
    for (int v = 0; v < GHM_DYNMAP_VARIANTS; v++)
        for (int k = 0; k < 3; k++) {
            opt.variant = (GhmDynmapVariant)v;
            opt.item_words = words[k];
            GhmDynmapStats st;
            ck_assert_int_eq(ghm_dynmap_create(ctx, &opt, &dm), GHM_OK);
            ck_assert_int_eq(ghm_dynmap_stats(dm, &st), GHM_OK);
            ck_assert_uint_eq(st.slots_per_slab, slots[v][k]);
            ghm_dynmap_free(&dm);
        }
    ck_assert_ptr_null(dm);
    opt = ghm_dynmap_defaults();

    dm = ghm_test_dyn_table(ctx, 3, 0, 0);
    ck_assert_int_eq(ghm_dynmap_preload(NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_preload(dm), GHM_OK); /* nothing to load on the CPU */
    uint32_t items[3 * 3] = {1, 0, 5, 0, 0, 9, 0, 2, 3}; /* the second starts with 8 zero bytes */
    GhmDynmapHandle h[3] = {0};
    ck_assert_int_eq(ghm_dynmap_insert(dm, items, 3, h, NULL), GHM_ERR_INVALID);
    ck_assert_uint_eq(ghm_dynmap_size(dm), 0);
    ck_assert_int_eq(ghm_dynmap_insert(NULL, items, 1, h, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_insert(dm, NULL, 1, h, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_insert(dm, NULL, 0, NULL, NULL), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_insert(dm, items, 1, NULL, NULL), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_find(dm, items, 1, h, NULL), GHM_OK);
    ck_assert(h[0] != GHM_DYNMAP_NO_HANDLE);
    ck_assert_int_eq(ghm_dynmap_find(NULL, items, 1, h, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_find(dm, NULL, 1, h, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_find(dm, items, 1, NULL, NULL), GHM_OK);
    /* A key of zeros is simply absent (it never matches an empty slot). */
    uint32_t zeros[3] = {0, 0, 0};
    ck_assert_int_eq(ghm_dynmap_find(dm, zeros, 1, h + 1, NULL), GHM_OK);
    ck_assert(h[1] == GHM_DYNMAP_NO_HANDLE);
    ck_assert_int_eq(ghm_dynmap_erase(dm, zeros, 1, NULL), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_erase(dm, NULL, 1, NULL), GHM_ERR_INVALID);
    /* read: handles outside the table, on empty slots or past the slab's slots. */
    uint32_t out[3];
    GhmDynmapHandle bad[] = {GHM_DYNMAP_NO_HANDLE, 0, (h[0] & ~0xffffffffull) | 29,
                             (uint64_t)1 << 60};
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(ghm_dynmap_read(dm, bad + i, 1, out), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_read(dm, h, 1, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_read(dm, h, 1, out), GHM_OK);
    ck_assert_mem_eq(out, items, sizeof out);
    ck_assert_int_eq(ghm_dynmap_erase(dm, items, 1, NULL), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_read(dm, h, 1, out), GHM_ERR_INVALID); /* erased */
    ck_assert_int_eq(ghm_dynmap_gc(NULL, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_gc(dm, NULL), GHM_OK);
    GhmDynmapStats st;
    ck_assert_int_eq(ghm_dynmap_stats(NULL, &st), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_stats(dm, NULL), GHM_ERR_INVALID);
    ck_assert_uint_eq(ghm_dynmap_size(NULL), 0);
    size_t listed = 1;
    ck_assert_int_eq(ghm_dynmap_items(NULL, out, NULL, 1, &listed), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_items(dm, out, NULL, 1, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_items(dm, NULL, NULL, 1, &listed), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_dynmap_items(dm, NULL, NULL, 0, &listed), GHM_OK); /* empty table */
    ck_assert_uint_eq(listed, 0);
    ghm_dynmap_free(&dm);
    ghm_dynmap_free(&dm);
    ghm_dynmap_free(NULL);
    ghm_context_free(&ctx);
}
END_TEST

/* The same batches with 1, 2 and 4 threads: the same answers (found or not, items, flags, size).
 * Handles themselves depend on which thread claims which slot first, so they are compared only
 * within a run (duplicates share the leader's). */
START_TEST(test_thread_counts_agree)
{
    enum { U = 300000, B = 120000, ROUNDS = 6 };
    uint32_t *found[3];
    uint8_t *flags[3];
    size_t sizes[3][ROUNDS];
    int threads[3] = {1, 2, 4};
    ghm_test_dyn_variant = (GhmDynmapVariant)_i;
    ghm_test_dyn_backend = GHM_BACKEND_CPU;
    for (int t = 0; t < 3; t++) {
        GhmContext *ctx = ghm_test_dyn_context(threads[t]);
        GhmDynmap *dm = ghm_test_dyn_table(ctx, 6, 0, 50000);
        GhmTestRun r;
        ghm_test_run_init(&r, dm, 6, MODE_SHARED_HEAD, U, B);
        found[t] = malloc((size_t)U * 6 * sizeof(uint32_t));
        flags[t] = malloc((size_t)ROUNDS * 2 * B);
        ck_assert(found[t] && flags[t]);
        uint64_t s = 99;
        for (int k = 0; k < ROUNDS; k++) {
            ghm_test_random_ids(&r, B, &s);
            ghm_test_run_insert(&r, B);
            memcpy(flags[t] + (size_t)k * 2 * B, r.flags, B);
            ghm_test_random_ids(&r, B / 2, &s);
            ghm_test_run_erase(&r, B / 2);
            memcpy(flags[t] + (size_t)k * 2 * B + B, r.flags, B / 2);
            memset(flags[t] + (size_t)k * 2 * B + B + B / 2, 0, B - B / 2);
            sizes[t][k] = ghm_dynmap_size(dm);
        }
        ghm_test_run_check_all(&r);
        memcpy(found[t], r.found_items, (size_t)U * 6 * sizeof(uint32_t));
        ghm_test_run_free(&r);
        ghm_dynmap_free(&dm);
        ghm_context_free(&ctx);
    }
    for (int t = 1; t < 3; t++) {
        ck_assert_mem_eq(found[t], found[0], (size_t)U * 6 * sizeof(uint32_t));
        ck_assert_mem_eq(flags[t], flags[0], (size_t)ROUNDS * 2 * B);
        ck_assert_mem_eq(sizes[t], sizes[0], sizeof sizes[0]);
    }
    for (int t = 0; t < 3; t++) {
        free(found[t]);
        free(flags[t]);
    }
}
END_TEST

/* The same batches on the CPU and the CUDA backend, side by side: each run is checked against
 * its reference (ghm_test_run_insert, ghm_test_run_erase, ghm_test_run_check_all), and the two
 * runs' answers against each other, item by item: inserted and erased flags, found or not, the
 * items found, sizes. */
static void twin_rounds(int w, int mode, uint32_t universe, size_t capacity, size_t first,
                        size_t batch, int rounds)
{
    GhmContext *ctx[2];
    GhmDynmap *dm[2];
    GhmTestRun r[2];
    GhmBackendKind kinds[2] = {GHM_BACKEND_CPU, GHM_BACKEND_CUDA};
    size_t most = first > batch ? first : batch;
    for (int b = 0; b < 2; b++) {
        ghm_test_dyn_backend = kinds[b];
        ctx[b] = ghm_test_dyn_context(0);
        dm[b] = ghm_test_dyn_table(ctx[b], w, 0, capacity);
        ghm_test_run_init(&r[b], dm[b], w, mode, universe, most);
    }
    uint64_t s = 0xC0DAu + (uint64_t)w * 31 + (uint64_t)mode;
    for (int k = 0; k <= rounds; k++) {
        size_t ni = k == 0 ? first : 1 + rng_next(&s) % batch;
        size_t ne = k == 0 ? 0 : 1 + rng_next(&s) % batch;
        ghm_test_random_ids(&r[0], ni, &s);
        memcpy(r[1].ids, r[0].ids, ni * sizeof *r[0].ids);
        for (int b = 0; b < 2; b++)
            ghm_test_run_insert(&r[b], ni);
        ck_assert_mem_eq(r[0].flags, r[1].flags, ni);
        ghm_test_random_ids(&r[0], ne, &s);
        memcpy(r[1].ids, r[0].ids, ne * sizeof *r[0].ids);
        for (int b = 0; b < 2 && ne; b++)
            ghm_test_run_erase(&r[b], ne);
        if (ne)
            ck_assert_mem_eq(r[0].flags, r[1].flags, ne);
        ck_assert_uint_eq(ghm_dynmap_size(dm[0]), ghm_dynmap_size(dm[1]));
        if (k % 3 == 2 || k == rounds) {
            size_t rel[2];
            for (int b = 0; b < 2; b++) {
                ghm_test_run_gc(&r[b], &rel[b]);
                ghm_test_run_check_all(&r[b]);
            }
            size_t u = universe;
            CHECK_EACH(u, (r[0].out[i] == GHM_DYNMAP_NO_HANDLE) ==
                              (r[1].out[i] == GHM_DYNMAP_NO_HANDLE));
            ck_assert_mem_eq(r[0].found_items, r[1].found_items, u * (size_t)w * 4);
        }
    }
    GhmDynmapStats st[2];
    for (int b = 0; b < 2; b++) {
        ck_assert_int_eq(ghm_dynmap_stats(dm[b], &st[b]), GHM_OK);
        ghm_test_run_free(&r[b]);
        ghm_dynmap_free(&dm[b]);
        ghm_context_free(&ctx[b]);
    }
    ck_assert_uint_eq(st[0].items, st[1].items);
    ck_assert_uint_eq(st[0].buckets, st[1].buckets);
    ck_assert_uint_eq(st[0].slots_per_slab, st[1].slots_per_slab);
}

START_TEST(test_cuda_same_answers)
{
    GHM_REQUIRE_CUDA();
    ghm_test_dyn_variant = (GhmDynmapVariant)_i;
    int words[] = {1, 2, 3, 6, 10};
    for (int k = 0; k < 5; k++)
        for (int mode = 0; mode < 2; mode++)
            twin_rounds(words[k], mode, 60000, 30000, 45000, 12000, 8);
    /* A large first batch: many warps allocate and link slabs at once. */
    twin_rounds(6, MODE_MIXED, 1u << 21, 1u << 20, 1500000, 300000, 3);
    ghm_test_dyn_backend = GHM_BACKEND_CPU;
}
END_TEST

/* A capacity hint of 16 gives one to five buckets, so every batch puts hundreds of new slabs
 * on each list: the CUDA insert's ranks across many new slabs of one bucket, their links, and
 * look-ups and claims along lists of hundreds of slabs, against the CPU backend item by item. */
START_TEST(test_cuda_long_lists)
{
    GHM_REQUIRE_CUDA();
    ghm_test_dyn_variant = (GhmDynmapVariant)_i;
    twin_rounds(1, MODE_MIXED, 20000, 16, 15000, 4000, 4);
    twin_rounds(6, MODE_MIXED, 20000, 16, 15000, 4000, 4);
    ghm_test_dyn_backend = GHM_BACKEND_CPU;
}
END_TEST

/* On CUDA the arrays may be device memory: an insert, a find and an erase on backend buffers
 * give the answers of host arrays; a device item starting with 8 zero bytes is refused before
 * anything changes. */
START_TEST(test_cuda_device_arrays)
{
    GHM_REQUIRE_CUDA();
    enum { N = 5000, W = 4 };
    ghm_test_dyn_backend = GHM_BACKEND_CUDA;
    GhmContext *ctx = ghm_test_dyn_context(0);
    GhmDynmap *dm = ghm_test_dyn_table(ctx, W, 0, N);
    ck_assert_int_eq(ghm_dynmap_preload(dm), GHM_OK); /* the calls' kernels loaded first */
    uint32_t *items = malloc((size_t)N * W * 4), *found = malloc((size_t)N * W * 4);
    GhmDynmapHandle *h = malloc(N * sizeof *h), *fh = malloc(N * sizeof *fh);
    uint8_t *ins = malloc(N);
    ck_assert(items && found && h && fh && ins);
    for (uint32_t i = 0; i < N; i++)
        ghm_test_dyn_item(i % (N / 2), W, MODE_MIXED, items + (size_t)i * W); /* each twice */
    void *d_items = NULL, *d_h = NULL, *d_ins = NULL, *d_found = NULL;
    ck_assert_int_eq(ghm_buffer_alloc(ctx, (size_t)N * W * 4, &d_items), GHM_OK);
    ck_assert_int_eq(ghm_buffer_alloc(ctx, N * sizeof *h, &d_h), GHM_OK);
    ck_assert_int_eq(ghm_buffer_alloc(ctx, N, &d_ins), GHM_OK);
    ck_assert_int_eq(ghm_buffer_alloc(ctx, (size_t)N * W * 4, &d_found), GHM_OK);
    ck_assert_int_eq(ghm_buffer_upload(ctx, d_items, items, (size_t)N * W * 4), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_insert(dm, d_items, N, d_h, d_ins), GHM_OK);
    ck_assert_uint_eq(ghm_dynmap_size(dm), N / 2);
    ck_assert_int_eq(ghm_buffer_download(ctx, h, d_h, N * sizeof *h), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(ctx, ins, d_ins, N), GHM_OK);
    CHECK_EACH(N, ins[i] == (i < N / 2) && h[i] == h[i % (N / 2)]);
    ck_assert_int_eq(ghm_dynmap_find(dm, d_items, N, NULL, d_found), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(ctx, found, d_found, (size_t)N * W * 4), GHM_OK);
    ck_assert_mem_eq(found, items, (size_t)N * W * 4);
    ck_assert_int_eq(ghm_dynmap_find(dm, items, N, fh, NULL), GHM_OK);
    ck_assert_mem_eq(fh, h, N * sizeof *h);
    /* One zero item among new ones: refused, nothing stored. */
    for (uint32_t i = 0; i < N; i++)
        ghm_test_dyn_item(N + i, W, MODE_MIXED, items + (size_t)i * W);
    memset(items + 77 * W, 0, 8);
    ck_assert_int_eq(ghm_buffer_upload(ctx, d_items, items, (size_t)N * W * 4), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_insert(dm, d_items, N, NULL, NULL), GHM_ERR_INVALID);
    ck_assert_uint_eq(ghm_dynmap_size(dm), N / 2);
    ck_assert_int_eq(ghm_dynmap_erase(dm, d_items, N, d_ins), GHM_OK);
    ck_assert_uint_eq(ghm_dynmap_size(dm), N / 2);
    for (uint32_t i = 0; i < N; i++)
        ghm_test_dyn_item(i % (N / 2), W, MODE_MIXED, items + (size_t)i * W);
    ck_assert_int_eq(ghm_buffer_upload(ctx, d_items, items, (size_t)N * W * 4), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_erase(dm, d_items, N, d_ins), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(ctx, ins, d_ins, N), GHM_OK);
    CHECK_EACH(N, ins[i] == (i < N / 2));
    ck_assert_uint_eq(ghm_dynmap_size(dm), 0);
    void *bufs[] = {d_items, d_h, d_ins, d_found};
    for (int i = 0; i < 4; i++)
        ghm_buffer_free(ctx, &bufs[i]);
    free(items);
    free(found);
    free(h);
    free(fh);
    free(ins);
    ghm_dynmap_free(&dm);
    ghm_context_free(&ctx);
    ghm_test_dyn_backend = GHM_BACKEND_CPU;
}
END_TEST

/* The CPU insert's batch in bucket order (dynmap_cpu_order.c) on each path of its bin sort:
 * insertion (small bins), counting on the low bits, qsort (over 2^23 buckets); few and many
 * items a bucket; 1 and 4 threads. Every index once, (bucket, index) ascending, the bins
 * consecutive and no bucket across two. */
START_TEST(test_bucket_order)
{
    static const struct {
        size_t n;
        uint32_t buckets;
    } cases[] = {{0, 1024}, {1, 1}, {100, 1024}, {5000, 3}, {200000, 1000}, {200000, 1258291},
                 {70000, (1u << 24) + 3}, {300000, (1u << 31) - 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int threads = 1; threads <= 4; threads += 3) {
            size_t n = cases[c].n;
            uint64_t *hash = malloc((n + 1) * sizeof *hash);
            uint8_t *seen = calloc(n + 1, 1);
            ck_assert(hash && seen);
            for (size_t i = 0; i < n; i++) /* repeats, so buckets hold several items */
                hash[i] = ghmi_mix64((i * 7) % (n / 2 + 1) + c);
            GhmiBucketOrder o;
            ck_assert_int_eq(ghmi_dynmap_bucket_order(hash, n, cases[c].buckets, threads, &o),
                             GHM_OK);
            ck_assert_uint_eq(o.bin_start[0], 0);
            ck_assert_uint_eq(o.bin_start[o.bins], n);
            for (size_t b = 0; b < o.bins; b++) {
                ck_assert_uint_le(o.bin_start[b], o.bin_start[b + 1]);
                uint32_t lo = o.bin_start[b], hi = o.bin_start[b + 1];
                if (lo > 0 && hi > lo) /* a bucket does not go on from the bin before */
                    ck_assert_uint_ne(o.entries[lo] >> 32, o.entries[lo - 1] >> 32);
            }
            for (size_t p = 0; p < n; p++) {
                uint32_t i = (uint32_t)o.entries[p];
                ck_assert_uint_lt(i, n);
                ck_assert(!seen[i]);
                seen[i] = 1;
                ck_assert_uint_eq(o.entries[p] >> 32,
                                  ghmi_dynmap_bucket(hash[i], cases[c].buckets));
                if (p > 0)
                    ck_assert_uint_gt(o.entries[p], o.entries[p - 1]);
            }
            ghmi_dynmap_bucket_order_free(&o);
            free(hash);
            free(seen);
        }
}
END_TEST

static Suite *dynmap_suite(void)
{
    Suite *s = suite_create("dynmap");
    TCase *core = tcase_create("core");
    tcase_set_timeout(core, 300);
    /* Loop indices: i % 3 the variant, i / 3 the backend (ghm_test_dyn_pick). */
    tcase_add_loop_test(core, test_duplicates, 0, 3); /* the three variants on the CPU */
    tcase_add_loop_test(core, test_short_keys, 0, 3);
    tcase_add_loop_test(core, test_bad_arguments, 0, 1);
    tcase_add_loop_test(core, test_stable_handles_and_gc, 0, 1);
    tcase_add_loop_test(core, test_gc_after_erases, 0, 3);
    tcase_add_loop_test(core, test_erase_if, 0, 3);
    tcase_add_loop_test(core, test_item_sizes, 0, 1);
    suite_add_tcase(s, core);
    TCase *limits = tcase_create("limits");
    tcase_set_timeout(limits, 300);
    tcase_add_test(limits, test_round_trip_large);
    tcase_add_test(limits, test_bucket_order);
    tcase_add_loop_test(limits, test_thread_counts_agree, 0, 3); /* the three variants */
    suite_add_tcase(s, limits);
    TCase *cuda = tcase_create("cuda");
    tcase_set_timeout(cuda, 300);
    tcase_add_loop_test(cuda, test_duplicates, 3, 6); /* the same tests on CUDA */
    tcase_add_loop_test(cuda, test_short_keys, 3, 6);
    tcase_add_loop_test(cuda, test_bad_arguments, 3, 4);
    tcase_add_loop_test(cuda, test_stable_handles_and_gc, 3, 4);
    tcase_add_loop_test(cuda, test_gc_after_erases, 3, 6);
    tcase_add_loop_test(cuda, test_erase_if, 3, 6);
    tcase_add_loop_test(cuda, test_item_sizes, 3, 4);
    tcase_add_loop_test(cuda, test_cuda_same_answers, 0, 3); /* the three variants */
    tcase_add_test(cuda, test_cuda_device_arrays);
    suite_add_tcase(s, cuda);

    TCase *lists = tcase_create("cuda_lists");
    tcase_set_timeout(lists, 300);
    tcase_add_loop_test(lists, test_cuda_long_lists, 0, 3); /* the three variants */
    suite_add_tcase(s, lists);
    return s;
}

int main(void) { return ghm_test_main(dynmap_suite()); }
