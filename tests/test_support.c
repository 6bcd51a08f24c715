/* test_support.c - see test_support.h. */
#include "test_support.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *ghm_test_data(const char *relative)
{
    /* The environment may move the data (a build carried to another machine runs its tests
     * from a different checkout path). */
    static char path[4096];
    const char *root = getenv("GHM_TEST_DATA");
    snprintf(path, sizeof path, "%s/%s", root && *root ? root : GHM_TEST_DATA, relative);
    return path;
}

GhmImage *ghm_test_load_image(const char *relative)
{
    GhmImage *img = NULL;
    char why[256] = "";
    int ret = ghm_image_load(ghm_test_data(relative), &img, why, sizeof why);
    ck_assert_msg(ret == GHM_OK, "%s: %s", relative, why);
    return img;
}

double ghm_test_corner_error(const double a[2][3], const double b[2][3], int w, int h)
{
    double c[4][2] = {{0, 0}, {w - 1, 0}, {w - 1, h - 1}, {0, h - 1}}, worst = 0.0;
    for (int i = 0; i < 4; i++) {
        double dx = (a[0][0] - b[0][0]) * c[i][0] + (a[0][1] - b[0][1]) * c[i][1] + a[0][2] -
                    b[0][2];
        double dy = (a[1][0] - b[1][0]) * c[i][0] + (a[1][1] - b[1][1]) * c[i][1] + a[1][2] -
                    b[1][2];
        worst = fmax(worst, hypot(dx, dy));
    }
    return worst;
}

int ghm_test_have_cuda(void)
{
    static int cached = -1;
    if (cached >= 0)
        return cached;
    pid_t pid = fork();
    if (pid == 0)
        _exit(ghm_cuda_available() ? 0 : 1);
    int status = 0;
    cached = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0;
    return cached;
}

GhmContext *ghm_test_context_opt(GhmContextOptions opt)
{
    GhmContext *ctx = NULL;
    int ret = ghm_context_create(&opt, &ctx);
    ck_assert_msg(ret == GHM_OK, "context: %s", ghm_strerror(ret));
    return ctx;
}

GhmContext *ghm_test_context(GhmBackendKind backend)
{
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = backend;
    return ghm_test_context_opt(opt);
}

int ghm_test_main(Suite *suite)
{
    const char *only = getenv("CK_RUN_CASE");
    if (only && strncmp(only, "cuda", 4) == 0 && !ghm_test_have_cuda()) {
        printf("skipped: no CUDA device (or a build without CUDA)\n");
        srunner_free(srunner_create(suite));
        return 77;
    }
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? 0 : 1;
}

static char tmpdir[64];

void ghm_test_tmpdir_make(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ghm_test_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* Removes dir with its files and subfolders. */
static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            remove_tree(path);
    }
    closedir(d);
    rmdir(dir);
}

void ghm_test_tmpdir_remove(void)
{
    remove_tree(tmpdir);
}

const char *ghm_test_tmpdir(void)
{
    return tmpdir;
}

const char *ghm_test_tmp(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

uint8_t *ghm_test_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    ck_assert_int_ge(n, 0);
    rewind(f);
    uint8_t *data = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_eq(fread(data, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return data;
}

void ghm_test_write_file(const char *path, const uint8_t *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot create %s", path);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

void ghm_test_noise(uint8_t *data, size_t from, size_t to, uint32_t seed)
{
    uint32_t state = seed;
    for (size_t i = from; i < to; i++) {
        state = state * 1103515245u + 12345u;
        data[i] = (uint8_t)(state >> 16);
    }
}

void ghm_test_damaged_megamind(const char *path)
{
    size_t n = 0;
    uint8_t *data = ghm_test_read_file(ghm_test_data("video/Megamind.avi"), &n);
    /* The 7-byte chunks stand for packed B-frames (no picture of their own), and "00dc" in the
     * index (idx1) is followed by flags, not a size that fits. */
    int chunk = 0;
    size_t at = 0;
    for (size_t i = 0; i + 8 < n && !at; i++) {
        if (memcmp(data + i, "00dc", 4) != 0)
            continue;
        uint32_t size = data[i + 4] | data[i + 5] << 8 | data[i + 6] << 16 |
                        (uint32_t)data[i + 7] << 24;
        if (++chunk >= 100 && size > 2000 && size < 200000 && i + 8 + size <= n)
            at = i;
    }
    ck_assert_uint_gt(at, 0);
    ghm_test_noise(data, at + 8 + 40, at + 8 + 400, 12345);
    ghm_test_write_file(path, data, n);
    free(data);
}

void ghm_test_truncations(const uint8_t *data, size_t size, const char *what)
{
    size_t step = size / 400 + 1;
    for (size_t n = 1; n < size; n += (n < 300 || n > size - 300) ? 1 : step) {
        GhmImage *img = NULL;
        char why[256] = "";
        int ret = ghm_image_decode(data, n, &img, why, sizeof why);
        ck_assert_msg(ret == GHM_ERR_TRUNCATED, "%s cut at %zu of %zu: %s (%s)", what, n, size,
                      ghm_strerror(ret), why);
        ck_assert_ptr_nonnull(strstr(why, "truncated"));
        ck_assert_ptr_null(img);
    }
    GhmImage *img = NULL;
    ck_assert_int_eq(ghm_image_decode(data, size, &img, NULL, 0), GHM_OK);
    ghm_image_free(&img);
}

/* Reads to the end; returns the number of frames, fills counts of damaged ones and the final
 * status (GHM_VIDEO_END or the error). */
int ghm_test_read_video(GhmVideo *v, int *damaged, int *final, char *why, size_t n)
{
    int frames = 0;
    *damaged = 0;
    GhmVideoFrame f;
    for (;;) {
        int ret = ghm_video_read(v, &f, why, n);
        if (ret == GHM_VIDEO_FRAME) {
            ck_assert_ptr_nonnull(f.image);
            frames++;
            ghm_image_free(&f.image);
        } else if (ret == GHM_VIDEO_DAMAGED) {
            ck_assert_ptr_null(f.image);
            (*damaged)++;
        } else {
            *final = ret;
            return frames;
        }
    }
}

int ghm_test_tmp_count(void)
{
    DIR *d = opendir(tmpdir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return n;
}

void ghm_test_map_fails_cleanly(GhmContext *ctx, const GhmMapOptions *opt, const uint32_t *keys,
                                const uint32_t *values, size_t n, size_t fits)
{
    uint32_t *out = malloc((n ? n : 1) * sizeof *out);
    ck_assert_ptr_nonnull(out);
    GhmMap *m = NULL;
    ck_assert_int_eq(ghm_map_create(ctx, opt, &m), GHM_OK);
    double t0 = ghm_now();
    ck_assert_int_eq(ghm_map_build(m, keys, values, n), GHM_ERR_BUILD_FAILED);
    printf("%s map, scheme %s: a failed build of %zu keys took %.3f s\n",
           ghm_context_backend_name(ctx), ghm_map_scheme_name(opt->scheme), n, ghm_now() - t0);
    GhmMapStats st;
    ck_assert_int_eq(ghm_map_stats(m, &st), GHM_OK);
    ck_assert_uint_eq(st.size, 0);
    ck_assert_int_eq(st.rebuilds, opt->max_rebuilds);
    ck_assert_int_eq(ghm_map_find(m, keys, n, out), GHM_OK);
    CHECK_EACH(n, out[i] == GHM_NOT_FOUND);
    ck_assert_int_eq(ghm_map_build(m, keys, values, fits), GHM_OK);
    ck_assert_int_eq(ghm_map_find(m, keys, n, out), GHM_OK);
    CHECK_EACH(n, out[i] == (i < fits ? values[i] : GHM_NOT_FOUND));
    ghm_map_free(&m);
    free(out);
}

static void load_pair(const char *folder, json_t *p, GhmTestPair *out)
{
    char rel[256];
    snprintf(out->id, sizeof out->id, "%s", json_string_value(json_object_get(p, "id")));
    snprintf(rel, sizeof rel, "%s/%s", folder,
             json_string_value(json_object_get(p, "reference")));
    out->ref = ghm_test_load_image(rel);
    snprintf(rel, sizeof rel, "%s/%s", folder, json_string_value(json_object_get(p, "query")));
    out->query = ghm_test_load_image(rel);
    out->negative = json_is_true(json_object_get(p, "negative"));
    json_t *mt = json_object_get(p, "matrix");
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            out->truth[a][b] = json_number_value(json_array_get(json_array_get(mt, a), b));
}

GhmTestPair *ghm_test_pairs_load(const char *folder, size_t expect)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s/truth.json", folder);
    json_error_t jerr;
    json_t *root = json_load_file(ghm_test_data(rel), 0, &jerr);
    ck_assert_msg(root != NULL, "%s: %s", rel, jerr.text);
    json_t *pairs = json_object_get(root, "pairs");
    ck_assert_uint_eq(json_array_size(pairs), expect);
    GhmTestPair *out = calloc(expect ? expect : 1, sizeof *out);
    ck_assert_ptr_nonnull(out);
    for (size_t i = 0; i < expect; i++)
        load_pair(folder, json_array_get(pairs, i), &out[i]);
    json_decref(root);
    return out;
}

void ghm_test_pairs_free(GhmTestPair *pairs, size_t n)
{
    for (size_t i = 0; pairs && i < n; i++) {
        ghm_image_free(&pairs[i].ref);
        ghm_image_free(&pairs[i].query);
    }
    free(pairs);
}
