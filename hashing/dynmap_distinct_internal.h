/*
 * dynmap_distinct_internal.h - GhmDynmap's insert and erase of a batch whose keys the caller
 * knows to be distinct, for the library's own callers (a voxel edit's lists of voxel keys);
 * not in the public API, whose calls find a batch's duplicates themselves.
 */
#ifndef GHM_DYNMAP_DISTINCT_INTERNAL_H
#define GHM_DYNMAP_DISTINCT_INTERNAL_H

#include "ghm_dynmap.h"

/* ghm_dynmap_insert and ghm_dynmap_erase without the duplicate pass on the CUDA backend (the
 * paper's second table and leader rule: hashing the batch into it took 47 of the 95 us of a
 * 220 k-key erase on an H200, 2026-12-01; the CPU backend's bucket order finds leaders at no
 * cost of its own). A batch with a repeated key breaks the promise: its items may be stored
 * twice. Otherwise the answers are the plain calls'. */
int ghmi_dynmap_insert_distinct(GhmDynmap *dm, const uint32_t *items, size_t n,
                                GhmDynmapHandle *handles, uint8_t *inserted);
int ghmi_dynmap_erase_distinct(GhmDynmap *dm, const uint32_t *keys, size_t n, uint8_t *erased);

#endif /* GHM_DYNMAP_DISTINCT_INTERNAL_H */
