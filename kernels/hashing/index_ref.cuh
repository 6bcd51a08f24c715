/*
 * index_ref.cuh - probing a GhmIndex or GhmSet from device code (see hash_refs.h): key -> dense
 * id through the map, id -> key through the ascending key array.
 */
#ifndef GHM_INDEX_REF_CUH
#define GHM_INDEX_REF_CUH

#include "map_ref.cuh"

/* The id of key (its rank among the distinct keys), or GHM_NOT_FOUND. */
static __device__ inline uint32_t ghm_index_ref_id(const GhmIndexRef *r, uint32_t key)
{
    return ghm_map_ref_find(&r->map, key);
}

/* 1 when key is present. */
static __device__ inline int ghm_index_ref_contains(const GhmIndexRef *r, uint32_t key)
{
    return ghm_map_ref_find(&r->map, key) != GHM_NOT_FOUND;
}

/* The key of id, or GHM_NOT_FOUND when id >= r->size. */
static __device__ inline uint32_t ghm_index_ref_key(const GhmIndexRef *r, uint32_t id)
{
    return id < r->size ? r->keys[id] : GHM_NOT_FOUND;
}

#endif /* GHM_INDEX_REF_CUH */
