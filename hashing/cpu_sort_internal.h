/*
 * cpu_sort_internal.h - the CPU backend's sorting tools, shared by the multimap, index, set and
 * sorted structures: a parallel, stable LSD radix sort of 32-bit keys (with or without 32-bit
 * values riding along) and the run boundaries of a sorted key array.
 */
#ifndef GHM_CPU_SORT_INTERNAL_H
#define GHM_CPU_SORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Sorts keys[0..n) ascending in place, moving values[i] with keys[i] when values is not NULL.
 * Stable: equal keys keep their input order (so values of one key stay in input order).
 * threads >= 1 OpenMP workers. Returns GHM_OK or GHM_ERR_NOMEM (arrays then unchanged). */
int ghmi_cpu_sort_pairs(int threads, uint32_t *keys, uint32_t *values, size_t n);

/* For keys[0..n) sorted ascending, allocates *starts with the index of the first element of
 * each run of equal keys followed by n (so run r is [starts[r], starts[r+1])), and sets *runs to
 * the number of runs. The caller frees *starts with free(). GHM_OK or GHM_ERR_NOMEM. */
int ghmi_cpu_runs(int threads, const uint32_t *keys, size_t n, uint32_t **starts, size_t *runs);

#endif /* GHM_CPU_SORT_INTERNAL_H */
