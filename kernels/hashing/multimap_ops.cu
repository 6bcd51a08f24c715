/*
 * multimap_ops.cu - the CUDA GhmMultimap's op table: the builds of multimap.cu and the queries of
 * multimap_query.cu, in a file of its own so that the two call each other one way only (the
 * queries settle a queued build).
 */
#include "multimap_internal.cuh"

extern "C" const GhmMultimapOps ghm_cuda_multimap_ops = {
    /* .create = */ ghmi_cuda_multimap_create,
    /* .build = */ ghmi_cuda_multimap_build,
    /* .find = */ ghmi_cuda_multimap_find,
    /* .retrieve = */ ghmi_cuda_multimap_retrieve,
    /* .values = */ ghmi_cuda_multimap_values,
    /* .num_keys = */ ghmi_cuda_multimap_num_keys,
    /* .destroy = */ ghmi_cuda_multimap_destroy,
    /* .clone = */ ghmi_cuda_multimap_clone,
};
