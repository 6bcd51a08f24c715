/*
 * dist_map_in_place.cu - a GhmDistMap find over two GPUs of one process that moves neither keys
 * nor answers (GhmDistOps.in_place_ok and find_in_place, in dist_map.cu's op table): whether
 * every array is reachable from every part's device, and the probe of both shards' keys in
 * place; and whether every device may write the others' temporaries (GhmDistOps.reach).
 *
 * In one process whose devices reach each other's memory (NVLink), the split, the copies both
 * ways and the unsplit of a find (about 2 ms of 7.6 at 2^28 keys on two H100s) are not needed:
 * each part probes every shard's keys where they are, skipping those of other parts, and writes
 * its answers into the shard's answer array directly. A device then reads all the keys (half
 * of them over the link, streamed: 4 bytes a key) and probes only its own, which is the work
 * that scales; both shards in one pass, so that the link's reads hide under the probes. Two
 * ranks of one machine do the same through their windows (dist_map_window.cu); WarpDrive's
 * all-to-all remains the way between machines (the ranks' NCCL), and between more than two
 * GPUs, where each would read ever more of the keys over its links.
 */
#include <cuda.h>
#include <pthread.h>

#include "hash_cuda_internal.cuh"
#include "hash_refs.h"

/* Up to two shards' keys and answer arrays. */
struct Shards {
    const uint32_t *keys[2];
    size_t n[2];
    uint32_t *out[2];
};

/* Thread i takes key i of each shard: both loads are issued before either probe, so the keys
 * read over the link (the other shard's) arrive while this part's probes wait on its own
 * memory. Probing the shards one after the other, the link's 1.1 ms for 2^27 keys on two H200s
 * came on top of the probes (docs/BENCHMARKS.md). */
static __global__ __launch_bounds__(256) void owned_find_kernel(GhmMapRef ref, Shards s,
                                                                GhmiDistConsts c, uint32_t part)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t key[2];
    bool have[2];
#pragma unroll
    for (int j = 0; j < 2; j++)
        if ((have[j] = i < s.n[j]))
            key[j] = s.keys[j][i];
#pragma unroll
    for (int j = 0; j < 2; j++)
        if (have[j] && ghmi_dist_part(key[j], c) == part)
            s.out[j][i] = ghm_map_ref_find(&ref, key[j]);
}

typedef CUresult (*PointerAttribute)(void *data, CUpointer_attribute what, CUdeviceptr ptr);

/* The driver's cuPointerGetAttribute (the runtime does not say which pool an array came from),
 * looked up once; NULL where the driver does not have it. */
static PointerAttribute pointer_attribute(void)
{
    static PointerAttribute fn;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    struct Lookup {
        static void run()
        {
            void *f = NULL;
            cudaDriverEntryPointQueryResult found;
            if (cudaGetDriverEntryPointByVersion("cuPointerGetAttribute", &f, 12000,
                                                 cudaEnableDefault, &found) == cudaSuccess &&
                found == cudaDriverEntryPointSuccess)
                fn = (PointerAttribute)f;
            cudaGetLastError();
        }
    };
    pthread_once(&once, Lookup::run);
    return fn;
}

/* Whether a kernel on device dev may read and write the array at p: managed or host memory, an
 * array of dev itself, cudaMalloc memory of a peer (dist_connect enabled peer access), or an
 * array of a pool that grants dev access (the devices' default pools: enable_peer). */
static int reachable(const void *p, int dev)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    if (a.type == cudaMemoryTypeManaged || a.type == cudaMemoryTypeHost)
        return 1;
    if (a.type != cudaMemoryTypeDevice)
        return 0;
    if (a.device == dev)
        return 1;
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, dev, a.device) != cudaSuccess || !can) {
        cudaGetLastError();
        return 0;
    }
    PointerAttribute attr = pointer_attribute();
    CUmemoryPool pool = NULL;
    if (!attr || attr(&pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, (CUdeviceptr)p) != CUDA_SUCCESS)
        return 0;
    if (!pool)
        return 1;
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    cudaMemLocation at = {};
    at.type = cudaMemLocationTypeDevice;
    at.id = dev;
    if (cudaMemPoolGetAccess(&flags, (cudaMemPool_t)pool, &at) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return flags == cudaMemAccessFlagsProtReadWrite;
}

/* Whether device dev may use the arrays that device owner's pool will give this call (its
 * copies of host arrays, its answer arrays): the pool that cudaMallocAsync draws from grants
 * dev access (enable_peer grants it on the default pools). */
static int pool_reachable(int owner, int dev)
{
    cudaMemPool_t pool;
    cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
    cudaMemLocation at = {};
    at.type = cudaMemLocationTypeDevice;
    at.id = dev;
    if (owner == dev)
        return 1;
    if (cudaDeviceGetMemPool(&pool, owner) != cudaSuccess ||
        cudaMemPoolGetAccess(&flags, pool, &at) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return flags == cudaMemAccessFlagsProtReadWrite;
}

int ghmi_cuda_dist_reach(GhmContext *const *ctx, int parts)
{
    for (int q = 0; q < parts; q++)
        for (int p = 0; p < parts; p++)
            if (!pool_reachable(ghm_cuda_device(ctx[q]), ghm_cuda_device(ctx[p])))
                return 0;
    return 1;
}

int ghmi_cuda_dist_in_place_ok(GhmContext *const *ctx, GhmMap *const *map, int parts,
                       const uint32_t *const *keys, uint32_t *const *out, const size_t *n)
{
    GhmMapRef ref;
    for (int q = 0; q < parts; q++) {
        if (ghm_cuda_map_ref(map[q], &ref) != GHM_OK) /* the cuckoo map has a device probe */
            return 0;
        int dev = ghm_cuda_device(ctx[q]);
        for (int p = 0; p < parts; p++)
            if (n[p] && ((keys[p] && !reachable(keys[p], dev)) ||
                         (out[p] && !reachable(out[p], dev))))
                return 0;
    }
    return 1;
}

int ghmi_cuda_dist_find_in_place(GhmContext *part_ctx, const GhmMap *map, GhmiDistConsts c,
                                 uint32_t part, int shards, const uint32_t *const *keys,
                                 const size_t *n, uint32_t *const *out)
{
    GhmMapRef ref;
    int ret = ghm_cuda_map_ref(map, &ref);
    if (ret < 0)
        return ret;
    if (shards < 1 || shards > 2)
        return GHM_ERR_INVALID;
    Shards s = {};
    size_t most = 0;
    for (int j = 0; j < shards; j++) {
        s.keys[j] = keys[j];
        s.n[j] = n[j];
        s.out[j] = out[j];
        most = n[j] > most ? n[j] : most;
    }
    size_t grid = (most + 255) / 256;
    if (grid == 0)
        return GHM_OK;
    if (grid > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    ghm_cuda_bind(part_ctx); /* the launch is on part_ctx's stream, whatever the caller bound */
    owned_find_kernel<<<(unsigned)grid, 256, 0, ghm_cuda_stream(part_ctx)>>>(ref, s, c, part);
    return GHM_CUDA_LAUNCH();
}
