/*
 * map_robin_cpu.c - the CPU backend's Robin Hood GhmMap (Garcia, Lefebvre, Hornus, Lasram:
 * Coherent Parallel Hashing, 2011), with the coherent or the random probe sequence of
 * probe_family.h. Threads insert pairs in parallel, as the paper's kernel does: each step is one
 * 64-bit atomic max of the word age | key | index on the key's slot of that age (a
 * compare-and-swap loop here; C11 has no fetch-max), so the older key keeps the slot and the
 * younger moves one step on. Then one pass rewrites every slot in place to key | value and fills
 * the max-age table (4 bits per home slot), which lets a find stop after the largest age of the
 * keys that start where it starts: 0 rejects an absent key after one read.
 *
 * A key that would age past 15 goes to a stash of GHMI_RH_STASH words instead of failing the
 * attempt (probe_family.h says why); a find that walks off its sequence looks there.
 *
 * Duplicate keys. Two copies of a key follow the same sequence with the same ages, and a slot's
 * word only ever grows, so they always meet unless both are stashed (then a find takes the
 * smaller of their values, and the size counts one) (the paper notes "duplicate keys could be trivially
 * handled by comparing whether prev equals age key"): the atomic max returns the other copy, the
 * smaller of the two words is dropped and its pair index recorded; after the rewrite each
 * recorded pair lowers its stored key's value to the smaller one. The final table is the one
 * sequential Robin Hood insertion gives (it does not depend on the order of the inserts), so the
 * CUDA table (kernels/hashing/map_robin.cu) is slot for slot the same.
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_find_lanes.h"
#include "map_cpu_internal.h"
#include "probe_family.h"

/* Dropped duplicates are listed up to this many; past it the build settles duplicates by one
 * pass over all pairs instead (the list is only a shortcut for inputs with few duplicates). */
#define DUP_LIST 65536

typedef struct RobinMap {
    GhmContext *ctx;
    GhmMapOptions opt;
    Slot *slots;  /* t.capacity slots; NULL before a build that allocated */
    size_t alloc; /* slots allocated, kept from build to build */
    _Atomic uint32_t *mat; /* the max-age table: ghmi_mat_words(t.capacity) words */
    uint64_t stash[GHMI_RH_STASH]; /* keys that aged past GHMI_RH_MAX_AGE (probe_family.h) */
    uint32_t stash_used;
    GhmiRobinTable t;
    int built;
    int have_oob; /* the key 0xFFFFFFFF (the empty marker) was inserted: out of band */
    uint32_t oob_value;
    size_t size;
    int rebuilds;
} RobinMap;

/* State the threads of one attempt share. */
typedef struct RobinShared {
    atomic_size_t dups;   /* dropped copies (all of them, listed or not) */
    uint32_t *dup_list;   /* DUP_LIST pair indices */
    atomic_int failed;    /* the stash overflowed */
    atomic_size_t stashed; /* keys that aged past GHMI_RH_MAX_AGE, stash overflow included */
} RobinShared;

static int robin_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    RobinMap *m = calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->opt = *opt;
    *impl = m;
    return GHM_OK;
}

static void release_table(RobinMap *m)
{
    free(m->slots);
    free((void *)m->mat);
    m->slots = NULL;
    m->mat = NULL;
    m->alloc = 0;
}

static void robin_destroy(void *impl)
{
    RobinMap *m = impl;
    if (!m)
        return;
    release_table(m);
    free(m);
}

static int threads_of(const RobinMap *m) { return m->ctx->threads > 0 ? m->ctx->threads : 1; }

/* The paper's atomicMax on a 64-bit word; returns the word it replaced or kept. */
static uint64_t fetch_max(Slot *s, uint64_t w)
{
    uint64_t cur = atomic_load_explicit(s, memory_order_relaxed);
    while (cur < w && !atomic_compare_exchange_weak(s, &cur, w))
        ;
    return cur;
}

static void record_dup(RobinShared *sh, uint64_t dropped)
{
    size_t at = atomic_fetch_add_explicit(&sh->dups, 1, memory_order_relaxed);
    if (at < DUP_LIST)
        sh->dup_list[at] = ghmi_rh_idx(dropped);
}

/* Puts a word that aged past GHMI_RH_MAX_AGE into the stash; 0 when the stash is full. */
static int stash_word(RobinMap *m, RobinShared *sh, uint64_t w)
{
    size_t j = atomic_fetch_add_explicit(&sh->stashed, 1, memory_order_relaxed);
    if (j >= GHMI_RH_STASH)
        return 0;
    m->stash[j] = w;
    return 1;
}

/* Inserts word w (age 1) and whatever it evicts, until an empty slot, a duplicate or the stash
 * ends the chain. Returns 0 when the stash is full (the attempt fails). */
static int insert_word(RobinMap *m, RobinShared *sh, uint64_t w)
{
    const GhmiRobinTable *t = &m->t;
    for (;;) {
        uint32_t key = ghmi_rh_key(w);
        uint32_t pos = ghmi_robin_probe(t, key, ghmi_robin_home(t, key), ghmi_rh_age(w));
        uint64_t prev = fetch_max(&m->slots[pos], w);
        if (prev && ghmi_rh_same_key(prev, w)) {
            record_dup(sh, prev < w ? prev : w);
            return 1;
        }
        if (prev < w) { /* w took the slot */
            if (!prev)
                return 1;
            w = prev; /* the evicted key goes on from its next age */
        }
        if (ghmi_rh_age(w) == GHMI_RH_MAX_AGE)
            return stash_word(m, sh, w);
        w += (uint64_t)1 << 60;
    }
}

/* Inserts every pair; returns the out-of-band key's smallest value in *oob_min and whether it
 * occurred (the return value: -1 failed, else 0 or 1). */
static int insert_all(RobinMap *m, RobinShared *sh, const uint32_t *keys, const uint32_t *values,
                      size_t n, uint32_t *oob_min)
{
    uint32_t lo_value = UINT32_MAX;
    int seen = 0;
#pragma omp parallel for schedule(dynamic, 2048) num_threads(threads_of(m)) if (n > 4096)     \
    reduction(min : lo_value) reduction(| : seen)
    for (size_t i = 0; i < n; i++) {
        if (keys[i] == GHMI_EMPTY_KEY) {
            seen = 1;
            lo_value = values[i] < lo_value ? values[i] : lo_value;
        } else if (!atomic_load_explicit(&sh->failed, memory_order_relaxed) &&
                   !insert_word(m, sh, ghmi_rh_word(1, keys[i], (uint32_t)i))) {
            atomic_store(&sh->failed, 1);
        }
    }
    *oob_min = lo_value;
    return atomic_load(&sh->failed) ? -1 : seen;
}

/* Raises home's 4-bit entry in the max-age table to age. */
static void mat_raise(_Atomic uint32_t *mat, uint32_t home, uint32_t age)
{
    _Atomic uint32_t *w = &mat[home >> 3];
    unsigned shift = (home & 7) * 4;
    uint32_t cur = atomic_load_explicit(w, memory_order_relaxed);
    while ((cur >> shift & 15u) < age &&
           !atomic_compare_exchange_weak(w, &cur, (cur & ~(15u << shift)) | age << shift))
        ;
}

static uint32_t mat_get(const RobinMap *m, uint32_t home)
{
    return atomic_load_explicit(&m->mat[home >> 3], memory_order_relaxed) >> ((home & 7) * 4) &
           15u;
}

/* Rewrites every slot and the stash to key | value and fills the max-age table; returns the
 * largest age. */
static uint32_t finish_slots(RobinMap *m, const uint32_t *values)
{
    for (uint32_t j = 0; j < m->stash_used; j++)
        m->stash[j] = ghmi_pack(ghmi_rh_key(m->stash[j]), values[ghmi_rh_idx(m->stash[j])]);
    const GhmiRobinTable *t = &m->t;
    uint32_t oldest = 0;
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (t->capacity > 65536)  \
    reduction(max : oldest)
    for (size_t p = 0; p < t->capacity; p++) {
        uint64_t w = atomic_load_explicit(&m->slots[p], memory_order_relaxed);
        if (!w) {
            atomic_store_explicit(&m->slots[p], GHMI_EMPTY_SLOT, memory_order_relaxed);
            continue;
        }
        uint32_t key = ghmi_rh_key(w), age = ghmi_rh_age(w);
        atomic_store_explicit(&m->slots[p], ghmi_pack(key, values[ghmi_rh_idx(w)]),
                              memory_order_relaxed);
        mat_raise(m->mat, ghmi_robin_home(t, key), age);
        oldest = age > oldest ? age : oldest;
    }
    return oldest;
}

/* The slot holding key, or NULL. */
static Slot *locate(const RobinMap *m, uint32_t key)
{
    const GhmiRobinTable *t = &m->t;
    uint32_t home = ghmi_robin_home(t, key);
    uint32_t last = mat_get(m, home);
    for (uint32_t age = 1; age <= last; age++) {
        Slot *s = &m->slots[ghmi_robin_probe(t, key, home, age)];
        uint64_t e = atomic_load_explicit(s, memory_order_relaxed);
        if (ghmi_slot_key(e) == key)
            return s;
        if (e == GHMI_EMPTY_SLOT) /* a key never passes a slot that was ever empty */
            break;
    }
    return NULL;
}

/* A dropped copy's value: to its key's slot, or to its key's stash copies (whose plain words are
 * lowered under the lock; settle_dups runs in parallel). */
static void lower_value(RobinMap *m, uint32_t key, uint32_t value, omp_lock_t *stash_lock)
{
    Slot *s = locate(m, key);
    if (s) {
        ghmi_merge_min(s, key, value);
        return;
    }
    omp_set_lock(stash_lock);
    for (uint32_t j = 0; j < m->stash_used; j++)
        if (ghmi_slot_key(m->stash[j]) == key && ghmi_slot_value(m->stash[j]) > value)
            m->stash[j] = ghmi_pack(key, value);
    omp_unset_lock(stash_lock);
}

/* Gives each duplicated key its smallest value: from the list, or from every pair when the list
 * overflowed. */
static void settle_dups(RobinMap *m, const RobinShared *sh, const uint32_t *keys,
                        const uint32_t *values, size_t n)
{
    size_t dups = atomic_load(&sh->dups);
    if (dups == 0)
        return;
    int listed = dups <= DUP_LIST;
    size_t count = listed ? dups : n;
    omp_lock_t stash_lock;
    omp_init_lock(&stash_lock);
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (count > 4096)
    for (size_t j = 0; j < count; j++) {
        size_t i = listed ? sh->dup_list[j] : j;
        if (keys[i] != GHMI_EMPTY_KEY)
            lower_value(m, keys[i], values[i], &stash_lock);
    }
    omp_destroy_lock(&stash_lock);
}

static int reserve(RobinMap *m, size_t cap)
{
    if (m->slots && m->alloc >= cap)
        return GHM_OK;
    release_table(m);
    m->slots = ghmi_cpu_alloc_slots(cap);
    m->mat = ghmi_cpu_alloc_table((size_t)ghmi_mat_words((uint32_t)cap) * sizeof *m->mat);
    if (!m->slots || !m->mat) {
        release_table(m);
        return GHM_ERR_NOMEM;
    }
    m->alloc = cap;
    return GHM_OK;
}

static void clear_table(RobinMap *m)
{
    size_t cap = m->t.capacity, words = ghmi_mat_words(m->t.capacity);
#pragma omp parallel for schedule(static) num_threads(threads_of(m)) if (cap > 65536)
    for (size_t p = 0; p < cap; p++)
        atomic_store_explicit(&m->slots[p], 0, memory_order_relaxed);
    for (size_t w = 0; w < words; w++)
        atomic_store_explicit(&m->mat[w], 0, memory_order_relaxed);
}

static int try_build(RobinMap *m, RobinShared *sh, int attempt, const uint32_t *keys,
                     const uint32_t *values, size_t n)
{
    int coherent = m->opt.scheme == GHM_MAP_ROBIN_HOOD;
    int ret = ghmi_robin_table(coherent, n, m->opt.load_factor, m->ctx->seed, attempt, &m->t);
    if (ret >= 0)
        ret = reserve(m, m->t.capacity);
    if (ret < 0)
        return ret;
    clear_table(m);
    atomic_init(&sh->dups, 0);
    atomic_init(&sh->failed, 0);
    atomic_init(&sh->stashed, 0);
    uint32_t oob_min;
    int oob = insert_all(m, sh, keys, values, n, &oob_min);
    if (oob < 0)
        return GHM_ERR_BUILD_FAILED;
    m->stash_used = (uint32_t)atomic_load(&sh->stashed);
    /* copies of one key age past 15 together (they follow one sequence): one of them counts */
    size_t stash_dups = m->stash_used - ghmi_rh_stash_distinct(m->stash, m->stash_used);
    m->t.max_age = finish_slots(m, values);
    settle_dups(m, sh, keys, values, n);
    m->have_oob = oob;
    m->oob_value = oob_min;
    size_t oob_inputs = 0;
    for (size_t i = 0; oob && i < n; i++)
        oob_inputs += keys[i] == GHMI_EMPTY_KEY;
    m->size = n - oob_inputs - atomic_load(&sh->dups) - stash_dups + (size_t)oob;
    return GHM_OK;
}

static int robin_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    RobinMap *m = impl;
    m->built = 0;
    m->have_oob = 0;
    m->size = 0;
    if (n > GHM_MAP_ROBIN_HOOD_MAX_PAIRS)
        return GHM_ERR_TOO_LARGE;
    RobinShared sh = {.dup_list = malloc(DUP_LIST * sizeof(uint32_t))};
    if (!sh.dup_list)
        return GHM_ERR_NOMEM;
    int ret = GHM_ERR_BUILD_FAILED;
    int attempt = 0;
    for (; attempt <= m->opt.max_rebuilds && ret == GHM_ERR_BUILD_FAILED; attempt++)
        ret = try_build(m, &sh, attempt, keys, values, n);
    free(sh.dup_list);
    m->rebuilds = attempt - 1;
    if (ret < 0) {
        release_table(m);
        return ret;
    }
    m->built = 1;
    return GHM_OK;
}

/* Pipelined find (cpu_find_lanes.h). Lane: pos the key's home, probe the age probed next, step
 * the largest age of the keys that start at that home (from the max-age table), which bounds the
 * walk; UNREAD until that entry was read. The home slot (age 1) is read first, alone: about half
 * the present keys sit there and need no other line, and an empty home rejects a key at once.
 * Past it, the max-age entry and the age-2 slot are fetched together: an entry below 2 rejects
 * the key (the paper's early rejection), else the walk goes on age by age. */
#define UNREAD (GHMI_RH_MAX_AGE + 1)

static int find_start(const void *map, GhmiLane *l, uint32_t *value)
{
    const RobinMap *m = map;
    if (l->key == GHMI_EMPTY_KEY) {
        *value = m->have_oob ? m->oob_value : GHM_NOT_FOUND;
        return 1;
    }
    l->pos = ghmi_robin_home(&m->t, l->key);
    l->probe = 1;
    l->step = UNREAD;
    __builtin_prefetch(m->slots + l->pos);
    return 0;
}

/* The walk ended without the key: the stash's answer (none when it is empty). */
static int not_in_table(const RobinMap *m, uint32_t key, uint32_t *value)
{
    *value = m->stash_used ? ghmi_rh_stash_value(m->stash, m->stash_used, key) : GHM_NOT_FOUND;
    return 1;
}

static int find_step(const void *map, GhmiLane *l, uint32_t *value)
{
    const RobinMap *m = map;
    const GhmiRobinTable *t = &m->t;
    if (l->probe == 2 && l->step == UNREAD) {
        l->step = mat_get(m, l->pos);
        if (l->probe > l->step)
            return not_in_table(m, l->key, value);
    }
    for (;;) {
        uint32_t p = ghmi_robin_probe(t, l->key, l->pos, l->probe);
        uint64_t e = atomic_load_explicit(&m->slots[p], memory_order_relaxed);
        if (ghmi_slot_key(e) == l->key) {
            *value = ghmi_slot_value(e);
            return 1;
        }
        /* a key never passes a slot that was ever empty */
        if (e == GHMI_EMPTY_SLOT || ++l->probe > l->step)
            return not_in_table(m, l->key, value);
        uint32_t q = ghmi_robin_probe(t, l->key, l->pos, l->probe);
        if (l->probe == 2)
            __builtin_prefetch((const void *)&m->mat[l->pos >> 3]);
        if (l->probe == 2 || q / GHMI_SLOTS_PER_LINE != p / GHMI_SLOTS_PER_LINE) {
            __builtin_prefetch(m->slots + q);
            return 0;
        }
    }
}

static int robin_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const RobinMap *m = impl;
    if (!m->built) {
        for (size_t i = 0; i < n; i++)
            out[i] = GHM_NOT_FOUND;
        return GHM_OK;
    }
    GHMI_FIND_LANES_PARALLEL(m, keys, n, out, threads_of(m), find_start, find_step);
    return GHM_OK;
}

static int robin_stats(const void *impl, GhmMapStats *out)
{
    const RobinMap *m = impl;
    size_t cap = m->built ? m->t.capacity : 0;
    out->size = m->size;
    out->capacity = cap;
    out->rebuilds = m->rebuilds;
    out->bytes = cap * sizeof(Slot) + (m->built ? ghmi_mat_words((uint32_t)cap) * 4 : 0);
    out->max_probes = m->built ? m->t.max_age : 0;
    out->stash_used = m->built ? m->stash_used : 0;
    return GHM_OK;
}

const GhmMapOps ghm_cpu_robin_map_ops = {
    .create = robin_create,
    .build = robin_build,
    .find = robin_find,
    .stats = robin_stats,
    .destroy = robin_destroy,
};
