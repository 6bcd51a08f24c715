/*
 * ghm_keys.h - keys for 2D and 3D coordinates, in the three orders of the coherent-hashing paper
 * (Garcia, Lefebvre, Hornus, Lasram 2011, section 4.2), for the maps' Robin Hood scheme and any
 * other:
 *
 *   row-major     (x, y) -> x + W y, (x, y, z) -> x + W (y + H z): neighbours along x are
 *                 neighbouring keys;
 *   Morton        the bits of x and y (and z) interleaved, x's lowest first: neighbours along
 *                 every axis are mostly neighbouring keys;
 *   bit-reversal  Morton of the coordinates with their `bits` bits reversed: no coherence at all
 *                 (the paper's incoherent case).
 *
 * With the coherent probe sequence (GHM_MAP_ROBIN_HOOD: slot (k + o_i) mod |H|), neighbouring
 * keys stay neighbours at every age, so a warp that queries neighbouring coordinates in row-major
 * or Morton order reads neighbouring slots; see `geohash-match bench hash`'s coherent rows.
 *
 * Domains: 2D row-major needs W H <= 2^32 and 3D W H D <= 2^32; 2D Morton and bit-reversal take
 * coordinates below 2^16 (keys fill 32 bits), 3D below 2^10 (30 bits); bit-reversal's `bits`
 * (1 .. 16 in 2D, 1 .. 10 in 3D) is the side's log2, every coordinate below 2^bits. The
 * functions do not check: coordinates outside give keys that collide with others. The key
 * 0xFFFFFFFF (the 2D Morton key of (65535, 65535)) is a valid map key like any other.
 *
 * Plain inline functions, also callable from CUDA device code when this header is compiled by
 * nvcc.
 */
#ifndef GHM_KEYS_H
#define GHM_KEYS_H

#include <stdint.h>

#ifdef __CUDACC__
#define GHM_KEYS_FN static inline __host__ __device__
#else
#define GHM_KEYS_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* x's low 16 bits spread to the even bits of the result. */
GHM_KEYS_FN uint32_t ghm_key_spread2(uint32_t x)
{
    x &= 0xFFFFu;
    x = (x | x << 8) & 0x00FF00FFu;
    x = (x | x << 4) & 0x0F0F0F0Fu;
    x = (x | x << 2) & 0x33333333u;
    return (x | x << 1) & 0x55555555u;
}

/* x's low 10 bits spread to every third bit of the result. */
GHM_KEYS_FN uint32_t ghm_key_spread3(uint32_t x)
{
    x &= 0x3FFu;
    x = (x | x << 16) & 0x030000FFu;
    x = (x | x << 8) & 0x0300F00Fu;
    x = (x | x << 4) & 0x030C30C3u;
    return (x | x << 2) & 0x09249249u;
}

/* x's low `bits` bits in reverse order (1 <= bits <= 32). */
GHM_KEYS_FN uint32_t ghm_key_reverse_bits(uint32_t x, unsigned bits)
{
    x = (x & 0x55555555u) << 1 | (x >> 1 & 0x55555555u);
    x = (x & 0x33333333u) << 2 | (x >> 2 & 0x33333333u);
    x = (x & 0x0F0F0F0Fu) << 4 | (x >> 4 & 0x0F0F0F0Fu);
    x = (x & 0x00FF00FFu) << 8 | (x >> 8 & 0x00FF00FFu);
    x = x << 16 | x >> 16;
    return x >> (32 - bits);
}

GHM_KEYS_FN uint32_t ghm_key2d_row_major(uint32_t x, uint32_t y, uint32_t width)
{
    return x + width * y;
}

GHM_KEYS_FN uint32_t ghm_key2d_morton(uint32_t x, uint32_t y)
{
    return ghm_key_spread2(x) | ghm_key_spread2(y) << 1;
}

GHM_KEYS_FN uint32_t ghm_key2d_bit_reversal(uint32_t x, uint32_t y, unsigned bits)
{
    return ghm_key2d_morton(ghm_key_reverse_bits(x, bits), ghm_key_reverse_bits(y, bits));
}

GHM_KEYS_FN uint32_t ghm_key3d_row_major(uint32_t x, uint32_t y, uint32_t z, uint32_t width,
                                         uint32_t height)
{
    return x + width * (y + height * z);
}

GHM_KEYS_FN uint32_t ghm_key3d_morton(uint32_t x, uint32_t y, uint32_t z)
{
    return ghm_key_spread3(x) | ghm_key_spread3(y) << 1 | ghm_key_spread3(z) << 2;
}

GHM_KEYS_FN uint32_t ghm_key3d_bit_reversal(uint32_t x, uint32_t y, uint32_t z, unsigned bits)
{
    return ghm_key3d_morton(ghm_key_reverse_bits(x, bits), ghm_key_reverse_bits(y, bits),
                            ghm_key_reverse_bits(z, bits));
}

#ifdef __cplusplus
}
#endif

#undef GHM_KEYS_FN

#endif /* GHM_KEYS_H */
