/* check_keys.c - hashing/ghm_keys.h: the coordinate keys against bit-by-bit definitions, each
 * order a bijection of its domain, and Morton keys as a map's keys (the corner key 0xFFFFFFFF
 * included). */
#include <stdlib.h>

#include "ghm_keys.h"
#include "ghm_map.h"
#include "test_support.h"

/* The definitions, one bit at a time: coordinate c's bit b goes to bit dims * b + axis. */
static uint32_t interleave(const uint32_t *c, int dims, int bits)
{
    uint32_t k = 0;
    for (int b = 0; b < bits; b++)
        for (int a = 0; a < dims; a++)
            k |= (c[a] >> b & 1u) << (dims * b + a);
    return k;
}

static uint32_t reversed(uint32_t x, unsigned bits)
{
    uint32_t r = 0;
    for (unsigned b = 0; b < bits; b++)
        r |= (x >> b & 1u) << (bits - 1 - b);
    return r;
}

START_TEST(test_known_keys)
{
    ck_assert_uint_eq(ghm_key2d_morton(1, 0), 1);
    ck_assert_uint_eq(ghm_key2d_morton(0, 1), 2);
    ck_assert_uint_eq(ghm_key2d_morton(3, 3), 15);
    ck_assert_uint_eq(ghm_key2d_morton(0xFFFF, 0), 0x55555555u);
    ck_assert_uint_eq(ghm_key2d_morton(0xFFFF, 0xFFFF), 0xFFFFFFFFu);
    ck_assert_uint_eq(ghm_key3d_morton(1, 0, 0), 1);
    ck_assert_uint_eq(ghm_key3d_morton(0, 1, 0), 2);
    ck_assert_uint_eq(ghm_key3d_morton(0, 0, 1), 4);
    ck_assert_uint_eq(ghm_key3d_morton(1023, 1023, 1023), 0x3FFFFFFFu);
    ck_assert_uint_eq(ghm_key_reverse_bits(1, 3), 4);
    ck_assert_uint_eq(ghm_key_reverse_bits(6, 3), 3);
    ck_assert_uint_eq(ghm_key_reverse_bits(1, 32), 0x80000000u);
    ck_assert_uint_eq(ghm_key2d_bit_reversal(1, 0, 3), ghm_key2d_morton(4, 0));
    ck_assert_uint_eq(ghm_key2d_row_major(3, 2, 10), 23);
    ck_assert_uint_eq(ghm_key3d_row_major(3, 2, 1, 10, 5), 3 + 10 * (2 + 5 * 1));
}
END_TEST

START_TEST(test_against_definitions)
{
    uint32_t s = 12345;
    for (int i = 0; i < 100000; i++) {
        uint32_t c[3];
        for (int a = 0; a < 3; a++)
            c[a] = (s = s * 1664525u + 1013904223u) >> 16;
        ck_assert_uint_eq(ghm_key2d_morton(c[0], c[1]), interleave(c, 2, 16));
        uint32_t c10[3] = {c[0] & 1023, c[1] & 1023, c[2] & 1023};
        ck_assert_uint_eq(ghm_key3d_morton(c10[0], c10[1], c10[2]), interleave(c10, 3, 10));
        unsigned bits = 1 + (unsigned)i % 16;
        uint32_t r[2] = {reversed(c[0] & ((1u << bits) - 1), bits),
                         reversed(c[1] & ((1u << bits) - 1), bits)};
        ck_assert_uint_eq(ghm_key2d_bit_reversal(c[0] & ((1u << bits) - 1),
                                                 c[1] & ((1u << bits) - 1), bits),
                          interleave(r, 2, 16));
    }
}
END_TEST

/* Every order maps a 2^b-sided square (cube) onto 0 .. 2^(2b) - 1 (2^(3b) - 1), each key once. */
START_TEST(test_orders_are_bijections)
{
    enum { SIDE2 = 256, SIDE3 = 32 };
    uint8_t *seen = calloc(SIDE2 * SIDE2, 1);
    ck_assert_ptr_nonnull(seen);
    for (int order = 0; order < 3; order++) {
        for (uint32_t i = 0; i < SIDE2 * SIDE2; i++)
            seen[i] = 0;
        for (uint32_t y = 0; y < SIDE2; y++)
            for (uint32_t x = 0; x < SIDE2; x++) {
                uint32_t k = order == 0   ? ghm_key2d_row_major(x, y, SIDE2)
                             : order == 1 ? ghm_key2d_morton(x, y)
                                          : ghm_key2d_bit_reversal(x, y, 8);
                ck_assert_uint_lt(k, SIDE2 * SIDE2);
                ck_assert_uint_eq(seen[k]++, 0);
            }
        for (uint32_t i = 0; i < SIDE3 * SIDE3 * SIDE3; i++)
            seen[i] = 0;
        for (uint32_t z = 0; z < SIDE3; z++)
            for (uint32_t y = 0; y < SIDE3; y++)
                for (uint32_t x = 0; x < SIDE3; x++) {
                    uint32_t k = order == 0   ? ghm_key3d_row_major(x, y, z, SIDE3, SIDE3)
                                 : order == 1 ? ghm_key3d_morton(x, y, z)
                                              : ghm_key3d_bit_reversal(x, y, z, 5);
                    ck_assert_uint_lt(k, SIDE3 * SIDE3 * SIDE3);
                    ck_assert_uint_eq(seen[k]++, 0);
                }
    }
    free(seen);
}
END_TEST

/* The top-right 100 x 100 corner of the 2D Morton domain as a coherent Robin Hood map: every
 * pixel found with its index, the pixels beside the region absent. */
START_TEST(test_morton_keys_in_a_map)
{
    enum { W = 100, X0 = 65536 - W };
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    uint32_t *keys = malloc(W * W * sizeof *keys), *vals = malloc(W * W * sizeof *vals);
    uint32_t *out = malloc(W * W * sizeof *out);
    ck_assert(keys && vals && out);
    for (uint32_t i = 0; i < W * W; i++) {
        keys[i] = ghm_key2d_morton(X0 + i % W, X0 + i / W);
        vals[i] = i;
    }
    GhmMapOptions opt = ghm_map_defaults();
    opt.scheme = GHM_MAP_ROBIN_HOOD;
    opt.load_factor = 0.95;
    GhmMap *m = NULL;
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &m), GHM_OK);
    ck_assert_int_eq(ghm_map_build(m, keys, vals, W * W), GHM_OK);
    ck_assert_int_eq(ghm_map_find(m, keys, W * W, out), GHM_OK);
    for (uint32_t i = 0; i < W * W; i++)
        ck_assert_uint_eq(out[i], i);
    for (uint32_t i = 0; i < W; i++) /* the column and the row just outside */
        keys[i] = i % 2 ? ghm_key2d_morton(X0 - 1, X0 + i) : ghm_key2d_morton(X0 + i, X0 - 1);
    ck_assert_int_eq(ghm_map_find(m, keys, W, out), GHM_OK);
    for (uint32_t i = 0; i < W; i++)
        ck_assert_uint_eq(out[i], GHM_NOT_FOUND);
    ghm_map_free(&m);
    ghm_context_free(&ctx);
    free(keys);
    free(vals);
    free(out);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("keys");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_known_keys);
    tcase_add_test(tc, test_against_definitions);
    tcase_add_test(tc, test_orders_are_bijections);
    tcase_add_test(tc, test_morton_keys_in_a_map);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ghm_test_main(suite()); }
