/*
 * video_backend_internal.h - what the video module asks of a backend's device (see
 * GhmDeviceModule in hashing/ghm_backend_internal.h): the CUDA backend's table is
 * kernels/vision/video/ops.cu; a build without it decodes on the CPU only.
 */
#ifndef GHM_VIDEO_BACKEND_INTERNAL_H
#define GHM_VIDEO_BACKEND_INTERNAL_H

typedef struct GhmVideoDecodeOps {
    /* The CUDA driver's handles FFmpeg's CUDA decoders work with on `device`: its primary
     * context (the one the matcher's contexts use, made if need be) and a new non-blocking
     * stream of it (CUcontext, CUstream), so that decoding runs beside the matcher's work
     * instead of taking turns with another context. GHM_ERR_NO_DEVICE, GHM_ERR_CUDA. */
    int (*open_stream)(int device, void **cu_context, void **cu_stream);
    void (*close_stream)(int device, void *cu_stream);
} GhmVideoDecodeOps;

#endif /* GHM_VIDEO_BACKEND_INTERNAL_H */
