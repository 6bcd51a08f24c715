/*
 * map_cpu.c - the CPU backend's GhmMap: table memory (huge-page aligned when large, kept from
 * build to build), the build attempts (fresh constants from hash_family.h each time, at most
 * max_rebuilds of them), the batched find and the op table. The insert and the merge pass that
 * a build runs are in map_cpu_insert.c, which also describes the layouts.
 */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE): a Linux hint, used where available */
#endif
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cpu_find_lanes.h"
#include "map_cpu_internal.h"

static int cpu_map_create(GhmContext *ctx, const GhmMapOptions *opt, void **impl)
{
    CpuMap *m = calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->ctx = ctx;
    m->opt = *opt;
    *impl = m;
    return GHM_OK;
}

static void cpu_map_destroy(void *impl)
{
    CpuMap *m = impl;
    if (!m)
        return;
    free(m->slots);
    free(m);
}

/* ---- build ---- */

/* Chain bound. The thesis uses 7 lg N for 4 functions at load 0.8; fuller tables and fewer
 * functions need longer chains before the stash is worth trying, so the bound grows as the free
 * share of the table shrinks (an empirical rule, like the thesis's own). */
static int max_chain_for(const CpuMap *m, size_t n)
{
    double lg = ghmi_ceil_log2(n) < 4 ? 4 : ghmi_ceil_log2(n);
    double free_share = 1.0 - m->opt.load_factor;
    double scale = free_share >= 0.2 ? 1.0 : 0.2 / (free_share > 0.01 ? free_share : 0.01);
    double base = m->opt.layout == GHM_MAP_BUCKETED ? 16.0 * lg : 7.0 * lg;
    return (int)(base * scale);
}

#define HUGE_PAGE ((size_t)2 << 20)

/* Tables are probed at random, so with 4 KiB pages nearly every probe also misses the TLB; big
 * tables are therefore 2 MiB aligned and offered to the kernel as transparent huge pages. */
void *ghmi_cpu_alloc_table(size_t bytes)
{
    bytes = (bytes + 63) / 64 * 64;
    if (bytes < 2 * HUGE_PAGE)
        return aligned_alloc(64, bytes ? bytes : 64);
    bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *p = aligned_alloc(HUGE_PAGE, bytes);
#ifdef MADV_HUGEPAGE
    if (p)
        madvise(p, bytes, MADV_HUGEPAGE); /* only a hint: failure changes nothing */
#endif
    return p;
}

Slot *ghmi_cpu_alloc_slots(size_t cap) { return ghmi_cpu_alloc_table(cap * sizeof(Slot)); }

/* Sizes the table for n keys; keeps the current one when it has the same size already (repeated
 * builds then touch no new pages). */
static int alloc_table(CpuMap *m, size_t n)
{
    double want = ceil((double)(n ? n : 1) / m->opt.load_factor);
    size_t units = m->opt.layout == GHM_MAP_BUCKETED
                       ? (size_t)ceil(want / GHMI_BUCKET_SLOTS)
                       : (size_t)want;
    if (units < 1)
        units = 1;
    if (units > UINT32_MAX)
        return GHM_ERR_TOO_LARGE;
    size_t cap = m->opt.layout == GHM_MAP_BUCKETED ? units * GHMI_BUCKET_SLOTS : units;
    m->range = (uint32_t)units;
    if (m->slots && m->capacity == cap)
        return GHM_OK;
    free(m->slots);
    m->slots = ghmi_cpu_alloc_slots(cap);
    m->capacity = m->slots ? cap : 0;
    return m->slots ? GHM_OK : GHM_ERR_NOMEM;
}

static void clear_table(CpuMap *m)
{
    size_t cap = m->capacity;
#pragma omp parallel for schedule(static) num_threads(ghmi_cpu_threads(m))
    for (size_t p = 0; p < cap; p++)
        atomic_store_explicit(&m->slots[p], GHMI_EMPTY_SLOT, memory_order_relaxed);
    for (int s = 0; s < GHMI_STASH_SIZE; s++)
        atomic_store_explicit(&m->stash[s], GHMI_EMPTY_SLOT, memory_order_relaxed);
}

/* Forgets the content (the table memory is kept for the next build unless release is set). */
static void reset_content(CpuMap *m, int release)
{
    if (release) {
        free(m->slots);
        m->slots = NULL;
        m->capacity = 0;
        m->range = 0;
    }
    m->built = 0;
    m->stash_active = 0;
    m->have_oob = 0;
    m->size = 0;
    m->stash_count = 0;
}

static int try_build(CpuMap *m, int attempt, const uint32_t *keys, const uint32_t *values,
                     size_t n)
{
    BuildShared sh;
    atomic_init(&sh.failed, 0);
    atomic_init(&sh.stash_used, 0);
    atomic_init(&sh.oob_min, UINT32_MAX);
    atomic_init(&sh.oob_seen, 0);
    sh.max_chain = max_chain_for(m, n);
    m->hc = ghmi_hash_consts(m->ctx->seed, attempt);
    clear_table(m);
    ghmi_cpu_map_insert_all(m, &sh, keys, values, n);
    if (atomic_load(&sh.failed))
        return GHM_ERR_BUILD_FAILED;
    m->stash_active = atomic_load(&sh.stash_used);
    m->have_oob = atomic_load(&sh.oob_seen);
    m->oob_value = atomic_load(&sh.oob_min);
    m->size = ghmi_cpu_map_merge(m) + (size_t)m->have_oob;
    return GHM_OK;
}

static int cpu_map_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CpuMap *m = impl;
    reset_content(m, 0);
    int ret = alloc_table(m, n);
    if (ret < 0) {
        reset_content(m, 1);
        return ret;
    }
    for (int attempt = 0; attempt <= m->opt.max_rebuilds; attempt++) {
        ret = try_build(m, attempt, keys, values, n);
        if (ret == GHM_OK) {
            m->rebuilds = attempt;
            m->built = 1;
            return GHM_OK;
        }
    }
    reset_content(m, 1);
    m->rebuilds = m->opt.max_rebuilds;
    return GHM_ERR_BUILD_FAILED;
}

/* ---- find ---- */

static uint32_t stash_find(const CpuMap *m, uint32_t key)
{
    uint64_t e = atomic_load_explicit(&m->stash[ghmi_stash_hash(&m->hc, key)],
                                      memory_order_relaxed);
    return ghmi_slot_key(e) == key ? ghmi_slot_value(e) : GHM_NOT_FOUND;
}

static uint32_t bucketed_find(const CpuMap *m, uint32_t key, const uint32_t *b)
{
    for (int i = 0; i < m->opt.hash_functions; i++) {
        const Slot *bucket = m->slots + (size_t)b[i] * GHMI_BUCKET_SLOTS;
        unsigned mine = ghmi_key_mask(bucket, key);
        if (mine)
            return ghmi_slot_value(
                atomic_load_explicit(&bucket[__builtin_ctz(mine)], memory_order_relaxed));
    }
    return m->stash_active ? stash_find(m, key) : GHM_NOT_FOUND;
}

/* The thesis layout's find, pipelined (cpu_find_lanes.h): it probes h_1, h_2, ... in order and
 * stops at the first empty slot - the key cannot lie beyond it, because it only reaches h_{i+1}
 * after being evicted from an (ever after full) h_i - so most keys need one or two of their
 * lines, fetched one per pass. Lane: probe the hash function i, pos its slot. */
static int thesis_start(const void *map, GhmiLane *l, uint32_t *value)
{
    const CpuMap *m = map;
    if (l->key == GHMI_EMPTY_KEY) {
        *value = m->have_oob ? m->oob_value : GHM_NOT_FOUND;
        return 1;
    }
    l->probe = 0;
    l->pos = ghmi_hash(&m->hc, 0, l->key, m->range);
    __builtin_prefetch(m->slots + l->pos);
    return 0;
}

static int thesis_step(const void *map, GhmiLane *l, uint32_t *value)
{
    const CpuMap *m = map;
    uint64_t e = atomic_load_explicit(&m->slots[l->pos], memory_order_relaxed);
    if (ghmi_slot_key(e) == l->key) {
        *value = ghmi_slot_value(e);
        return 1;
    }
    if (e == GHMI_EMPTY_SLOT || (int)++l->probe == m->opt.hash_functions) {
        *value = m->stash_active ? stash_find(m, l->key) : GHM_NOT_FOUND;
        return 1;
    }
    l->pos = ghmi_hash(&m->hc, (int)l->probe, l->key, m->range);
    __builtin_prefetch(m->slots + l->pos);
    return 0;
}

/* The bucketed layout's find, one batch: first all hashes and prefetches (every candidate bucket:
 * a key's two lines are fetched together), then the probes, so that GHMI_CPU_BATCH keys' cache
 * misses are in flight at once instead of one. */
static void bucketed_batch(const CpuMap *m, const uint32_t *keys, size_t cnt, uint32_t *out)
{
    uint32_t h[GHMI_CPU_BATCH][GHMI_MAX_HASH];
    int nh = m->opt.hash_functions;
    for (size_t i = 0; i < cnt; i++) {
        for (int j = 0; j < nh; j++) {
            h[i][j] = ghmi_hash(&m->hc, j, keys[i], m->range);
            __builtin_prefetch(m->slots + (size_t)h[i][j] * GHMI_BUCKET_SLOTS);
        }
    }
    for (size_t i = 0; i < cnt; i++) {
        uint32_t k = keys[i];
        if (k == GHMI_EMPTY_KEY)
            out[i] = m->have_oob ? m->oob_value : GHM_NOT_FOUND;
        else
            out[i] = bucketed_find(m, k, h[i]);
    }
}

static int cpu_map_find(const void *impl, const uint32_t *keys, size_t n, uint32_t *out)
{
    const CpuMap *m = impl;
    if (!m->built) {
        for (size_t i = 0; i < n; i++)
            out[i] = GHM_NOT_FOUND;
        return GHM_OK;
    }
    if (m->opt.layout == GHM_MAP_THESIS) {
        GHMI_FIND_LANES_PARALLEL(m, keys, n, out, ghmi_cpu_threads(m), thesis_start,
                                 thesis_step);
        return GHM_OK;
    }
    size_t nbatch = (n + GHMI_CPU_BATCH - 1) / GHMI_CPU_BATCH;
#pragma omp parallel for schedule(dynamic, 64) num_threads(ghmi_cpu_threads(m)) if (n > 4096)
    for (size_t bi = 0; bi < nbatch; bi++) {
        size_t lo = bi * GHMI_CPU_BATCH;
        size_t cnt = lo + GHMI_CPU_BATCH < n ? GHMI_CPU_BATCH : n - lo;
        bucketed_batch(m, keys + lo, cnt, out + lo);
    }
    return GHM_OK;
}

int ghmi_cpu_map_clone(GhmContext *ctx, const void *src, void **impl)
{
    const CpuMap *s = src;
    CpuMap *m = malloc(sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    *m = *s; /* the options, constants, stash and counts; the table below */
    m->ctx = ctx;
    m->slots = NULL;
    if (s->slots && !(m->slots = ghmi_cpu_alloc_slots(s->capacity))) {
        free(m);
        return GHM_ERR_NOMEM;
    }
    if (s->slots)
        memcpy((void *)m->slots, (const void *)s->slots, s->capacity * sizeof *s->slots);
    *impl = m;
    return GHM_OK;
}

static int cpu_map_stats(const void *impl, GhmMapStats *out)
{
    const CpuMap *m = impl;
    out->size = m->size;
    out->capacity = m->capacity;
    out->stash_used = m->stash_count;
    out->rebuilds = m->rebuilds;
    out->bytes = m->capacity * sizeof(Slot) + sizeof m->stash;
    return GHM_OK;
}

const GhmMapOps ghm_cpu_map_ops = {
    .create = cpu_map_create,
    .build = cpu_map_build,
    .find = cpu_map_find,
    .stats = cpu_map_stats,
    .destroy = cpu_map_destroy,
};
