/*
 * sorted_ref.cuh - searching ascending keys from device code: the lower bound GhmSorted's find
 * runs (sorted.cu), for kernels that hold other sorted key arrays.
 */
#ifndef GHM_SORTED_REF_CUH
#define GHM_SORTED_REF_CUH

#include <stddef.h>
#include <stdint.h>

/* The first position of the n ascending keys whose key is not below q (n when none). */
static __device__ __forceinline__ size_t ghm_sorted_lower_bound(const uint32_t *keys, size_t n,
                                                                uint32_t q)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (keys[mid] < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif /* GHM_SORTED_REF_CUH */
