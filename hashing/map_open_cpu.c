/*
 * map_open_cpu.c - the CPU backend's open-addressing GhmMap (linear, quadratic and double
 * hashing; Alcantara's thesis, chapter 3): threads insert pairs in parallel, each walking its
 * key's probe sequence (probe_family.h) and claiming the first empty slot with one 64-bit
 * compare-and-swap, so a key and its value land together. A thread that meets its own key
 * already stored lowers the stored value to the smaller one (the map keeps the smallest value of
 * a duplicated key, as every scheme does). Nothing is ever moved, so a find walks the sequence
 * until the key, an empty slot, or the longest sequence any stored key needed.
 *
 * Loops work in batches of GHMI_CPU_BATCH keys whose home slots are prefetched together, so that
 * that many cache misses are in flight per core instead of one.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_find_lanes.h"
#include "map_cpu_internal.h"
#include "probe_family.h"

typedef struct OpenMap {
    GhmContext *ctx;
    GhmMapOptions opt;
    Slot *slots;  /* t.capacity slots; NULL before a build that allocated */
    size_t alloc; /* slots allocated, kept from build to build */
    GhmiOpenTable t;
    int built;
    int have_oob; /* the key 0xFFFFFFFF (the empty marker) was inserted: out of band */
    uint32_t oob_value;
    size_t size;
    int rebuilds;
} OpenMap;

/* What the threads of one attempt add up. */
typedef struct InsertTally {
    size_t fresh;     /* keys that claimed an empty slot: the distinct keys */
    uint32_t longest; /* the longest probe sequence */
    uint32_t oob_min;
    int oob_seen;
    int failed;       /* a key found no slot within the bound */
} InsertTally;

static int open_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    OpenMap *m = calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->opt = *opt;
    *impl = m;
    return GHM_OK;
}

static void open_destroy(void *impl)
{
    OpenMap *m = impl;
    if (!m)
        return;
    free(m->slots);
    free(m);
}

static int threads_of(const OpenMap *m) { return m->ctx->threads > 0 ? m->ctx->threads : 1; }

/* Inserts one pair. Returns the probes it took, or 0 when the bound ran out; *fresh = 1 when the
 * key claimed an empty slot, 0 when it met its own earlier copy. */
static uint32_t insert_pair(OpenMap *m, uint32_t key, uint32_t value, int *fresh)
{
    const GhmiOpenTable *t = &m->t;
    uint32_t pos = ghmi_open_home(t, key), step = ghmi_open_first_step(t, key);
    uint64_t mine = ghmi_pack(key, value);
    for (uint32_t probe = 1; probe <= t->max_probes; probe++) {
        Slot *s = &m->slots[pos];
        uint64_t cur = atomic_load_explicit(s, memory_order_relaxed);
        /* A failed exchange leaves the slot's new content in cur: look at it again. */
        while (cur == GHMI_EMPTY_SLOT)
            if (atomic_compare_exchange_weak(s, &cur, mine)) {
                *fresh = 1;
                return probe;
            }
        if (ghmi_slot_key(cur) == key) {
            ghmi_merge_min(s, key, value); /* keys never move: it cannot fail */
            *fresh = 0;
            return probe;
        }
        ghmi_open_next(t, &pos, &step);
    }
    return 0;
}

static void insert_batch(OpenMap *m, const uint32_t *keys, const uint32_t *values, size_t cnt,
                         InsertTally *tally)
{
    for (size_t i = 0; i < cnt; i++)
        __builtin_prefetch(m->slots + ghmi_open_home(&m->t, keys[i]), 1);
    for (size_t i = 0; i < cnt; i++) {
        if (keys[i] == GHMI_EMPTY_KEY) {
            tally->oob_seen = 1;
            if (values[i] < tally->oob_min)
                tally->oob_min = values[i];
            continue;
        }
        int fresh = 0;
        uint32_t probes = insert_pair(m, keys[i], values[i], &fresh);
        if (!probes) {
            tally->failed = 1;
            return;
        }
        tally->fresh += (size_t)fresh;
        if (probes > tally->longest)
            tally->longest = probes;
    }
}

static void insert_all(OpenMap *m, const uint32_t *keys, const uint32_t *values, size_t n,
                       InsertTally *out)
{
    size_t fresh = 0;
    uint32_t longest = 0, oob_min = UINT32_MAX;
    int oob_seen = 0, failed = 0;
    size_t nbatch = (n + GHMI_CPU_BATCH - 1) / GHMI_CPU_BATCH;
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads_of(m)) if (n > 4096)       \
    reduction(+ : fresh) reduction(max : longest) reduction(min : oob_min)                      \
    reduction(| : oob_seen, failed)
    for (size_t bi = 0; bi < nbatch; bi++) {
        size_t lo = bi * GHMI_CPU_BATCH;
        size_t cnt = lo + GHMI_CPU_BATCH < n ? GHMI_CPU_BATCH : n - lo;
        InsertTally t = {0, 0, UINT32_MAX, 0, 0};
        insert_batch(m, keys + lo, values + lo, cnt, &t);
        fresh += t.fresh;
        longest = t.longest > longest ? t.longest : longest;
        oob_min = t.oob_min < oob_min ? t.oob_min : oob_min;
        oob_seen |= t.oob_seen;
        failed |= t.failed;
    }
    *out = (InsertTally){fresh, longest, oob_min, oob_seen, failed};
}

/* Forgets the content; release also frees the table memory (after a failure). */
static void reset_content(OpenMap *m, int release)
{
    if (release) {
        free(m->slots);
        m->slots = NULL;
        m->alloc = 0;
    }
    m->built = 0;
    m->have_oob = 0;
    m->size = 0;
}

static void clear_slots(OpenMap *m)
{
    size_t cap = m->t.capacity;
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (cap > 65536)
    for (size_t p = 0; p < cap; p++)
        atomic_store_explicit(&m->slots[p], GHMI_EMPTY_SLOT, memory_order_relaxed);
}

static int reserve(OpenMap *m, size_t cap)
{
    if (m->slots && m->alloc >= cap)
        return GHM_OK;
    free(m->slots);
    m->slots = ghmi_cpu_alloc_slots(cap);
    m->alloc = m->slots ? cap : 0;
    return m->slots ? GHM_OK : GHM_ERR_NOMEM;
}

static int try_build(OpenMap *m, int attempt, const uint32_t *keys, const uint32_t *values,
                     size_t n)
{
    int ret = ghmi_open_table(m->opt.scheme, n, m->opt.load_factor, m->ctx->seed, attempt, &m->t);
    if (ret >= 0)
        ret = reserve(m, m->t.capacity);
    if (ret < 0)
        return ret;
    clear_slots(m);
    InsertTally tally;
    insert_all(m, keys, values, n, &tally);
    if (tally.failed)
        return GHM_ERR_BUILD_FAILED;
    m->t.max_probes = tally.longest;
    m->have_oob = tally.oob_seen;
    m->oob_value = tally.oob_min;
    m->size = tally.fresh + (size_t)tally.oob_seen;
    return GHM_OK;
}

static int open_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    OpenMap *m = impl;
    reset_content(m, 0);
    int ret = GHM_ERR_BUILD_FAILED;
    int attempt = 0;
    for (; attempt <= m->opt.max_rebuilds && ret == GHM_ERR_BUILD_FAILED; attempt++)
        ret = try_build(m, attempt, keys, values, n);
    m->rebuilds = attempt - 1;
    if (ret < 0) {
        reset_content(m, 1);
        return ret;
    }
    m->built = 1;
    return GHM_OK;
}

/* Pipelined find (cpu_find_lanes.h). Lane: pos the slot probed next, step the sequence's step,
 * probe the probes made. */
static int find_start(const void *map, GhmiLane *l, uint32_t *value)
{
    const OpenMap *m = map;
    if (l->key == GHMI_EMPTY_KEY) {
        *value = m->have_oob ? m->oob_value : GHM_NOT_FOUND;
        return 1;
    }
    l->pos = ghmi_open_home(&m->t, l->key);
    l->step = ghmi_open_first_step(&m->t, l->key);
    l->probe = 0;
    __builtin_prefetch(m->slots + l->pos);
    return 0;
}

_Static_assert(GHMI_OPEN_WINDOW == GHMI_BUCKET_SLOTS, "ghmi_key_mask compares one window");

/* Linear probing from a window's first slot (its home, or the window after): the window's eight
 * slots compared at once, the first that holds the key or is empty decides; neither, and the
 * walk goes on in the next window, the next pass. */
static int find_window(const OpenMap *m, GhmiLane *l, uint32_t *value)
{
    const Slot *w = m->slots + l->pos;
    unsigned hit = ghmi_key_mask(w, l->key), stop = hit | ghmi_key_mask(w, GHMI_EMPTY_KEY);
    if (stop) {
        unsigned s = (unsigned)__builtin_ctz(stop);
        *value = hit >> s & 1u ? ghmi_slot_value(atomic_load_explicit(&w[s], memory_order_relaxed))
                               : GHM_NOT_FOUND;
        return 1;
    }
    l->probe += GHMI_OPEN_WINDOW;
    if (l->probe >= m->t.max_probes) {
        *value = GHM_NOT_FOUND;
        return 1;
    }
    l->pos = l->pos + GHMI_OPEN_WINDOW < m->t.capacity ? l->pos + GHMI_OPEN_WINDOW : 0;
    __builtin_prefetch(m->slots + l->pos);
    return 0;
}

/* Walks the sequence until the key, an empty slot or the longest sequence of a stored key; a
 * probe in the line just read (linear probing's next slot, quadratic's first steps) goes on at
 * once, a probe in another line waits for the next pass. */
static int find_step(const void *map, GhmiLane *l, uint32_t *value)
{
    const OpenMap *m = map;
    if (m->t.scheme == GHM_MAP_LINEAR && l->pos % GHMI_OPEN_WINDOW == 0 &&
        l->pos + GHMI_OPEN_WINDOW <= m->t.capacity)
        return find_window(m, l, value);
    for (;;) {
        uint64_t e = atomic_load_explicit(&m->slots[l->pos], memory_order_relaxed);
        if (ghmi_slot_key(e) == l->key) {
            *value = ghmi_slot_value(e);
            return 1;
        }
        if (e == GHMI_EMPTY_SLOT || ++l->probe >= m->t.max_probes) {
            *value = GHM_NOT_FOUND;
            return 1;
        }
        uint32_t line = l->pos / GHMI_SLOTS_PER_LINE;
        ghmi_open_next(&m->t, &l->pos, &l->step);
        if (l->pos / GHMI_SLOTS_PER_LINE != line) {
            __builtin_prefetch(m->slots + l->pos);
            return 0;
        }
    }
}

static int open_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const OpenMap *m = impl;
    if (!m->built) {
        for (size_t i = 0; i < n; i++)
            out[i] = GHM_NOT_FOUND;
        return GHM_OK;
    }
    GHMI_FIND_LANES_PARALLEL(m, keys, n, out, threads_of(m), find_start, find_step);
    return GHM_OK;
}

static int open_stats(const void *impl, GhmMapStats *out)
{
    const OpenMap *m = impl;
    size_t cap = m->built ? m->t.capacity : 0;
    out->size = m->size;
    out->capacity = cap;
    out->rebuilds = m->rebuilds;
    out->bytes = cap * sizeof(Slot);
    out->max_probes = m->built ? m->t.max_probes : 0;
    return GHM_OK;
}

const GhmMapOps ghm_cpu_open_map_ops = {
    .create = open_create,
    .build = open_build,
    .find = open_find,
    .stats = open_stats,
    .destroy = open_destroy,
};
