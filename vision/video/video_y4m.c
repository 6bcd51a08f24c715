/*
 * video_y4m.c - a small, strict YUV4MPEG2 reader: the stream FFmpeg, mjpegtools and x264
 * write with "-f yuv4mpegpipe". One header line
 *     YUV4MPEG2 W720 H528 F24000:1001 Ip A1:1 C420jpeg XYSCSS=420JPEG
 * then per frame a line starting with "FRAME" and the planes, Y first. We keep the Y plane and
 * skip the chroma planes. Being strict (single spaces, every field once, digits only, bounded
 * line length) means a corrupt pipe is reported at its first bad byte instead of being read as
 * pictures of garbage.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image_internal.h"
#include "video_internal.h"
#include "why_internal.h"

struct GhmiY4m {
    FILE *f;
    int width, height;
    int fps_num, fps_den;
    size_t chroma_bytes;  /* bytes of the planes after Y in one frame */
    int64_t frames_read;  /* frames consumed so far (for messages) */
    GhmiByteMap range;      /* stored Y value -> full-range grey */
    int full_range;         /* frames are used as read (range is filled otherwise) */
    uint8_t *scratch;     /* where skipped bytes go */
    size_t scratch_size;
    int seekable;         /* a regular file of whole "FRAME\n" frames: skipped bytes are seeked */
    uint64_t whole, tail; /* a regular file of bare-marker frames: its whole frames, and the
                           * bytes of a frame cut short after them (0: none, or not known) */
    uint64_t frame_bytes; /* one frame with its bare marker */
};

/* Reads one '\n'-terminated line (without the '\n') into line. Returns its length, -1 at EOF
 * before any byte, -2 at EOF inside the line, -3 when longer than cap - 1, -4 on a read error. */
static long read_line(FILE *f, char *line, size_t cap)
{
    size_t n = 0;
    for (;;) {
        int c = getc(f);
        if (c == EOF)
            return ferror(f) ? -4 : (n == 0 ? -1 : -2);
        if (c == '\n')
            break;
        if (c == '\0' || n + 1 >= cap) /* binary data or a runaway line: not a header */
            return -3;
        line[n++] = (char)c;
    }
    line[n] = '\0';
    return (long)n;
}

/* A whole decimal number in [lo, hi]: digits only, no sign, no spaces. */
static int parse_uint(const char *s, long lo, long hi, long *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* "N:D" with N, D in [lo, INT_MAX]. */
static int parse_ratio(const char *s, long lo, int *num, int *den)
{
    char buf[64];
    const char *colon = strchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof buf)
        return -1;
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    long n = 0, d = 0;
    if (parse_uint(buf, lo, INT_MAX, &n) < 0 || parse_uint(colon + 1, lo, INT_MAX, &d) < 0)
        return -1;
    *num = (int)n;
    *den = (int)d;
    return 0;
}

typedef struct Header {
    long width, height;
    int fps_num, fps_den;
    const char *colour; /* the C field without the 'C', or NULL */
    int full_range;     /* -1 unknown, 0 limited, 1 full (from XCOLORRANGE) */
} Header;

/* Bytes of the chroma planes for a colour space we read; -1 when we do not read it. */
static long long chroma_size(const char *c, long w, long h)
{
    long long cw = (w + 1) / 2, ch = (h + 1) / 2;
    if (strcmp(c, "420jpeg") == 0 || strcmp(c, "420paldv") == 0 || strcmp(c, "420mpeg2") == 0 ||
        strcmp(c, "420") == 0)
        return 2 * cw * ch;
    if (strcmp(c, "422") == 0)
        return 2 * cw * (long long)h;
    if (strcmp(c, "444") == 0)
        return 2LL * w * h;
    if (strcmp(c, "mono") == 0)
        return 0;
    return -1;
}

/* Applies one header token; returns GHM_OK or an error with why filled. seen is a bit set of
 * the fields met so far, so that a repeated field is an error. */
static int header_field(char *tok, Header *h, unsigned *seen, char *why, size_t n)
{
    static const char fields[] = "WHFIACX";
    const char *which = strchr(fields, tok[0]);
    if (tok[0] == '\0' || !which) {
        ghmi_why(why, n, "YUV4MPEG2 header has an unknown field '%.40s'", tok);
        return GHM_ERR_FORMAT;
    }
    unsigned bit = 1u << (which - fields);
    if (tok[0] != 'X' && (*seen & bit)) {
        ghmi_why(why, n, "YUV4MPEG2 header repeats field '%c'", tok[0]);
        return GHM_ERR_FORMAT;
    }
    *seen |= bit;
    const char *val = tok + 1;
    int a = 0, b = 0;
    switch (tok[0]) {
    case 'W':
    case 'H':
        if (parse_uint(val, 1, GHM_IMAGE_MAX_SIDE, tok[0] == 'W' ? &h->width : &h->height) < 0) {
            ghmi_why(why, n, "YUV4MPEG2 header has a bad %s '%.40s' (1 to %d)",
                tok[0] == 'W' ? "width" : "height", val, GHM_IMAGE_MAX_SIDE);
            return GHM_ERR_FORMAT;
        }
        return GHM_OK;
    case 'F':
        if (parse_ratio(val, 1, &h->fps_num, &h->fps_den) < 0) {
            ghmi_why(why, n, "YUV4MPEG2 header has a bad frame rate '%.40s' (want N:D)", val);
            return GHM_ERR_FORMAT;
        }
        return GHM_OK;
    case 'A':
        if (parse_ratio(val, 0, &a, &b) < 0) {
            ghmi_why(why, n, "YUV4MPEG2 header has a bad aspect ratio '%.40s'", val);
            return GHM_ERR_FORMAT;
        }
        return GHM_OK;
    case 'I':
        if (strlen(val) != 1 || !strchr("ptbm?", val[0])) {
            ghmi_why(why, n, "YUV4MPEG2 header has a bad interlacing mode '%.40s'", val);
            return GHM_ERR_FORMAT;
        }
        return GHM_OK;
    case 'C':
        h->colour = val;
        return GHM_OK;
    default: /* X: extensions; the only one that changes pixels is the colour range */
        if (strcmp(val, "COLORRANGE=FULL") == 0)
            h->full_range = 1;
        else if (strcmp(val, "COLORRANGE=LIMITED") == 0)
            h->full_range = 0;
        return GHM_OK;
    }
}

static int parse_header(char *line, Header *h, char *why, size_t n)
{
    if (strncmp(line, "YUV4MPEG2 ", 10) != 0) {
        ghmi_why(why, n, "not a YUV4MPEG2 stream (it must start with 'YUV4MPEG2 ')");
        return GHM_ERR_FORMAT;
    }
    unsigned seen = 0;
    char *p = line + 10;
    for (;;) {
        char *space = strchr(p, ' ');
        if (space)
            *space = '\0';
        int ret = header_field(p, h, &seen, why, n);
        if (ret < 0)
            return ret;
        if (!space)
            break;
        p = space + 1;
    }
    if (!(seen & 1u) || !(seen & 2u) || !(seen & 4u)) {
        ghmi_why(why, n, "YUV4MPEG2 header lacks %s", !(seen & 1u) ? "the width (W)"
                                                 : !(seen & 2u) ? "the height (H)"
                                                                : "the frame rate (F)");
        return GHM_ERR_FORMAT;
    }
    return GHM_OK;
}

/* Limited range (16-235) maps to 0-255 by the same rounding libswscale uses for GRAY8, so a
 * piped stream and the file decoded by FFmpeg give identical pixels. */
static void fill_limited_range(GhmiByteMap *m)
{
    for (int v = 0; v < 256; v++) {
        double g = floor((v - 16) * 255.0 / 219.0 + 0.5);
        m->one[v] = (uint8_t)(g < 0 ? 0 : g > 255 ? 255 : g);
    }
    ghmi_byte_map_fill(m);
}

static int check_header(Header *h, char *why, size_t n)
{
    if ((long long)h->width * h->height > (long long)GHM_IMAGE_MAX_PIXELS) {
        ghmi_why(why, n, "YUV4MPEG2 frames of %ldx%ld exceed the limit of %u pixels", h->width,
            h->height, GHM_IMAGE_MAX_PIXELS);
        return GHM_ERR_TOO_LARGE;
    }
    if (!h->colour)
        h->colour = "420jpeg"; /* the format's default */
    if (chroma_size(h->colour, h->width, h->height) < 0) {
        ghmi_why(why, n, "YUV4MPEG2 colour space C%.40s is not supported (only 8-bit 420, 422, 444, "
                    "mono: have ffmpeg write 8-bit, with -pix_fmt yuv420p)", h->colour);
        return GHM_ERR_UNSUPPORTED;
    }
    return GHM_OK;
}

/* The frame count of a regular file whose frames all have a bare "FRAME\n" marker (what FFmpeg
 * writes), from its size: known, a video's frames can be split between MPI ranks, and a frame
 * skipped is seeked over instead of read (the marker of every frame read is still checked).
 * -1, and the stream read as a pipe, when the file is anything else: markers with parameters,
 * or a size that is not whole frames (a truncated file keeps its precise error). The stream is
 * left where it was. */
static int64_t count_frames(GhmiY4m *y, size_t luma)
{
    struct stat st;
    off_t at = ftello(y->f);
    if (at < 0 || fstat(fileno(y->f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < at)
        return -1;
    char marker[6] = "";
    size_t got = fread(marker, 1, sizeof marker, y->f);
    if (fseeko(y->f, at, SEEK_SET) != 0 || (got > 0 && memcmp(marker, "FRAME\n", 6) != 0))
        return -1;
    uint64_t frame = 6 + (uint64_t)luma + y->chroma_bytes, bytes = (uint64_t)(st.st_size - at);
    y->frame_bytes = frame;
    y->whole = bytes / frame;
    y->tail = bytes % frame;
    if (y->tail != 0)
        return -1;
    y->seekable = 1;
    return (int64_t)(bytes / frame);
}

int ghmi_y4m_open(FILE *f, GhmiY4m **out, GhmVideoInfo *info, char *why, size_t why_size)
{
    if (!f || !out || !info)
        return GHM_ERR_INVALID;
    *out = NULL;
    char *line = malloc(GHMI_Y4M_MAX_LINE);
    if (!line)
        return GHM_ERR_NOMEM;
    int ret = GHM_OK;
    long len = read_line(f, line, GHMI_Y4M_MAX_LINE);
    if (len < 0) {
        ret = len == -1 ? GHM_ERR_FORMAT : len == -2 ? GHM_ERR_TRUNCATED
              : len == -3 ? GHM_ERR_FORMAT : GHM_ERR_IO;
        ghmi_why(why, why_size, "%s", len == -1 ? "empty stream (no YUV4MPEG2 header)"
                                 : len == -2 ? "stream ends inside the YUV4MPEG2 header"
                                 : len == -3 ? "not a YUV4MPEG2 stream (no header line)"
                                             : "read error");
        goto done;
    }
    Header h = {.full_range = -1};
    if ((ret = parse_header(line, &h, why, why_size)) < 0 ||
        (ret = check_header(&h, why, why_size)) < 0)
        goto done;
    GhmiY4m *y = calloc(1, sizeof *y);
    if (!y) {
        ret = GHM_ERR_NOMEM;
        goto done;
    }
    y->f = f;
    y->width = (int)h.width;
    y->height = (int)h.height;
    y->fps_num = h.fps_num;
    y->fps_den = h.fps_den;
    y->chroma_bytes = (size_t)chroma_size(h.colour, h.width, h.height);
    /* Cmono is full range in FFmpeg's convention; the other spaces are limited by default. */
    y->full_range = h.full_range >= 0 ? h.full_range : strcmp(h.colour, "mono") == 0;
    if (!y->full_range) /* else frames are used as read */
        fill_limited_range(&y->range);
    memset(info, 0, sizeof *info);
    info->width = y->width;
    info->height = y->height;
    info->fps = (double)h.fps_num / h.fps_den;
    info->frames = count_frames(y, (size_t)y->width * (size_t)y->height);
    snprintf(info->format, sizeof info->format, "yuv4mpegpipe");
    snprintf(info->codec, sizeof info->codec, "rawvideo");
    *out = y;
done:
    free(line);
    return ret;
}

/* Reads exactly n bytes into dst (or discards them when dst is NULL). Returns the count read. */
static size_t read_bytes(GhmiY4m *y, uint8_t *dst, size_t n)
{
    if (dst)
        return fread(dst, 1, n, y->f);
    if (y->seekable && n <= (size_t)INT64_MAX && fseeko(y->f, (off_t)n, SEEK_CUR) == 0)
        return n;
    size_t got = 0;
    while (got < n) {
        size_t chunk = n - got < y->scratch_size ? n - got : y->scratch_size;
        size_t r = fread(y->scratch, 1, chunk, y->f);
        got += r;
        if (r < chunk)
            break;
    }
    return got;
}

static int frame_marker(GhmiY4m *y, char *why, size_t n)
{
    char line[GHMI_Y4M_MAX_LINE];
    long len = read_line(y->f, line, sizeof line);
    if (len == -1)
        return GHM_VIDEO_END;
    if (len == -4) {
        ghmi_why(why, n, "read error before frame %lld", (long long)y->frames_read);
        return GHM_ERR_IO;
    }
    if (len == -2) {
        ghmi_why(why, n, "stream ends inside the header of frame %lld", (long long)y->frames_read);
        return GHM_ERR_TRUNCATED;
    }
    if (len < 0 || strncmp(line, "FRAME", 5) != 0 || (line[5] != '\0' && line[5] != ' ')) {
        ghmi_why(why, n, "frame %lld does not start with 'FRAME' (damaged stream?)",
            (long long)y->frames_read);
        return GHM_ERR_FORMAT;
    }
    return GHM_OK;
}

int ghmi_y4m_read(GhmiY4m *y, int want, GhmImage **out, char *why, size_t why_size)
{
    if (!y || !out)
        return GHM_ERR_INVALID;
    *out = NULL;
    int ret = frame_marker(y, why, why_size);
    if (ret != GHM_OK)
        return ret;
    if (!y->scratch) {
        y->scratch_size = 1 << 16;
        if (!(y->scratch = malloc(y->scratch_size)))
            return GHM_ERR_NOMEM;
    }
    GhmImage *img = NULL;
    if (want && (ret = ghmi_image_create_unset(y->width, y->height, &img)) < 0)
        return ret;
    size_t luma = (size_t)y->width * (size_t)y->height;
    size_t got = 0;
    /* One read where the rows are contiguous (stdio then reads straight into the frame), and one
     * seek for a skipped frame's plane: a seek a row made a rank that starts at frame 2025 of a
     * 1080p file seek 2.2 million times before its first frame (1.4 s on 2 x H200). */
    if (!img || img->stride == y->width)
        got = read_bytes(y, img ? img->pixels : NULL, luma);
    else
        for (int row = 0; row < y->height && got == (size_t)row * (size_t)y->width; row++)
            got += read_bytes(y, img->pixels + (size_t)row * (size_t)img->stride,
                              (size_t)y->width);
    if (got == luma && y->chroma_bytes)
        got += read_bytes(y, NULL, y->chroma_bytes);
    if (got < luma + y->chroma_bytes) {
        ghm_image_free(&img);
        if (ferror(y->f)) {
            ghmi_why(why, why_size, "read error in frame %lld", (long long)y->frames_read);
            return GHM_ERR_IO;
        }
        ghmi_why(why, why_size, "stream ends inside frame %lld (%zu of %zu bytes)",
            (long long)y->frames_read, got, luma + y->chroma_bytes);
        return GHM_ERR_TRUNCATED;
    }
    y->frames_read++;
    if (img && !y->full_range)
        ghmi_byte_map_plane(&y->range, img->pixels, img->stride, img->pixels, img->stride,
                            y->width, y->height);
    *out = img;
    return GHM_OK;
}

int ghmi_y4m_file_cut(const GhmiY4m *y, char *why, size_t why_size)
{
    if (!y || y->tail == 0)
        return GHM_OK;
    if (y->tail < 6)
        ghmi_why(why, why_size, "stream ends inside the header of frame %llu",
                 (unsigned long long)y->whole);
    else
        ghmi_why(why, why_size, "stream ends inside frame %llu (%llu of %llu bytes)",
                 (unsigned long long)y->whole, (unsigned long long)(y->tail - 6),
                 (unsigned long long)(y->frame_bytes - 6));
    return GHM_ERR_TRUNCATED;
}

void ghmi_y4m_rate(const GhmiY4m *y, int *num, int *den)
{
    *num = y->fps_num;
    *den = y->fps_den;
}

void ghmi_y4m_free(GhmiY4m **y)
{
    if (!y || !*y)
        return;
    free((*y)->scratch);
    free(*y);
    *y = NULL;
}
