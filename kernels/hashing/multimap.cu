/*
 * multimap.cu - GhmMultimap on the CUDA backend (thesis 6.3, algorithm 6.4), its builds and op
 * table (the queries are in multimap_query.cu): a stable CUB radix sort of the (key, value)
 * pairs makes each key's values contiguous in input order (the values array); a select of the
 * run heads gives each run's offset (offsets[K] = n closes the last one) and, in the same pass,
 * its key; and a bucketed cuckoo map sends each distinct key to its run number. A query costs
 * one map probe plus one read of two adjacent offsets.
 *
 * The grouping waits for nothing: the number of runs K stays on the device (key_count). A build
 * from the API then reads K (one wait) and sizes the map for it exactly (one more); a queued build
 * (hash_refs.h) sizes the map for the bound n and queues its one attempt too, so that a pipeline
 * probes the map in its next kernels and learns K with its own next download. A pipeline may
 * also write its pairs straight into the multimap's own buffers (staging): the sort then runs in
 * place between two buffer pairs, with no copy of the input and no extra buffers in its scratch.
 * Arrays are kept from build to build and only grow.
 */
#include <cub/cub.cuh>
#include <stdlib.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#include "multimap_internal.cuh"

/* Run heads of sorted keys: index 0 and every index whose key differs from its predecessor's. */
struct HeadOf {
    const uint32_t *k;
    __device__ __forceinline__ bool operator()(uint32_t i) const
    {
        return i == 0 || k[i] != k[i - 1];
    }
};

/* What the select writes for the head i of run r: offsets[r] = i and keys[r] = its key. */
struct RunOf {
    const uint32_t *k;
    __device__ __forceinline__ thrust::tuple<uint32_t, uint32_t> operator()(uint32_t i) const
    {
        return thrust::make_tuple(i, k[i]);
    }
};

/* offsets[K] = n closes the last run (K is known on the device only). */
static __global__ void close_runs_kernel(uint32_t *offsets, const uint32_t *key_count, uint32_t n)
{
    offsets[*key_count] = n;
}

/* The select of the run heads, its output written through RunOf. */
static int select_runs(CudaMultimap *mm, void *temp, size_t *bytes, const uint32_t *sorted,
                       size_t n, cudaStream_t s)
{
    auto out = thrust::make_transform_output_iterator(
        thrust::make_zip_iterator(thrust::make_tuple(mm->offsets, mm->keys)), RunOf{sorted});
    return GHM_CUDA(cub::DeviceSelect::If(temp, *bytes, thrust::counting_iterator<uint32_t>(0),
                                          out, mm->key_count, (int)n, HeadOf{sorted}, s));
}

static void release_arrays(CudaMultimap *mm)
{
    ghmi_device_free(mm->ctx, mm->block[0]);
    ghmi_device_free(mm->ctx, mm->block[1]);
    ghmi_device_free(mm->ctx, mm->temp);
    mm->block[0] = mm->block[1] = mm->temp = NULL;
    mm->kbuf[0] = mm->kbuf[1] = mm->vbuf[0] = mm->vbuf[1] = mm->offsets = mm->keys = NULL;
    mm->cap = mm->cap2 = mm->temp_bytes = mm->n = mm->num_keys = 0;
    mm->cur = 0;
    mm->staged = -1;
}

/* Pair `which` for `want` pairs, with the offsets and the keys in block 0, carved from
 * mm->block[which] (device_memory.h; a NULL block: the size). */
static void pair_layout(GhmiCarve *c, CudaMultimap *mm, int which, size_t want)
{
    mm->kbuf[which] = (uint32_t *)ghmi_carve(c, want * 4 + 4);
    mm->vbuf[which] = (uint32_t *)ghmi_carve(c, want * 4 + 4);
    if (which == 0) {
        mm->offsets = (uint32_t *)ghmi_carve(c, want * 4 + 4);
        mm->keys = (uint32_t *)ghmi_carve(c, want * 4 + 4);
    }
}

/* One allocation for block `which`; its arrays are NULL when it fails. */
static int alloc_block(CudaMultimap *mm, int which, size_t want)
{
    GhmiCarve c = ghmi_carve_start(NULL);
    pair_layout(&c, mm, which, want);
    int ret = ghmi_device_alloc(mm->ctx, c.used, &mm->block[which]);
    c = ghmi_carve_start(mm->block[which]);
    pair_layout(&c, mm, which, want);
    return ret;
}

void ghmi_cuda_multimap_destroy(void *impl)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    if (!mm)
        return;
    ghmi_cuda_map_destroy(mm->map);
    release_arrays(mm);
    ghmi_device_free(mm->ctx, mm->key_count);
    ghm_cuda_wait(ghm_cuda_stream(mm->ctx));
    free(mm);
}

int ghmi_cuda_multimap_create(GhmContext *ctx, double load_factor, void **impl)
{
    if (load_factor < 0.0 || load_factor > 0.99)
        return GHM_ERR_INVALID;
    CudaMultimap *mm = (CudaMultimap *)calloc(1, sizeof *mm);
    if (!mm)
        return GHM_ERR_NOMEM;
    mm->ctx = ctx;
    mm->load_factor = load_factor;
    mm->staged = -1;
    GhmMapOptions opt = {load_factor, GHM_MAP_BUCKETED, 2, 8};
    int ret = ghmi_cuda_map_create(ctx, &opt, &mm->map);
    if (ret >= 0)
        ret = ghmi_device_alloc(ctx, sizeof *mm->key_count, (void **)&mm->key_count);
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemsetAsync(mm->key_count, 0, sizeof *mm->key_count,
                                       ghm_cuda_stream(ctx)));
    if (ret >= 0)
        ret = ghmi_cuda_map_build(mm->map, NULL, NULL, 0, 1);
    if (ret < 0) {
        ghmi_cuda_multimap_destroy(mm);
        return ret;
    }
    *impl = mm;
    return GHM_OK;
}

/* Room for n pairs in pair 0, the offsets and the keys (one block), and in pair 1 too when both
 * is set (a second); stream-ordered, so old arrays are released behind the work queued on them.
 * Growing loses the content. */
static int reserve(CudaMultimap *mm, size_t n, int both)
{
    GhmContext *ctx = mm->ctx;
    int ret = GHM_OK;
    if (mm->cap < n || !mm->offsets) {
        size_t want = n > mm->cap ? n : mm->cap;
        void *temp = mm->temp;
        size_t temp_bytes = mm->temp_bytes;
        mm->temp = NULL; /* kept: it does not depend on the arrays */
        release_arrays(mm);
        mm->temp = temp;
        mm->temp_bytes = temp_bytes;
        ret = alloc_block(mm, 0, want);
        mm->cap = ret >= 0 ? want : 0;
    }
    if (ret >= 0 && both && mm->cap2 < mm->cap) {
        ghmi_device_free(ctx, mm->block[1]);
        mm->block[1] = NULL;
        mm->cap2 = 0;
        ret = alloc_block(mm, 1, mm->cap);
        mm->cap2 = ret >= 0 ? mm->cap : 0;
    }
    if (ret < 0)
        release_arrays(mm);
    return ret;
}

static int reserve_temp(CudaMultimap *mm, size_t bytes)
{
    if (mm->temp && mm->temp_bytes >= bytes)
        return GHM_OK;
    ghmi_device_free(mm->ctx, mm->temp);
    mm->temp = NULL;
    mm->temp_bytes = 0;
    int ret = ghmi_device_alloc(mm->ctx, bytes + 16, &mm->temp);
    if (ret >= 0)
        mm->temp_bytes = bytes + 16;
    return ret;
}

/* Sorts the n pairs into a buffer pair, on end_bit bits: from keys / values (any device arrays,
 * into pair 0) or, when keys is NULL, in place from the staged pair. Item counts go to CUB as
 * int (n < 2^31): a 64-bit count selects kernels with 64-bit offsets, 10 % slower on the H100. */
static int sort_pairs(CudaMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n,
                      int end_bit, cudaStream_t s)
{
    int to = keys ? 0 : mm->staged;
    cub::DoubleBuffer<uint32_t> dk(mm->kbuf[to], mm->kbuf[1 - to]);
    cub::DoubleBuffer<uint32_t> dv(mm->vbuf[to], mm->vbuf[1 - to]);
    size_t b_sort = 0, b_select = 0;
    int items = (int)n;
    int ret = keys ? GHM_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b_sort, keys, mm->kbuf[0],
                                                               values, mm->vbuf[0], items, 0,
                                                               end_bit, s))
                   : GHM_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b_sort, dk, dv, items, 0,
                                                               end_bit, s));
    if (ret >= 0)
        ret = select_runs(mm, NULL, &b_select, mm->kbuf[0], n, s);
    if (ret >= 0)
        ret = reserve_temp(mm, b_sort > b_select ? b_sort : b_select);
    size_t bytes = mm->temp_bytes;
    if (ret >= 0 && keys) {
        ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(mm->temp, bytes, keys, mm->kbuf[0], values,
                                                       mm->vbuf[0], items, 0, end_bit, s));
        mm->cur = 0;
    } else if (ret >= 0) {
        ret = GHM_CUDA(cub::DeviceRadixSort::SortPairs(mm->temp, bytes, dk, dv, items, 0, end_bit,
                                                       s));
        mm->cur = dk.selector ? 1 - to : to;
    }
    mm->staged = -1;
    return ret;
}

/* Sort, run heads and their keys: values, offsets, keys and *key_count on the device, queued. */
static int group_runs(CudaMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n,
                      int end_bit)
{
    cudaStream_t s = ghm_cuda_stream(mm->ctx);
    int ret = keys || n == 0 ? reserve(mm, n, 0) : GHM_OK;
    if (ret < 0)
        return ret;
    if (n == 0) { /* one offset, no runs */
        mm->staged = -1;
        ret = GHM_CUDA(cudaMemsetAsync(mm->key_count, 0, sizeof *mm->key_count, s));
        return ret < 0 ? ret : GHM_CUDA(cudaMemsetAsync(mm->offsets, 0, 4, s));
    }
    ret = sort_pairs(mm, keys, values, n, end_bit, s);
    size_t bytes = mm->temp_bytes;
    if (ret >= 0)
        ret = select_runs(mm, mm->temp, &bytes, mm->kbuf[mm->cur], n, s);
    if (ret < 0)
        return ret;
    close_runs_kernel<<<1, 1, 0, s>>>(mm->offsets, mm->key_count, (uint32_t)n);
    return GHM_CUDA_LAUNCH();
}

int ghmi_cuda_multimap_settle(CudaMultimap *mm)
{
    if (!mm->pending)
        return GHM_OK;
    uint32_t k = 0;
    cudaStream_t s = ghm_cuda_stream(mm->ctx);
    int ret = GHM_CUDA(cudaMemcpyAsync(&k, mm->key_count, sizeof k, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    if (ret >= 0)
        ret = ghmi_cuda_map_settle(mm->map);
    mm->pending = 0;
    mm->num_keys = ret >= 0 ? k : 0;
    if (ret < 0) {
        mm->n = 0;
        ghmi_cuda_map_forget(mm->map);
    }
    return ret;
}

static int build_device(CudaMultimap *mm, const uint32_t *keys, const uint32_t *values, size_t n)
{
    mm->pending = 0;
    mm->n = mm->num_keys = 0;
    uint32_t k = 0;
    cudaStream_t s = ghm_cuda_stream(mm->ctx);
    int ret = group_runs(mm, keys, values, n, 32);
    if (ret >= 0)
        ret = GHM_CUDA(cudaMemcpyAsync(&k, mm->key_count, sizeof k, cudaMemcpyDeviceToHost, s));
    if (ret >= 0)
        ret = GHM_CUDA(ghm_cuda_wait(s));
    if (ret >= 0)
        ret = ghmi_cuda_map_build(mm->map, mm->keys, NULL, k, 1);
    if (ret >= 0) {
        mm->n = n;
        mm->num_keys = k;
    } else { /* the arrays may be gone: the inner map must not answer into them */
        ghmi_cuda_map_forget(mm->map);
    }
    return ret;
}

int ghmi_cuda_multimap_input(void *impl, size_t n, uint32_t **keys, uint32_t **values)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    if (!keys || !values)
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE;
    int ret = reserve(mm, n, 1);
    if (ret < 0)
        return ret;
    mm->staged = 1 - mm->cur;
    mm->staged_n = n;
    *keys = mm->kbuf[mm->staged];
    *values = mm->vbuf[mm->staged];
    return GHM_OK;
}

int ghmi_cuda_multimap_build_queued(void *impl, const uint32_t *keys, const uint32_t *values,
                                    size_t n, int key_bits, int attempt, unsigned int *failed)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    int staged = !keys && !values;
    if (n && (staged ? mm->staged < 0 || n > mm->staged_n : !keys || !values))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu || key_bits < 0 || key_bits > 32)
        return n > 0x7FFFFFFFu ? GHM_ERR_TOO_LARGE : GHM_ERR_INVALID;
    mm->pending = 0;
    mm->n = mm->num_keys = 0;
    int ret = group_runs(mm, keys, values, n, key_bits ? key_bits : 32);
    if (ret >= 0)
        ret = ghmi_cuda_map_build_queued(mm->map, mm->keys, NULL, mm->key_count, n, 1, attempt,
                                         failed);
    if (ret >= 0) {
        mm->pending = 1;
        mm->n = mm->num_keys = n;
    } else {
        ghmi_cuda_map_forget(mm->map);
    }
    return ret;
}

int ghmi_cuda_multimap_build(void *impl, const uint32_t *keys, const uint32_t *values, size_t n)
{
    CudaMultimap *mm = (CudaMultimap *)impl;
    if (n && (!keys || !values))
        return GHM_ERR_INVALID;
    if (n > 0x7FFFFFFFu)
        return GHM_ERR_TOO_LARGE; /* CUB's item counts */
    const void *dk, *dv;
    void *ok = NULL, *ov = NULL;
    int ret = ghmi_cuda_input(mm->ctx, keys, n * 4, &dk, &ok);
    if (ret >= 0)
        ret = ghmi_cuda_input(mm->ctx, values, n * 4, &dv, &ov);
    if (ret >= 0)
        ret = build_device(mm, (const uint32_t *)dk, (const uint32_t *)dv, n);
    ghmi_cuda_release(mm->ctx, ok);
    ghmi_cuda_release(mm->ctx, ov);
    int sync = GHM_CUDA(ghm_cuda_wait(ghm_cuda_stream(mm->ctx)));
    return ret < 0 ? ret : sync;
}


/* Built again in ctx from the source's sorted pairs (in place on the same device, through the
 * host from another: ghmi_cuda_clone_input): the sort of sorted pairs keeps their order (it is
 * stable), so the runs, the values array and every find's answer are the source's. */
int ghmi_cuda_multimap_clone(GhmContext *ctx, const void *src, void **impl)
{
    const CudaMultimap *s = (const CudaMultimap *)src;
    int ret = ghmi_cuda_multimap_settle((CudaMultimap *)s); /* a queued build, read lazily */
    const uint32_t *keys = NULL, *values = NULL;
    uint32_t *owned_keys = NULL, *owned_values = NULL;
    if (ret >= 0)
        ret = ghmi_cuda_clone_input(ctx, s->ctx, s->kbuf[s->cur], s->n, &keys, &owned_keys);
    if (ret >= 0)
        ret = ghmi_cuda_clone_input(ctx, s->ctx, s->vbuf[s->cur], s->n, &values, &owned_values);
    if (ret >= 0)
        ret = ghmi_cuda_multimap_create(ctx, s->load_factor, impl);
    if (ret >= 0 && (ret = ghmi_cuda_multimap_build(*impl, keys, values, s->n)) < 0) {
        ghmi_cuda_multimap_destroy(*impl);
        *impl = NULL;
    }
    free(owned_keys);
    free(owned_values);
    return ret;
}

/* A device reference (refs.cu): the pending one of a queued build, without waiting for it. */
void ghmi_cuda_multimap_get_ref(const void *impl, GhmMultimapRef *out)
{
    const CudaMultimap *mm = (const CudaMultimap *)impl;
    out->map = *ghmi_cuda_map_get_ref(mm->map);
    out->offsets = mm->offsets;
    out->values = mm->vbuf[mm->cur];
    out->keys = mm->keys;
    out->key_count = mm->key_count;
    out->num_keys = (uint32_t)mm->num_keys;
    out->num_values = (uint32_t)mm->n;
}
