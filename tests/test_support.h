/*
 * test_support.h - what every Check suite shares: where the data is, whether a CUDA device can
 * be used (asked in a child process, so that the Check parent never initialises CUDA), and the
 * standard main() that runs one suite and returns failure when a test failed.
 */
#ifndef GHM_TEST_SUPPORT_H
#define GHM_TEST_SUPPORT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_image.h"
#include "ghm_map.h"
#include "ghm_video.h"

/* Path of a file under the repository's data/ folder (or $GHM_TEST_DATA when set), in a static
 * buffer (one at a time). */
const char *ghm_test_data(const char *relative);

/* 1 when a CUDA device is usable; probed in a forked child and cached. */
int ghm_test_have_cuda(void);

/* Loads data/<relative> as a grey image, failing the test (with the loader's reason) if it
 * cannot. The caller frees it with ghm_image_free(). */
GhmImage *ghm_test_load_image(const char *relative);

/* Largest distance between the four corners of a w x h query mapped by a and by b: the
 * success criterion of shared/data/README.md compares it with 2 % of the reference diagonal. */
double ghm_test_corner_error(const double a[2][3], const double b[2][3], int w, int h);

/* First line of every test in a "cuda" (or "cuda_*") TCase: without a device the test passes
 * vacuously (ctest reports the case as skipped through ghm_test_main's exit code 77). */
#define GHM_REQUIRE_CUDA()                                                                   \
    do {                                                                                     \
        if (!ghm_test_have_cuda())                                                           \
            return;                                                                          \
    } while (0)

/* Asserts cond for every i in [0, count) and fails once, naming how many entries failed and the
 * first; one ck_assert per element would log millions of passing checks on big arrays. */
#define CHECK_EACH(count, cond)                                                              \
    do {                                                                                     \
        size_t n_bad_ = 0, first_bad_ = 0;                                                   \
        for (size_t i = 0; i < (size_t)(count); i++)                                         \
            if (!(cond) && n_bad_++ == 0)                                                    \
                first_bad_ = i;                                                              \
        ck_assert_msg(n_bad_ == 0, "'%s' fails for %zu of %zu entries, first at %zu", #cond, \
                      n_bad_, (size_t)(count), first_bad_);                                  \
    } while (0)

/* A small seeded generator (64-bit LCG, high half) for test inputs. */
static inline uint32_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 32);
}

/* qsort comparator of uint32_t. */
static inline int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Creates a context on the given backend with seed 1, failing the test if that is impossible. */
GhmContext *ghm_test_context(GhmBackendKind backend);
/* The same with every option given. */
GhmContext *ghm_test_context_opt(GhmContextOptions opt);

/* A scratch folder for the tests of a TCase (its checked fixture: make in setup, remove in
 * teardown), under /tmp with a unique name. ghm_test_tmpdir() is the folder, ghm_test_tmp()
 * a file in it (static buffer, one at a time), ghm_test_tmp_count() how many entries
 * carry the file-I/O unit's ".tmp." mark (left-over temporary files). */
void ghm_test_tmpdir_make(void);
void ghm_test_tmpdir_remove(void);
const char *ghm_test_tmpdir(void);
const char *ghm_test_tmp(const char *name);
int ghm_test_tmp_count(void);

/* The whole file at path (malloc'd, *size bytes; the caller frees it), failing the test when it
 * cannot be read. */
uint8_t *ghm_test_read_file(const char *path, size_t *size);

/* Writes n bytes to path, failing the test when it cannot. */
void ghm_test_write_file(const char *path, const uint8_t *data, size_t n);

/* Overwrites data[from, to) with pseudo-random bytes, the same for the same seed: a damaged or
 * garbage input. */
void ghm_test_noise(uint8_t *data, size_t from, size_t to, uint32_t seed);

/* Writes to path a copy of data/video/Megamind.avi with the payload of one video chunk, the
 * 100th or a later one with a real picture in it, overwritten by noise: the decoder rejects that
 * frame and complains about it; the others still come, numbered as before. */
void ghm_test_damaged_megamind(const char *path);

/* Every prefix tried of a valid image file's bytes (each of the first and last 300, about 400
 * between) decodes to GHM_ERR_TRUNCATED with "truncated" in its message and no image; the whole
 * decodes. what names the file in a failure. */
void ghm_test_truncations(const uint8_t *data, size_t size, const char *what);

/* Reads v to the end; returns the number of frames, fills the count of damaged ones and the
 * final status (GHM_VIDEO_END or the error, with why). */
int ghm_test_read_video(GhmVideo *v, int *damaged, int *final, char *why, size_t n);

/* One pair of a data/<folder>/truth.json: the images, and the query -> reference matrix
 * (unless negative: the right answer is "no match"). */
typedef struct GhmTestPair {
    char id[64];
    GhmImage *ref, *query;
    double truth[2][3];
    int negative;
} GhmTestPair;

/* Loads every pair of data/<folder>/truth.json, failing the test unless there are `expect` of
 * them. Free with ghm_test_pairs_free. */
GhmTestPair *ghm_test_pairs_load(const char *folder, size_t expect);
void ghm_test_pairs_free(GhmTestPair *pairs, size_t n);

/* The failure contract of a map build (ghm_map.h): building keys/values (n pairs) with opt on
 * ctx must return GHM_ERR_BUILD_FAILED after exactly opt->max_rebuilds rebuilds, leave an empty
 * map whose finds all miss, and the same map must then build the first `fits` pairs and find
 * them. */
void ghm_test_map_fails_cleanly(GhmContext *ctx, const GhmMapOptions *opt, const uint32_t *keys,
                                const uint32_t *values, size_t n, size_t fits);

/* Runs the suite; returns 0 when every test passed, 1 otherwise, 77 (ctest "skipped") when the
 * only case asked for in CK_RUN_CASE is "cuda" and no device is present. */
int ghm_test_main(Suite *suite);

#endif /* GHM_TEST_SUPPORT_H */
