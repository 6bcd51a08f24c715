/*
 * video_internal.h - what the files of the video module share: the YUV4MPEG2 reader
 * (video_y4m.c) that video.c uses for "-" and, in builds without FFmpeg, for Y4M files.
 */
#ifndef GHM_VIDEO_INTERNAL_H
#define GHM_VIDEO_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "ghm_video.h"

/* Longest header or FRAME line we accept; real ones are well under 100 bytes. */
#define GHMI_Y4M_MAX_LINE 4096

typedef struct GhmiY4m GhmiY4m;

/* Parses the stream header from f (which stays the caller's). Fills info (format
 * "yuv4mpegpipe", codec "rawvideo", frames -1). GHM_ERR_FORMAT for a malformed header,
 * GHM_ERR_UNSUPPORTED for a colour space other than 420*, 422, 444 and mono (8 bits),
 * GHM_ERR_TOO_LARGE, GHM_ERR_TRUNCATED when the header is cut short, GHM_ERR_IO. */
int ghmi_y4m_open(FILE *f, GhmiY4m **out, GhmVideoInfo *info, char *why, size_t why_size);

/* Reads the next frame. With want = 1 returns its Y plane as a new full-range grey image in
 * *out; with want = 0 skips it (*out stays NULL). Returns GHM_OK, GHM_VIDEO_END at a clean end
 * of stream, GHM_ERR_TRUNCATED when the stream ends inside a frame, GHM_ERR_FORMAT when a frame
 * does not start with "FRAME", GHM_ERR_IO, GHM_ERR_NOMEM. */
int ghmi_y4m_read(GhmiY4m *y, int want, GhmImage **out, char *why, size_t why_size);

/* Frame rate as the header's F field gives it (numerator, denominator). */
void ghmi_y4m_rate(const GhmiY4m *y, int *num, int *den);

void ghmi_y4m_free(GhmiY4m **y);

/* 1 when the first bytes of the buffer are the YUV4MPEG2 signature. */
int ghmi_y4m_signature(const uint8_t *buf, size_t n);

#endif /* GHM_VIDEO_INTERNAL_H */
