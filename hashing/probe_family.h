/*
 * probe_family.h - the probe sequences of the open-addressing maps (linear, quadratic and double
 * hashing: Alcantara's thesis, chapter 3) and of the Robin Hood maps (Garcia, Lefebvre, Hornus,
 * Lasram: Coherent Parallel Hashing, 2011), defined once for the CPU tables (map_open_cpu.c,
 * map_robin_cpu.c) and the CUDA tables (kernels/hashing/map_open.cu, map_robin.cu), with their
 * sizing and the derivation of their constants from the context's seed and the build attempt, so
 * that both backends probe the same slots.
 *
 * Both families store hash_family.h's 64-bit slots (key << 32 | value, all ones empty) and keep
 * the key 0xFFFFFFFF out of band, as the cuckoo maps do. Last, the bucket numbering of chaining by
 * radix sort (thesis chapter 4: map_chain_cpu.c, kernels/hashing/map_chain.cu), which needs no
 * empty marker.
 */
#ifndef GHM_PROBE_FAMILY_H
#define GHM_PROBE_FAMILY_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "ghm_map.h"
#include "hash_family.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- open addressing ------------------------------------------------------------------------ */

/* One attempt's table. The capacity is prime, so that every double-hashing step (1 .. capacity
 * - 1) is coprime with it and the sequence visits every slot; linear probing does too, whatever
 * the capacity. The quadratic sequence h, h + 1, h + 3, h + 6 ... (triangular steps) visits only
 * part of a prime table; the thesis uses power-of-two tables, where it visits all, but those
 * would round the caller's load factor away, so a key that finds no slot within the bound fails
 * the attempt and the build retries with new constants (never observed below load 0.99). */
typedef struct GhmiOpenTable {
    uint32_t capacity;   /* slots, prime */
    uint32_t scheme;     /* GHM_MAP_LINEAR, GHM_MAP_QUADRATIC or GHM_MAP_DOUBLE */
    uint32_t a, b;       /* the home slot's hash */
    uint32_t a2, b2;     /* double hashing: the step's hash */
    uint32_t max_probes; /* building: the bound; built: the longest sequence of a stored key */
} GhmiOpenTable;

static inline int ghmi_is_prime(uint32_t n)
{
    if (n < 2)
        return 0;
    for (uint32_t d = 2; (uint64_t)d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

/* The table of attempt `attempt` for n keys at load `load`; GHM_ERR_TOO_LARGE past 32-bit
 * slot numbers. Host only. */
/* The first prime at or above n / load (at least 2), the size of the open-addressing and Robin
 * Hood tables; GHM_ERR_TOO_LARGE past the largest 32-bit prime. Host only. */
static inline int ghmi_prime_capacity(size_t n, double load, uint32_t *cap)
{
    double want = ceil((double)n / load);
    if (want > 4294967291.0) /* the largest 32-bit prime */
        return GHM_ERR_TOO_LARGE;
    *cap = want < 2 ? 2 : (uint32_t)want;
    while (!ghmi_is_prime(*cap))
        (*cap)++;
    return GHM_OK;
}

static inline int ghmi_open_table(uint32_t scheme, size_t n, double load, uint64_t seed,
                                  int attempt, GhmiOpenTable *t)
{
    uint32_t cap;
    if (ghmi_prime_capacity(n, load, &cap) < 0)
        return GHM_ERR_TOO_LARGE;
    GhmiHashConsts c = ghmi_hash_consts(seed ^ 0x4F50454E41444452ull, attempt); /* "OPENADDR" */
    t->capacity = cap;
    t->scheme = scheme;
    t->a = c.a[0];
    t->b = c.b[0];
    t->a2 = c.a[1];
    t->b2 = c.b[1];
    t->max_probes = cap; /* with a free slot left (load < 1), linear probing always ends */
    return GHM_OK;
}

/* Linear probing's home is the first slot of a 64-byte window (8 slots) that the hash picks,
 * not any slot: both finds compare a window's eight slots at once (the CUDA find's four 16-byte
 * loads in open_find_linear, the CPU's SSE2 compares in map_open_cpu.c), and a key whose home
 * starts its window is in that window unless the window overflowed, where a key hashed to its
 * last slots spilled into the next one almost always. Departure from the thesis (chapter 3 probes
 * slot by slot), as cuCollections' windows depart. Measured (docs/BENCHMARKS.md, 2026-11-28 and
 * 2026-11-29): CUDA finds 7-8 % faster at every load (windows of 4 and 16 slower); the CPU's finds
 * 1.2-2x faster at loads 0.5-0.9 once it compares windows whole (slot by slot from a window's
 * first slot they were 20-30 % slower). Quadratic and double hashing keep slot homes: keys that
 * share a home share their whole quadratic sequence. */
#define GHMI_OPEN_WINDOW 8

GHMI_HD uint32_t ghmi_open_home(const GhmiOpenTable *t, uint32_t key)
{
    if (t->scheme == GHM_MAP_LINEAR && t->capacity >= 2 * GHMI_OPEN_WINDOW)
        return GHMI_OPEN_WINDOW * ghmi_hash_pair(key, t->a, t->b, t->capacity / GHMI_OPEN_WINDOW);
    return ghmi_hash_pair(key, t->a, t->b, t->capacity);
}

/* The first step: 1, or double hashing's 1 .. capacity - 1. */
GHMI_HD uint32_t ghmi_open_first_step(const GhmiOpenTable *t, uint32_t key)
{
    if (t->scheme != GHM_MAP_DOUBLE || t->capacity < 3)
        return 1;
    return 1 + ghmi_hash_pair(key, t->a2, t->b2, t->capacity - 1);
}

/* Moves *pos to the next slot of the sequence after probe number `probe` (0 = the home slot).
 * Steps stay below the capacity (a sequence is at most capacity probes long), so one
 * subtraction wraps. */
GHMI_HD void ghmi_open_next(const GhmiOpenTable *t, uint32_t *pos, uint32_t *step)
{
    uint32_t p = *pos + *step;
    *pos = p >= t->capacity || p < *pos ? p - t->capacity : p;
    if (t->scheme == GHM_MAP_QUADRATIC && *step + 1 < t->capacity)
        (*step)++;
}

/* ---- Robin Hood --------------------------------------------------------------------------------
 * A key's age is its probe number, 1 .. GHMI_RH_MAX_AGE. While a table is built each slot holds a
 * 64-bit word age << 60 | key << 28 | i, where i is the pair's index in the input (its value is
 * fetched after the build, since a 32-bit value does not fit beside the key and the age). An
 * atomic max of that word is the Robin Hood rule: the older key wins the slot, and the loser moves
 * on. The paper packs the age, a 28-bit key and its data in one word; our keys are 32-bit and so
 * the index stands in for the data, which limits a build to 2^28 pairs. Empty is 0 (age 0).
 * After the build every slot is rewritten in place to hash_family.h's key << 32 | value. */

#define GHMI_RH_MAX_AGE 15 /* the paper's 4-bit age: "we never observed an age above 15" */
/* Departure from the paper, which fails the build when a key would age past 15: such a key goes
 * to a stash of this many words instead (as the cuckoo map's stash absorbs its rare failures),
 * and the build fails only when the stash overflows. At 2^26 random keys and load 0.99 three
 * attempts in four had a key age past 15 (2026-11-27, docs/BENCHMARKS.md); a handful of keys
 * do, not hundreds. A find that walks off its sequence without the key looks through the stash
 * when it holds anything; duplicates there keep their smallest value (a find takes the least
 * among the stash's copies). */
#define GHMI_RH_STASH 128
#define GHMI_RH_IDX_BITS 28

typedef struct GhmiRobinTable {
    uint32_t capacity;
    uint32_t coherent;                     /* 1: h_i(k) = (k + o_i) mod |H|; 0: hash_i(k) */
    uint32_t offset[GHMI_RH_MAX_AGE + 1];  /* coherent: o_i for age i (o_1 = 0), each < |H| */
    uint32_t a, b;                         /* random: age i hashes with (a, b + i * golden) */
    uint32_t max_age;                      /* built: the largest age in the table */
} GhmiRobinTable;

/* The table of attempt `attempt` for n keys (host only). The first offset is 0, as in the paper,
 * so a key's home is k mod |H|; later attempts draw new offsets for the other ages. |H| is prime
 * (the paper leaves it free): keys on a lattice whose stride shares a factor with |H| (a
 * power-of-two stride, as in grid and packed keys, against an even |H|) would otherwise have
 * homes on a sub-lattice only, every attempt alike, since new offsets do not move the homes; a
 * prime |H| spreads any stride over every home while neighbouring keys stay neighbours. */
static inline int ghmi_robin_table(int coherent, size_t n, double load, uint64_t seed,
                                   int attempt, GhmiRobinTable *t)
{
    uint32_t cap;
    if (ghmi_prime_capacity(n, load, &cap) < 0)
        return GHM_ERR_TOO_LARGE;
    uint64_t base = ghmi_mix64(seed ^ 0x524F42494E484F4Full ^ ghmi_mix64((uint64_t)attempt));
    t->capacity = cap;
    t->coherent = (uint32_t)coherent;
    t->offset[0] = 0;
    t->offset[1] = 0;
    for (int i = 2; i <= GHMI_RH_MAX_AGE; i++)
        t->offset[i] = (uint32_t)(ghmi_mix64(base + (uint64_t)i) % cap);
    t->a = (uint32_t)ghmi_mix64(base) | 1u;
    t->b = (uint32_t)(ghmi_mix64(base) >> 32);
    t->max_age = 0;
    return GHM_OK;
}

/* Where the sequence starts: the slot of age 1, whose entry in the max-age table bounds the
 * search of every key that starts there. */
GHMI_HD uint32_t ghmi_robin_home(const GhmiRobinTable *t, uint32_t key)
{
    if (t->coherent)
        return key % t->capacity;
    return ghmi_hash_pair(key, t->a, t->b + 0x9E3779B9u, t->capacity);
}

/* The slot of age `age` (1 .. GHMI_RH_MAX_AGE) for a key whose home is `home`. */
GHMI_HD uint32_t ghmi_robin_probe(const GhmiRobinTable *t, uint32_t key, uint32_t home,
                                  uint32_t age)
{
    if (!t->coherent)
        return age == 1 ? home : ghmi_hash_pair(key, t->a, t->b + age * 0x9E3779B9u, t->capacity);
    uint32_t p = home + t->offset[age];
    return p >= t->capacity || p < home ? p - t->capacity : p;
}

GHMI_HD uint64_t ghmi_rh_word(uint32_t age, uint32_t key, uint32_t idx)
{
    return (uint64_t)age << 60 | (uint64_t)key << GHMI_RH_IDX_BITS | idx;
}
GHMI_HD uint32_t ghmi_rh_age(uint64_t w) { return (uint32_t)(w >> 60); }
GHMI_HD uint32_t ghmi_rh_key(uint64_t w) { return (uint32_t)(w >> GHMI_RH_IDX_BITS); }
GHMI_HD uint32_t ghmi_rh_idx(uint64_t w) { return (uint32_t)w & ((1u << GHMI_RH_IDX_BITS) - 1); }
/* Two words of the same key at the same slot have the same age: they differ in the index only. */
GHMI_HD int ghmi_rh_same_key(uint64_t w, uint64_t v)
{
    return (w >> GHMI_RH_IDX_BITS) == (v >> GHMI_RH_IDX_BITS);
}

/* The value of key among the first `used` stash slots (key << 32 | value), the smallest when
 * there are several copies, or GHM_NOT_FOUND. */
GHMI_HD uint32_t ghmi_rh_stash_value(const uint64_t *stash, uint32_t used, uint32_t key)
{
    uint64_t best = ~(uint64_t)0;
    for (uint32_t j = 0; j < used; j++)
        if (ghmi_slot_key(stash[j]) == key && stash[j] < best)
            best = stash[j];
    return best == ~(uint64_t)0 ? GHM_NOT_FOUND : ghmi_slot_value(best);
}

/* Distinct keys among the first `used` stash words (age | key | index, as the build leaves
 * them; host only). */
static inline uint32_t ghmi_rh_stash_distinct(const uint64_t *stash, uint32_t used)
{
    uint32_t distinct = 0;
    for (uint32_t j = 0; j < used; j++) {
        uint32_t seen = 0;
        for (uint32_t i = 0; i < j && !seen; i++)
            seen = ghmi_rh_key(stash[i]) == ghmi_rh_key(stash[j]);
        distinct += !seen;
    }
    return distinct;
}

/* The max-age table: 4 bits per home slot, 8 to a 32-bit word (the paper's packing; ages fit in
 * 4 bits, so the paper's optional quantisation to fewer bits is not needed). 0: no key starts
 * there, so an absent key starting there is rejected after that one read. */
GHMI_HD uint32_t ghmi_mat_words(uint32_t capacity) { return (capacity + 7) / 8; }
GHMI_HD uint32_t ghmi_mat_get(const uint32_t *mat, uint32_t home)
{
    return mat[home >> 3] >> ((home & 7) * 4) & 15u;
}

/* The Robin Hood rule, for a find in a built table (slots key << 32 | value): the probe of age
 * `age` for `key` met another key, `resident`, at slot `pos`. A key that went past this slot
 * met it with a word of age `age`, and the build's atomic max leaves a word at least as large
 * there; so a resident younger than `age`, or as old with a smaller key, proves that `key` is
 * not in the slots (the stash aside): 1, else 0. The resident's age is recomputed from its key
 * (ages up to `oldest`, the table's largest); where several of its ages land on pos, the oldest
 * counts, which can only miss a proof, never make a wrong one. Random keys at load 0.99: absent
 * keys probe 2.6 slots instead of the max-age table's 3.1 (a host simulation, 2026-11-30). */
GHMI_HD int ghmi_robin_passed_over(const GhmiRobinTable *t, uint32_t key, uint32_t age,
                                   uint32_t resident, uint32_t pos, uint32_t oldest)
{
    uint32_t home = ghmi_robin_home(t, resident);
    for (uint32_t j = oldest; j > age; j--)
        if (ghmi_robin_probe(t, resident, home, j) == pos)
            return 0;
    return ghmi_robin_probe(t, resident, home, age) != pos || resident < key;
}

/* ---- chaining ----------------------------------------------------------------------------------
 * Chaining by radix sort (thesis chapter 4): the pairs sorted by bucket, each bucket's run stored
 * contiguously, starts[b] .. starts[b + 1] the run of bucket b (buckets + 1 entries, 32-bit).
 *
 * A key's code is hash_family.h's mix of it, a bijection of 32-bit words (odd multiplier, then
 * murmur3's finaliser), and its bucket is the code's multiply-high onto the buckets, which is
 * monotone in the code. So one 32-bit radix sort of the codes orders the pairs by bucket and
 * brings the copies of a key together (equal codes are equal keys), where the thesis sorts by
 * bucket number alone and would need a second pass per bucket to find duplicates. The table
 * stores code << 32 | value: a find compares codes, never needs the key back, and stops early in
 * a run (sorted by code) at the first larger code. No value marks an empty slot, so the key
 * 0xFFFFFFFF is an ordinary key here.
 *
 * Buckets: the thesis compares tables of equal memory - a 64-bit slot per pair plus a 32-bit start
 * per bucket - and finds B ~ 0.5 N the balanced choice (tables 1.05N, 1.25N, 2N used B = 0.1N,
 * 0.5N, 2N). We read the load factor the same way, keys over the table's memory in 8-byte slots:
 * load = n / (n + B / 2), so B = 2 n (1 / load - 1). The default load 0.8 gives the thesis's
 * B = 0.5 N, load 0.5 its 2N table, 0.95 its 1.05N table; every scheme is then compared at equal
 * memory for equal load. Like every scheme's table, the pair array and the buckets are sized for
 * the n pairs given, duplicates included (only then does the load hold whatever the input). */
typedef struct GhmiChainTable {
    uint32_t pairs;     /* the pairs the table is sized for (it stores their distinct keys) */
    uint32_t buckets;   /* >= 1 */
    uint32_t a, b;      /* the code's constants */
    uint32_t max_chain; /* built: the longest run */
} GhmiChainTable;

/* The table for n pairs at load `load`; GHM_ERR_TOO_LARGE when positions or the starts would not
 * fit 32-bit entries. One attempt always succeeds, so the constants need no attempt number. Host
 * only. */
static inline int ghmi_chain_table(size_t n, double load, uint64_t seed, GhmiChainTable *t)
{
    double want = ceil(2.0 * (double)n * (1.0 / load - 1.0));
    if (n >= 0xFFFFFFFFu || want >= 4294967295.0)
        return GHM_ERR_TOO_LARGE;
    GhmiHashConsts c = ghmi_hash_consts(seed ^ 0x434841494E494E47ull, 0); /* "CHAINING" */
    t->pairs = (uint32_t)n;
    t->buckets = want < 1 ? 1 : (uint32_t)want;
    t->a = c.a[0];
    t->b = c.b[0];
    t->max_chain = 0;
    return GHM_OK;
}

GHMI_HD uint32_t ghmi_chain_code(const GhmiChainTable *t, uint32_t key)
{
    return ghmi_hash_mix(key, t->a, t->b);
}

GHMI_HD uint32_t ghmi_chain_bucket(const GhmiChainTable *t, uint32_t code)
{
    return ghmi_reduce(code, t->buckets);
}

/* The table's memory in 8-byte slots, what GhmMapStats.capacity reports: the pair array and the
 * buckets + 1 starts, so that n / capacity is the load asked for. */
GHMI_HD size_t ghmi_chain_capacity(const GhmiChainTable *t)
{
    return (size_t)t->pairs + ((size_t)t->buckets + 1) / 2;
}

GHMI_HD size_t ghmi_chain_bytes(const GhmiChainTable *t)
{
    return (size_t)t->pairs * 8 + ((size_t)t->buckets + 1) * 4;
}

#ifdef __cplusplus
}
#endif

#endif /* GHM_PROBE_FAMILY_H */
