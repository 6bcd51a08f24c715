/*
 * two_level_family.h - the two-level cuckoo table (Alcantara et al., Real-Time Parallel Hashing on
 * the GPU, 2009, section 4; the slides' phases; Alcantara's thesis, chapter 5), defined once for
 * the CPU table (map_two_level_cpu.c) and the CUDA table (kernels/hashing/map_two_level.cu): its
 * sizing, the first-level hash that splits the keys into buckets, the per-bucket sub-table
 * hashes and the layout of the slots, so that both backends place every key in the same bucket
 * and probe the same three slots.
 *
 * Layout (the paper's figure 1): `buckets` buckets of three sub-tables of GHMI_TL_SUB slots each;
 * sub-table 0 of every bucket comes first, then every sub-table 1, then every sub-table 2, so that
 * finds that stop at their first probe read one third of the memory. Slots are hash_family.h's
 * 64-bit key << 32 | value, all ones empty; the key 0xFFFFFFFF is kept out of band.
 *
 * Bucket b was built with its own seed number seeds[b] (0 .. GHMI_TL_SEEDS - 1): sub-table i's
 * hash is the attempt's pair (a_i, b_i) moved by the seed. A find hashes the key to its bucket,
 * reads the seed and probes at most the three sub-tables.
 */
#ifndef GHM_TWO_LEVEL_FAMILY_H
#define GHM_TWO_LEVEL_FAMILY_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ghm_map.h"
#include "hash_family.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GHMI_TL_TABLES 3       /* sub-tables per bucket: the paper's three */
#define GHMI_TL_SUB 192        /* slots per sub-table: the paper's 3 x 192 = 576 per bucket */
#define GHMI_TL_BUCKET_SLOTS (GHMI_TL_TABLES * GHMI_TL_SUB)
/* Seeds a bucket tries before its attempt fails (the paper: "a few buckets fail to build with
 * the first hash functions, and these typically succeed after restarting once"). */
#define GHMI_TL_SEEDS 16
/* CUDA: rounds of the parallel cuckoo build per seed, each round a write of every unplaced key
 * into the next sub-table, 32 loops through the three (the paper gives up past 25 iterations and
 * averages 5.5 loops). A host simulation of these rounds on random keys (every unplaced key
 * writing, in random order; 2000 buckets each) took 15.6 rounds on average for 409 keys and
 * never failed; 512 keys failed 0.8 seeds per bucket and no bucket ran out of its 16 seeds; 520
 * keys ran out in 1 % of buckets, 530 in half (a bucket draws 520 keys at the top load with a
 * probability near 1e-8). CPU: evictions of one insert per seed. */
#define GHMI_TL_ROUNDS 96

typedef struct GhmiTwoLevelTable {
    uint32_t buckets;
    uint32_t a0, b0;                               /* the first level: key -> bucket */
    uint32_t a[GHMI_TL_TABLES], b[GHMI_TL_TABLES]; /* the sub-tables, before the bucket's seed */
} GhmiTwoLevelTable;

/* The table of attempt `attempt` (phase 1 restarts with new constants) for n pairs at load
 * `load` (keys per slot, at most GHM_MAP_TWO_LEVEL_MAX_LOAD): ceil(n / (load * 576)) buckets, at
 * least one. GHM_ERR_TOO_LARGE when the slots would pass 32-bit numbers. Host only. */
static inline int ghmi_two_level_table(size_t n, double load, uint64_t seed, int attempt,
                                       GhmiTwoLevelTable *t)
{
    double want = ceil((double)n / (load * GHMI_TL_BUCKET_SLOTS));
    if (want * GHMI_TL_BUCKET_SLOTS > 4294967295.0)
        return GHM_ERR_TOO_LARGE;
    GhmiHashConsts c = ghmi_hash_consts(seed ^ 0x54574F4C4556454Cull, attempt); /* "TWOLEVEL" */
    t->buckets = want < 1 ? 1 : (uint32_t)want;
    t->a0 = c.a[0];
    t->b0 = c.b[0];
    for (int i = 0; i < GHMI_TL_TABLES; i++) {
        t->a[i] = c.a[1 + i];
        t->b[i] = c.b[1 + i];
    }
    return GHM_OK;
}

GHMI_HD uint32_t ghmi_tl_slots(const GhmiTwoLevelTable *t)
{
    return t->buckets * GHMI_TL_BUCKET_SLOTS;
}

GHMI_HD uint32_t ghmi_tl_bucket(const GhmiTwoLevelTable *t, uint32_t key)
{
    return ghmi_hash_pair(key, t->a0, t->b0, t->buckets);
}

/* The key's position in sub-table i (0 .. GHMI_TL_SUB - 1) of a bucket built with seed number
 * `seed`. The seed moves the multiplier by an even step (it stays odd) and the addend by an odd
 * one, so every seed gives the bucket new functions. */
GHMI_HD uint32_t ghmi_tl_pos(const GhmiTwoLevelTable *t, int i, uint32_t seed, uint32_t key)
{
    return ghmi_hash_pair(key, t->a[i] + seed * 0x9E3779B6u, t->b[i] + seed * 0x85EBCA6Bu,
                          GHMI_TL_SUB);
}

/* Where sub-table i of bucket b keeps position pos in the table of all slots. */
GHMI_HD uint32_t ghmi_tl_slot(const GhmiTwoLevelTable *t, int i, uint32_t b, uint32_t pos)
{
    return ((uint32_t)i * t->buckets + b) * GHMI_TL_SUB + pos;
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_TWO_LEVEL_FAMILY_H */
