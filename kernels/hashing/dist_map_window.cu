/*
 * dist_map_window.cu - a ranked GhmDistMap's find in place between processes (GhmDistOps'
 * window ops, in dist_map.cu's op table): the ranks of one machine map each other's staging
 * arrays by CUDA IPC, so that a find over two ranks runs as one process's find in place
 * (dist_map_in_place.cu) instead of NCCL's two all-to-alls.
 *
 * Each rank's window is one cudaMalloc'd array (the pool's memory cannot be exported): its
 * queries' keys, then their answers; and two interprocess events, `filled` (the keys are in)
 * and `probed` (this rank's probes of every window are done). A find: every rank copies its keys
 * into its window and marks `filled`; after a vote (the host barrier that makes every mark
 * visible before any rank waits on it), every rank probes its own window and the other's, once
 * its `filled` has passed, in one pass (dist_map_in_place.cu) for its own part's keys, writing
 * the answers there, and marks `probed`; after a second vote every rank waits for the other's
 * `probed` and copies its answers out. A build: every rank's copy engine carries its pieces into
 * the other windows (on a side stream, beside the own piece's insert) and marks `filled`. Every
 * call ends with each rank's stream drained and a vote, so a new call starts with every window
 * idle.
 *
 * The records the ranks swap (through GhmDistRanks.all_to_all_v, the caller's host messages)
 * carry each window's handles, size and a generation that changes when it grows; a rank maps
 * a peer's window again only when its generation changed. IPC reaches other processes of the
 * same machine only: ranks on other hosts, or threads of one process, get no window (every
 * rank sees the same records, so every rank decides alike), and the ranks' NCCL or host path
 * takes the find.
 *
 * Arrays (ghm_dist_map_alloc_array): cudaMalloc'd arrays every rank maps when they are made
 * (every rank makes one together). A find whose keys, or answers, lie in one of this rank's
 * arrays says so in its record (the array's number and the offset), and the ranks probe and
 * answer there instead of in the window: its copy in, or out, is not made. On two H200s the
 * copies were about a tenth of a find of 2^28 keys (ranks at 0.88-0.91x of one process).
 * An array is freed by every rank together too: the others unmap it before its owner frees it,
 * as CUDA requires.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device_memory.h"
#include "hash_cuda_internal.cuh"
#include "hash_internal.h"

#define MAX_PARTS GHM_DIST_MAP_MAX_PARTS

/* Where a find's keys or answers lie: in array `id` (ghm_dist_map_alloc_array) from `offset`
 * bytes, or (id 0) in the window. */
struct Place {
    uint64_t id, offset;
};

/* What a rank tells the others, as 32-bit words. */
struct Record {
    int64_t status;      /* GHM_OK, or this rank's failure: every rank then fails alike */
    uint64_t host, pid;  /* IPC maps only other processes of the same machine */
    uint64_t n, cap;     /* this call's words; the window's room (cap keys, cap other words) */
    uint64_t generation; /* the window array's; 0: none yet */
    Place keys, out;     /* a find's */
    cudaIpcMemHandle_t array;
    cudaIpcEventHandle_t filled, probed;
};

/* Arrays a rank may hold at once (ghm_dist_map_alloc_array). */
#define MAX_ARRAYS 16

/* An array of ghm_dist_map_alloc_array: this rank's (p its memory) or a peer's (p mapped). */
struct Array {
    uint64_t id; /* numbered alike on every rank; 0: a free slot */
    char *p;
    size_t bytes;
};

/* Another rank's window as this process maps it. */
struct Peer {
    uint64_t generation;     /* of the array mapped; 0: none */
    uint32_t *keys, *second; /* the mapping: keys, then a find's answers or a build's values */
    size_t cap, n;           /* its room, and its keys in this call */
    cudaEvent_t filled, probed;
    const uint32_t *keys_at; /* this find's keys and answers: in its window or in an array */
    uint32_t *out_at;
    Array arrays[MAX_ARRAYS];
};

struct Window {
    int rank, ranks;
    uint32_t *array; /* keys [0, cap), then a find's answers or a build's values [cap, 2 cap) */
    size_t cap, n;
    uint64_t generation;
    cudaEvent_t filled, probed;
    cudaStream_t side;  /* a build's copies into the other windows, beside the context's work */
    cudaEvent_t before; /* the context's work before them */
    Record mine;
    Peer peer[MAX_PARTS];
    const uint32_t *keys_at; /* this find's keys and answers: the caller's, or the window's */
    uint32_t *out_at;
    Array arrays[MAX_ARRAYS];
    uint64_t arrays_made; /* the last array's id */
};

/* The host's name folded to one word. */
static uint64_t host_identity(void)
{
    char name[256] = "";
    gethostname(name, sizeof name - 1);
    return ghmi_fnv1a64(name, strlen(name));
}

/* Every rank's record in all[rank] (a Record or an ArrayRecord); GHM_ERR_IO when the exchange
 * failed. */
template <typename R> static int swap_records(const GhmDistRanks *r, const R *mine, R *all)
{
    static_assert(sizeof(R) % 4 == 0, "records travel as words");
    const size_t words = sizeof(R) / 4;
    uint32_t send[MAX_PARTS * (sizeof(R) / 4)];
    size_t n[MAX_PARTS], at[MAX_PARTS];
    for (int q = 0; q < r->ranks; q++) {
        memcpy(send + q * words, mine, sizeof *mine);
        n[q] = words;
        at[q] = q * words;
    }
    return r->all_to_all_v(r->user, send, n, at, (uint32_t *)all, n, at) < 0 ? GHM_ERR_IO
                                                                           : GHM_OK;
}

/* The first failure among the records in rank order, else GHM_OK. */
template <typename R> static int first_failure(const R *all, int ranks)
{
    for (int q = 0; q < ranks; q++)
        if (all[q].status < 0)
            return (int)all[q].status;
    return GHM_OK;
}

static void unmap_array(Peer *p)
{
    if (p->keys)
        cudaIpcCloseMemHandle(p->keys);
    p->keys = p->second = NULL;
    p->generation = 0;
}

void ghmi_cuda_window_close(GhmContext *ctx, void *window)
{
    Window *w = (Window *)window;
    if (!w)
        return;
    ghm_cuda_bind(ctx);
    for (int q = 0; q < w->ranks; q++) {
        Peer *p = &w->peer[q];
        unmap_array(p);
        for (int a = 0; a < MAX_ARRAYS; a++)
            if (p->arrays[a].id)
                cudaIpcCloseMemHandle(p->arrays[a].p);
        if (p->filled)
            cudaEventDestroy(p->filled);
        if (p->probed)
            cudaEventDestroy(p->probed);
    }
    cudaEvent_t own[] = {w->filled, w->probed, w->before};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (own[i])
            cudaEventDestroy(own[i]);
    if (w->side)
        cudaStreamDestroy(w->side);
    ghmi_device_free_exportable(ctx, w->array);
    for (int a = 0; a < MAX_ARRAYS; a++) /* the arrays the caller did not free */
        if (w->arrays[a].id)
            ghmi_device_free_exportable(ctx, w->arrays[a].p);
    cudaGetLastError(); /* what failed here leaves nothing to free */
    free(w);
}

/* This rank's events, and its record's identity and event handles. */
static int open_own(Window *w)
{
    unsigned flags = cudaEventDisableTiming | cudaEventInterprocess;
    int ret = GHM_CUDA(cudaEventCreateWithFlags(&w->filled, flags));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaEventCreateWithFlags(&w->probed, flags));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaEventCreateWithFlags(&w->before, cudaEventDisableTiming));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaStreamCreateWithFlags(&w->side, cudaStreamNonBlocking));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaIpcGetEventHandle(&w->mine.filled, w->filled));
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaIpcGetEventHandle(&w->mine.probed, w->probed));
    w->mine.host = host_identity();
    w->mine.pid = (uint64_t)getpid();
    return ret;
}

/* Whether every rank is another process of this machine (decided alike on every rank). */
static int one_machine(const Record *all, int ranks)
{
    for (int q = 0; q < ranks; q++)
        for (int p = 0; p < q; p++)
            if (all[q].host != all[p].host || all[q].pid == all[p].pid)
                return 0;
    return 1;
}

int ghmi_cuda_window_open(GhmContext *ctx, const GhmDistRanks *ranks, void **window)
{
    *window = NULL;
    Window *w = (Window *)calloc(1, sizeof *w);
    int ret = w ? GHM_OK : GHM_ERR_NOMEM;
    Record none = {}, all[MAX_PARTS];
    Record *mine = w ? &w->mine : &none;
    if (w) {
        w->rank = ranks->rank;
        w->ranks = ranks->ranks;
        ghm_cuda_bind(ctx);
        ret = open_own(w);
    }
    mine->status = ret;
    if (swap_records(ranks, mine, all) < 0)
        ret = GHM_ERR_IO;
    else if ((ret = first_failure(all, ranks->ranks)) == GHM_OK && !one_machine(all, ranks->ranks))
        ret = GHM_ERR_UNSUPPORTED;
    for (int q = 0; q < ranks->ranks && ret == GHM_OK; q++)
        if (q != ranks->rank) {
            ret = GHM_CUDA(cudaIpcOpenEventHandle(&w->peer[q].filled, all[q].filled));
            if (ret == GHM_OK)
                ret = GHM_CUDA(cudaIpcOpenEventHandle(&w->peer[q].probed, all[q].probed));
        }
    if (ret < 0) {
        ghmi_cuda_window_close(ctx, w);
        return ret;
    }
    *window = w;
    return GHM_OK;
}

/* Room in a window is taken in steps of this many words: the second half then starts on a
 * whole line (at a room of a build's pieces, an odd number, the finds' answers were written
 * across lines: 42 -> 40 G keys/s on two H200s), and a find of about as many keys as the build
 * received (a shard's n against its part's share) fits without a new array. */
#define ROOM_STEP 65536

/* Room for n keys and n other words in this rank's window: a new array (a new generation) when
 * the old one is too small. A window only grows; it is freed with the map. */
static int make_room(GhmContext *ctx, Window *w, size_t n)
{
    if (n <= w->cap)
        return GHM_OK;
    if (n > SIZE_MAX / 8 - ROOM_STEP)
        return GHM_ERR_TOO_LARGE;
    n = (n + ROOM_STEP - 1) / ROOM_STEP * ROOM_STEP;
    ghmi_device_free_exportable(ctx, w->array);
    w->array = NULL;
    w->cap = 0;
    w->mine.generation = 0;
    int ret = ghmi_device_alloc_exportable(ctx, 2 * n * 4, (void **)&w->array);
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaIpcGetMemHandle(&w->mine.array, w->array));
    if (ret == GHM_OK) {
        w->cap = n;
        w->mine.generation = ++w->generation;
    }
    return ret;
}

/* The peer's window as its record describes it, mapped again when its generation changed. */
static int map_peer(Peer *p, const Record *r)
{
    p->n = (size_t)r->n;
    if (r->generation == p->generation)
        return GHM_OK;
    unmap_array(p);
    if (!r->generation)
        return GHM_OK;
    void *base = NULL;
    int ret = GHM_CUDA(cudaIpcOpenMemHandle(&base, r->array, cudaIpcMemLazyEnablePeerAccess));
    if (ret < 0)
        return ret;
    p->keys = (uint32_t *)base;
    p->second = p->keys + r->cap;
    p->cap = (size_t)r->cap;
    p->generation = r->generation;
    return GHM_OK;
}

/* Where bytes at p lie among this rank's arrays (id 0: in none of them). */
static Place place_of(const Window *w, const void *p, size_t bytes)
{
    const char *c = (const char *)p;
    for (int a = 0; c && a < MAX_ARRAYS; a++) {
        const Array *r = &w->arrays[a];
        if (r->id && c >= r->p && bytes <= r->bytes && (size_t)(c - r->p) <= r->bytes - bytes)
            return Place{r->id, (uint64_t)(c - r->p)};
    }
    return Place{0, 0};
}

/* The peer's memory for `bytes` at a place of its record (fallback: id 0, in its window). */
static int peer_place(const Peer *p, Place at, size_t bytes, void *fallback, void **out)
{
    *out = fallback;
    if (!at.id)
        return GHM_OK;
    for (int a = 0; a < MAX_ARRAYS; a++) {
        const Array *r = &p->arrays[a];
        if (r->id == at.id && bytes <= r->bytes && at.offset <= r->bytes - bytes) {
            *out = r->p + at.offset;
            return GHM_OK;
        }
    }
    return GHM_ERR_INVALID; /* not in an array this rank mapped: the ranks' calls disagree */
}

int ghmi_cuda_window_reserve(GhmContext *ctx, void *window, const GhmDistRanks *ranks, size_t n,
                             const uint32_t *keys_in, const uint32_t *out_in, uint32_t **keys,
                             uint32_t **second)
{
    Window *w = (Window *)window;
    Record all[MAX_PARTS];
    ghm_cuda_bind(ctx);
    w->mine.keys = place_of(w, keys_in, n * 4);
    w->mine.out = place_of(w, out_in, n * 4);
    int own_arrays = w->mine.keys.id && w->mine.out.id; /* the window holds none of it */
    w->mine.status = make_room(ctx, w, own_arrays ? 0 : n);
    w->mine.n = n;
    w->mine.cap = w->cap;
    w->n = n;
    if (swap_records(ranks, &w->mine, all) < 0)
        return GHM_ERR_IO;
    int ret = first_failure(all, w->ranks);
    for (int q = 0; q < w->ranks && ret == GHM_OK; q++) {
        Peer *p = &w->peer[q];
        void *k = NULL, *o = NULL;
        if (q == w->rank)
            continue;
        ret = map_peer(p, &all[q]);
        if (ret == GHM_OK)
            ret = peer_place(p, all[q].keys, p->n * 4, p->keys, &k);
        if (ret == GHM_OK)
            ret = peer_place(p, all[q].out, p->n * 4, p->second, &o);
        p->keys_at = (const uint32_t *)k;
        p->out_at = (uint32_t *)o;
    }
    *keys = w->array;
    *second = w->array + w->cap;
    w->keys_at = w->mine.keys.id ? keys_in : w->array;
    w->out_at = w->mine.out.id ? (uint32_t *)out_in : w->array + w->cap;
    return ret;
}

int ghmi_cuda_window_fill(GhmContext *ctx, void *window, const uint32_t *keys)
{
    Window *w = (Window *)window;
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = w->n && !w->mine.keys.id /* keys in an array are probed where they lie */
                  ? GHM_CUDA(cudaMemcpyAsync(w->array, keys, w->n * 4, cudaMemcpyDefault, s))
                  : GHM_OK;
    return ret == GHM_OK ? GHM_CUDA(cudaEventRecord(w->filled, s)) : ret;
}

int ghmi_cuda_window_probe(GhmContext *ctx, void *window, const GhmMap *map, GhmiDistConsts c)
{
    Window *w = (Window *)window;
    cudaStream_t s = ghm_cuda_stream(ctx);
    const uint32_t *keys[2] = {w->keys_at, NULL};
    size_t n[2] = {w->n, 0};
    uint32_t *out[2] = {w->out_at, NULL};
    int shards = 1, ret = GHM_OK;
    for (int q = 0; q < w->ranks && ret == GHM_OK; q++) { /* two ranks (open_windows) */
        Peer *p = &w->peer[q];
        if (q == w->rank || !p->n)
            continue;
        ret = GHM_CUDA(cudaStreamWaitEvent(s, p->filled, 0));
        keys[1] = p->keys_at;
        n[1] = p->n;
        out[1] = p->out_at;
        shards = 2;
    }
    if (ret == GHM_OK)
        ret = ghmi_cuda_dist_find_in_place(ctx, map, c, (uint32_t)w->rank, shards, keys, n, out);
    return ret == GHM_OK ? GHM_CUDA(cudaEventRecord(w->probed, s)) : ret;
}

int ghmi_cuda_window_answers(GhmContext *ctx, void *window, uint32_t *out)
{
    Window *w = (Window *)window;
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_OK;
    for (int q = 0; q < w->ranks && ret == GHM_OK; q++)
        if (q != w->rank)
            ret = GHM_CUDA(cudaStreamWaitEvent(s, w->peer[q].probed, 0));
    if (ret == GHM_OK && w->n && !w->mine.out.id) /* answers in an array are where they go */
        ret = GHM_CUDA(
            cudaMemcpyAsync(out, w->array + w->cap, w->n * 4, cudaMemcpyDefault, s));
    return ret;
}

int ghmi_cuda_window_send(GhmContext *ctx, void *window, const uint32_t *keys,
                          const uint32_t *values, const size_t *n, const size_t *from,
                          const uint64_t *to)
{
    Window *w = (Window *)window;
    int ret = GHM_CUDA(cudaEventRecord(w->before, ghm_cuda_stream(ctx))); /* after the split */
    if (ret == GHM_OK)
        ret = GHM_CUDA(cudaStreamWaitEvent(w->side, w->before, 0));
    for (int q = 0; q < w->ranks && ret == GHM_OK; q++) {
        Peer *p = &w->peer[q];
        if (q == w->rank || !n[q])
            continue;
        if (to[q] > p->cap || n[q] > p->cap - to[q]) /* the ranks' plans disagree */
            return GHM_ERR_INVALID;
        size_t bytes = n[q] * 4;
        ret = GHM_CUDA(cudaMemcpyAsync(p->keys + to[q], keys + from[q], bytes,
                                       cudaMemcpyDefault, w->side));
        if (ret == GHM_OK)
            ret = GHM_CUDA(cudaMemcpyAsync(p->second + to[q], values + from[q], bytes,
                                           cudaMemcpyDefault, w->side));
    }
    return ret == GHM_OK ? GHM_CUDA(cudaEventRecord(w->filled, w->side)) : ret;
}

int ghmi_cuda_window_join(GhmContext *ctx, void *window)
{
    Window *w = (Window *)window;
    cudaStream_t s = ghm_cuda_stream(ctx);
    int ret = GHM_CUDA(cudaStreamWaitEvent(s, w->filled, 0));
    for (int q = 0; q < w->ranks && ret == GHM_OK; q++)
        if (q != w->rank)
            ret = GHM_CUDA(cudaStreamWaitEvent(s, w->peer[q].filled, 0));
    return ret;
}

/* --- arrays (ghm_dist_map_alloc_array) ------------------------------------------------------ */

/* What a rank tells the others about an array made (or, status > 0, the id it frees). */
struct ArrayRecord {
    int64_t status;
    uint64_t bytes;
    cudaIpcMemHandle_t handle;
};

static Array *free_slot(Array *arrays)
{
    for (int a = 0; a < MAX_ARRAYS; a++)
        if (!arrays[a].id)
            return &arrays[a];
    return NULL;
}

/* Maps every peer's new array (id) from the records (unmap_arrays undoes it). */
static int map_arrays(Window *w, const ArrayRecord *all, uint64_t id)
{
    int ret = GHM_OK;
    for (int q = 0; q < w->ranks && ret == GHM_OK; q++) {
        if (q == w->rank)
            continue;
        Array *slot = free_slot(w->peer[q].arrays); /* the ranks' slots fill alike */
        void *base = NULL;
        ret = slot ? GHM_CUDA(cudaIpcOpenMemHandle(&base, all[q].handle,
                                                   cudaIpcMemLazyEnablePeerAccess))
                   : GHM_ERR_INVALID;
        if (ret == GHM_OK)
            *slot = Array{id, (char *)base, (size_t)all[q].bytes};
    }
    return ret;
}

static void unmap_arrays(Window *w, uint64_t id)
{
    for (int q = 0; q < w->ranks; q++)
        for (int a = 0; a < MAX_ARRAYS; a++) {
            Array *r = &w->peer[q].arrays[a];
            if (r->id == id) {
                cudaIpcCloseMemHandle(r->p);
                *r = Array{0, NULL, 0};
            }
        }
}

/* This rank's array at p (its start), or NULL. */
static Array *own_array(Window *w, const void *p)
{
    for (int a = 0; p && a < MAX_ARRAYS; a++)
        if (w->arrays[a].id && w->arrays[a].p == (const char *)p)
            return &w->arrays[a];
    return NULL;
}

int ghmi_cuda_window_alloc_array(GhmContext *ctx, void *window, const GhmDistRanks *ranks,
                                 int status, size_t bytes, void **out)
{
    Window *w = (Window *)window;
    ArrayRecord mine = {GHM_OK, bytes, {}}, all[MAX_PARTS];
    Array *slot = free_slot(w->arrays);
    void *p = NULL;
    uint64_t id = ++w->arrays_made; /* numbered alike on every rank, made or not */
    ghm_cuda_bind(ctx);
    mine.status = status < 0 ? status
                  : slot     ? ghmi_device_alloc_exportable(ctx, bytes ? bytes : 1, &p)
                             : GHM_ERR_TOO_LARGE;
    if (mine.status == GHM_OK)
        mine.status = GHM_CUDA(cudaIpcGetMemHandle(&mine.handle, p));
    int ret = swap_records(ranks, &mine, all);
    if (ret == GHM_OK && (ret = first_failure(all, w->ranks)) == GHM_OK)
        ret = map_arrays(w, all, id);
    mine.status = ret; /* a mapping may fail on one rank alone */
    if (ret != GHM_ERR_IO)
        ret = swap_records(ranks, &mine, all) < 0 ? GHM_ERR_IO : first_failure(all, w->ranks);
    if (ret < 0) { /* every rank unmaps before any frees (a vote between), as CUDA asks */
        unmap_arrays(w, id);
        if (ret != GHM_ERR_IO)
            (void)swap_records(ranks, &mine, all);
        ghmi_device_free_exportable(ctx, p);
        return ret;
    }
    *slot = Array{id, (char *)p, bytes};
    *out = p;
    return GHM_OK;
}

int ghmi_cuda_window_free_array(GhmContext *ctx, void *window, const GhmDistRanks *ranks,
                                void *p)
{
    Window *w = (Window *)window;
    Array *own = own_array(w, p);
    ArrayRecord mine = {own ? (int64_t)own->id : 0, 0, {}}, all[MAX_PARTS];
    ghm_cuda_bind(ctx);
    if (swap_records(ranks, &mine, all) < 0)
        return GHM_ERR_IO;
    for (int q = 0; q < w->ranks; q++)
        if (q != w->rank && all[q].status > 0)
            unmap_arrays(w, (uint64_t)all[q].status);
    if (swap_records(ranks, &mine, all) < 0) /* every mapping closed before the free */
        return GHM_ERR_IO;
    if (own) {
        ghmi_device_free_exportable(ctx, own->p);
        *own = Array{0, NULL, 0};
    }
    return GHM_OK;
}
