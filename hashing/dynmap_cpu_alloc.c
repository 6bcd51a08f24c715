/*
 * dynmap_cpu_alloc.c - GhmDynmap's CPU slab allocator, after SlabHash's SlabAlloc as the paper
 * uses it: memory blocks of 1024 slabs with a bitmask of the slabs handed out, obtained in super
 * blocks of 16. A thread starts where its hint points (at first a random place, then its last
 * slab) and scans the masks for zero bits, taking those it needs of a word with one atomic OR;
 * when the block is full it moves on. Enough free slabs are reserved before a batch
 * (ghmi_slab_reserve), so the scan ends. Slabs go back sorted, a mask word at a time. The
 * counts of free slabs are per block and per super block; nothing is shared by every thread
 * (the slabs in use are summed when asked).
 */
#include "dynmap_internal.h"

#include <stdlib.h>
#include <string.h>

static GhmiSuperBlock *super_new(int reserve_first)
{
    GhmiSuperBlock *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    size_t bytes = (size_t)GHMI_SLABS_PER_SUPER * GHMI_SLAB_WORDS * sizeof(uint32_t);
    s->slabs = aligned_alloc(128, bytes);
    if (!s->slabs) {
        free(s);
        return NULL;
    }
    memset(s->slabs, 0, bytes);
    for (int b = 0; b < GHMI_BLOCKS_PER_SUPER; b++)
        atomic_store_explicit(&s->free_in_block[b], GHMI_SLABS_PER_BLOCK, memory_order_relaxed);
    atomic_store_explicit(&s->free_slabs, GHMI_SLABS_PER_SUPER, memory_order_relaxed);
    if (reserve_first) { /* slab 0 is the null link */
        atomic_store_explicit(&s->bits[0], 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&s->free_in_block[0], 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&s->free_slabs, 1, memory_order_relaxed);
    }
    return s;
}

int ghmi_slab_reserve(GhmiSlabAlloc *a, size_t need)
{
    while (ghmi_slab_total(a) - ghmi_slab_used(a) < need) {
        if (a->n_supers + 1 > ((size_t)1 << 32) / GHMI_SLABS_PER_SUPER)
            return GHM_ERR_TOO_LARGE;
        if (a->n_supers == a->cap_supers) {
            size_t cap = a->cap_supers ? 2 * a->cap_supers : 8;
            GhmiSuperBlock **d = realloc(a->supers, cap * sizeof *d);
            if (!d)
                return GHM_ERR_NOMEM;
            a->supers = d;
            a->cap_supers = cap;
        }
        GhmiSuperBlock *s = super_new(a->n_supers == 0);
        if (!s)
            return GHM_ERR_NOMEM;
        a->supers[a->n_supers++] = s;
    }
    return GHM_OK;
}

/* The lowest min(k, free) zero bits of v. */
static uint64_t lowest_zeros(uint64_t v, size_t k)
{
    uint64_t free_bits = ~v, take = 0;
    if ((size_t)__builtin_popcountll(free_bits) <= k)
        return free_bits;
    for (size_t i = 0; i < k; i++) {
        take |= free_bits & (~free_bits + 1);
        free_bits &= free_bits - 1;
    }
    return take;
}

/* Takes the wanted zero bits of one mask word; returns how many were ours (another thread may
 * have taken some first) and writes their slabs to out. */
static size_t take_bits(GhmiSuperBlock *s, size_t super, unsigned blk, unsigned w, uint64_t want,
                        uint32_t *out)
{
    _Atomic uint64_t *word = &s->bits[blk * (GHMI_SLABS_PER_BLOCK / 64) + w];
    uint64_t mine = want & ~atomic_fetch_or_explicit(word, want, memory_order_acq_rel);
    size_t got = 0;
    for (; mine; mine &= mine - 1) {
        unsigned idx = blk * GHMI_SLABS_PER_BLOCK + w * 64 + (unsigned)__builtin_ctzll(mine);
        out[got++] = (uint32_t)(super * GHMI_SLABS_PER_SUPER + idx);
    }
    if (got) {
        atomic_fetch_sub_explicit(&s->free_in_block[blk], (int32_t)got, memory_order_relaxed);
        atomic_fetch_sub_explicit(&s->free_slabs, (int32_t)got, memory_order_relaxed);
    }
    return got;
}

/* A thread starts where its last slab came from (*hint holds that slab; at first, a random
 * number): that mask word most likely has more zero bits and is in this thread's cache. A
 * random start for every slab missed the cache three or four times a slab (the super block's
 * count, the block's, the mask words) and took 300-660 ns a slab on 2 cores, 40 % of an
 * insert's store phase. A word's free slabs are taken together (one atomic for up to 64), so
 * the slabs of one call lie mostly side by side. */
void ghmi_slab_alloc_many(GhmiSlabAlloc *a, uint64_t *hint, uint32_t *out, size_t n)
{
    if (n == 0)
        return;
    size_t at = (size_t)(*hint % ghmi_slab_total(a)), got = 0;
    size_t super = at / GHMI_SLABS_PER_SUPER;
    unsigned block = (unsigned)(at % GHMI_SLABS_PER_SUPER) / GHMI_SLABS_PER_BLOCK;
    unsigned word0 = (unsigned)(at % GHMI_SLABS_PER_BLOCK) / 64;
    for (size_t tried = 0;; tried++) {
        /* The reservation guarantees free slabs; the counts may lag a concurrent release by a
         * moment, so keep going round, but not forever. */
        GHM_ASSERT(tried <= 64 * a->n_supers + 1024);
        GhmiSuperBlock *s = a->supers[super];
        size_t here = super;
        super = (super + 1) % a->n_supers;
        if (atomic_load_explicit(&s->free_slabs, memory_order_relaxed) <= 0)
            continue;
        for (unsigned b = 0; b < GHMI_BLOCKS_PER_SUPER; b++) {
            unsigned blk = (block + b) % GHMI_BLOCKS_PER_SUPER;
            if (atomic_load_explicit(&s->free_in_block[blk], memory_order_relaxed) <= 0)
                continue;
            for (unsigned k = 0; k < GHMI_SLABS_PER_BLOCK / 64; k++) {
                unsigned w = (word0 + k) % (GHMI_SLABS_PER_BLOCK / 64);
                uint64_t v = atomic_load_explicit(&s->bits[blk * (GHMI_SLABS_PER_BLOCK / 64) + w],
                                                  memory_order_relaxed);
                while (~v && got < n) {
                    uint64_t want = lowest_zeros(v, n - got);
                    got += take_bits(s, here, blk, w, want, out + got);
                    v |= want;
                }
                if (got == n) {
                    *hint = out[n - 1];
                    return;
                }
            }
        }
        block = 0;
        word0 = 0;
    }
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return (a > b) - (a < b);
}

/* Sorted first, so that the slabs of one mask word are returned by one atomic and the counts
 * change once a word: released one by one, the slabs an insert took side by side made a gc's
 * threads queue on the same words and counts (16 cores: 17-36 ms against 6-9). */
void ghmi_slab_release_many(GhmiSlabAlloc *a, uint32_t *slabs, size_t n)
{
    qsort(slabs, n, sizeof *slabs, cmp_u32);
    for (size_t i = 0, j; i < n; i = j) {
        uint64_t bits = 0;
        for (j = i; j < n && slabs[j] / 64 == slabs[i] / 64; j++) {
            uint32_t *p = ghmi_slab_ptr(a, slabs[j]);
            atomic_store_explicit((_Atomic uint32_t *)&p[GHMI_SLAB_NEXT], 0, memory_order_relaxed);
            atomic_store_explicit((_Atomic uint32_t *)&p[GHMI_SLAB_MASK], 0, memory_order_relaxed);
            bits |= (uint64_t)1 << (slabs[j] % 64);
        }
        GhmiSuperBlock *s = a->supers[slabs[i] / GHMI_SLABS_PER_SUPER];
        unsigned idx = slabs[i] % GHMI_SLABS_PER_SUPER;
        atomic_fetch_and_explicit(&s->bits[idx / 64], ~bits, memory_order_acq_rel);
        atomic_fetch_add_explicit(&s->free_in_block[idx / GHMI_SLABS_PER_BLOCK], (int32_t)(j - i),
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&s->free_slabs, (int32_t)(j - i), memory_order_relaxed);
    }
}

int ghmi_slab_live(const GhmiSlabAlloc *a, uint32_t slab)
{
    if (slab == 0 || slab / GHMI_SLABS_PER_SUPER >= a->n_supers)
        return 0;
    GhmiSuperBlock *s = a->supers[slab / GHMI_SLABS_PER_SUPER];
    unsigned idx = slab % GHMI_SLABS_PER_SUPER;
    return (int)(atomic_load_explicit(&s->bits[idx / 64], memory_order_relaxed) >> (idx % 64) & 1);
}

size_t ghmi_slab_total(const GhmiSlabAlloc *a)
{
    return a->n_supers * GHMI_SLABS_PER_SUPER;
}

/* Summed from the super blocks' counts when asked (a reservation, stats), so that taking and
 * returning a slab touches no counter shared by every thread. */
size_t ghmi_slab_used(const GhmiSlabAlloc *a)
{
    size_t free_slabs = 0;
    for (size_t i = 0; i < a->n_supers; i++)
        free_slabs += (size_t)atomic_load_explicit(&a->supers[i]->free_slabs, memory_order_relaxed);
    return ghmi_slab_total(a) - free_slabs;
}

size_t ghmi_slab_bytes(const GhmiSlabAlloc *a)
{
    return a->n_supers * (sizeof(GhmiSuperBlock) +
                          (size_t)GHMI_SLABS_PER_SUPER * GHMI_SLAB_WORDS * sizeof(uint32_t)) +
           a->cap_supers * sizeof(GhmiSuperBlock *);
}

void ghmi_slab_alloc_free(GhmiSlabAlloc *a)
{
    for (size_t i = 0; i < a->n_supers; i++) {
        free(a->supers[i]->slabs);
        free(a->supers[i]);
    }
    free(a->supers);
    memset(a, 0, sizeof *a);
}
