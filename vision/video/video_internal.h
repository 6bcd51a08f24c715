/*
 * video_internal.h - what the files of the video module share: the GhmVideo handle itself
 * (video.c), the FFmpeg reader behind it (video_ffmpeg.c, with the frame conversion of
 * video_frame.c) and the YUV4MPEG2 reader (video_y4m.c) that video.c uses for "-" and, in
 * builds without FFmpeg, for Y4M files. The calls go one way: video.c -> video_ffmpeg.c ->
 * video_frame.c, and video.c -> video_y4m.c.
 */
#ifndef GHM_VIDEO_INTERNAL_H
#define GHM_VIDEO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "ghm_video.h"

/* Longest header or FRAME line we accept; real ones are well under 100 bytes. */
#define GHMI_Y4M_MAX_LINE 4096

typedef struct GhmiY4m GhmiY4m;
typedef struct GhmiAv GhmiAv;

struct GhmVideo {
    GhmVideoInfo info;
    int64_t start, end, step; /* the selection; end < 0 = to the last frame */
    int64_t next_index;       /* number the next frame out of the decoder gets */
    int damaged_run;          /* damaged frames since the last good one */
    int finished;             /* after END or an error: further reads repeat the result */
    int final_status;
    char final_why[256];
    int fps_num, fps_den; /* Y4M frame rate, for pts */
    GhmiY4m *y4m;
    FILE *y4m_file; /* opened by us (a Y4M file in a build without FFmpeg), or NULL */
    char y4m_cut[128]; /* FFmpeg reading a Y4M file whose last frame is cut short: what to say
                        * at its end ("" when whole) */
    GhmiAv *av;
};

/* A byte-to-byte table, one[v], and the same for two bytes read as one 16-bit word, two[w] (in
 * either byte order): what makes limited-range luma full-range grey, in both readers (FFmpeg's
 * frames, video_frame.c; Y4M, video_y4m.c). A plane goes through two a word at a time, a third
 * of a byte table's time (a look-up a byte, which no compiler vectorizes, is bound by the
 * loads), and the rows of a large plane on a few threads: the readers convert every frame on
 * their one thread while the decoder's threads decode, so this is on the path that caps a
 * run's frames a second (0.6 ms a 1080p frame on one core of the 2-core development machine,
 * where libswscale's own path took 2 ms). */
typedef struct GhmiByteMap {
    uint8_t one[256];
    uint16_t two[65536];
} GhmiByteMap;

/* Fills m->two from m->one. */
static inline void ghmi_byte_map_fill(GhmiByteMap *m)
{
    for (unsigned w = 0; w < 65536; w++) {
        uint8_t in[2], out[2];
        memcpy(in, &(uint16_t){(uint16_t)w}, 2);
        out[0] = m->one[in[0]];
        out[1] = m->one[in[1]];
        memcpy(&m->two[w], out, 2);
    }
}

/* w x h bytes of src through m into dst (src may be dst): the rows of a megapixel or more on
 * up to 4 threads (OMP_NUM_THREADS bounds them, as everywhere). */
static inline void ghmi_byte_map_plane(const GhmiByteMap *m, const uint8_t *src,
                                       ptrdiff_t src_stride, uint8_t *dst, ptrdiff_t dst_stride,
                                       int w, int h)
{
    enum { MOST_THREADS = 4, PARALLEL_PIXELS = 1 << 20 };
    int threads = 1;
#ifdef _OPENMP
    if ((size_t)w * (size_t)h >= PARALLEL_PIXELS)
        threads = omp_get_max_threads() < MOST_THREADS ? omp_get_max_threads() : MOST_THREADS;
#endif
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
    for (int y = 0; y < h; y++) {
        const uint8_t *s = src + (ptrdiff_t)y * src_stride;
        uint8_t *d = dst + (ptrdiff_t)y * dst_stride;
        int x = 0;
        for (; x + 2 <= w; x += 2) {
            uint16_t two;
            memcpy(&two, s + x, 2);
            memcpy(d + x, &m->two[two], 2);
        }
        if (x < w)
            d[x] = m->one[s[x]];
    }
}

/* 1 when frame number index is in the selection. */
static inline int ghmi_video_wanted(const GhmVideo *v, int64_t index)
{
    return index >= v->start && (v->end < 0 || index <= v->end) &&
           (index - v->start) % v->step == 0;
}

/* 1 when frame number index comes after the selection. */
static inline int ghmi_video_past_end(const GhmVideo *v, int64_t index)
{
    return v->end >= 0 && index > v->end;
}

/* --- FFmpeg (video_ffmpeg.c) --- */

/* Opens path through FFmpeg into v->av and fills v->info. On failure v->av may be set and is
 * freed by the caller through ghmi_av_free(). GHM_ERR_UNSUPPORTED in a build without FFmpeg or
 * when its libraries cannot be loaded (ffmpeg_libs.c), with why. */
int ghmi_av_open(const char *path, GhmVideo *v, char *why, size_t why_size);

/* The next frame as ghm_video_read() returns it, before its damaged-run rule. */
int ghmi_av_next(GhmVideo *v, GhmVideoFrame *f, char *why, size_t why_size);

void ghmi_av_free(GhmiAv **av);

/* 1 when a selection starting past frame 0 would enter v's file at a key frame (video_jump.c). */
int ghmi_av_can_jump(GhmVideo *v);

/* Opens the decoder again with this many threads (0 = FFmpeg's choice), before any read. */
int ghmi_av_set_threads(GhmVideo *v, int threads);

/* Opens the decoder again on CUDA device `device` (-1: the CPU), before any read; on failure
 * the old decoder stays, and why says why (ghm_video_set_gpu_decoding). */
int ghmi_av_set_gpu(GhmVideo *v, int device, char *why, size_t why_size);

/* 1 when the build has FFmpeg, whether or not its libraries are loaded (ghm_video_have_ffmpeg
 * loads them): for choices that must not cost their loading, such as telling a video path
 * from an image's. */
int ghmi_video_built_with_ffmpeg(void);

/* --- YUV4MPEG2 (video_y4m.c) --- */

/* Parses the stream header from f (which stays the caller's). Fills info (format
 * "yuv4mpegpipe", codec "rawvideo", frames: counted from the size of a regular file of whole
 * bare-marker frames, else -1). GHM_ERR_FORMAT for a malformed header,
 * GHM_ERR_UNSUPPORTED for a colour space other than 420*, 422, 444 and mono (8 bits),
 * GHM_ERR_TOO_LARGE, GHM_ERR_TRUNCATED when the header is cut short, GHM_ERR_IO. */
int ghmi_y4m_open(FILE *f, GhmiY4m **out, GhmVideoInfo *info, char *why, size_t why_size);

/* Reads the next frame. With want = 1 returns its Y plane as a new full-range grey image in
 * *out; with want = 0 skips it (*out stays NULL). Returns GHM_OK, GHM_VIDEO_END at a clean end
 * of stream, GHM_ERR_TRUNCATED when the stream ends inside a frame, GHM_ERR_FORMAT when a frame
 * does not start with "FRAME", GHM_ERR_IO, GHM_ERR_NOMEM. */
int ghmi_y4m_read(GhmiY4m *y, int want, GhmImage **out, char *why, size_t why_size);

/* For a file opened by ghmi_y4m_open: GHM_ERR_TRUNCATED, with the words the reader would use
 * at that frame, when it is a regular file of bare-marker frames whose last frame is cut short;
 * else GHM_OK. For FFmpeg's reader of such a file, which drops the partial frame silently. */
int ghmi_y4m_file_cut(const GhmiY4m *y, char *why, size_t why_size);

/* Frame rate as the header's F field gives it (numerator, denominator). */
void ghmi_y4m_rate(const GhmiY4m *y, int *num, int *den);

void ghmi_y4m_free(GhmiY4m **y);

#endif /* GHM_VIDEO_INTERNAL_H */
