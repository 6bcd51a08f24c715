/* check_probe_family.c - hashing/probe_family.h's Robin Hood rule (ghmi_robin_passed_over) on
 * the host, where CI runs it: tables built here by the paper's atomic-max insert, one word at a
 * time (the order does not change the table), then rewritten to key << 32 | value as the CUDA
 * build leaves them. The rule must never end the walk of a key that lies further on, and must
 * end absent keys' walks before the max-age table alone would. */
#include <stdlib.h>

#include "hash_internal.h"
#include "probe_family.h"
#include "test_support.h"

enum { KEYS = 20000 };

typedef struct Built {
    GhmiRobinTable t;
    uint64_t *slots; /* key << 32 | value (the key's index), GHMI_EMPTY_SLOT where empty */
    uint8_t *mat;    /* per home: the largest age of the keys that start there */
    uint32_t oldest;
} Built;

static uint32_t key_of(uint32_t i) { return ghmi_permute32(i, 0x5EED); }

/* Inserts `n` keys by the atomic-max rule, at most GHMI_RH_MAX_AGE ages each; returns the keys
 * that aged past it (a build would stash them). */
static size_t insert_all(Built *b, uint32_t n)
{
    uint64_t *w = calloc(b->t.capacity, sizeof *w);
    ck_assert_ptr_nonnull(w);
    size_t over = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t cur = ghmi_rh_word(1, key_of(i), i);
        for (;;) {
            uint32_t k = ghmi_rh_key(cur), a = ghmi_rh_age(cur);
            uint32_t pos = ghmi_robin_probe(&b->t, k, ghmi_robin_home(&b->t, k), a);
            uint64_t prev = w[pos];
            if (prev < cur) {
                w[pos] = cur;
                cur = prev;
            }
            if (!cur)
                break;
            if (ghmi_rh_age(cur) == GHMI_RH_MAX_AGE) {
                over++;
                break;
            }
            cur += (uint64_t)1 << 60;
        }
    }
    for (uint32_t p = 0; p < b->t.capacity; p++) {
        uint32_t k = ghmi_rh_key(w[p]), a = ghmi_rh_age(w[p]);
        b->slots[p] = w[p] ? ghmi_pack(k, ghmi_rh_idx(w[p])) : GHMI_EMPTY_SLOT;
        if (w[p]) {
            uint32_t home = ghmi_robin_home(&b->t, k);
            b->mat[home] = a > b->mat[home] ? (uint8_t)a : b->mat[home];
            b->oldest = a > b->oldest ? a : b->oldest;
        }
    }
    free(w);
    return over;
}

static void build(Built *b, int coherent, double load, uint32_t n)
{
    ck_assert_int_eq(ghmi_robin_table(coherent, n, load, 7, 0, &b->t), GHM_OK);
    b->slots = malloc(b->t.capacity * sizeof *b->slots);
    b->mat = calloc(b->t.capacity, 1);
    b->oldest = 0;
    ck_assert(b->slots && b->mat);
    ck_assert_uint_eq(insert_all(b, n), 0);
}

static void built_free(Built *b)
{
    free(b->slots);
    free(b->mat);
}

/* Probes of key's walk (ages 1 .. its home's max age) before it ends: found, an empty slot, or
 * with `rule`, the Robin Hood rule. *found: the key's slot was reached. */
static uint32_t walk(const Built *b, uint32_t key, int rule, int *found)
{
    uint32_t home = ghmi_robin_home(&b->t, key), last = b->mat[home];
    *found = 0;
    for (uint32_t a = 1; a <= last; a++) {
        uint32_t pos = ghmi_robin_probe(&b->t, key, home, a);
        uint64_t e = b->slots[pos];
        if (ghmi_slot_key(e) == key && e != GHMI_EMPTY_SLOT) {
            *found = 1;
            return a;
        }
        if (e == GHMI_EMPTY_SLOT ||
            (rule && ghmi_robin_passed_over(&b->t, key, a, ghmi_slot_key(e), pos, b->oldest)))
            return a;
    }
    return last;
}

static void check_rule(int coherent, double load)
{
    Built b;
    build(&b, coherent, load, KEYS);
    size_t lost = 0, plain = 0, ruled = 0;
    for (uint32_t i = 0; i < KEYS; i++) { /* every stored key is still found */
        int found;
        walk(&b, key_of(i), 1, &found);
        lost += !found;
    }
    for (uint32_t i = KEYS; i < 2 * KEYS; i++) { /* absent keys: never found, walks shorter */
        int found_plain, found_rule;
        plain += walk(&b, key_of(i), 0, &found_plain);
        ruled += walk(&b, key_of(i), 1, &found_rule);
        ck_assert(!found_plain && !found_rule);
    }
    ck_assert_msg(lost == 0, "coherent %d load %.2f: %zu stored keys not found with the rule",
                  coherent, load, lost);
    ck_assert_msg(ruled < plain, "coherent %d load %.2f: absent keys' probes %zu with the rule, "
                  "%zu without", coherent, load, ruled, plain);
    built_free(&b);
}

START_TEST(test_rule_random_sequence)
{
    check_rule(0, 0.8);
    check_rule(0, 0.95);
    check_rule(0, 0.99);
}
END_TEST

START_TEST(test_rule_coherent_sequence)
{
    check_rule(1, 0.8);
    check_rule(1, 0.99);
}
END_TEST

/* A key whose ages 1 .. GHMI_RH_MAX_AGE land on distinct slots. */
static uint32_t distinct_walk_key(const GhmiRobinTable *t)
{
    for (uint32_t r = 1;; r++) {
        uint32_t home = ghmi_robin_home(t, r), seen = 0;
        for (uint32_t a = 1; a <= GHMI_RH_MAX_AGE; a++)
            for (uint32_t b = 1; b < a; b++)
                seen += ghmi_robin_probe(t, r, home, a) == ghmi_robin_probe(t, r, home, b);
        if (!seen)
            return r;
    }
}

/* A resident younger than the probe proves absence; one that may be older never does. */
START_TEST(test_rule_by_hand)
{
    GhmiRobinTable t;
    ck_assert_int_eq(ghmi_robin_table(0, 1000, 0.5, 3, 0, &t), GHM_OK);
    uint32_t r = distinct_walk_key(&t), home = ghmi_robin_home(&t, r), oldest = 6;
    uint32_t at1 = ghmi_robin_probe(&t, r, home, 1), at3 = ghmi_robin_probe(&t, r, home, 3);
    ck_assert_int_eq(ghmi_robin_passed_over(&t, 99, 2, r, at1, oldest), 1);
    ck_assert_int_eq(ghmi_robin_passed_over(&t, 99, 2, r, at3, oldest), 0);
    /* as old: the smaller key would have lost the slot */
    ck_assert_int_eq(ghmi_robin_passed_over(&t, r + 1, 3, r, at3, oldest), 1);
    ck_assert_int_eq(ghmi_robin_passed_over(&t, r - 1, 3, r, at3, oldest), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("probe_family");
    TCase *rule = tcase_create("robin_rule");
    tcase_add_test(rule, test_rule_by_hand);
    tcase_add_test(rule, test_rule_random_sequence);
    tcase_add_test(rule, test_rule_coherent_sequence);
    suite_add_tcase(s, rule);
    return s;
}

int main(void) { return ghm_test_main(suite()); }
