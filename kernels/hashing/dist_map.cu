/*
 * dist_map.cu - a GhmDistMap shard's steps on the CUDA backend (GhmDistOps): the count and the
 * split by part (the multisplit of WarpDrive), the answers put back in the queries' order, and
 * the copies between contexts, which may be on different devices.
 *
 * Count: each thread takes ITEMS keys of a tile; the lanes of a warp with the same part agree
 * on one shared-memory add (__match_any_sync), and a block adds its counts to the global ones
 * once per part.
 *
 * Split and unsplit: within a tile of TILE keys, a key's rank among the tile's keys of its part
 * is fixed by the keys alone (its place in the tile, counted per warp and item, then scanned per
 * part: tile_ranks), and a tile reserves its run of each part with one global add, whose result
 * it records in the way back (tiles x parts words). The unsplit computes the same ranks again
 * from the same keys, so it gathers each answer into its query's place: reads and writes in
 * order, no array of positions written by the split and scattered through by the unsplit (4
 * bytes a key each way, and a scatter that wrote most of a 32-byte sector for every 4 bytes).
 *
 * The split writes each part's run where dest says: the shard's own send array, or, where the
 * devices reach each other's memory (GhmDistOps.reach), the part's receive array on its own
 * device, so the pieces cross the link as the split's stores and no copy follows. A tile is
 * staged by part in shared memory first, so every run leaves in whole lines.
 *
 * A find over two GPUs that reach each other's memory skips all of that:
 * dist_map_in_place.cu; over two ranks of one machine, dist_map_window.cu.
 */
#include "hash_cuda_internal.cuh"
#include "hash_internal.h"

#define DIST_THREADS 256
#define WARPS (DIST_THREADS / 32)
#define ITEMS 8
#define TILE (DIST_THREADS * ITEMS)
#define SLOTS (ITEMS * WARPS) /* the (item, warp) groups of a tile, in the keys' order */
#define MAX_PARTS 64 /* GHM_DIST_MAP_MAX_PARTS */
#define NO_PART 0xFFFFFFFFu

static_assert(TILE % 32 == 0, "a tile is whole warps");
static_assert(SLOTS == 64, "tile_ranks scans a part's slots with two per lane");

/* This lane's rank among the lanes of its warp whose part is q, after one shared add per part
 * by the lowest of them; every lane of the warp calls it. */
static __device__ __forceinline__ unsigned warp_reserve(unsigned *count, uint32_t q)
{
    unsigned peers = __match_any_sync(0xFFFFFFFFu, q);
    unsigned lane = threadIdx.x & 31u;
    int leader = __ffs(peers) - 1;
    unsigned base = 0;
    if (q != NO_PART && (int)lane == leader)
        base = atomicAdd(&count[q], (unsigned)__popc(peers));
    base = __shfl_sync(0xFFFFFFFFu, base, leader);
    return base + (unsigned)__popc(peers & ((1u << lane) - 1u));
}

/* A block's shared memory for one tile: slot[q][g] is how many keys of part q the group g =
 * (item j, warp w) holds, then where they start among the tile's keys of part q. */
struct TileShared {
    unsigned slot[MAX_PARTS][SLOTS];
    unsigned total[MAX_PARTS];
    unsigned long long base[MAX_PARTS];
};

/* Loads the tile's keys (key, part; NO_PART past n) and each one's rank among the tile's keys of
 * its part, in the keys' order within the tile: the same for the same keys, whichever the
 * block or the run. Leaves sh.total[q], the tile's keys of part q. Every thread calls it. */
static __device__ void tile_ranks(TileShared &sh, const uint32_t *keys, size_t n, size_t tile,
                                  GhmiDistConsts c, uint32_t *key, uint32_t *part,
                                  unsigned *rank)
{
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x / 32u;
    for (unsigned k = threadIdx.x; k < c.parts * SLOTS; k += blockDim.x)
        sh.slot[k / SLOTS][k % SLOTS] = 0;
    __syncthreads();
    for (int j = 0; j < ITEMS; j++) {
        size_t i = tile + (size_t)j * DIST_THREADS + threadIdx.x;
        key[j] = i < n ? keys[i] : 0;
        part[j] = i < n ? ghmi_dist_part(key[j], c) : NO_PART;
        unsigned peers = __match_any_sync(0xFFFFFFFFu, part[j]);
        rank[j] = (unsigned)__popc(peers & ((1u << lane) - 1u));
        if (part[j] != NO_PART && (int)lane == __ffs(peers) - 1)
            sh.slot[part[j]][j * WARPS + warp] = (unsigned)__popc(peers);
    }
    __syncthreads();
    for (unsigned q = warp; q < c.parts; q += WARPS) { /* one warp scans a part's 64 slots */
        unsigned a = sh.slot[q][2 * lane], b = sh.slot[q][2 * lane + 1], sum = a + b;
        unsigned incl = sum;
        for (unsigned d = 1; d < 32; d <<= 1) {
            unsigned v = __shfl_up_sync(0xFFFFFFFFu, incl, d);
            if (lane >= d)
                incl += v;
        }
        sh.slot[q][2 * lane] = incl - sum;
        sh.slot[q][2 * lane + 1] = incl - sum + a;
        if (lane == 31)
            sh.total[q] = incl;
    }
    __syncthreads();
    for (int j = 0; j < ITEMS; j++)
        if (part[j] != NO_PART)
            rank[j] += sh.slot[part[j]][j * WARPS + warp];
}

static __global__ void count_kernel(const uint32_t *keys, size_t n, GhmiDistConsts c,
                                    unsigned long long *counts)
{
    __shared__ unsigned tile_count[MAX_PARTS];
    for (unsigned q = threadIdx.x; q < c.parts; q += blockDim.x)
        tile_count[q] = 0;
    __syncthreads();
    size_t stride = (size_t)gridDim.x * TILE;
    for (size_t tile = (size_t)blockIdx.x * TILE; tile < n; tile += stride)
        for (int j = 0; j < ITEMS; j++) {
            size_t i = tile + (size_t)j * DIST_THREADS + threadIdx.x;
            (void)warp_reserve(tile_count, i < n ? ghmi_dist_part(keys[i], c) : NO_PART);
        }
    __syncthreads();
    for (unsigned q = threadIdx.x; q < c.parts; q += blockDim.x)
        if (tile_count[q])
            atomicAdd(&counts[q], (unsigned long long)tile_count[q]);
}

/* A tile's keys (and values) are staged in shared memory by part, so that each part's run leaves
 * in whole lines: coalesced stores, which matter most where the run goes to another GPU. */
struct SplitStage {
    uint32_t keys[TILE], values[TILE];
    unsigned first[MAX_PARTS]; /* where part q's keys start in the stage */
};

static __global__ void split_kernel(const uint32_t *keys, const uint32_t *values, size_t n,
                                    GhmiDistConsts c, GhmiDistDest dest,
                                    unsigned long long *cursor, uint32_t *way_back)
{
    __shared__ TileShared sh;
    __shared__ SplitStage st;
    size_t stride = (size_t)gridDim.x * TILE;
    for (size_t tile = (size_t)blockIdx.x * TILE; tile < n; tile += stride) {
        uint32_t key[ITEMS], part[ITEMS];
        unsigned rank[ITEMS];
        tile_ranks(sh, keys, n, tile, c, key, part, rank);
        for (unsigned q = threadIdx.x; q < c.parts; q += blockDim.x) {
            unsigned first = 0;
            for (unsigned r = 0; r < q; r++)
                first += sh.total[r];
            st.first[q] = first;
            sh.base[q] = atomicAdd(&cursor[q], (unsigned long long)sh.total[q]);
            if (way_back) /* positions fit 32 bits: n < GHM_NOT_FOUND */
                way_back[tile / TILE * c.parts + q] = (uint32_t)(dest.start[q] + sh.base[q]);
        }
        __syncthreads();
        for (int j = 0; j < ITEMS; j++) {
            if (part[j] == NO_PART)
                continue;
            unsigned s = st.first[part[j]] + rank[j];
            st.keys[s] = key[j];
            if (values)
                st.values[s] = values[tile + (size_t)j * DIST_THREADS + threadIdx.x];
        }
        __syncthreads();
        for (unsigned q = 0; q < c.parts; q++)
            for (unsigned i = threadIdx.x; i < sh.total[q]; i += blockDim.x) {
                dest.keys[q][sh.base[q] + i] = st.keys[st.first[q] + i];
                if (values)
                    dest.values[q][sh.base[q] + i] = st.values[st.first[q] + i];
            }
        __syncthreads(); /* sh and st are reused for the next tile */
    }
}

static __global__ void unsplit_kernel(const uint32_t *keys, const uint32_t *in,
                                      const uint32_t *way_back, size_t n, GhmiDistConsts c,
                                      uint32_t *out)
{
    __shared__ TileShared sh;
    size_t stride = (size_t)gridDim.x * TILE;
    for (size_t tile = (size_t)blockIdx.x * TILE; tile < n; tile += stride) {
        uint32_t key[ITEMS], part[ITEMS];
        unsigned rank[ITEMS];
        tile_ranks(sh, keys, n, tile, c, key, part, rank);
        for (unsigned q = threadIdx.x; q < c.parts; q += blockDim.x)
            sh.base[q] = way_back[tile / TILE * c.parts + q];
        __syncthreads();
        for (int j = 0; j < ITEMS; j++)
            if (part[j] != NO_PART)
                out[tile + (size_t)j * DIST_THREADS + threadIdx.x] = in[sh.base[part[j]] + rank[j]];
        __syncthreads();
    }
}

/* Blocks for n keys in tiles: enough to fill the device, each looping over its tiles. */
static unsigned tile_blocks(const GhmContext *ctx, size_t n)
{
    int sms = 1;
    if (ghm_cuda_sm_count(ctx, &sms) != cudaSuccess)
        cudaGetLastError(); /* sms stays 1: fewer blocks, the same answers */
    size_t want = (n + TILE - 1) / TILE, most = (size_t)sms * 8;
    return (unsigned)(want < most ? (want ? want : 1) : most);
}

static int dist_count(GhmContext *ctx, const uint32_t *keys, size_t n, GhmiDistConsts c,
                      size_t *counts)
{
    if (c.parts < 1 || c.parts > MAX_PARTS)
        return GHM_ERR_INVALID;
    cudaStream_t s = ghm_cuda_stream(ctx);
    unsigned long long *dc = NULL, host[MAX_PARTS];
    int ret = ghmi_device_alloc(ctx, c.parts * sizeof *dc, (void **)&dc);
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaMemsetAsync(dc, 0, c.parts * sizeof *dc, s));
    if (ret == GHM_OK) {
        count_kernel<<<tile_blocks(ctx, n), DIST_THREADS, 0, s>>>(keys, n, c, dc);
        ret = GHM_CUDA_LAUNCH();
    }
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaMemcpyAsync(host, dc, c.parts * sizeof *dc, cudaMemcpyDeviceToHost, s));
    if (ret == GHM_OK)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    ghmi_device_free(ctx, dc);
    for (uint32_t q = 0; ret == GHM_OK && q < c.parts; q++)
        counts[q] = (size_t)host[q];
    return ret;
}

static int dist_split(GhmContext *ctx, const uint32_t *keys, const uint32_t *values, size_t n,
                      GhmiDistConsts c, const GhmiDistDest *dest, uint32_t *way_back)
{
    if (c.parts < 1 || c.parts > MAX_PARTS)
        return GHM_ERR_INVALID;
    cudaStream_t s = ghm_cuda_stream(ctx);
    unsigned long long *cursor = NULL;
    int ret = ghmi_device_alloc(ctx, c.parts * sizeof *cursor, (void **)&cursor);
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaMemsetAsync(cursor, 0, c.parts * sizeof *cursor, s));
    if (ret == GHM_OK) {
        split_kernel<<<tile_blocks(ctx, n), DIST_THREADS, 0, s>>>(keys, values, n, c, *dest,
                                                                  cursor, way_back);
        ret = GHM_CUDA_LAUNCH();
    }
    ghmi_device_free(ctx, cursor);
    return ret;
}

static size_t dist_way_back_words(size_t n, uint32_t parts)
{
    return (n + TILE - 1) / TILE * parts;
}

static int dist_unsplit(GhmContext *ctx, const uint32_t *keys, const uint32_t *in,
                        const uint32_t *way_back, size_t n, GhmiDistConsts c, uint32_t *out)
{
    if (c.parts < 1 || c.parts > MAX_PARTS)
        return GHM_ERR_INVALID;
    if (n == 0)
        return GHM_OK;
    unsplit_kernel<<<tile_blocks(ctx, n), DIST_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        keys, in, way_back, n, c, out);
    return GHM_CUDA_LAUNCH();
}

/* Lets dst's device read src's memory directly (NVLink or PCIe peer to peer) where the pair
 * can. Backend memory comes from each device's stream-ordered pool (device_memory.cu), whose
 * memory a peer may read only once the pool grants it (cudaMemPoolSetAccess;
 * cudaDeviceEnablePeerAccess covers cudaMalloc's memory alone): without the grant the driver
 * stages every peer copy through the host. Done once per pair per process, when a map is
 * created (one thread, no bulk call running); where the pair cannot, copies go through the
 * host. */
static void enable_peer(int dst_dev, int src_dev)
{
    static int done[MAX_PARTS][MAX_PARTS];
    if (dst_dev == src_dev || dst_dev >= MAX_PARTS || src_dev >= MAX_PARTS ||
        __atomic_exchange_n(&done[dst_dev][src_dev], 1, __ATOMIC_RELAXED))
        return;
    int can = 0, current = 0;
    cudaMemPool_t pool;
    if (cudaDeviceCanAccessPeer(&can, dst_dev, src_dev) != cudaSuccess || !can ||
        cudaGetDevice(&current) != cudaSuccess || cudaSetDevice(dst_dev) != cudaSuccess) {
        cudaGetLastError();
        return;
    }
    cudaDeviceEnablePeerAccess(src_dev, 0);
    if (cudaDeviceGetDefaultMemPool(&pool, src_dev) == cudaSuccess) {
        cudaMemAccessDesc grant = {};
        grant.location.type = cudaMemLocationTypeDevice;
        grant.location.id = dst_dev;
        grant.flags = cudaMemAccessFlagsProtReadWrite;
        cudaMemPoolSetAccess(pool, &grant, 1);
    }
    cudaGetLastError(); /* "already enabled" is not an error here */
    cudaSetDevice(current);
}

static void dist_connect(GhmContext *const *ctx, int parts)
{
    for (int p = 0; p < parts; p++)
        for (int q = 0; q < parts; q++)
            enable_peer(ghm_cuda_device(ctx[q]), ghm_cuda_device(ctx[p]));
}

/* Copies on the receiver's stream ds after src_ctx's work up to the event `after` (recorded
 * there, not waited for by the host). */
static int copy_after(GhmContext *dst_ctx, cudaStream_t ds, void *dst, GhmContext *src_ctx,
                      cudaEvent_t after, const void *src, size_t bytes)
{
    int sdev = ghm_cuda_device(src_ctx), ddev = ghm_cuda_device(dst_ctx);
    ghm_cuda_bind(dst_ctx);
    int ret = GHM_CUDA(cudaStreamWaitEvent(ds, after, 0));
    if (ret == GHM_OK && sdev == ddev)
        ret = GHM_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ds));
    else if (ret == GHM_OK)
        ret = GHM_CUDA(cudaMemcpyPeerAsync(dst, ddev, src, sdev, bytes, ds));
    return ret;
}

/* Queued on the receiver's stream after the sender's work so far (an event, no host wait): the
 * sender's stream goes on without waiting for the receiver. */
static int dist_copy(GhmContext *dst_ctx, void *dst, GhmContext *src_ctx, const void *src,
                     size_t bytes)
{
    if (bytes == 0)
        return GHM_OK;
    cudaStream_t ss = ghm_cuda_stream(src_ctx);
    cudaEvent_t ev;
    int ret = GHM_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    if (ret < 0)
        return ret;
    ret = GHM_CUDA(cudaEventRecord(ev, ss));
    if (ret == GHM_OK)
        ret = copy_after(dst_ctx, ghm_cuda_stream(dst_ctx), dst, src_ctx, ev, src, bytes);
    cudaEventDestroy(ev); /* released by CUDA once the wait is done */
    return ret;
}

/* A stream beside a context's own: in one process the peer copies into a part's memory run
 * there, beside the probes on its own stream (the copy engines move the data while the SMs
 * probe), and a rank's NCCL exchanges run on its link's (NcclLink). `marked` is the context's
 * work up to its last side_mark (what a copy out of or into its memory, or an exchange, waits
 * for), `done` the last copy or exchange queued there. */
typedef struct SideStream {
    cudaStream_t stream;
    cudaEvent_t marked, done;
} SideStream;

static void side_close(GhmContext *ctx, void *side)
{
    SideStream *s = (SideStream *)side;
    ghm_cuda_bind(ctx);
    if (s->done)
        cudaEventDestroy(s->done);
    if (s->marked)
        cudaEventDestroy(s->marked);
    if (s->stream)
        cudaStreamDestroy(s->stream);
    free(s);
}

static int side_open(GhmContext *ctx, void **side)
{
    *side = NULL;
    SideStream *s = (SideStream *)calloc(1, sizeof *s);
    if (!s)
        return GHM_ERR_NOMEM;
    ghm_cuda_bind(ctx); /* the stream and events belong to ctx's device */
    int ret = GHM_CUDA(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaEventCreateWithFlags(&s->marked, cudaEventDisableTiming));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming));
    if (ret < 0) {
        side_close(ctx, s);
        return ret;
    }
    *side = s;
    return GHM_OK;
}

static int side_mark(GhmContext *ctx, void *side)
{
    return GHM_CUDA(cudaEventRecord(((SideStream *)side)->marked, ghm_cuda_stream(ctx)));
}

static int side_copy(GhmContext *dst_ctx, void *dst_side, void *dst, GhmContext *src_ctx,
                     void *src_side, const void *src, size_t bytes)
{
    if (bytes == 0)
        return GHM_OK;
    SideStream *d = (SideStream *)dst_side;
    /* after the receiver's marked work too: its stream allocated dst (stream-ordered memory) */
    ghm_cuda_bind(dst_ctx);
    int ret = GHM_CUDA(cudaStreamWaitEvent(d->stream, d->marked, 0));
    if (ret == GHM_OK)
        ret = copy_after(dst_ctx, d->stream, dst, src_ctx, ((SideStream *)src_side)->marked,
                         src, bytes);
    return ret == GHM_OK ? GHM_CUDA(cudaEventRecord(d->done, d->stream)) : ret;
}

static int side_join(GhmContext *ctx, void *side)
{
    return GHM_CUDA(cudaStreamWaitEvent(ghm_cuda_stream(ctx), ((SideStream *)side)->done, 0));
}

static int side_wait(GhmContext *ctx, void *other_side)
{
    ghm_cuda_bind(ctx);
    return GHM_CUDA(
        cudaStreamWaitEvent(ghm_cuda_stream(ctx), ((SideStream *)other_side)->marked, 0));
}

/* ------------------------------------------------------- ranks of several processes: NCCL */
#if GHM_HAVE_NCCL
#include <dlfcn.h>
#include <stdlib.h>
#include <nccl.h>
#include <pthread.h>

/* NCCL is loaded when a ranked map first links its ranks (as FFmpeg is, vision/video/): linked,
 * its hundreds of megabytes would be mapped by every process of the library. The header is the
 * build's; these calls have kept their ABI across NCCL 2. */
static struct {
    decltype(&ncclGetUniqueId) get_unique_id;
    decltype(&ncclCommInitRank) comm_init_rank;
    decltype(&ncclCommDestroy) comm_destroy;
    decltype(&ncclGroupStart) group_start;
    decltype(&ncclGroupEnd) group_end;
    decltype(&ncclSend) send;
    decltype(&ncclRecv) recv;
    decltype(&ncclGetErrorString) error_string;
} nccl;
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;
static int nccl_loaded;

static void load_nccl(void)
{
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *err = dlerror();
        ghmi_log(GHM_LOG_INFO, "NCCL: cannot load libnccl.so.2 (%s)", err ? err : "not found");
        return;
    }
    void **fn[] = {(void **)&nccl.get_unique_id, (void **)&nccl.comm_init_rank,
                   (void **)&nccl.comm_destroy,  (void **)&nccl.group_start,
                   (void **)&nccl.group_end,     (void **)&nccl.send,
                   (void **)&nccl.recv,          (void **)&nccl.error_string};
    const char *name[] = {"ncclGetUniqueId", "ncclCommInitRank", "ncclCommDestroy",
                          "ncclGroupStart",  "ncclGroupEnd",     "ncclSend",
                          "ncclRecv",        "ncclGetErrorString"};
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++)
        if (!(*fn[i] = dlsym(h, name[i]))) {
            ghmi_log(GHM_LOG_INFO, "NCCL: libnccl.so.2 lacks %s", name[i]);
            return; /* the handle stays open: a process loads a library once */
        }
    nccl_loaded = 1;
}

/* NCCL's failures as the library's: a CUDA error, logged with NCCL's words. */
static int nccl_check(ncclResult_t r, const char *what)
{
    if (r == ncclSuccess)
        return GHM_OK;
    ghmi_log(GHM_LOG_ERROR, "NCCL: %s: %s", what, nccl.error_string(r));
    return GHM_ERR_CUDA;
}

/* A rank's NCCL channel: the communicator, and a side stream (as a part's in one process), so
 * that an exchange runs beside the context's work (the probes of the rank's own keys) until
 * rank_join: its mark is the context's work before an exchange, its `done` the last exchange. */
struct NcclLink {
    ncclComm_t comm;
    SideStream *side;
};

static void free_link(GhmContext *ctx, NcclLink *l)
{
    if (l->side)
        side_close(ctx, l->side);
    if (l->comm)
        nccl.comm_destroy(l->comm);
    free(l);
}

/* The side stream for a communicator that now exists (freed with it). */
static int make_link(GhmContext *ctx, ncclComm_t comm, void **link)
{
    NcclLink *l = (NcclLink *)calloc(1, sizeof *l);
    if (!l) {
        nccl.comm_destroy(comm);
        return GHM_ERR_NOMEM;
    }
    l->comm = comm;
    void *side = NULL;
    int ret = side_open(ctx, &side);
    l->side = (SideStream *)side;
    if (ret < 0) {
        free_link(ctx, l);
        return ret;
    }
    *link = l;
    return GHM_OK;
}

/* A GPU's UUID folded to one nonzero word: NCCL takes one rank per GPU, and ranks on one GPU
 * (two processes, or threads of one) must find out before they start it. 0: unknown. */
static uint64_t gpu_identity(int device)
{
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    uint64_t h = ghmi_fnv1a64(prop.uuid.bytes, sizeof prop.uuid.bytes);
    return h ? h : 1;
}

/* Rank 0 draws the communicator's id and every rank gets it by broadcast; then the ranks swap
 * their GPUs' identities, so that none waits in ncclCommInitRank for a rank that could not
 * load NCCL, and none starts it where two ranks share a GPU. */
static int nccl_link(GhmContext *ctx, const GhmDistRanks *ranks, void **link)
{
    struct {
        int ok;
        ncclUniqueId id;
    } msg;
    memset(&msg, 0, sizeof msg);
    *link = NULL;
    (void)ghm_cuda_stream(ctx); /* makes ctx's device current on this thread */
    pthread_once(&nccl_once, load_nccl);
    if (ranks->rank == 0 && nccl_loaded)
        msg.ok = nccl_check(nccl.get_unique_id(&msg.id), "ncclGetUniqueId") == GHM_OK;
    if (ranks->broadcast(ranks->user, &msg, sizeof msg, 0) < 0)
        return GHM_ERR_IO;
    /* every rank must be able to, or none may start: ncclCommInitRank waits for them all */
    uint64_t all[GHM_DIST_MAP_MAX_PARTS];
    uint64_t gpu = msg.ok && nccl_loaded ? gpu_identity(ghm_cuda_device(ctx)) : 0;
    if (ghmi_dist_gather_word(ranks, gpu, all) < 0)
        return GHM_ERR_IO;
    for (int q = 0; q < ranks->ranks; q++)
        for (int p = 0; p <= q; p++)
            if (!all[q] || (p < q && all[p] == all[q]))
                return GHM_ERR_UNSUPPORTED;
    ncclComm_t comm = NULL;
    int ret = nccl_check(nccl.comm_init_rank(&comm, ranks->ranks, msg.id, ranks->rank),
                         "ncclCommInitRank");
    return ret < 0 ? ret : make_link(ctx, comm, link);
}

static void nccl_unlink(GhmContext *ctx, void *link)
{
    free_link(ctx, (NcclLink *)link);
}

/* One group of sends and receives (NCCL pairs them across the ranks) on the link's stream,
 * after ctx's work so far; ctx's later work waits for it from nccl_join on. */
static int nccl_exchange(GhmContext *ctx, void *link, int ranks, const uint32_t *send,
                         const size_t *send_n, const size_t *send_at, uint32_t *recv,
                         const size_t *recv_n, const size_t *recv_at)
{
    NcclLink *l = (NcclLink *)link;
    ncclComm_t comm = l->comm;
    cudaStream_t s = l->side->stream;
    int ret = side_mark(ctx, l->side);
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaStreamWaitEvent(s, l->side->marked, 0));
    if (ret < 0)
        return ret;
    ret = nccl_check(nccl.group_start(), "ncclGroupStart");
    for (int q = 0; q < ranks && ret == GHM_OK; q++) {
        if (send_n[q])
            ret = nccl_check(nccl.send(send + send_at[q], send_n[q], ncclUint32, q, comm, s),
                             "ncclSend");
        if (ret == GHM_OK && recv_n[q])
            ret = nccl_check(nccl.recv(recv + recv_at[q], recv_n[q], ncclUint32, q, comm, s),
                             "ncclRecv");
    }
    int end = nccl_check(nccl.group_end(), "ncclGroupEnd"); /* always closes the group */
    if (ret == GHM_OK && end == GHM_OK)
        ret = GHM_CUDA(cudaEventRecord(l->side->done, s));
    return ret < 0 ? ret : end;
}

/* ctx's work from here on waits for the exchanges queued so far (a wait on the device). */
static int nccl_join(GhmContext *ctx, void *link)
{
    return side_join(ctx, ((NcclLink *)link)->side);
}
#define NCCL_OPS nccl_link, nccl_unlink, nccl_exchange, nccl_join
#else
#define NCCL_OPS NULL, NULL, NULL, NULL /* ranks on CUDA go through host memory */
#endif

extern "C" const GhmDistOps ghm_cuda_dist_ops = {
    dist_count, dist_split, dist_way_back_words, dist_unsplit, dist_copy, ghmi_device_alloc,
    dist_connect, NCCL_OPS, side_open, side_close, side_mark, side_copy, side_join, side_wait,
    ghmi_cuda_dist_in_place_ok, ghmi_cuda_dist_find_in_place, ghmi_cuda_dist_reach,
    ghmi_cuda_window_open, ghmi_cuda_window_close, ghmi_cuda_window_reserve,
    ghmi_cuda_window_fill, ghmi_cuda_window_probe, ghmi_cuda_window_answers,
    ghmi_cuda_window_send, ghmi_cuda_window_join, ghmi_cuda_window_alloc_array,
    ghmi_cuda_window_free_array};
