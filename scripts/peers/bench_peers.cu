/*
 * bench_peers.cu - the peers of `geohash-match bench hash` on the same keys: BGHT's static tables
 * (bucketed cuckoo bcht with buckets of 8 and 16, power-of-two p2bht, iceberg iht) and
 * cuCollections' cuco::static_map (linear probing, cooperative groups of 4 and of 1), plus the
 * memory ceilings a find and an insert are bounded by (random 8- and 32-byte gathers, a gather
 * in sorted order, a random 64-bit CAS).
 *
 * NOT part of the project's build, CMake or CI: BGHT and cuCollections are fetched and kept
 * outside the tree; scripts/peers/run.sh builds this file against their headers with
 *   nvcc -O3 -arch=sm_90 -std=c++17 --expt-relaxed-constexpr --expt-extended-lambda \
 *        -I PEERS/bght/include -I PEERS/cuco/include scripts/peers/bench_peers.cu
 * and runs it beside the project's bench in one device session.
 *
 * Usage: bench_peers [LOG2 [SEED [REPS]]]   (defaults 26, 1, 3)
 *
 * Same keys as src/bench_hash.c: key i = key_of(i, seed) for i < n (a 32-bit bijection, so the
 * keys are distinct), value i = i, absent key i = key_of(n + i, seed); the absent-share queries
 * replace key i by absent key i where (uint32_t)(i * 2654435761) % 100 < percent. Counted the
 * same way: "insert" times the whole build of a reused table (clear + insert, as
 * ghm_map_build clears its table), "insert-only" the peer's insert call alone (what the peers'
 * own benchmarks time); finds write one value per query into device memory. Every number is the
 * best of REPS runs after one untimed warm-up, timed with CUDA events, in M keys/s. Every find
 * is checked afterwards (present key i -> value i, absent key -> the sentinel value).
 * The peers take (key, value) pairs in one array of structs, built outside the clock, where
 * GhmMap takes a key and a value array (the same 8 bytes per key read).
 */
#include <cuda_runtime.h>

#include <bght/bcht.hpp>
#include <bght/iht.hpp>
#include <bght/p2bht.hpp>

#include <thrust/functional.h>
#include <utility>

/* CCCL 3 (CUDA 13) dropped thrust::identity, which the cuCollections snapshot used here
 * (2024-10-21) still names; CCCL 2's definition, so their headers compile unchanged. */
namespace thrust {
template <class T = void> struct identity {
    __host__ __device__ constexpr const T &operator()(const T &x) const { return x; }
};
template <> struct identity<void> {
    template <class U> __host__ __device__ constexpr U &&operator()(U &&x) const noexcept
    {
        return std::forward<U>(x);
    }
};
} // namespace thrust

#include <cuco/static_map.cuh>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

using key_t32 = uint32_t;
constexpr uint32_t SENTINEL_VALUE = 0xFFFFFFFFu; /* values are 0 .. n-1 < 2^31 */
const double LOADS[] = {0.8, 0.9, 0.95};
const int ABSENT_PERCENT[] = {0, 25, 50, 75, 100};

#define CUDA_OK(call)                                                                           \
    do {                                                                                        \
        cudaError_t err_ = (call);                                                              \
        if (err_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "bench_peers: %s: %s\n", #call, cudaGetErrorString(err_));     \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

/* src/bench_hash.c's key_of, bit for bit. */
uint32_t key_of(uint32_t counter, uint32_t seed)
{
    uint32_t x = counter ^ seed;
    x *= 0x9E3779B1u;
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

struct Inputs {
    size_t n = 0;
    uint32_t seed = 1;
    int reps = 3;
    uint32_t sentinel_key = 0; /* a key in neither the present nor the absent set */
    std::vector<uint32_t> keys, absent;
    uint32_t *d_keys = nullptr, *d_absent = nullptr, *d_queries = nullptr, *d_out = nullptr;
    uint64_t *d_pairs = nullptr; /* (key, value) as the peers' pair<uint32_t, uint32_t> */
};

uint32_t pick_sentinel(const Inputs &in)
{
    for (uint32_t c = 0xFFFFFFFFu;; c--) {
        bool used = false;
        for (size_t i = 0; i < in.n && !used; i++)
            used = in.keys[i] == c || in.absent[i] == c;
        if (!used)
            return c;
    }
}

void make_inputs(Inputs &in)
{
    size_t n = in.n;
    in.keys.resize(n);
    in.absent.resize(n);
    std::vector<uint64_t> pairs(n);
    for (size_t i = 0; i < n; i++) {
        in.keys[i] = key_of((uint32_t)i, in.seed);
        in.absent[i] = key_of((uint32_t)(n + i), in.seed);
        pairs[i] = (uint64_t)in.keys[i] | (uint64_t)(uint32_t)i << 32; /* first = key */
    }
    in.sentinel_key = pick_sentinel(in);
    CUDA_OK(cudaMalloc(&in.d_keys, n * 4));
    CUDA_OK(cudaMalloc(&in.d_absent, n * 4));
    CUDA_OK(cudaMalloc(&in.d_queries, n * 4));
    CUDA_OK(cudaMalloc(&in.d_out, n * 4));
    CUDA_OK(cudaMalloc(&in.d_pairs, n * 8));
    CUDA_OK(cudaMemcpy(in.d_keys, in.keys.data(), n * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(in.d_absent, in.absent.data(), n * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(in.d_pairs, pairs.data(), n * 8, cudaMemcpyHostToDevice));
}

/* The absent-share queries of src/bench_hash.c (make_mixed_queries) into d_queries. */
std::vector<uint32_t> make_mixed(const Inputs &in, int percent)
{
    std::vector<uint32_t> q(in.keys);
    for (size_t i = 0; i < in.n; i++)
        if ((uint32_t)(i * 2654435761u) % 100u < (uint32_t)percent)
            q[i] = in.absent[i];
    CUDA_OK(cudaMemcpy(in.d_queries, q.data(), in.n * 4, cudaMemcpyHostToDevice));
    return q;
}

struct Timer {
    cudaEvent_t e[3];
    Timer() { for (auto &x : e) CUDA_OK(cudaEventCreate(&x)); }
    ~Timer() { for (auto &x : e) cudaEventDestroy(x); }
    void mark(int i) { CUDA_OK(cudaEventRecord(e[i], 0)); }
    double ms(int a, int b)
    {
        CUDA_OK(cudaEventSynchronize(e[b]));
        float t = 0;
        CUDA_OK(cudaEventElapsedTime(&t, e[a], e[b]));
        return t;
    }
};

double mrate(size_t n, double ms) { return ms > 0 ? (double)n / (ms * 1e3) : 0.0; }

/* Best time of reps runs of f() after one warm-up, in ms. */
template <class F> double best_ms(int reps, F f)
{
    Timer t;
    f();
    double best = 0;
    for (int r = 0; r < reps; r++) {
        t.mark(0);
        f();
        t.mark(1);
        double ms = t.ms(0, 1);
        if (r == 0 || ms < best)
            best = ms;
    }
    return best;
}

/* Wrong answers of the last find of `queries` (present key i -> i, others -> sentinel). */
size_t count_errors(const Inputs &in, const std::vector<uint32_t> &queries)
{
    std::vector<uint32_t> out(in.n);
    CUDA_OK(cudaMemcpy(out.data(), in.d_out, in.n * 4, cudaMemcpyDeviceToHost));
    size_t errors = 0;
    for (size_t i = 0; i < in.n; i++) {
        uint32_t want = queries[i] == in.keys[i] ? (uint32_t)i : SENTINEL_VALUE;
        errors += out[i] != want;
    }
    return errors;
}

/* ---- the adaptors: one build (clear + insert) and one find, per peer ---- */

template <class Map> struct Bght {
    Map map;
    std::mt19937 rng{2}; /* BGHT's own seed */
    Bght(size_t n, double load, const Inputs &in)
        : map((size_t)((double)n / load), in.sentinel_key, SENTINEL_VALUE) {}
    size_t capacity(size_t n, double load) const
    {
        size_t c = (size_t)((double)n / load), b = Map::bucket_size;
        return (c + b - 1) / b * b;
    }
    void clear() { map.clear(); }
    bool insert(const Inputs &in)
    {
        auto *p = reinterpret_cast<typename Map::value_type *>(in.d_pairs);
        return map.insert(p, p + in.n);
    }
    void rehash() { map.randomize_hash_functions(rng); } /* after a failed build */
    void find(const uint32_t *q, const Inputs &in) { map.find(q, q + in.n, in.d_out); }
};

template <class Map> struct Cuco {
    Map map;
    Cuco(size_t n, double load, const Inputs &in)
        : map(n, load, cuco::empty_key<uint32_t>{in.sentinel_key},
              cuco::empty_value<uint32_t>{SENTINEL_VALUE}) {}
    size_t capacity(size_t, double) const { return map.capacity(); }
    void clear() { map.clear_async(); }
    bool insert(const Inputs &in)
    {
        auto *p = reinterpret_cast<const cuco::pair<uint32_t, uint32_t> *>(in.d_pairs);
        map.insert_async(p, p + in.n);
        return true; /* open addressing below load 1 does not fail */
    }
    void rehash() {}
    void find(const uint32_t *q, const Inputs &in) { map.find_async(q, q + in.n, in.d_out); }
};

/* Builds until one succeeds (at most 10 tries, new hash functions after each failure). */
template <class Peer> int build(Peer &p, const Inputs &in, int *failures)
{
    for (int t = 0; t < 10; t++) {
        p.clear();
        if (p.insert(in))
            return 0;
        ++*failures;
        p.rehash();
    }
    return -1;
}

template <class Peer> void bench_peer(const char *name, Inputs &in, double load, bool shares)
{
    size_t n = in.n;
    int failures = 0;
    Peer p(n, load, in);
    if (build(p, in, &failures) < 0) { /* warm-up */
        std::printf("peer      %-17s load %.2f  2^%-2d  build failed 10 times\n", name, load,
                    __builtin_ctzll(n));
        return;
    }
    double t_build = 0, t_ins = 0;
    Timer t;
    for (int r = 0; r < in.reps; r++) {
        t.mark(0);
        p.clear();
        t.mark(1);
        bool ok = p.insert(in);
        t.mark(2);
        double b = t.ms(0, 2), i = t.ms(1, 2);
        if (!ok) { /* a failed build counts, and is retried outside the clock */
            failures++;
            p.rehash();
            if (build(p, in, &failures) < 0)
                break;
            continue;
        }
        if (t_build == 0 || b < t_build)
            t_build = b;
        if (t_ins == 0 || i < t_ins)
            t_ins = i;
    }
    double t_hit = best_ms(in.reps, [&] { p.find(in.d_keys, in); });
    size_t err = count_errors(in, in.keys);
    double t_miss = best_ms(in.reps, [&] { p.find(in.d_absent, in); });
    err += count_errors(in, in.absent);
    size_t cap = p.capacity(n, load);
    std::printf("peer      %-17s load %.2f  2^%-2d  insert %8.1f  find %8.1f  absent %8.1f M/s"
                "  insert-only %8.1f  capacity %zu (load %.3f)  failed builds %d  wrong %zu\n",
                name, load, __builtin_ctzll(n), mrate(n, t_build), mrate(n, t_hit),
                mrate(n, t_miss), mrate(n, t_ins), cap, (double)n / (double)cap, failures, err);
    std::fflush(stdout);
    for (int s = 0; shares && s < 5; s++) {
        std::vector<uint32_t> q = make_mixed(in, ABSENT_PERCENT[s]);
        double tq = best_ms(in.reps, [&] { p.find(in.d_queries, in); });
        size_t e = count_errors(in, q);
        std::printf("absent    %-17s load %.2f  2^%-2d  %3d %% absent  find %8.1f M/s  wrong %zu\n",
                    name, load, __builtin_ctzll(n), ABSENT_PERCENT[s], mrate(n, tq), e);
    }
    std::fflush(stdout);
}

/* ---- ceilings: what one random memory access per key costs on this GPU ---- */

/* Slot of key k in a table of cap slots (multiply-shift: uniform for random keys). */
__device__ size_t slot_of(uint32_t k, size_t cap) { return (size_t)(((uint64_t)k * cap) >> 32); }

__global__ void gather8(const uint32_t *keys, size_t n, const uint64_t *table, size_t cap,
                        bool sorted, uint32_t *out)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = (uint32_t)table[sorted ? i * cap / n : slot_of(keys[i], cap)];
}

struct alignas(32) Sector {
    uint4 a, b;
};

__global__ void gather32(const uint32_t *keys, size_t n, const Sector *table, size_t sectors,
                         uint32_t *out)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        Sector s = table[slot_of(keys[i], sectors)];
        out[i] = s.a.x ^ s.a.w ^ s.b.x ^ s.b.w;
    }
}

__global__ void cas64(const uint32_t *keys, size_t n, unsigned long long *table, size_t cap)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        atomicCAS(&table[slot_of(keys[i], cap)], 0ull, (unsigned long long)keys[i] << 32 | i);
}

void ceilings(Inputs &in)
{
    size_t n = in.n, cap = (size_t)((double)n / 0.8); /* a table at load 0.8 */
    void *table = nullptr;
    CUDA_OK(cudaMalloc(&table, cap * 8));
    CUDA_OK(cudaMemset(table, 0, cap * 8));
    unsigned blocks = (unsigned)((n + 255) / 256);
    auto *t8 = static_cast<uint64_t *>(table);
    double r8 = best_ms(in.reps, [&] {
        gather8<<<blocks, 256>>>(in.d_keys, n, t8, cap, false, in.d_out);
    });
    double s8 = best_ms(in.reps, [&] {
        gather8<<<blocks, 256>>>(in.d_keys, n, t8, cap, true, in.d_out);
    });
    double r32 = best_ms(in.reps, [&] {
        gather32<<<blocks, 256>>>(in.d_keys, n, static_cast<Sector *>(table), cap / 4, in.d_out);
    });
    /* the CAS: the table cleared before each run, inside the clock as a build clears it */
    double c64 = best_ms(in.reps, [&] {
        CUDA_OK(cudaMemsetAsync(table, 0, cap * 8));
        cas64<<<blocks, 256>>>(in.d_keys, n, static_cast<unsigned long long *>(table), cap);
    });
    double clear_ms = best_ms(in.reps, [&] { CUDA_OK(cudaMemsetAsync(table, 0, cap * 8)); });
    CUDA_OK(cudaGetLastError());
    CUDA_OK(cudaFree(table));
    const char *f = "ceiling   %-33s 2^%-2d  %8.1f M/s\n";
    std::printf(f, "random 8-byte gather (load 0.8)", __builtin_ctzll(n), mrate(n, r8));
    std::printf(f, "random 32-byte gather (load 0.8)", __builtin_ctzll(n), mrate(n, r32));
    std::printf(f, "8-byte gather in sorted order", __builtin_ctzll(n), mrate(n, s8));
    std::printf(f, "random 64-bit CAS incl. clear", __builtin_ctzll(n), mrate(n, c64));
    std::printf(f, "random 64-bit CAS (clear taken out)", __builtin_ctzll(n),
                mrate(n, c64 - clear_ms));
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    Inputs in;
    int log2 = argc > 1 ? std::atoi(argv[1]) : 26;
    in.seed = argc > 2 ? (uint32_t)std::strtoul(argv[2], nullptr, 10) : 1u;
    in.reps = argc > 3 ? std::atoi(argv[3]) : 3;
    if (argc > 4 || log2 < 10 || log2 > 28 || in.reps < 1 || in.reps > 100) {
        std::fprintf(stderr, "usage: bench_peers [LOG2 10..28 [SEED [REPS 1..100]]]\n");
        return 2;
    }
    in.n = (size_t)1 << log2;
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    make_inputs(in);
    std::printf("bench_peers: %s, 2^%d keys, seed %u, best of %d after a warm-up, rates in "
                "millions per second, sentinel key 0x%08X\n",
                prop.name, log2, in.seed, in.reps, in.sentinel_key);
    ceilings(in);
    using cuco_lp4 = cuco::static_map<uint32_t, uint32_t>; /* linear_probing<4>: the default */
    using lp1 = cuco::linear_probing<1, cuco::default_hash_function<uint32_t>>;
    using cuco_lp1 = cuco::static_map<uint32_t, uint32_t, cuco::extent<std::size_t>,
                                      cuda::thread_scope_device, thrust::equal_to<uint32_t>, lp1>;
    for (double load : LOADS) {
        bool shares = load == 0.8;
        bench_peer<Bght<bght::bcht8<uint32_t, uint32_t>>>("bght-bcht8", in, load, shares);
        bench_peer<Bght<bght::bcht16<uint32_t, uint32_t>>>("bght-bcht16", in, load, shares);
        bench_peer<Bght<bght::p2bht16<uint32_t, uint32_t>>>("bght-p2bht16", in, load, shares);
        bench_peer<Bght<bght::iht16<uint32_t, uint32_t>>>("bght-iht16", in, load, shares);
        bench_peer<Cuco<cuco_lp4>>("cuco-static_map", in, load, shares);
        bench_peer<Cuco<cuco_lp1>>("cuco-static_map-cg1", in, load, shares);
    }
    return 0;
}
