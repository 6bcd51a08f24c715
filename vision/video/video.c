/*
 * video.c - ghm_video_*: frames of a video as grey images (see ghm_video.h). The handle:
 * opening (standard input, and Y4M files in a build without FFmpeg, go to video_y4m.c; the rest
 * to the FFmpeg reader of video_ffmpeg.c), the frame selection, the rule that ends a run of
 * damaged frames, and the content test that tells a video from an image. It does not know
 * whether the build has FFmpeg; it asks ghm_video_have_ffmpeg() when opening a file (which
 * loads FFmpeg's libraries) and ghmi_video_built_with_ffmpeg() when telling a video from an
 * image (which must not: an image pair never loads them).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ghm_file_io.h"
#include "video_internal.h"
#include "why_internal.h"

static int video_alloc(GhmVideo **out)
{
    GhmVideo *v = calloc(1, sizeof *v);
    if (!v)
        return GHM_ERR_NOMEM;
    v->end = -1;
    v->step = 1;
    *out = v;
    return GHM_OK;
}

int ghm_video_open_y4m(FILE *f, GhmVideo **out, char *why, size_t why_size)
{
    if (!f || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    GhmVideo *v = NULL;
    int ret = video_alloc(&v);
    if (ret < 0)
        return ret;
    if ((ret = ghmi_y4m_open(f, &v->y4m, &v->info, why, why_size)) < 0) {
        free(v);
        return ret;
    }
    ghmi_y4m_rate(v->y4m, &v->fps_num, &v->fps_den);
    *out = v;
    return GHM_OK;
}

static int y4m_next(GhmVideo *v, GhmVideoFrame *f, char *why, size_t n)
{
    for (;;) {
        if (ghmi_video_past_end(v, v->next_index))
            return GHM_VIDEO_END;
        int want = ghmi_video_wanted(v, v->next_index);
        GhmImage *img = NULL;
        int ret = ghmi_y4m_read(v->y4m, want, &img, why, n);
        if (ret != GHM_OK)
            return ret;
        int64_t index = v->next_index++;
        if (!want)
            continue;
        f->image = img;
        f->index = index;
        f->pts = (double)index * v->fps_den / v->fps_num;
        return GHM_VIDEO_FRAME;
    }
}

/* The open checks both builds share: "cannot open" and "empty" come before any format talk. */
static int check_file(const char *path, char *why, size_t n)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        ghmi_why(why, n, "cannot open: %s", strerror(errno));
        return GHM_ERR_IO;
    }
    if (S_ISDIR(st.st_mode)) {
        ghmi_why(why, n, "is a directory, not a video");
        return GHM_ERR_IO;
    }
    if (S_ISREG(st.st_mode) && st.st_size == 0) {
        ghmi_why(why, n, "empty file (0 bytes)"); /* an empty .png query comes here too */
        return GHM_ERR_FORMAT;
    }
    return GHM_OK;
}

/* Opens path as a YUV4MPEG2 file when its content says so. Returns 1 when it does not (nothing
 * opened), GHM_OK when *out is the video, or an error. */
static int open_y4m_file(const char *path, GhmVideo **out, char *why, size_t n)
{
    GhmFileKind kind = GHM_FILE_UNKNOWN;
    int ret = ghm_file_sniff_path(path, &kind, why, n);
    if (ret < 0 || kind != GHM_FILE_Y4M)
        return ret < 0 ? ret : 1;
    /* The Y4M reader streams: a file of any length is read frame by frame, never whole. */
    FILE *f = NULL;
    if ((ret = ghm_file_open_read(path, &f, why, n)) < 0)
        return ret;
    if ((ret = ghm_video_open_y4m(f, out, why, n)) < 0) {
        fclose(f);
        return ret;
    }
    (*out)->y4m_file = f;
    return GHM_OK;
}

/* The frame count of a YUV4MPEG2 file as our reader counts it (from the file's size), for
 * FFmpeg's reader of it, which declares none: MPI ranks split a video by its count. -1 where
 * our reader cannot count it. A last frame cut short goes to v->y4m_cut, said at the end. */
static int64_t y4m_file_frames(const char *path, GhmVideo *v)
{
    FILE *f = NULL;
    if (ghm_file_open_read(path, &f, NULL, 0) < 0)
        return -1;
    GhmiY4m *y = NULL;
    GhmVideoInfo info;
    int64_t frames = ghmi_y4m_open(f, &y, &info, NULL, 0) == GHM_OK ? info.frames : -1;
    (void)ghmi_y4m_file_cut(y, v->y4m_cut, sizeof v->y4m_cut);
    ghmi_y4m_free(&y);
    fclose(f);
    return frames;
}

int ghm_video_open(const char *path, GhmVideo **out, char *why, size_t why_size)
{
    if (!path || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    if (strcmp(path, "-") == 0)
        return ghm_video_open_y4m(stdin, out, why, why_size);
    int ret = check_file(path, why, why_size);
    if (ret < 0)
        return ret;
    if (!ghm_video_have_ffmpeg() && (ret = open_y4m_file(path, out, why, why_size)) != 1)
        return ret;
    GhmVideo *v = NULL;
    if ((ret = video_alloc(&v)) < 0)
        return ret;
    if ((ret = ghmi_av_open(path, v, why, why_size)) < 0) {
        ghm_video_free(&v);
        return ret;
    }
    if (v->info.frames < 0 && strcmp(v->info.format, "yuv4mpegpipe") == 0)
        v->info.frames = y4m_file_frames(path, v);
    *out = v;
    return GHM_OK;
}

const GhmVideoInfo *ghm_video_info(const GhmVideo *v)
{
    return v ? &v->info : NULL;
}

int ghm_video_select(GhmVideo *v, int64_t start, int64_t end, int64_t step)
{
    if (!v || start < 0 || step < 1 || v->next_index > 0)
        return GHM_ERR_INVALID;
    v->start = start;
    v->end = end < 0 ? -1 : end;
    v->step = step;
    return GHM_OK;
}

int ghm_video_enters_at_key_frames(GhmVideo *v)
{
    if (!v || !v->av || v->next_index > 0 || v->finished)
        return 0;
    return ghmi_av_can_jump(v);
}

int ghm_video_set_decode_threads(GhmVideo *v, int threads)
{
    enum { MOST = 16 }; /* frame threads past this add delay, not speed (ghm_video.h) */
    if (!v || threads < 0 || v->next_index > 0 || v->finished) /* read: numbered or ended */
        return GHM_ERR_INVALID;
    if (!v->av) /* Y4M: nothing to decode */
        return GHM_OK;
    return ghmi_av_set_threads(v, threads < MOST ? threads : MOST);
}

int ghm_video_set_gpu_decoding(GhmVideo *v, int device, char *why, size_t why_size)
{
    if (!v || device < -1) {
        ghmi_why(why, why_size, "no video, or no CUDA device %d", device);
        return GHM_ERR_INVALID;
    }
    if (v->next_index > 0 || v->finished) { /* read: numbered or ended */
        ghmi_why(why, why_size, "the decoder can be chosen only before the first read");
        return GHM_ERR_INVALID;
    }
    if (!v->av) /* Y4M: nothing to decode */
        return GHM_OK;
    return ghmi_av_set_gpu(v, device, why, why_size);
}

int ghm_video_read(GhmVideo *v, GhmVideoFrame *f, char *why, size_t why_size)
{
    if (!v || !f)
        return GHM_ERR_INVALID;
    f->image = NULL;
    f->index = -1;
    f->pts = NAN;
    if (v->finished) {
        ghmi_why(why, why_size, "%s", v->final_why);
        return v->final_status;
    }
    char msg[256] = "";
    int ret = v->y4m ? y4m_next(v, f, msg, sizeof msg) : ghmi_av_next(v, f, msg, sizeof msg);
    if (ret == GHM_VIDEO_DAMAGED && ++v->damaged_run >= GHM_VIDEO_MAX_DAMAGED_RUN) {
        snprintf(msg, sizeof msg, "%d damaged frames in a row (last: frame %lld); giving up",
                 v->damaged_run, (long long)f->index);
        ret = GHM_ERR_FORMAT;
    } else if (ret == GHM_VIDEO_FRAME) {
        v->damaged_run = 0;
    }
    if (ret < 0 || ret == GHM_VIDEO_END) {
        v->finished = 1;
        v->final_status = ret;
        snprintf(v->final_why, sizeof v->final_why, "%s", msg);
    }
    ghmi_why(why, why_size, "%s", msg);
    return ret;
}

void ghm_video_free(GhmVideo **v)
{
    if (!v || !*v)
        return;
    ghmi_av_free(&(*v)->av);
    ghmi_y4m_free(&(*v)->y4m);
    if ((*v)->y4m_file)
        fclose((*v)->y4m_file);
    free(*v);
    *v = NULL;
}

int ghm_video_is_video_path(const char *path)
{
    if (!path)
        return 0;
    if (strcmp(path, "-") == 0)
        return 1;
    uint8_t head[GHM_FILE_SNIFF_BYTES];
    size_t n = 0;
    if (ghm_file_head(path, head, sizeof head, &n, NULL, 0) < 0)
        return 0;
    /* Without FFmpeg only what this build can read, or will explain it cannot (a common
     * container: "no FFmpeg" is more helpful than "not a PNG or JPEG image"), is a video;
     * anything else (text, an empty file) gets the image loader's message. */
    if (!ghmi_video_built_with_ffmpeg()) {
        GhmFileKind kind = ghm_file_sniff(head, n, 0);
        return kind == GHM_FILE_Y4M || kind == GHM_FILE_VIDEO;
    }
    /* Loose on purpose: a PNG with a damaged signature ("\x89PNX") or a JPEG cut after its
     * first marker still goes to the image loader, which says what is wrong with it. No
     * video container starts with 0x89 or with 0xFF 0xD8. */
    int is_png = n >= 1 && head[0] == 0x89;
    int is_jpeg = n >= 2 && head[0] == 0xff && head[1] == 0xd8;
    return !is_png && !is_jpeg;
}
