/* cuda_compare.h - helpers of the suites that compare the CUDA backend with the CPU backend
 * (check_hash_cuda.c: the maps; check_tables_cuda.c: sets, indexes, sorted arrays, multimaps,
 * device references and queued builds); cuda_compare.c. */
#ifndef GHM_CUDA_COMPARE_H
#define GHM_CUDA_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_map.h"

/* n, or 10^4 when GHM_TEST_SMALL is set and n is larger (compute-sanitizer runs). */
size_t cap_size(size_t n);
/* malloc that fails the test instead of returning NULL. */
void *xmalloc(size_t bytes);

typedef struct Backends {
    GhmContext *cpu, *gpu;
} Backends;

/* A CPU and a CUDA context of one seed. */
Backends backends(uint64_t seed);
void backends_free(Backends *b);

/* Input shapes: the keys of n pairs drawn from `distinct` candidates (distinct == 0: all
 * different), the first five candidates being the extreme keys. */
typedef struct Input {
    size_t n;
    uint32_t *keys, *values;
    uint32_t *queries; /* 2n + 8: every key, as many absent ones, the extremes */
    size_t nq;
} Input;

Input make_input(size_t n, size_t distinct, uint64_t seed);
void free_input(Input *in);
/* A device copy of a host array, owned by the caller (ghm_buffer_free). */
uint32_t *to_device(GhmContext *gpu, const uint32_t *host, size_t n);
/* The two arrays equal, checked with one assertion (see cuda_compare.c). */
void assert_same(const uint32_t *cpu, const uint32_t *gpu, size_t n, const char *what);

/* The map defaults with this layout, load factor and number of hash functions. */
GhmMapOptions map_options(GhmMapLayout layout, double load, int hashes);

#endif /* GHM_CUDA_COMPARE_H */
