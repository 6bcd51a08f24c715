/*
 * file_io.c - the reading half of the file-I/O unit: capped whole-file reads (copied, or mapped
 * for large inputs), streams for readers that never hold a whole file, the first bytes of a
 * file, and content sniffing. Atomic writes and the
 * table of temporary files are in file_write.c. See ghm_file_io.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ghm_file_io.h"
#include "why_internal.h"

/* A stream (pipe, device) of unknown size starts with this much and doubles. */
#define STREAM_GUESS ((size_t)64 << 10)

static int open_input(const char *path, int *fd, struct stat *st, char *why, size_t why_size)
{
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0) {
        ghmi_why(why, why_size, "cannot open: %s", strerror(errno));
        return GHM_ERR_IO;
    }
    if (fstat(*fd, st) != 0) {
        ghmi_why(why, why_size, "cannot open: %s", strerror(errno));
        close(*fd);
        return GHM_ERR_IO;
    }
    if (S_ISDIR(st->st_mode)) {
        ghmi_why(why, why_size, "is a directory, not a file");
        close(*fd);
        return GHM_ERR_IO;
    }
    return GHM_OK;
}

/* read() that retries after a signal; the count read, or -1 with errno. */
static ssize_t read_some(int fd, void *buf, size_t n)
{
    ssize_t r;
    do
        r = read(fd, buf, n);
    while (r < 0 && errno == EINTR);
    return r;
}

/* Large regular files are read in pieces of PIECE bytes on the OpenMP threads, from this size. */
#define PARALLEL_READ_MIN ((size_t)32 << 20)
#define PIECE ((size_t)4 << 20)

/* The first n bytes of a regular file into buf by pieces on the OpenMP threads (the kernel's
 * copy and the page faults of a fresh buffer spread over the cores: a 48 MB cloud 42 -> 23 ms on
 * two), then the file offset put after them; n when so, 0 (the offset untouched) when n is small
 * or a piece came short or failed: the caller then reads it in turn, which also meets a file
 * that changed meanwhile. */
static size_t read_pieces(int fd, uint8_t *buf, size_t n)
{
    if (n < PARALLEL_READ_MIN)
        return 0;
    size_t pieces = (n + PIECE - 1) / PIECE;
    int failed = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(| : failed)
    for (size_t p = 0; p < pieces; p++) {
        size_t at = p * PIECE, end = at + PIECE < n ? at + PIECE : n;
        while (at < end && !failed) {
            ssize_t r = pread(fd, buf + at, end - at, (off_t)at);
            if (r > 0)
                at += (size_t)r;
            else if (r == 0 || errno != EINTR)
                failed = 1;
        }
    }
    return !failed && lseek(fd, (off_t)n, SEEK_SET) == (off_t)n ? n : 0;
}

/* Reads fd to its end into a buffer that starts at guess + 1 bytes (so that a regular file of
 * unchanged size takes one allocation and one read past its end) and grows up to max + 1. */
static int read_stream(int fd, size_t guess, size_t max, GhmFileData *out, char *why,
                       size_t why_size)
{
    size_t cap = (guess < max ? guess : max) + 1, used = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        ghmi_why(why, why_size, "out of memory");
        return GHM_ERR_NOMEM;
    }
    used = read_pieces(fd, buf, cap - 1);
    for (;;) {
        if (used == cap) {
            if (cap > max) {
                free(buf);
                ghmi_why(why, why_size, "file is larger than the limit of %zu bytes", max);
                return GHM_ERR_TOO_LARGE;
            }
            size_t grown = cap > max / 2 ? max + 1 : cap * 2;
            uint8_t *bigger = realloc(buf, grown);
            if (!bigger) {
                free(buf);
                ghmi_why(why, why_size, "out of memory");
                return GHM_ERR_NOMEM;
            }
            buf = bigger;
            cap = grown;
        }
        ssize_t r = read_some(fd, buf + used, cap - used);
        if (r < 0) {
            int err = errno;
            free(buf);
            ghmi_why(why, why_size, "cannot read: %s", strerror(err));
            return GHM_ERR_IO;
        }
        if (r == 0)
            break;
        used += (size_t)r;
    }
    out->data = buf;
    out->size = used;
    return GHM_OK;
}

/* Maps a regular file; 1 when mapping is not possible (the caller reads it instead). */
static int map_file(int fd, size_t size, GhmFileData *out)
{
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED)
        return 1;
    posix_madvise(map, size, POSIX_MADV_SEQUENTIAL);
    out->data = map;
    out->size = size;
    out->mapped = 1;
    return GHM_OK;
}

int ghm_file_read(const char *path, size_t max_bytes, unsigned flags, GhmFileData *out,
                  char *why, size_t why_size)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!path || !out) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    int fd = -1;
    struct stat st;
    int ret = open_input(path, &fd, &st, why, why_size);
    if (ret < 0)
        return ret;
    size_t guess = STREAM_GUESS;
    if (S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > max_bytes) {
            ghmi_why(why, why_size, "file is %lld bytes, above the limit of %zu bytes",
                     (long long)st.st_size, max_bytes);
            close(fd);
            return GHM_ERR_TOO_LARGE;
        }
        guess = (size_t)st.st_size;
        /* An empty file cannot be mapped; a file that grows after fstat is read as a stream. */
        if ((flags & GHM_FILE_MAP) && guess > 0 && map_file(fd, guess, out) == GHM_OK) {
            close(fd);
            return GHM_OK;
        }
    }
    ret = read_stream(fd, guess, max_bytes, out, why, why_size);
    close(fd);
    return ret;
}

void ghm_file_data_free(GhmFileData *d)
{
    if (!d || !d->data)
        return;
    if (d->mapped)
        munmap((void *)d->data, d->size);
    else
        free((void *)d->data);
    memset(d, 0, sizeof *d);
}

int ghm_file_open_read(const char *path, FILE **out, char *why, size_t why_size)
{
    if (out)
        *out = NULL;
    if (!path || !out) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    int fd = -1;
    struct stat st;
    int ret = open_input(path, &fd, &st, why, why_size);
    if (ret < 0)
        return ret;
    if (!(*out = fdopen(fd, "rb"))) { /* only fails for want of memory */
        close(fd);
        ghmi_why(why, why_size, "out of memory");
        return GHM_ERR_NOMEM;
    }
    return GHM_OK;
}

int ghm_file_head(const char *path, uint8_t *buf, size_t n, size_t *got, char *why,
                  size_t why_size)
{
    if (!path || (!buf && n) || !got) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    *got = 0;
    int fd = -1;
    struct stat st;
    int ret = open_input(path, &fd, &st, why, why_size);
    if (ret < 0)
        return ret;
    while (*got < n) {
        ssize_t r = read_some(fd, buf + *got, n - *got);
        if (r < 0) {
            ghmi_why(why, why_size, "cannot read: %s", strerror(errno));
            ret = GHM_ERR_IO;
            break;
        }
        if (r == 0)
            break;
        *got += (size_t)r;
    }
    close(fd);
    return ret;
}

/* --- sniffing ----------------------------------------------------------------------------- */

/* A signature: len bytes at the start of the file, compared where mask has 'x' ('.' = any). */
typedef struct Signature {
    GhmFileKind kind;
    size_t len;
    const char *bytes;
    const char *mask;
} Signature;

static const Signature signatures[] = {
    {GHM_FILE_PNG, 8, "\x89PNG\r\n\x1a\n", "xxxxxxxx"},
    {GHM_FILE_JPEG, 3, "\xff\xd8\xff", "xxx"},
    {GHM_FILE_PLY, 4, "ply\n", "xxxx"},
    {GHM_FILE_PLY, 5, "ply\r\n", "xxxxx"},
    {GHM_FILE_Y4M, 10, "YUV4MPEG2 ", "xxxxxxxxxx"},
    {GHM_FILE_REFERENCE, 8, GHM_FILE_REFERENCE_MAGIC, "xxxxxxxx"},
    {GHM_FILE_VIDEO, 12, "RIFF\0\0\0\0AVI ", "xxxx....xxxx"},
    {GHM_FILE_VIDEO, 8, "\0\0\0\0ftyp", "....xxxx"},           /* MP4, MOV, 3GP */
    {GHM_FILE_VIDEO, 4, "\x1a\x45\xdf\xa3", "xxxx"},           /* Matroska, WebM */
    {GHM_FILE_VIDEO, 4, "OggS", "xxxx"},
    {GHM_FILE_VIDEO, 3, "FLV", "xxx"},
    {GHM_FILE_VIDEO, 4, "\0\0\x01\xba", "xxxx"},               /* MPEG program stream */
};

/* 1 when the first n bytes agree with s: all of it, or (prefix) as far as they go, as long as
 * at least one compared byte is fixed (a wildcard-only prefix says nothing). */
static int matches(const Signature *s, const uint8_t *head, size_t n, int prefix)
{
    if (n < s->len && !prefix)
        return 0;
    size_t upto = n < s->len ? n : s->len, fixed = 0;
    for (size_t i = 0; i < upto; i++) {
        if (s->mask[i] != 'x')
            continue;
        if (head[i] != (uint8_t)s->bytes[i])
            return 0;
        fixed++;
    }
    return fixed > 0;
}

static int is_blank(int c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Length of the decimal number (sign, digits, fraction, exponent) at p, 0 when none. */
static size_t number_length(const uint8_t *p, size_t n)
{
    size_t i = 0, digits = 0;
    if (i < n && (p[i] == '+' || p[i] == '-'))
        i++;
    for (; i < n && p[i] >= '0' && p[i] <= '9'; i++)
        digits++;
    if (i < n && p[i] == '.')
        for (i++; i < n && p[i] >= '0' && p[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return 0;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (p[j] == '+' || p[j] == '-'))
            j++;
        if (j < n && p[j] >= '0' && p[j] <= '9') {
            while (j < n && p[j] >= '0' && p[j] <= '9')
                j++;
            i = j;
        }
    }
    return i;
}

/* XYZ text: no NUL byte (text) in what is looked at, and the first line that is neither blank
 * nor a comment ('#', '//') starts with a whole number token ("4OFF" is an OFF header). */
static int looks_like_xyz(const uint8_t *head, size_t n)
{
    size_t look = n < 4096 ? n : 4096;
    if (memchr(head, '\0', look))
        return 0;
    size_t i = 0;
    while (i < look) {
        while (i < look && (is_blank(head[i]) || head[i] == '\n'))
            i++;
        int comment = i < look && (head[i] == '#' || (head[i] == '/' && i + 1 < look &&
                                                      head[i + 1] == '/'));
        if (!comment)
            break;
        while (i < look && head[i] != '\n')
            i++;
    }
    size_t len = number_length(head + i, look - i);
    if (len == 0)
        return 0;
    size_t end = i + len;
    return end == look || is_blank(head[end]) || head[end] == '\n' || head[end] == ',';
}

GhmFileKind ghm_file_sniff(const uint8_t *head, size_t n, unsigned flags)
{
    if (!head || n == 0)
        return GHM_FILE_UNKNOWN;
    size_t count = sizeof signatures / sizeof signatures[0];
    for (size_t i = 0; i < count; i++)
        if (matches(&signatures[i], head, n, 0))
            return signatures[i].kind;
    if (flags & GHM_SNIFF_PREFIX)
        for (size_t i = 0; i < count; i++)
            if (matches(&signatures[i], head, n, 1))
                return signatures[i].kind;
    return looks_like_xyz(head, n) ? GHM_FILE_XYZ : GHM_FILE_UNKNOWN;
}

int ghm_file_sniff_path(const char *path, GhmFileKind *kind, char *why, size_t why_size)
{
    if (!kind) {
        ghmi_why(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    *kind = GHM_FILE_UNKNOWN;
    uint8_t head[GHM_FILE_SNIFF_BYTES];
    size_t got = 0;
    int ret = ghm_file_head(path, head, sizeof head, &got, why, why_size);
    if (ret == GHM_OK)
        *kind = ghm_file_sniff(head, got, 0);
    return ret;
}

const char *ghm_file_kind_name(GhmFileKind kind)
{
    switch (kind) {
    case GHM_FILE_PNG:
        return "PNG";
    case GHM_FILE_JPEG:
        return "JPEG";
    case GHM_FILE_PLY:
        return "PLY";
    case GHM_FILE_XYZ:
        return "XYZ text";
    case GHM_FILE_Y4M:
        return "YUV4MPEG2";
    case GHM_FILE_REFERENCE:
        return "reference file";
    case GHM_FILE_VIDEO:
        return "video container";
    default:
        return "unknown";
    }
}
