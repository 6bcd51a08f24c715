/*
 * features_internal.cuh - the device feature chain's workspace, shared by features.cu (the
 * kernels, the buffers, the chain's stages) and features_launch.cu (how a run is launched: on
 * the workspace's stream, directly or as a captured CUDA graph).
 */
#ifndef GHM_KERNELS_VISION_FEATURES_INTERNAL_CUH
#define GHM_KERNELS_VISION_FEATURES_INTERNAL_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "vision/match/vision_backend_internal.h"

/* Launch shapes: pixel kernels in blocks of TILE_X x TILE_Y (a warp reads a row segment),
 * kernels over arrays in blocks of LINEAR_THREADS. */
#define TILE_X 32
#define TILE_Y 8
#define LINEAR_THREADS 256

static inline dim3 pixel_grid(int w, int h)
{
    return dim3((unsigned)((w + TILE_X - 1) / TILE_X), (unsigned)((h + TILE_Y - 1) / TILE_Y));
}

static inline unsigned linear_blocks(size_t n)
{
    return (unsigned)((n + LINEAR_THREADS - 1) / LINEAR_THREADS);
}

/* What a captured chain depends on besides the workspace's buffers: the image size and the
 * parameters (ghmi_feature_params zeroes the struct first, so memcmp compares it). */
typedef struct GhmFeatureKey {
    int w, h;
    GhmFeatureParams p;
} GhmFeatureKey;

/* The threshold's radix selection (features.cu). */
typedef struct FeatureSelect FeatureSelect;

/* Per-run scalars, on the device; read back once at the end. */
typedef struct Levels {
    unsigned long long noise_sum; /* sum of |Immerkaer mask| over the interior */
    float noise, floor_mag, threshold, max_response;
    uint32_t npoints, ncand, nsample;
} Levels;

enum { F_TMP, F_BLUR, F_GX, F_GY, F_MAG, F_NMS, F_OFF, F_S0, F_S1, F_S2, F_RESP, NF };

struct GhmFeatureWorkspace {
    GhmContext *ctx; /* of ghm_cuda_features_create: its stream orders the block's life */
    void *block;     /* every device array below, carved (features.cu's layout) */
    size_t cap_pix;  /* pixels the buffers hold */
    int width, height; /* of the last run */
    size_t npoints;    /* found by the last run */
    unsigned long long *cells; /* grid sampling: best key per cell */
    uint8_t *pixels;
    float *f[NF];
    uint32_t *flags, *rank;
    GhmEdgePoint *points;
    int32_t *pixel_point;
    GhmCornerCand *cand;
    void *cub_tmp;
    size_t cub_bytes;
    Levels *levels, *host_levels; /* device; pinned host copy */
    FeatureSelect *select;        /* device scratch of the threshold */
    cudaStream_t stream;          /* the chain's own (features_launch.cu) */
    cudaEvent_t ready, done;      /* context stream -> chain, chain -> context stream */
    cudaEvent_t placed;           /* the run's image is in pixels (another level halves it) */
    /* The chain captured as a CUDA graph for the last key seen twice (features_launch.cu). */
    uint8_t *staging;             /* pinned: the image the graph uploads */
    size_t cap_staging;
    cudaGraphExec_t graph;
    GhmFeatureKey key;            /* of the last run */
    int key_runs;                 /* runs in a row with that key */
};

/* Grows the buffers to w x h pixels (features.cu). */
int ghmi_features_reserve(GhmFeatureWorkspace *ws, int w, int h);

/* Queues the whole chain on ws->stream from the w x h image in ws->pixels (rows w bytes apart):
 * edges, corners when p->corners, and the run's scalars copied to ws->host_levels. Nothing is
 * waited for. */
int ghmi_features_enqueue(GhmFeatureWorkspace *ws, int w, int h, const GhmFeatureParams *p);

/* Queues on s the w x h halving (ghm_image_halve's arithmetic) of the device image src (rows
 * src_stride bytes apart, at least 2w x 2h) into dst (rows w bytes apart). */
int ghmi_features_halve(cudaStream_t s, const uint8_t *src, size_t src_stride, int w, int h,
                        uint8_t *dst);

#endif /* GHM_KERNELS_VISION_FEATURES_INTERNAL_CUH */
