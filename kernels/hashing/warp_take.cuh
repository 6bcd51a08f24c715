/*
 * warp_take.cuh - a counter that many threads of a kernel advance at once (a list's length, a
 * pool's next entry), advanced once for the lanes of a warp that call together: an atomic per
 * thread on one word queues every thread of the kernel behind it.
 */
#ifndef GHM_WARP_TAKE_CUH
#define GHM_WARP_TAKE_CUH

#include <cooperative_groups.h>

/* This lane's entry of what *count counts: *count's value before the group's one atomic add,
 * plus the lane's rank among the lanes here. T: uint32_t or unsigned long long. */
template <typename T> static __device__ __forceinline__ T ghmi_warp_take(T *count)
{
    cooperative_groups::coalesced_group grp = cooperative_groups::coalesced_threads();
    T at = 0;
    if (grp.thread_rank() == 0)
        at = atomicAdd(count, (T)grp.size());
    return grp.shfl(at, 0) + grp.thread_rank();
}

#endif /* GHM_WARP_TAKE_CUH */
