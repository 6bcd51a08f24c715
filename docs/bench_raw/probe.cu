// probe.cu - dev-only: ceilings and find-kernel variants on a 2^26-key bucketed table.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cooperative_groups.h>
#include "kernels/hashing/hash_cuda_internal.cuh"
#include "kernels/hashing/hash_refs.h"
#include "hash_internal.h"

namespace cg = cooperative_groups;

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

__global__ void k_thread(GhmMapRef ref, const uint32_t *__restrict__ keys, size_t n,
                         uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = ghm_map_ref_find(&ref, keys[i]);
}

// thread per key, bucket 4: one 32B load per bucket as two 16B loads, first bucket only +fallback
__global__ void k_thread_b4(GhmMapRef ref, const uint32_t *__restrict__ keys, size_t n,
                            uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    uint32_t key = keys[i];
    uint32_t v = GHM_NOT_FOUND;
    for (uint32_t h = 0; h < 2; h++) {
        const ulonglong2 *p =
            (const ulonglong2 *)(ref.slots + (size_t)ghm_map_ref_bucket(&ref, key, h) * 4);
        ulonglong2 a = __ldg(p), b = __ldg(p + 1);
        unsigned long long e[4] = {a.x, a.y, b.x, b.y};
        int room = 0, hit = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            if (!hit && ghm_slot_key(e[j]) == key) {
                v = ghm_slot_value(e[j]);
                hit = 1;
            }
            room |= ghm_slot_key(e[j]) == GHM_EMPTY_KEY;
        }
        if (hit || room)
            break;
    }
    out[i] = v;
}

// tile of B lanes handles KPT keys at once: KPT independent bucket loads in flight per lane
template <int B, int KPT>
__global__ void k_tile_multi(GhmMapRef ref, const uint32_t *__restrict__ keys, size_t n,
                             uint32_t *__restrict__ out)
{
    cg::thread_block_tile<B> tile = cg::tiled_partition<B>(cg::this_thread_block());
    size_t t = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / B;
    size_t base = t * KPT;
    if (base >= n)
        return;
    uint32_t lane = tile.thread_rank();
    uint32_t k[KPT];
    unsigned long long e[KPT];
#pragma unroll
    for (int j = 0; j < KPT; j++) {
        size_t i = base + j;
        k[j] = i < n ? keys[i] : 0u;
    }
#pragma unroll
    for (int j = 0; j < KPT; j++)
        e[j] = __ldg(ref.slots + (size_t)ghm_map_ref_bucket(&ref, k[j], 0) * B + lane);
#pragma unroll
    for (int j = 0; j < KPT; j++) {
        uint32_t hit = tile.ballot(ghm_slot_key(e[j]) == k[j]);
        uint32_t v = GHM_NOT_FOUND;
        if (hit) {
            v = tile.shfl(ghm_slot_value(e[j]), __ffs(hit) - 1);
        } else if (!tile.ballot(ghm_slot_key(e[j]) == GHM_EMPTY_KEY)) {
            unsigned long long f =
                __ldg(ref.slots + (size_t)ghm_map_ref_bucket(&ref, k[j], 1) * B + lane);
            uint32_t h2 = tile.ballot(ghm_slot_key(f) == k[j]);
            if (h2)
                v = tile.shfl(ghm_slot_value(f), __ffs(h2) - 1);
        }
        if (lane == j % B && base + j < n)
            out[base + j] = v;
    }
}

__global__ void k_gather8(const unsigned long long *__restrict__ buf, size_t nslots, size_t n,
                          uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (uint32_t)__ldg(buf + __umulhi(ghm_hash_mix((uint32_t)i, 0x9E3779B1u, 7), (uint32_t)nslots));
}

__global__ void k_gather32(const unsigned long long *__restrict__ buf, size_t nbuckets, size_t n,
                           uint32_t *__restrict__ out)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const ulonglong2 *p = (const ulonglong2 *)(buf + 4 * (size_t)__umulhi(ghm_hash_mix((uint32_t)i, 0x9E3779B1u, 7), (uint32_t)nbuckets));
    ulonglong2 a = __ldg(p), b = __ldg(p + 1);
    out[i] = (uint32_t)(a.x ^ a.y ^ b.x ^ b.y);
}

__global__ void k_copy(const uint4 *__restrict__ a, uint4 *__restrict__ b, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        b[i] = a[i];
}

template <class F> static float timeit(F f)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    f();
    std::vector<float> t;
    for (int r = 0; r < 9; r++) {
        cudaEventRecord(a);
        f();
        cudaEventRecord(b);
        CK(cudaEventSynchronize(b));
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[4];
}

int main(int argc, char **argv)
{
    int lg = argc > 1 ? atoi(argv[1]) : 26;
    double load = argc > 2 ? atof(argv[2]) : 0.8;
    size_t n = (size_t)1 << lg;
    GhmContextOptions o = ghm_context_defaults();
    o.backend = GHM_BACKEND_CUDA;
    GhmContext *ctx;
    if (ghm_context_create(&o, &ctx) < 0)
        return 1;
    std::vector<uint32_t> k(n), v(n), a(n);
    for (size_t i = 0; i < n; i++) {
        k[i] = ghmi_permute32((uint32_t)i, 12345);
        v[i] = (uint32_t)i;
        a[i] = ghmi_permute32((uint32_t)(i + n), 12345);
    }
    uint32_t *dk, *dv, *da, *dout;
    CK(cudaMalloc(&dk, n * 4));
    CK(cudaMalloc(&dv, n * 4));
    CK(cudaMalloc(&da, n * 4));
    CK(cudaMalloc(&dout, n * 4));
    CK(cudaMemcpy(dk, k.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dv, v.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(da, a.data(), n * 4, cudaMemcpyHostToDevice));
    GhmMapOptions mo = ghm_map_defaults();
    mo.load_factor = load;
    GhmMap *m;
    if (ghm_map_create(ctx, &mo, &m) < 0 || ghm_map_build(m, dk, dv, n) < 0)
        return 2;
    GhmMapRef ref;
    ghm_cuda_map_ref(m, &ref);
    size_t nslots = (size_t)ref.num_buckets * ref.bucket_slots;
    printf("n=2^%d load %.2f buckets %u x %u slots, table %.0f MB\n", lg, load, ref.num_buckets,
           ref.bucket_slots, nslots * 8 / 1e6);
    auto rate = [&](const char *name, float ms, size_t cnt) {
        printf("%-34s %8.3f ms  %7.2f G/s\n", name, ms, cnt / (ms * 1e-3) * 1e-9);
    };
    unsigned g256 = (unsigned)((n + 255) / 256);
    unsigned g4 = (unsigned)((n * 4 + 255) / 256);
    for (int pass = 0; pass < 2; pass++) {
        uint32_t *q = pass ? da : dk;
        printf("-- %s\n", pass ? "absent" : "present");
        rate("api ghm_map_find", timeit([&] { ghm_map_find(m, q, n, dout); }), n);
        GhmiEmitValue em = {dout};
        if (ref.bucket_slots == 4) {
            rate("thread per key b4 2x16B", timeit([&] { k_thread_b4<<<g256, 256>>>(ref, q, n, dout); }), n);
            rate("tile4 x4 keys", timeit([&] { k_tile_multi<4, 4><<<(unsigned)((n + 255) / 256), 256>>>(ref, q, n, dout); }), n);
            rate("tile4 x8 keys", timeit([&] { k_tile_multi<4, 8><<<(unsigned)((n / 2 + 255) / 256), 256>>>(ref, q, n, dout); }), n);
        } else {
            unsigned g8 = (unsigned)((n * 8 + 255) / 256);
            rate("tile8 x8 keys", timeit([&] { k_tile_multi<8, 8><<<(unsigned)((n + 255) / 256), 256>>>(ref, q, n, dout); }), n);
        }
        rate("thread per key generic", timeit([&] { k_thread<<<g256, 256>>>(ref, q, n, dout); }), n);
    }
    printf("-- ceilings\n");
    rate("gather 8B random (per thread)", timeit([&] { k_gather8<<<g256, 256>>>(ref.slots, nslots, n, dout); }), n);
    rate("gather 32B random (per thread)", timeit([&] { k_gather32<<<g256, 256>>>(ref.slots, nslots / 4, n, dout); }), n);
    size_t nv = nslots * 8 / 16 / 2;
    float ms = timeit([&] { k_copy<<<(unsigned)((nv + 255) / 256), 256>>>((const uint4 *)ref.slots, (uint4 *)ref.slots + nv, nv); });
    printf("%-34s %8.3f ms  %7.2f GB/s (read+write)\n", "copy", ms, 2.0 * nv * 16 / (ms * 1e-3) * 1e-9);
    // build timing by api
    rate("api ghm_map_build", timeit([&] { ghm_map_build(m, dk, dv, n); }), n);
    CudaMap *cm = (CudaMap *)((GhmiHandle *)m)->impl;
    rate("internal build unique=1 (no dedup)", timeit([&] { ghmi_cuda_map_build(cm, dk, dv, n, 1); }), n);
    rate("memset table", timeit([&] { cudaMemset((void *)ref.slots, 0xFF, nslots * 8); }), n);
    ghm_map_free(&m);
    ghm_context_free(&ctx);
    return 0;
}
