/*
 * geohash.cu - geometric hashing's voting on the GPU (Alcantara et al. 2009, section 6): the
 * device twin of the voting in vision/match/geohash.c, which calls it through GhmVisionOps.
 *
 * vote_kernel: one block of VOTE_THREADS per query basis b (grid = mb). The block zeroes its row
 * of the vote array T (votes[b * nbases .. + nbases)) and its bitmap over the signature key
 * space (seen[b * words .. + words)), then takes the coded points of the basis's level
 * (frames[b].coded_first, coded_count: a pyramid level's) VOTE_THREADS at a time: each
 * thread computes its point's signature in the basis frame; the first thread to set the
 * signature's bit (atomicOr) owns it and probes the reference GhmMultimap through its device
 * reference. Found runs are queued in shared memory and the block's warps take one run each,
 * the lanes striding its reference basis ids (coalesced reads) with one atomicAdd per vote into
 * the row, as the paper's voting does. A basis's duplicate signatures vote once, as on the CPU.
 *
 * best_kernel: one block per row, each thread keeps the two best (votes, id) of its stride, a
 * CUB block reduction merges them: the GHM_GEO_ROW_BEST best cells by falling votes, then rising
 * reference basis id (the order the CPU row reduction uses).
 *
 * Exactness: votes are integer counts, so the result is identical to the CPU's whatever the
 * order of the atomics, provided every signature is the CPU's. The signature arithmetic uses
 * explicitly rounded intrinsics (__fsub_rn, __dmul_rn, __dadd_rn), which the compiler
 * never contracts into FMAs, in the operation order of geohash.c (compiled as ISO C11: no
 * contraction there either); atan2 and 1 / |d|^2 of each basis come from the host (GhmGeoFrame),
 * and so do the reciprocals that stand in for divisions (GhmGeoSigParams).
 */
#include <cub/cub.cuh>

#include "kernels/hashing/cuda_check.cuh"
#include "kernels/hashing/backend_cuda.h"
#include "kernels/hashing/multimap_ref.cuh"
#include "geohash.h"

#define VOTE_THREADS 256
#define VOTE_WARPS (VOTE_THREADS / 32)
#define BEST_THREADS 256
#define TWO_PI 6.28318530717958647692

static_assert(GHM_GEO_ROW_BEST == 2, "best_kernel keeps exactly two cells per row");

/* The signature of c in frame f, as vision/match/geohash_signatures.c's span_signatures(): 0
 * when c is outside the window. */
static __device__ __forceinline__ int signature(const GhmGeoFrame &f, const GhmGeoPoint &c,
                                                const GhmGeoSigParams &sp, uint32_t *key,
                                                uint32_t *slot)
{
    double qx = (double)__fsub_rn(c.x, f.ax), qy = (double)__fsub_rn(c.y, f.ay);
    double dot = __dadd_rn(__dmul_rn(qx, f.dx), __dmul_rn(qy, f.dy));
    double u = __dsub_rn(__dmul_rn(dot, f.inv_len2), 0.5);
    double iu = floor(__dmul_rn(__dadd_rn(u, sp.window), sp.inv_quant));
    if (iu < 0.0 || iu >= sp.nbins)
        return 0;
    double crs = __dsub_rn(__dmul_rn(qx, f.dy), __dmul_rn(qy, f.dx));
    double v = __dmul_rn(crs, f.inv_len2);
    double iv = floor(__dmul_rn(__dadd_rn(v, sp.window), sp.inv_quant));
    if (iv < 0.0 || iv >= sp.nbins)
        return 0;
    uint32_t qa = 0;
    if (sp.angle_bins > 0) {
        double rel = __dsub_rn((double)c.angle, f.phi);
        rel = __dsub_rn(rel, __dmul_rn(TWO_PI, floor(__dmul_rn(rel, sp.inv_two_pi))));
        qa = (uint32_t)__dmul_rn(rel, sp.angle_scale);
        if (qa >= (uint32_t)sp.angle_bins)
            qa = 0;
    }
    uint32_t ku = (uint32_t)iu, kv = (uint32_t)iv;
    *key = ku | kv << 8 | qa << 16;
    *slot = (ku * (uint32_t)sp.nbins + kv) * (uint32_t)(sp.angle_bins > 0 ? sp.angle_bins : 1) + qa;
    return 1;
}

static __device__ __forceinline__ unsigned long long warp_sum(unsigned long long x)
{
    for (int o = 16; o > 0; o >>= 1)
        x += __shfl_down_sync(0xFFFFFFFFu, x, o);
    return x;
}

static __global__ __launch_bounds__(VOTE_THREADS) void vote_kernel(
    GhmMultimapRef table, uint32_t nbases, const GhmGeoFrame *frames, const GhmGeoPoint *coded,
    uint32_t nc, GhmGeoSigParams sp, uint32_t words, uint32_t *votes, uint32_t *seen,
    unsigned long long *counters)
{
    __shared__ uint32_t run_first[VOTE_THREADS], run_count[VOTE_THREADS];
    __shared__ uint32_t nruns;
    const GhmGeoFrame f = frames[blockIdx.x];
    uint32_t *row = votes + (size_t)blockIdx.x * nbases;
    uint32_t *bits = seen + (size_t)blockIdx.x * words;
    for (uint32_t i = threadIdx.x; i < nbases; i += VOTE_THREADS)
        row[i] = 0;
    for (uint32_t i = threadIdx.x; i < words; i += VOTE_THREADS)
        bits[i] = 0;
    if (threadIdx.x == 0)
        nruns = 0;
    __syncthreads();
    unsigned long long looked = 0, cast = 0;
    const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (uint32_t base = 0; f.valid && base < f.coded_count; base += VOTE_THREADS) {
        uint32_t c = base + threadIdx.x, key, slot;
        if (c < f.coded_count && c + f.coded_first < nc &&
            signature(f, coded[f.coded_first + c], sp, &key, &slot)) {
            uint32_t bit = 1u << (slot & 31);
            uint32_t first, count;
            if (!(atomicOr(&bits[slot >> 5], bit) & bit)) {
                looked++;
                if (ghm_multimap_ref_find(&table, key, &first, &count)) {
                    cast += count;
                    uint32_t at = atomicAdd(&nruns, 1u);
                    run_first[at] = first;
                    run_count[at] = count;
                }
            }
        }
        __syncthreads();
        for (uint32_t r = warp; r < nruns; r += VOTE_WARPS) {
            const uint32_t *ids = table.values + run_first[r];
            for (uint32_t j = lane; j < run_count[r]; j += 32)
                atomicAdd(&row[ids[j]], 1u);
        }
        __syncthreads();
        if (threadIdx.x == 0)
            nruns = 0;
        __syncthreads();
    }
    looked = warp_sum(looked);
    cast = warp_sum(cast);
    if (lane == 0 && looked)
        atomicAdd(&counters[0], looked);
    if (lane == 0 && cast)
        atomicAdd(&counters[1], cast);
}

/* The two largest keys seen; a key is votes << 32 | ~id, so larger = more votes, then lower id;
 * 0 = no cell. Keys of one row are distinct (distinct ids). */
struct Top2 {
    unsigned long long a, b;
};

struct Top2Merge {
    __device__ __forceinline__ Top2 operator()(const Top2 &x, const Top2 &y) const
    {
        Top2 r;
        if (x.a >= y.a) {
            r.a = x.a;
            r.b = x.b > y.a ? x.b : y.a;
        } else {
            r.a = y.a;
            r.b = y.b > x.a ? y.b : x.a;
        }
        return r;
    }
};

static __global__ __launch_bounds__(BEST_THREADS) void best_kernel(const uint32_t *votes,
                                                                   uint32_t nbases, uint32_t *best)
{
    typedef cub::BlockReduce<Top2, BEST_THREADS> Reduce;
    __shared__ typename Reduce::TempStorage tmp;
    const uint32_t *row = votes + (size_t)blockIdx.x * nbases;
    Top2 t = {0, 0};
    for (uint32_t i = threadIdx.x; i < nbases; i += BEST_THREADS) {
        uint32_t n = row[i];
        unsigned long long k = n ? (unsigned long long)n << 32 | (0xFFFFFFFFu - i) : 0;
        if (k > t.a) {
            t.b = t.a;
            t.a = k;
        } else if (k > t.b) {
            t.b = k;
        }
    }
    t = Reduce(tmp).Reduce(t, Top2Merge());
    if (threadIdx.x == 0) {
        uint32_t *out = best + (size_t)blockIdx.x * 2 * GHM_GEO_ROW_BEST;
        out[0] = (uint32_t)(t.a >> 32);
        out[1] = t.a ? 0xFFFFFFFFu - (uint32_t)t.a : 0;
        out[2] = (uint32_t)(t.b >> 32);
        out[3] = t.b ? 0xFFFFFFFFu - (uint32_t)t.b : 0;
    }
}

static size_t seen_words(const GhmGeoSigParams *sp)
{
    size_t na = sp->angle_bins > 0 ? (size_t)sp->angle_bins : 1;
    return ((size_t)sp->nbins * (size_t)sp->nbins * na + 31) / 32;
}

extern "C" int ghm_cuda_geo_vote(GhmContext *ctx, const GhmMultimap *table, size_t nbases,
                                 const GhmGeoFrame *frames, size_t mb, const GhmGeoPoint *coded,
                                 size_t nc, const GhmGeoSigParams *sp, uint32_t *votes,
                                 uint32_t *seen, unsigned long long *counters)
{
    GhmMultimapRef ref;
    if (!ctx || !sp || !counters || (mb && (!frames || !votes || !seen)) || (nc && !coded) ||
        sp->nbins < 1 || sp->nbins > 255 || sp->angle_bins < 0 || sp->angle_bins > 64)
        return GHM_ERR_INVALID;
    int ret = ghm_cuda_multimap_ref(table, &ref);
    if (ret < 0)
        return ret;
    if (nbases > 0xFFFFFFFFu || nc > 0xFFFFFFFFu || mb > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (mb == 0)
        return GHM_OK;
    vote_kernel<<<(unsigned)mb, VOTE_THREADS, 0, ghm_cuda_stream(ctx)>>>(
        ref, (uint32_t)nbases, frames, coded, (uint32_t)nc, *sp, (uint32_t)seen_words(sp), votes,
        seen, counters);
    return GHM_CUDA_LAUNCH();
}

extern "C" int ghm_cuda_geo_best(GhmContext *ctx, const uint32_t *votes, size_t mb, size_t nbases,
                                 uint32_t *best)
{
    if (!ctx || (mb && (!votes || !best)))
        return GHM_ERR_INVALID;
    if (nbases > 0xFFFFFFFFu || mb > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    if (mb == 0)
        return GHM_OK;
    best_kernel<<<(unsigned)mb, BEST_THREADS, 0, ghm_cuda_stream(ctx)>>>(votes, (uint32_t)nbases,
                                                                          best);
    return GHM_CUDA_LAUNCH();
}
