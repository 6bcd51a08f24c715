/*
 * dynmap_runs.h - a reference for the GhmDynmap suites (check_dynmap.c): items made from ids of
 * a universe [0, U), and per id whether it is stored and its handle; runs of batches checked
 * against it answer by answer.
 */
#ifndef GHM_TEST_DYNMAP_RUNS_H
#define GHM_TEST_DYNMAP_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_dynmap.h"

enum { MODE_MIXED = 0, MODE_SHARED_HEAD = 1 };

/* The item of id: distinct per id, first 8 bytes never zero. MODE_SHARED_HEAD gives groups of
 * items the same first 8 bytes (from 3 words on), so a match of the head must be confirmed. */
void ghm_test_dyn_item(uint32_t id, int w, int mode, uint32_t *out);

/* The backend the scenario tests run on (the "cuda" case sets it through its loop index). */
extern GhmBackendKind ghm_test_dyn_backend;
/* The variant ghm_test_dyn_table creates (the tests that loop over variants set it). */
extern GhmDynmapVariant ghm_test_dyn_variant;

/* A context of the backend ghm_test_dyn_backend with `threads` CPU threads. */
GhmContext *ghm_test_dyn_context(int threads);
/* A table of the variant ghm_test_dyn_variant (asserted made). */
GhmDynmap *ghm_test_dyn_table(GhmContext *ctx, int w, int key_words, size_t capacity);
/* Loop index of the tests run on both backends: i % 3 the variant (Atomic64, Accel32, Accel8),
 * i / 3 the backend (CPU, CUDA). 0 when the test is to be skipped (no device). */
int ghm_test_dyn_pick(int i);

/* The reference and the state of one run. */
typedef struct GhmTestRun {
    GhmDynmap *dm;
    int w, mode;
    uint32_t universe;
    uint8_t *present;
    GhmDynmapHandle *handle;
    size_t count;
    uint32_t *ids, *items;
    GhmDynmapHandle *out;
    uint8_t *flags;
    uint32_t *found_items;
} GhmTestRun;

/* A run of dm's items of w words (mode: MODE_*), with room for batches of `batch` ids. */
void ghm_test_run_init(GhmTestRun *r, GhmDynmap *dm, int w, int mode, uint32_t universe,
                       size_t batch);
void ghm_test_run_free(GhmTestRun *r);
/* Inserts ids[0..n) and checks the answers against the reference, then updates it. */
void ghm_test_run_insert(GhmTestRun *r, size_t n);
/* Erases ids[0..n) (whole-item keys) and checks the flags: the first occurrence of a stored id. */
void ghm_test_run_erase(GhmTestRun *r, size_t n);
/* gc, and then every slab in use holds an item: as many slabs are used as the stored items'
 * handles name (a slab an erase emptied and gc left linked would count apart). */
void ghm_test_run_gc(GhmTestRun *r, size_t *released);
/* Finds every id of the universe: stored ones at their handle with their item, others absent. */
void ghm_test_run_check_all(GhmTestRun *r);
/* Random batches: ids drawn with repeats (duplicates within a batch and of stored items). */
void ghm_test_random_ids(GhmTestRun *r, size_t n, uint64_t *s);
/* A table of w-word items (mode), `first` random ids inserted, then `rounds` rounds of random
 * inserts and erases of up to `batch` ids, checked every `check_every` rounds and at the end
 * (gc every fourth round). */
void ghm_test_random_rounds(GhmContext *ctx, int w, int mode, uint32_t universe, size_t first,
                            size_t batch, int rounds, int check_every);

#endif /* GHM_TEST_DYNMAP_RUNS_H */
