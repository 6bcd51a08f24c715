/* check_file_io.c - the file-I/O unit: capped reads, sniffing, atomic writes, clean-up. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ghm_file_io.h"
#include "test_support.h"

static void put_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Asserts that path holds exactly n bytes equal to data. */
static void expect_content(const char *path, const void *data, size_t n)
{
    GhmFileData d;
    char why[256] = "";
    ck_assert_msg(ghm_file_read(path, n + 1, 0, &d, why, sizeof why) == GHM_OK, "%s", why);
    ck_assert_uint_eq(d.size, n);
    ck_assert_int_eq(memcmp(d.data, data, n), 0);
    ghm_file_data_free(&d);
}

/* --- reading ------------------------------------------------------------------------------ */

START_TEST(test_read_whole_file)
{
    uint8_t bytes[3000];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(i * 7);
    put_file(ghm_test_tmp("a.bin"), bytes, sizeof bytes);
    for (unsigned flags = 0; flags <= GHM_FILE_MAP; flags++) {
        GhmFileData d;
        char why[256] = "";
        ck_assert_int_eq(ghm_file_read(ghm_test_tmp("a.bin"), sizeof bytes, flags, &d, why,
                                       sizeof why),
                         GHM_OK);
        ck_assert_uint_eq(d.size, sizeof bytes);
        ck_assert_int_eq(d.mapped, (int)flags);
        ck_assert_int_eq(memcmp(d.data, bytes, sizeof bytes), 0);
        ghm_file_data_free(&d);
        ck_assert_ptr_null(d.data);
        ghm_file_data_free(&d); /* twice is harmless */
    }
    ghm_file_data_free(NULL);
    /* An empty file is data of size 0, not an error (the decoders say "empty file"). */
    put_file(ghm_test_tmp("empty"), "", 0);
    GhmFileData d;
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("empty"), 10, GHM_FILE_MAP, &d, NULL, 0), GHM_OK);
    ck_assert_ptr_nonnull(d.data);
    ck_assert_uint_eq(d.size, 0);
    ghm_file_data_free(&d);
}
END_TEST

/* A file above 32 MB is read in pieces on several threads: every byte in its place, the size
 * exact, at the cap and one byte under it. */
START_TEST(test_read_large_file)
{
    size_t n = ((size_t)40 << 20) + 12345;
    uint8_t *bytes = malloc(n);
    ck_assert_ptr_nonnull(bytes);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        bytes[i] = (uint8_t)(x >> 24);
    }
    put_file(ghm_test_tmp("large.bin"), bytes, n);
    expect_content(ghm_test_tmp("large.bin"), bytes, n);
    GhmFileData d;
    char why[256] = "";
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("large.bin"), n, 0, &d, why, sizeof why), GHM_OK);
    ck_assert_uint_eq(d.size, n);
    ck_assert_int_eq(memcmp(d.data, bytes, n), 0);
    ghm_file_data_free(&d);
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("large.bin"), n - 1, 0, &d, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
    free(bytes);
}
END_TEST

START_TEST(test_read_refuses_over_cap)
{
    uint8_t bytes[100] = {1};
    put_file(ghm_test_tmp("c.bin"), bytes, sizeof bytes);
    GhmFileData d;
    char why[256] = "";
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("c.bin"), 99, GHM_FILE_MAP, &d, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
    ck_assert_msg(strstr(why, "100 bytes, above the limit of 99 bytes") != NULL, "%s", why);
    ck_assert_ptr_null(d.data);
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("c.bin"), 100, 0, &d, why, sizeof why), GHM_OK);
    ghm_file_data_free(&d);
    /* A (sparse) file far above the cap is refused from its size, without reading it. */
    FILE *f = fopen(ghm_test_tmp("huge"), "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(ftruncate(fileno(f), (off_t)1 << 34), 0);
    fclose(f);
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("huge"), (size_t)1 << 30, 0, &d, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
}
END_TEST

/* A pipe has no size: it is read until it passes the cap. */
START_TEST(test_read_stream_over_cap)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    uint8_t bytes[5000];
    memset(bytes, 'x', sizeof bytes);
    ck_assert_int_eq(write(fds[1], bytes, sizeof bytes), (ssize_t)sizeof bytes);
    close(fds[1]);
    char path[64], why[256] = "";
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    GhmFileData d;
    ck_assert_int_eq(ghm_file_read(path, 4999, GHM_FILE_MAP, &d, why, sizeof why),
                     GHM_ERR_TOO_LARGE);
    ck_assert_msg(strstr(why, "larger than the limit of 4999 bytes") != NULL, "%s", why);
    close(fds[0]);

    ck_assert_int_eq(pipe(fds), 0);
    ck_assert_int_eq(write(fds[1], bytes, sizeof bytes), (ssize_t)sizeof bytes);
    close(fds[1]);
    snprintf(path, sizeof path, "/dev/fd/%d", fds[0]);
    ck_assert_int_eq(ghm_file_read(path, 5000, GHM_FILE_MAP, &d, why, sizeof why), GHM_OK);
    ck_assert_uint_eq(d.size, 5000);
    ck_assert_int_eq(d.mapped, 0);
    ghm_file_data_free(&d);
    close(fds[0]);
}
END_TEST

START_TEST(test_read_errors)
{
    GhmFileData d;
    char why[256] = "";
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("missing"), 10, 0, &d, why, sizeof why),
                     GHM_ERR_IO);
    ck_assert_msg(strstr(why, "cannot open: No such file") != NULL, "%s", why);
    ck_assert_int_eq(ghm_file_read(ghm_test_tmpdir(), 10, 0, &d, why, sizeof why), GHM_ERR_IO);
    ck_assert_msg(strstr(why, "directory") != NULL, "%s", why);
    ck_assert_int_eq(ghm_file_read(NULL, 10, 0, &d, why, sizeof why), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("missing"), 10, 0, &d, NULL, 0), GHM_ERR_IO);
    uint8_t head[4];
    size_t got = 9;
    ck_assert_int_eq(ghm_file_head(ghm_test_tmp("missing"), head, 4, &got, why, sizeof why),
                     GHM_ERR_IO);
    ck_assert_uint_eq(got, 0);
}
END_TEST

START_TEST(test_open_read)
{
    put_file(ghm_test_tmp("s"), "stream", 6);
    FILE *f = NULL;
    char why[256] = "", buf[8] = "";
    ck_assert_int_eq(ghm_file_open_read(ghm_test_tmp("s"), &f, why, sizeof why), GHM_OK);
    ck_assert_uint_eq(fread(buf, 1, sizeof buf, f), 6);
    ck_assert_int_eq(memcmp(buf, "stream", 6), 0);
    fclose(f);
    ck_assert_int_eq(ghm_file_open_read(ghm_test_tmpdir(), &f, why, sizeof why), GHM_ERR_IO);
    ck_assert_msg(strstr(why, "directory") != NULL, "%s", why);
    ck_assert_ptr_null(f);
    ck_assert_int_eq(ghm_file_open_read(ghm_test_tmp("missing"), &f, why, sizeof why), GHM_ERR_IO);
    ck_assert_msg(strstr(why, "cannot open") != NULL, "%s", why);
    ck_assert_int_eq(ghm_file_open_read(NULL, &f, why, sizeof why), GHM_ERR_INVALID);
}
END_TEST

START_TEST(test_head)
{
    put_file(ghm_test_tmp("h"), "abcdef", 6);
    uint8_t head[16];
    size_t got = 0;
    ck_assert_int_eq(ghm_file_head(ghm_test_tmp("h"), head, 4, &got, NULL, 0), GHM_OK);
    ck_assert_uint_eq(got, 4);
    ck_assert_int_eq(memcmp(head, "abcd", 4), 0);
    ck_assert_int_eq(ghm_file_head(ghm_test_tmp("h"), head, sizeof head, &got, NULL, 0), GHM_OK);
    ck_assert_uint_eq(got, 6);
}
END_TEST

/* --- sniffing ----------------------------------------------------------------------------- */

static GhmFileKind sniff(const char *s, size_t n, unsigned flags)
{
    return ghm_file_sniff((const uint8_t *)s, n, flags);
}

START_TEST(test_sniff_signatures)
{
    static const struct {
        const char *bytes;
        size_t n;
        GhmFileKind kind;
    } cases[] = {
        {"\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16, GHM_FILE_PNG},
        {"\xff\xd8\xff\xe0", 4, GHM_FILE_JPEG},
        {"ply\nformat ascii 1.0\n", 21, GHM_FILE_PLY},
        {"ply\r\nformat ascii 1.0\r\n", 23, GHM_FILE_PLY},
        {"YUV4MPEG2 W64 H48 F25:1\n", 24, GHM_FILE_Y4M},
        {GHM_FILE_REFERENCE_MAGIC "\1\0\0\0", 12, GHM_FILE_REFERENCE},
        {"RIFF\x10\0\0\0AVI LIST", 16, GHM_FILE_VIDEO},
        {"\0\0\0\x20" "ftypisom", 12, GHM_FILE_VIDEO},
        {"\x1a\x45\xdf\xa3\x01", 5, GHM_FILE_VIDEO},
        {"OggS\0", 5, GHM_FILE_VIDEO},
        {"FLV\1", 4, GHM_FILE_VIDEO},
        {"\0\0\x01\xba\x44", 5, GHM_FILE_VIDEO},
        {"RIFF\x10\0\0\0WAVEfmt ", 16, GHM_FILE_UNKNOWN}, /* RIFF, but audio */
        {"\x89PNX\r\n\x1a\n", 8, GHM_FILE_UNKNOWN},
        {"hello world", 11, GHM_FILE_UNKNOWN},
        {"", 0, GHM_FILE_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        GhmFileKind k = sniff(cases[i].bytes, cases[i].n, 0);
        ck_assert_msg(k == cases[i].kind, "case %zu: %s, expected %s", i, ghm_file_kind_name(k),
                      ghm_file_kind_name(cases[i].kind));
    }
    ck_assert_int_eq(ghm_file_sniff(NULL, 0, 0), GHM_FILE_UNKNOWN);
}
END_TEST

/* A file cut inside its signature: foreign without the flag, its format with it. */
START_TEST(test_sniff_prefix)
{
    ck_assert_int_eq(sniff("\x89PN", 3, 0), GHM_FILE_UNKNOWN);
    ck_assert_int_eq(sniff("\x89PN", 3, GHM_SNIFF_PREFIX), GHM_FILE_PNG);
    ck_assert_int_eq(sniff("\x89", 1, GHM_SNIFF_PREFIX), GHM_FILE_PNG);
    ck_assert_int_eq(sniff("\xff\xd8", 2, GHM_SNIFF_PREFIX), GHM_FILE_JPEG);
    ck_assert_int_eq(sniff("\xff\xd8", 2, 0), GHM_FILE_UNKNOWN);
    ck_assert_int_eq(sniff("\x89PNX", 4, GHM_SNIFF_PREFIX), GHM_FILE_UNKNOWN);
    /* Bytes that only meet a signature's wildcards (MP4's size field) say nothing. */
    ck_assert_int_eq(sniff("abc", 3, GHM_SNIFF_PREFIX), GHM_FILE_UNKNOWN);
    /* A whole signature wins over a prefix of an earlier one. */
    ck_assert_int_eq(sniff("ply\r\n", 5, GHM_SNIFF_PREFIX), GHM_FILE_PLY);
}
END_TEST

START_TEST(test_sniff_xyz)
{
    static const struct {
        const char *text;
        GhmFileKind kind;
    } cases[] = {
        {"1 2 3\n4 5 6\n", GHM_FILE_XYZ},
        {"# a comment\n\n  -1.5e3,2,3\n", GHM_FILE_XYZ},
        {"// c\n.5 1 1", GHM_FILE_XYZ},
        {"+7\t8\t9", GHM_FILE_XYZ},
        {"OFF\n3 1 0\n", GHM_FILE_UNKNOWN},
        {"4OFF\n3 1 0\n", GHM_FILE_UNKNOWN}, /* the 4D OFF header */
        {"v 1 2 3\n", GHM_FILE_UNKNOWN},
        {"x y z\n1 2 3\n", GHM_FILE_UNKNOWN},
        {". 1 2\n", GHM_FILE_UNKNOWN},
        {"# only a comment\n", GHM_FILE_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        GhmFileKind k = sniff(cases[i].text, strlen(cases[i].text), 0);
        ck_assert_msg(k == cases[i].kind, "'%s': %s", cases[i].text, ghm_file_kind_name(k));
    }
    /* A NUL byte makes it binary, not text. */
    ck_assert_int_eq(sniff("1 2 3\n\0", 7, 0), GHM_FILE_UNKNOWN);
}
END_TEST

START_TEST(test_sniff_data_files)
{
    static const struct {
        const char *file;
        GhmFileKind kind;
    } cases[] = {
        {"images/box.png", GHM_FILE_PNG},       {"images/butterfly.jpg", GHM_FILE_JPEG},
        {"pointclouds/bunny.ply", GHM_FILE_PLY}, {"video/Megamind.avi", GHM_FILE_VIDEO},
        {"video/synthetic_rubberwhale.mp4", GHM_FILE_VIDEO},
        {"bad/corrupt_signature.png", GHM_FILE_UNKNOWN},
        {"bad/OutOfMemory.off", GHM_FILE_UNKNOWN},
        {"bad/empty.png", GHM_FILE_UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        GhmFileKind k = GHM_FILE_PNG;
        char why[256] = "";
        ck_assert_msg(ghm_file_sniff_path(ghm_test_data(cases[i].file), &k, why, sizeof why) ==
                          GHM_OK,
                      "%s: %s", cases[i].file, why);
        ck_assert_msg(k == cases[i].kind, "%s: %s", cases[i].file, ghm_file_kind_name(k));
    }
    GhmFileKind k = GHM_FILE_PNG;
    char why[256] = "";
    ck_assert_int_eq(ghm_file_sniff_path(ghm_test_data("no/such/file"), &k, why, sizeof why),
                     GHM_ERR_IO);
    ck_assert_int_eq(k, GHM_FILE_UNKNOWN);
    for (int i = GHM_FILE_UNKNOWN; i <= GHM_FILE_VIDEO + 1; i++)
        ck_assert_ptr_nonnull(ghm_file_kind_name((GhmFileKind)i));
}
END_TEST

/* --- atomic writes ------------------------------------------------------------------------ */

START_TEST(test_write_leaves_no_temporary)
{
    const char *target = ghm_test_tmp("out.bin");
    char why[256] = "";
    ck_assert_int_eq(ghm_file_write(target, "first", 5, why, sizeof why), GHM_OK);
    expect_content(target, "first", 5);
    ck_assert_int_eq(ghm_file_write(target, "second!", 7, why, sizeof why), GHM_OK);
    expect_content(target, "second!", 7);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    ck_assert_int_eq(ghm_file_temporaries_in_flight(), 0);
    /* An empty write gives an empty file. */
    ck_assert_int_eq(ghm_file_write(target, NULL, 0, why, sizeof why), GHM_OK);
    expect_content(target, "", 0);
    /* While the write is open the temporary file sits beside the target, under its name. */
    GhmFileWriter *w = NULL;
    ck_assert_int_eq(ghm_file_writer_create(target, &w, why, sizeof why), GHM_OK);
    ck_assert_int_eq(ghm_test_tmp_count(), 1);
    ck_assert_int_eq(ghm_file_temporaries_in_flight(), 1);
    fputs("third", ghm_file_writer_stream(w));
    ck_assert_int_eq(ghm_file_writer_commit(&w, why, sizeof why), GHM_OK);
    ck_assert_ptr_null(w);
    expect_content(target, "third", 5);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    ck_assert_int_eq(ghm_file_temporaries_in_flight(), 0);
}
END_TEST

/* The file mode is 0666 less the umask, and the umask is what it was. */
START_TEST(test_write_permissions_follow_umask)
{
    static const mode_t masks[] = {022, 077, 002, 0};
    for (size_t i = 0; i < sizeof masks / sizeof masks[0]; i++) {
        umask(masks[i]);
        char name[32], why[256] = "";
        snprintf(name, sizeof name, "mode%zu", i);
        ck_assert_int_eq(ghm_file_write(ghm_test_tmp(name), "x", 1, why, sizeof why), GHM_OK);
        struct stat st;
        ck_assert_int_eq(stat(ghm_test_tmp(name), &st), 0);
        ck_assert_msg((st.st_mode & 0777) == (0666 & ~masks[i]), "umask %03o: mode %03o",
                      (unsigned)masks[i], (unsigned)(st.st_mode & 0777));
        ck_assert_uint_eq(umask(masks[i]), masks[i]);
    }
}
END_TEST

START_TEST(test_write_failure_keeps_target)
{
    const char *target = ghm_test_tmp("keep.bin");
    put_file(target, "old", 3);
    char why[256] = "";
    /* A write error (the file-size limit, as a full disk would do): reported at commit. */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit small = {4096, 4096};
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
    static uint8_t big[100000];
    ck_assert_int_eq(ghm_file_write(target, big, sizeof big, why, sizeof why), GHM_ERR_IO);
    ck_assert_msg(strstr(why, "cannot write: File too large") != NULL, "%s", why);
    expect_content(target, "old", 3);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    /* The same through the stream, as the PLY and PNG writers use it. */
    GhmFileWriter *w = NULL;
    ck_assert_int_eq(ghm_file_writer_create(target, &w, why, sizeof why), GHM_OK);
    for (int i = 0; i < 1000; i++)
        fprintf(ghm_file_writer_stream(w), "line %d of a long output\n", i);
    ck_assert_int_eq(ghm_file_writer_commit(&w, why, sizeof why), GHM_ERR_IO);
    expect_content(target, "old", 3);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    ck_assert_int_eq(ghm_file_temporaries_in_flight(), 0);
}
END_TEST

START_TEST(test_write_errors)
{
    char why[256] = "";
    /* No such folder: nothing is created. */
    ck_assert_int_eq(ghm_file_write(ghm_test_tmp("no/such/dir/x"), "x", 1, why,
                                    sizeof why),
                     GHM_ERR_IO);
    ck_assert_msg(strstr(why, "No such file or directory") != NULL, "%s", why);
    /* The target is a folder: it stays, and nothing is created. */
    ck_assert_int_eq(mkdir(ghm_test_tmp("a_folder"), 0755), 0);
    ck_assert_int_eq(ghm_file_write(ghm_test_tmp("a_folder"), "x", 1, why, sizeof why), GHM_ERR_IO);
    ck_assert_msg(strstr(why, "Is a directory") != NULL, "%s", why);
    struct stat st;
    ck_assert_int_eq(stat(ghm_test_tmp("a_folder"), &st), 0);
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    /* Abandoned: the target keeps its old content. */
    put_file(ghm_test_tmp("t"), "old", 3);
    GhmFileWriter *w = NULL;
    ck_assert_int_eq(ghm_file_writer_create(ghm_test_tmp("t"), &w, why, sizeof why), GHM_OK);
    fputs("new", ghm_file_writer_stream(w));
    ghm_file_writer_free(&w);
    ck_assert_ptr_null(w);
    ghm_file_writer_free(&w);
    ghm_file_writer_free(NULL);
    expect_content(ghm_test_tmp("t"), "old", 3);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    ck_assert_int_eq(ghm_file_writer_create(NULL, &w, why, sizeof why), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_file_writer_commit(NULL, why, sizeof why), GHM_ERR_INVALID);
    ck_assert_ptr_null(ghm_file_writer_stream(NULL));
}
END_TEST

static void expect_kind(const char *path, mode_t kind)
{
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert_msg((st.st_mode & S_IFMT) == kind, "%s: mode %o", path, (unsigned)st.st_mode);
}

static void *read_fifo(void *arg)
{
    char *got = arg;
    FILE *f = fopen(ghm_test_tmp("fifo"), "rb");
    size_t n = f ? fread(got, 1, 63, f) : 0;
    got[n] = '\0';
    if (f)
        fclose(f);
    return NULL;
}

/* A device or a pipe is written in place, never replaced by a file (a rename over /dev/full
 * made it a regular file when run as root); a link to a file writes the file and stays. */
START_TEST(test_write_special_targets)
{
    char why[256] = "";
    ck_assert_msg(ghm_file_write("/dev/null", "x", 1, why, sizeof why) == GHM_OK, "%s", why);
    expect_kind("/dev/null", S_IFCHR);
    struct stat st;
    if (stat("/dev/full", &st) == 0) {
        ck_assert_int_eq(ghm_file_write("/dev/full", "x", 1, why, sizeof why), GHM_ERR_IO);
        ck_assert_msg(strstr(why, "No space left on device") != NULL, "%s", why);
        expect_kind("/dev/full", S_IFCHR);
    }
    ck_assert_int_eq(mkfifo(ghm_test_tmp("fifo"), 0600), 0);
    char got[64] = "";
    pthread_t reader;
    ck_assert_int_eq(pthread_create(&reader, NULL, read_fifo, got), 0);
    ck_assert_int_eq(ghm_file_write(ghm_test_tmp("fifo"), "through a pipe", 14, why, sizeof why),
                     GHM_OK);
    ck_assert_int_eq(pthread_join(reader, NULL), 0);
    ck_assert_str_eq(got, "through a pipe");
    expect_kind(ghm_test_tmp("fifo"), S_IFIFO);
    put_file(ghm_test_tmp("target"), "old", 3);
    ck_assert_int_eq(symlink("target", ghm_test_tmp("link")), 0);
    ck_assert_int_eq(ghm_file_write(ghm_test_tmp("link"), "new!", 4, why, sizeof why), GHM_OK);
    expect_kind(ghm_test_tmp("link"), S_IFLNK);
    expect_content(ghm_test_tmp("target"), "new!", 4);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    ck_assert_int_eq(ghm_file_temporaries_in_flight(), 0);
}
END_TEST

/* A target name near NAME_MAX still gets a temporary name the file system takes. */
START_TEST(test_write_long_name)
{
    char name[256];
    memset(name, 'n', 250);
    name[250] = '\0';
    char why[256] = "";
    ck_assert_msg(ghm_file_write(ghm_test_tmp(name), "x", 1, why, sizeof why) == GHM_OK, "%s", why);
    expect_content(ghm_test_tmp(name), "x", 1);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
}
END_TEST

typedef struct Racer {
    const char *path;
    uint8_t fill;
    int status;
} Racer;

enum { RACE_BYTES = 256 * 1024, RACERS = 8 };

static void *race(void *arg)
{
    Racer *r = arg;
    uint8_t *data = malloc(RACE_BYTES);
    memset(data, r->fill, RACE_BYTES);
    r->status = ghm_file_write(r->path, data, RACE_BYTES, NULL, 0);
    free(data);
    return NULL;
}

/* Writers of one target at once all succeed; the target is one of their outputs, whole. */
START_TEST(test_concurrent_writers)
{
    pthread_t t[RACERS];
    Racer r[RACERS];
    for (int i = 0; i < RACERS; i++) {
        r[i] = (Racer){ghm_test_tmp("shared.bin"), (uint8_t)('a' + i), 1};
        ck_assert_int_eq(pthread_create(&t[i], NULL, race, &r[i]), 0);
    }
    for (int i = 0; i < RACERS; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(r[i].status, GHM_OK);
    }
    GhmFileData d;
    ck_assert_int_eq(ghm_file_read(ghm_test_tmp("shared.bin"), RACE_BYTES, 0, &d, NULL, 0), GHM_OK);
    ck_assert_uint_eq(d.size, RACE_BYTES);
    CHECK_EACH(d.size, d.data[i] == d.data[0]);
    ck_assert(d.data[0] >= 'a' && d.data[0] < 'a' + RACERS);
    ghm_file_data_free(&d);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
}
END_TEST

/* --- interruption ------------------------------------------------------------------------- */

START_TEST(test_remove_temporaries)
{
    char why[256] = "";
    GhmFileWriter *a = NULL, *b = NULL;
    ck_assert_int_eq(ghm_file_writer_create(ghm_test_tmp("a"), &a, why, sizeof why), GHM_OK);
    ck_assert_int_eq(ghm_file_writer_create(ghm_test_tmp("b"), &b, why, sizeof why), GHM_OK);
    fputs("data", ghm_file_writer_stream(a));
    ck_assert_int_eq(ghm_test_tmp_count(), 2);
    errno = EDOM;
    ghm_file_remove_temporaries();
    ck_assert_int_eq(errno, EDOM); /* a handler must leave errno alone */
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    /* The writers then fail at commit: nothing appears under the targets' names. */
    ck_assert_int_eq(ghm_file_writer_commit(&a, why, sizeof why), GHM_ERR_IO);
    ghm_file_writer_free(&b);
    ck_assert_int_eq(access(ghm_test_tmp("a"), F_OK), -1);
    ck_assert_int_eq(ghm_file_temporaries_in_flight(), 0);
}
END_TEST

static void on_term(int sig)
{
    ghm_file_remove_temporaries();
    raise(sig); /* SA_RESETHAND made it the default: the process ends by this signal */
}

/* A process that gets SIGTERM while writing, with a handler like the program's, leaves none. */
START_TEST(test_signal_mid_write)
{
    pid_t pid = fork();
    ck_assert_int_ne(pid, -1);
    if (pid == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_term;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        GhmFileWriter *w = NULL;
        if (ghm_file_writer_create(ghm_test_tmp("killed.bin"), &w, NULL, 0) != GHM_OK)
            _exit(3);
        fputs("half of it", ghm_file_writer_stream(w));
        fflush(ghm_file_writer_stream(w));
        kill(getpid(), SIGTERM);
        _exit(4); /* not reached */
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %d", status);
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    ck_assert_int_eq(access(ghm_test_tmp("killed.bin"), F_OK), -1);
}
END_TEST

static Suite *file_io_suite(void)
{
    Suite *s = suite_create("file_io");
    TCase *read = tcase_create("read");
    tcase_add_checked_fixture(read, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_add_test(read, test_read_whole_file);
    tcase_add_test(read, test_read_large_file);
    tcase_add_test(read, test_read_refuses_over_cap);
    tcase_add_test(read, test_read_stream_over_cap);
    tcase_add_test(read, test_read_errors);
    tcase_add_test(read, test_open_read);
    tcase_add_test(read, test_head);
    suite_add_tcase(s, read);
    TCase *sniffing = tcase_create("sniff");
    tcase_add_test(sniffing, test_sniff_signatures);
    tcase_add_test(sniffing, test_sniff_prefix);
    tcase_add_test(sniffing, test_sniff_xyz);
    tcase_add_test(sniffing, test_sniff_data_files);
    suite_add_tcase(s, sniffing);
    TCase *write = tcase_create("write");
    tcase_add_checked_fixture(write, ghm_test_tmpdir_make, ghm_test_tmpdir_remove);
    tcase_add_test(write, test_write_leaves_no_temporary);
    tcase_add_test(write, test_write_permissions_follow_umask);
    tcase_add_test(write, test_write_failure_keeps_target);
    tcase_add_test(write, test_write_errors);
    tcase_add_test(write, test_write_special_targets);
    tcase_add_test(write, test_write_long_name);
    tcase_add_test(write, test_concurrent_writers);
    tcase_add_test(write, test_remove_temporaries);
    tcase_add_test(write, test_signal_mid_write);
    suite_add_tcase(s, write);
    return s;
}

int main(void) { return ghm_test_main(file_io_suite()); }
