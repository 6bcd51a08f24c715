/*
 * multimap_ref.cuh - probing a GhmMultimap from device code (see hash_refs.h): the map gives
 * the key's run, the offsets array its first value and count.
 */
#ifndef GHM_MULTIMAP_REF_CUH
#define GHM_MULTIMAP_REF_CUH

#include "map_ref.cuh"

/* Returns 1 and sets *first / *count when key is present (its values are
 * r->values[*first .. *first + *count)); else returns 0 with *first = GHM_NOT_FOUND, *count = 0. */
static __device__ inline int ghm_multimap_ref_find(const GhmMultimapRef *r, uint32_t key,
                                                   uint32_t *first, uint32_t *count)
{
    uint32_t run = ghm_map_ref_find(&r->map, key);
    if (run == GHM_NOT_FOUND) {
        *first = GHM_NOT_FOUND;
        *count = 0;
        return 0;
    }
    uint32_t begin = r->offsets[run];
    *first = begin;
    *count = r->offsets[run + 1] - begin;
    return 1;
}

#endif /* GHM_MULTIMAP_REF_CUH */
