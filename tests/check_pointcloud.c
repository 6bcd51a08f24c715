/* check_pointcloud.c - the PLY and XYZ readers and the PLY writer, on the sample clouds, on files
 * written here (every property type, both byte orders, lists before, inside and after the
 * vertices) and on bad inputs (data/bad and damaged copies made here). */
#include <locale.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ghm_pointcloud.h"
#include "pointcloud_internal.h"
#include "test_support.h"

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

static void write_text(const char *path, const char *text) { write_bytes(path, text, strlen(text)); }

/* Loads path expecting status; returns the cloud (NULL on failure) and leaves the message. */
static GhmPointCloud *load_expect(const char *path, int status, char *why, size_t ws)
{
    GhmPointCloud *pc = NULL;
    why[0] = '\0';
    int ret = ghm_pointcloud_load(path, &pc, why, ws);
    ck_assert_msg(ret == status, "%s: got %s (%s), expected %s", path, ghm_strerror(ret), why,
                  ghm_strerror(status));
    if (status != GHM_OK)
        ck_assert_ptr_null(pc);
    return pc;
}

static void expect_bad(const char *path, int status, const char *needle)
{
    char why[256];
    load_expect(path, status, why, sizeof why);
    ck_assert_msg(strstr(why, needle) != NULL, "%s: message '%s' lacks '%s'", path, why, needle);
    ck_assert_ptr_null(strchr(why, '\n'));
}

static void assert_unit_normals(const GhmPointCloud *pc)
{
    ck_assert_ptr_nonnull(pc->normals);
    for (size_t i = 0; i < pc->n; i++) {
        const float *v = pc->normals + 3 * i;
        double len = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        ck_assert_msg(fabs(len - 1.0) < 1e-5, "normal %zu has length %g", i, len);
    }
}

/* --- ply ---------------------------------------------------------------------------------- */

START_TEST(test_sample_clouds)
{
    char why[256];
    GhmPointCloud *pc = load_expect(ghm_test_data("pointclouds/bunny.ply"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 40000);
    assert_unit_normals(pc);
    ck_assert_ptr_null(pc->rgb);
    ghm_pointcloud_free(&pc);
    ck_assert_ptr_null(pc);

    pc = load_expect(ghm_test_data("pointclouds/kitten.ply"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 5210);
    ck_assert_float_eq_tol(pc->xyz[0], 0.3550292f, 1e-7f);
    ck_assert_float_eq_tol(pc->xyz[5], 0.2163972f, 1e-7f);
    assert_unit_normals(pc);
    ghm_pointcloud_free(&pc);

    /* ascii, non-unit normals, 9140 faces after the vertices */
    pc = load_expect(ghm_test_data("pointclouds/parasaurolophus_6700.ply"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 6700);
    ck_assert_float_eq_tol(pc->xyz[2], -686.019f, 1e-3f);
    assert_unit_normals(pc);
    double len = sqrt(0.795545 * 0.795545 + 0.849531 * 0.849531 + 2.42915 * 2.42915);
    ck_assert_float_eq_tol(pc->normals[0], 0.795545 / len, 1e-6);
    ck_assert_float_eq_tol(pc->normals[2], -2.42915 / len, 1e-6);
    ghm_pointcloud_free(&pc);

    /* x y z red green blue nx ny nz: normals found by name */
    pc = load_expect(ghm_test_data("pointclouds/assimp_points_rgb_normals.ply"), GHM_OK, why,
                     sizeof why);
    ck_assert_uint_eq(pc->n, 4);
    ck_assert_ptr_nonnull(pc->rgb);
    ck_assert_float_eq(pc->normals[1], 1.0f);
    ck_assert_float_eq_tol(pc->normals[9], 0.70710678f, 1e-6f);
    ck_assert_float_eq_tol(pc->normals[10], 0.70710678f, 1e-6f);
    ck_assert_uint_eq(pc->rgb[3 * 1 + 1], 0);
    ck_assert_uint_eq(pc->rgb[3 * 3 + 0], 0);
    ck_assert_uint_eq(pc->rgb[3 * 3 + 2], 255);
    ghm_pointcloud_free(&pc);

    /* padded header lines, float32 aliases, faces, no normals: valid (normals get estimated) */
    pc = load_expect(ghm_test_data("bad/cube_no_normals.ply"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 8);
    ck_assert_ptr_null(pc->normals);
    ck_assert_float_eq(pc->xyz[3 * 6 + 0], 1.0f);
    ck_assert_float_eq(pc->xyz[3 * 6 + 2], 1.0f);
    ghm_pointcloud_free(&pc);
    ghm_pointcloud_free(NULL);
}
END_TEST

/* A byte writer for hand-made binary PLY bodies in either byte order. */
typedef struct Bytes {
    uint8_t b[4096];
    size_t n;
    int big;
} Bytes;

static void put(Bytes *w, const void *v, size_t size)
{
    for (size_t i = 0; i < size; i++)
        w->b[w->n + i] = ((const uint8_t *)v)[w->big ? size - 1 - i : i];
    w->n += size;
}
static void put_u8(Bytes *w, uint8_t v) { put(w, &v, 1); }
static void put_i8(Bytes *w, int8_t v) { put(w, &v, 1); }
static void put_i16(Bytes *w, int16_t v) { put(w, &v, 2); }
static void put_u16(Bytes *w, uint16_t v) { put(w, &v, 2); }
static void put_i32(Bytes *w, int32_t v) { put(w, &v, 4); }
static void put_u32(Bytes *w, uint32_t v) { put(w, &v, 4); }
static void put_f32(Bytes *w, float v) { put(w, &v, 4); }
static void put_f64(Bytes *w, double v) { put(w, &v, 8); }

/* Mixed layout: a face element (with lists) before the vertices, a list and every scalar type
 * inside the vertex element in a shuffled order, and an edge element after. */
static const char mixed_header[] =
    "element face 2\n"
    "property list uchar int vertex_indices\n"
    "property uint8 flags\n"
    "element vertex 3\n"
    "property uchar red\n"
    "property double z\n"
    "property int16 junk\n"
    "property float x\n"
    "property list ushort float extra\n"
    "property int8 green\n"
    "property float nz\n"
    "property int y\n"
    "property uint16 blue\n"
    "property float64 nx\n"
    "property uint ny\n"
    "element edge 1\n"
    "property int a\n"
    "property char b\n"
    "end_header\n";

static const double mixed_xyz[3][3] = {{1.5, -2, 0.25}, {-3.25, 7, 100.5}, {0, 0, -1e6}};

static size_t mixed_binary(uint8_t *out, int big)
{
    char head[1024];
    snprintf(head, sizeof head, "ply\nformat %s 1.0\ncomment mixed\n%s",
             big ? "binary_big_endian" : "binary_little_endian", mixed_header);
    Bytes w = {.big = big};
    for (int f = 0; f < 2; f++) {
        put_u8(&w, 3);
        for (int k = 0; k < 3; k++)
            put_i32(&w, f + k);
        put_u8(&w, 0xAB);
    }
    for (int i = 0; i < 3; i++) {
        put_u8(&w, (uint8_t)(10 * i));
        put_f64(&w, mixed_xyz[i][2]);
        put_i16(&w, -5);
        put_f32(&w, (float)mixed_xyz[i][0]);
        put_u16(&w, (uint16_t)i); /* list of i floats */
        for (int k = 0; k < i; k++)
            put_f32(&w, 9.0f);
        put_i8(&w, (int8_t)(20 + i));
        put_f32(&w, 0.0f);                  /* nz */
        put_i32(&w, (int32_t)mixed_xyz[i][1]);
        put_u16(&w, 1000);                  /* blue: clamped to 255 */
        put_f64(&w, 3.0);                   /* nx */
        put_u32(&w, 4);                     /* ny */
    }
    put_i32(&w, 7);
    put_i8(&w, -1);
    size_t hl = strlen(head);
    memcpy(out, head, hl);
    memcpy(out + hl, w.b, w.n);
    return hl + w.n;
}

static const char mixed_ascii[] = "ply\nformat ascii 1.0\n%s"
                                  "3 0 1 2 171\n"
                                  "\n"
                                  "3 1 2 3 171\n"
                                  "0 0.25 -5 1.5 0 20 0 -2 1000 3 4\n"
                                  "10 100.5 -5 -3.25 1 9 21 0 7 1000 3 4\r\n"
                                  "20 -1e6 -5 0 2 9 9.0 22 0 0 1000 3 4\n"
                                  "7 -1\n";

static void check_mixed(const GhmPointCloud *pc)
{
    ck_assert_uint_eq(pc->n, 3);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++)
            ck_assert_float_eq(pc->xyz[3 * i + k], (float)mixed_xyz[i][k]);
    ck_assert_ptr_nonnull(pc->normals);
    ck_assert_float_eq_tol(pc->normals[0], 0.6f, 1e-6f);
    ck_assert_float_eq_tol(pc->normals[7], 0.8f, 1e-6f);
    ck_assert_ptr_nonnull(pc->rgb);
    ck_assert_uint_eq(pc->rgb[3 * 2 + 0], 20);
    ck_assert_uint_eq(pc->rgb[3 * 1 + 1], 21);
    ck_assert_uint_eq(pc->rgb[3 * 0 + 2], 255);
}

START_TEST(test_mixed_layouts)
{
    ghm_test_tmpdir_make();
    uint8_t buf[8192];
    char why[256];
    for (int big = 0; big <= 1; big++) {
        size_t n = mixed_binary(buf, big);
        write_bytes(ghm_test_tmp("mixed.ply"), buf, n);
        GhmPointCloud *pc = load_expect(ghm_test_tmp("mixed.ply"), GHM_OK, why, sizeof why);
        check_mixed(pc);
        ghm_pointcloud_free(&pc);
        /* the same bytes from memory */
        ck_assert_int_eq(ghm_pointcloud_decode(buf, n, &pc, why, sizeof why), GHM_OK);
        check_mixed(pc);
        ghm_pointcloud_free(&pc);
    }
    char text[4096];
    snprintf(text, sizeof text, mixed_ascii, mixed_header);
    write_text(ghm_test_tmp("mixed_ascii.ply"), text);
    GhmPointCloud *pc = load_expect(ghm_test_tmp("mixed_ascii.ply"), GHM_OK, why, sizeof why);
    check_mixed(pc);
    ghm_pointcloud_free(&pc);
    ghm_test_tmpdir_remove();
}
END_TEST

START_TEST(test_write_round_trip)
{
    ghm_test_tmpdir_make();
    GhmPointCloud *pc = NULL, *back = NULL;
    ck_assert_int_eq(ghm_pointcloud_create(1000, 1, 1, &pc), GHM_OK);
    for (size_t i = 0; i < pc->n * 3; i++) {
        pc->xyz[i] = (float)sin((double)i) * 1000.0f;
        pc->normals[i] = (i % 3 == 0) ? 1.0f : 0.0f;
        pc->rgb[i] = (uint8_t)(i * 7);
    }
    char why[256];
    for (int ascii = 0; ascii <= 1; ascii++) {
        ck_assert_int_eq(ghm_pointcloud_save_ply(pc, ghm_test_tmp("rt.ply"), ascii, why, sizeof why),
                         GHM_OK);
        back = load_expect(ghm_test_tmp("rt.ply"), GHM_OK, why, sizeof why);
        ck_assert_uint_eq(back->n, pc->n);
        ck_assert_mem_eq(back->xyz, pc->xyz, pc->n * 3 * sizeof(float)); /* %.9g round-trips */
        ck_assert_mem_eq(back->normals, pc->normals, pc->n * 3 * sizeof(float));
        ck_assert_mem_eq(back->rgb, pc->rgb, pc->n * 3);
        ghm_pointcloud_free(&back);
    }
    /* no temporary files left behind, and a failed write leaves nothing */
    ck_assert_int_eq(
        ghm_pointcloud_save_ply(pc, ghm_test_tmp("no/such/dir/x.ply"), 0, why, sizeof why),
        GHM_ERR_IO);
    ck_assert_ptr_nonnull(strstr(why, "cannot"));
    ck_assert_int_eq(ghm_test_tmp_count(), 0);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 1", ghm_test_tmpdir());
    ck_assert_int_eq(system(cmd), 0);
    ghm_pointcloud_free(&pc);
    ghm_test_tmpdir_remove();
}
END_TEST

START_TEST(test_empty_vertex_element)
{
    ghm_test_tmpdir_make();
    char why[256];
    write_text(ghm_test_tmp("zero.ply"), "ply\nformat ascii 1.0\nelement vertex 0\n"
                                     "property float x\nproperty float y\nproperty float z\n"
                                     "end_header\n");
    GhmPointCloud *pc = load_expect(ghm_test_tmp("zero.ply"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 0);
    ghm_pointcloud_free(&pc);
    ghm_test_tmpdir_remove();
}
END_TEST

/* --- xyz ---------------------------------------------------------------------------------- */

START_TEST(test_xyz_three_columns)
{
    ghm_test_tmpdir_make();
    char why[256];
    write_text(ghm_test_tmp("a.xyz"), "# a comment\n\n1 2 3\n  4.5\t-5e-1 6\r\n// another\n7,8,9");
    GhmPointCloud *pc = load_expect(ghm_test_tmp("a.xyz"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 3);
    ck_assert_ptr_null(pc->normals);
    ck_assert_float_eq(pc->xyz[4], -0.5f);
    ck_assert_float_eq(pc->xyz[8], 9.0f);
    ghm_pointcloud_free(&pc);
    ghm_test_tmpdir_remove();
}
END_TEST

START_TEST(test_xyz_six_columns)
{
    ghm_test_tmpdir_make();
    char why[256];
    /* a name without .xyz: the format comes from the content */
    write_text(ghm_test_tmp("points.txt"), "0 0 0 0 0 2\n1 0 0 -3 0 4\n");
    GhmPointCloud *pc = load_expect(ghm_test_tmp("points.txt"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 2);
    ck_assert_float_eq(pc->normals[2], 1.0f);
    ck_assert_float_eq_tol(pc->normals[3], -0.6f, 1e-6f);
    ck_assert_float_eq_tol(pc->normals[5], 0.8f, 1e-6f);
    ghm_pointcloud_free(&pc);
    /* a flat patch: every normal one way, none negative, of unit length */
    write_text(ghm_test_tmp("patch.xyz"), "0 0 0 0 0 1\n1 0 0 0 0 1\n0 1 0 0.6 0 0.8\n");
    pc = load_expect(ghm_test_tmp("patch.xyz"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 3);
    ghm_pointcloud_free(&pc);
    /* a PLY named .xyz is still read as PLY */
    write_text(ghm_test_tmp("really_ply.xyz"), "ply\nformat ascii 1.0\nelement vertex 1\nproperty "
                                           "float x\nproperty float y\nproperty float z\n"
                                           "end_header\n1 2 3\n");
    pc = load_expect(ghm_test_tmp("really_ply.xyz"), GHM_OK, why, sizeof why);
    ck_assert_uint_eq(pc->n, 1);
    ghm_pointcloud_free(&pc);
    ghm_test_tmpdir_remove();
}
END_TEST

START_TEST(test_xyz_bad)
{
    ghm_test_tmpdir_make();
    write_text(ghm_test_tmp("b1.xyz"), "1 2 3\n4 5 6 0 0 1\n");
    expect_bad(ghm_test_tmp("b1.xyz"), GHM_ERR_FORMAT, "line 2");
    write_text(ghm_test_tmp("b2.xyz"), "1 2\n");
    expect_bad(ghm_test_tmp("b2.xyz"), GHM_ERR_FORMAT, "3 (x y z) or 6");
    write_text(ghm_test_tmp("b3.xyz"), "1 2 3\n1 2 x\n");
    expect_bad(ghm_test_tmp("b3.xyz"), GHM_ERR_FORMAT, "line 2: 'x' is not a number");
    write_text(ghm_test_tmp("b4.xyz"), "1 2 3\n\n1 nan 3\n");
    expect_bad(ghm_test_tmp("b4.xyz"), GHM_ERR_FORMAT, "line 3");
    write_text(ghm_test_tmp("b5.xyz"), "# only comments\n\n");
    expect_bad(ghm_test_tmp("b5.xyz"), GHM_ERR_FORMAT, "no points");
    write_text(ghm_test_tmp("b6.xyz"), "1 2 3 4 5 6 7 8\n");
    expect_bad(ghm_test_tmp("b6.xyz"), GHM_ERR_FORMAT, "or more");
    /* x y z r g b, in bytes and in [0, 1]: refused, not read as normals */
    write_text(ghm_test_tmp("rgb.xyz"), "0 0 0 255 0 0\n1 0 0 0 128 255\n");
    expect_bad(ghm_test_tmp("rgb.xyz"), GHM_ERR_FORMAT, "look like colours");
    write_text(ghm_test_tmp("rgbf.xyz"), "0 0 0 1 0 0\n1 0 0 0.2 0.5 0.1\n");
    expect_bad(ghm_test_tmp("rgbf.xyz"), GHM_ERR_FORMAT, "line 2's has length");
    ghm_test_tmpdir_remove();
}
END_TEST

/* Writes an XYZ file of `points` lines of "x y z nx ny nz" (point i at (i, i / 2, -i), normal
 * (0, 0, 1)), a comment every 1000 lines and a blank line every 777; then `tail` (may be ""). Line
 * `odd_line` (counted from 1; 0: none) is `odd` instead of its point. */
static void write_big_xyz(const char *path, int points, int odd_line, const char *odd,
                          const char *tail)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    int line = 0;
    for (int i = 0; i < points; i++) {
        if (i % 1000 == 0 && ++line)
            fprintf(f, "# part %d\n", i / 1000);
        if (i % 777 == 0 && ++line)
            fputs("\n", f);
        if (++line == odd_line)
            fprintf(f, "%s\n", odd);
        else
            fprintf(f, "%d %.1f %d 0 0 1\n", i, i / 2.0, -i);
    }
    fputs(tail, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* Large XYZ files are parsed in stretches on several threads: every point in its place and, in
 * a bad file, the message of the first bad line, numbered through the whole file. */
START_TEST(test_xyz_large)
{
    ghm_test_tmpdir_make();
    char why[256];
    const char *path = ghm_test_tmp("big.xyz");
    int points = 20000; /* about 0.4 MB, read in stretches from 4 KB on */
    ghmi_xyz_tune(4096);
    write_big_xyz(path, points, 0, "", "");
    int threads = omp_get_max_threads();
    for (int t = 1; t <= 9; t += 4) { /* 1, 5 and 9 stretches, whatever the machine's cores */
        omp_set_num_threads(t);
        GhmPointCloud *pc = load_expect(path, GHM_OK, why, sizeof why);
        ck_assert_uint_eq(pc->n, (size_t)points);
        for (int i = 0; i < points; i++) {
            ck_assert_float_eq(pc->xyz[3 * i], (float)i);
            ck_assert_float_eq(pc->xyz[3 * i + 1], (float)(i / 2.0));
            ck_assert_float_eq(pc->normals[3 * i + 2], 1.0f);
        }
        ghm_pointcloud_free(&pc);
    }
    omp_set_num_threads(threads);
    /* lines: 20000 points, 20 comments, 26 blank lines; 15000 lies in a later stretch */
    write_big_xyz(path, points, 15000, "1 2 x 0 0 1", "");
    expect_bad(path, GHM_ERR_FORMAT, "line 15000: 'x' is not a number");
    write_big_xyz(path, points, 15000, "1 2 3", "");
    expect_bad(path, GHM_ERR_FORMAT, "line 15000: 3 numbers where the lines before have 6");
    write_big_xyz(path, points, 15000, "1 2 3 0 inf 1", "");
    expect_bad(path, GHM_ERR_FORMAT, "line 15000: a normal component is infinite");
    write_big_xyz(path, points, 15000, "1 2 3 0.2 0.5 0.1", "");
    expect_bad(path, GHM_ERR_FORMAT, "line 15000's has length");
    write_big_xyz(path, points, 0, "", "1 2 3\n"); /* the last stretch disagrees */
    expect_bad(path, GHM_ERR_FORMAT, "3 numbers where the lines before have 6");
    ghmi_xyz_tune(0);
    ghm_test_tmpdir_remove();
}
END_TEST

/* --- bad ---------------------------------------------------------------------------------- */

START_TEST(test_bad_samples)
{
    expect_bad(ghm_test_data("bad/empty.ply"), GHM_ERR_FORMAT, "empty file");
    expect_bad(ghm_test_data("bad/OutOfMemory.off"), GHM_ERR_UNSUPPORTED, "OFF");
    expect_bad(ghm_test_data("bad/malformed.obj"), GHM_ERR_UNSUPPORTED, "OBJ");
    /* a list in the vertex element that the rows do not carry */
    expect_bad(ghm_test_data("bad/issue623_list_in_vertex.ply"), GHM_ERR_FORMAT, "line 13");
    expect_bad(ghm_test_data("bad/truncated_binary.ply"), GHM_ERR_TRUNCATED, "byte offset 29791");
    expect_bad(ghm_test_data("bad/truncated_binary.ply"), GHM_ERR_TRUNCATED, "vertex 1234");
    expect_bad(ghm_test_data("bad/lying_vertex_count.ply"), GHM_ERR_TRUNCATED, "353535235358");
    expect_bad(ghm_test_data("bad/no_end_header.ply"), GHM_ERR_FORMAT, "end_header");
    expect_bad(ghm_test_data("bad/bad_format_line.ply"), GHM_ERR_FORMAT, "binary_middle_endian");
    expect_bad(ghm_test_data("bad/nan_coordinates.ply"), GHM_ERR_FORMAT, "line 12: vertex 1: x is nan");
    expect_bad(ghm_test_data("bad/not_an_image.jpg"), GHM_ERR_FORMAT, "line 1");
    expect_bad(ghm_test_data("bad/corrupt_signature.png"), GHM_ERR_FORMAT, "binary data");
    expect_bad(ghm_test_data("pointclouds/no_such_file.ply"), GHM_ERR_IO, "cannot open");
    expect_bad(ghm_test_data("pointclouds"), GHM_ERR_IO, "directory");
}
END_TEST

static const char good_head[] = "ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\n"
                                "property float y\nproperty float z\n";

START_TEST(test_bad_headers)
{
    ghm_test_tmpdir_make();
    struct {
        const char *text;
        int status;
        const char *needle;
    } cases[] = {
        {"ply\nelement vertex 1\nproperty float x\nend_header\n1\n", GHM_ERR_FORMAT, "no format"},
        {"ply\nformat ascii 2.0\nend_header\n", GHM_ERR_UNSUPPORTED, "version"},
        {"ply\nformat ascii 1.0\nproperty float x\nend_header\n", GHM_ERR_FORMAT, "line 3"},
        {"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
         "end_header\n1 2\n", GHM_ERR_FORMAT, "no 'z'"},
        {"ply\nformat ascii 1.0\nelement vertex 1\nproperty list uchar float x\nproperty float y\n"
         "property float z\nend_header\n1 2 3 4\n", GHM_ERR_FORMAT, "is a list"},
        {"ply\nformat ascii 1.0\nelement vertex 1\nproperty quad x\nend_header\n", GHM_ERR_FORMAT,
         "line 4: unknown property type 'quad'"},
        {"ply\nformat ascii 1.0\nelement face 1\nproperty list uchar int v\nend_header\n0\n",
         GHM_ERR_FORMAT, "no vertex element"},
        {"ply\nformat ascii 1.0\nelement vertex -3\n", GHM_ERR_FORMAT, "line 3"},
        {"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float x\n",
         GHM_ERR_FORMAT, "twice"},
        {"ply\nformat ascii 1.0\nelement vertex 1\nproperty list float int v\n", GHM_ERR_FORMAT,
         "not an integer type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(ghm_test_tmp("h.ply"), cases[i].text);
        expect_bad(ghm_test_tmp("h.ply"), cases[i].status, cases[i].needle);
    }
    ghm_test_tmpdir_remove();
}
END_TEST

START_TEST(test_bad_ascii_bodies)
{
    ghm_test_tmpdir_make();
    struct {
        const char *body;
        int status;
        const char *needle;
    } cases[] = {
        {"end_header\n1 2 3\n            \n", GHM_ERR_TRUNCATED, "line 10: the file ends after 1 of the 2"},
        {"end_header\n1 2 3\n", GHM_ERR_TRUNCATED, "can hold at most 1"},
        {"end_header\n1 2 3\n4 5       \n", GHM_ERR_FORMAT, "line 9: vertex 1 ends before its property 'z'"},
        {"end_header\n1 2 3 4\n4 5 6\n", GHM_ERR_FORMAT, "line 8: vertex 0 has more values"},
        {"end_header\n1 2 3\n4 5 6\n7 8 9\n", GHM_ERR_FORMAT, "line 10: data after the last"},
        {"end_header\n1 2 3\n4 5 -inf\n", GHM_ERR_FORMAT, "line 9: vertex 1: z is infinite"},
        {"end_header\n1 2 3\n4 5 6abc\n", GHM_ERR_FORMAT, "'6abc' is not a valid number"},
        {"element face 1\nproperty list uchar int v\nend_header\n1 2 3\n4 5 6\n3 0 1\n",
         GHM_ERR_FORMAT, "line 12: face 0 ends before its property 'v'"},
        {"element face 1\nproperty list uchar int v\nend_header\n1 2 3\n4 5 6\n          \n",
         GHM_ERR_TRUNCATED, "after 0 of the 1 face elements"},
        {"element face 1\nproperty list uchar int v\nend_header\n1 2 3\n4 5 6\n300 1 2\n",
         GHM_ERR_FORMAT, "'300' is not a valid integer"},
        {"element face 1\nproperty list uchar int v\nend_header\n1 2 3\n4 5 6\n2 1 2.5\n",
         GHM_ERR_FORMAT, "'2.5' is not a valid integer"},
    };
    char text[1024];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(text, sizeof text, "%s%s", good_head, cases[i].body);
        write_text(ghm_test_tmp("b.ply"), text);
        expect_bad(ghm_test_tmp("b.ply"), cases[i].status, cases[i].needle);
    }
    ghm_test_tmpdir_remove();
}
END_TEST

/* Cuts a valid binary file at many places: every cut must fail cleanly, none may crash. */
START_TEST(test_binary_truncations)
{
    ghm_test_tmpdir_make();
    uint8_t buf[8192];
    char why[256];
    for (int big = 0; big <= 1; big++) {
        size_t n = mixed_binary(buf, big);
        size_t head = (size_t)((uint8_t *)strstr((char *)buf, "end_header\n") - buf) + 11;
        for (size_t cut = 0; cut < n; cut++) {
            GhmPointCloud *pc = NULL;
            int ret = ghm_pointcloud_decode(buf, cut, &pc, why, sizeof why);
            ck_assert_ptr_null(pc);
            if (cut == 0)
                ck_assert_int_eq(ret, GHM_ERR_FORMAT);
            else if (cut + 1 < head)
                ck_assert_msg(ret == GHM_ERR_FORMAT || ret == GHM_ERR_UNSUPPORTED,
                              "cut %zu: %s", cut, why);
            else
                ck_assert_msg(ret == GHM_ERR_TRUNCATED &&
                                  (strstr(why, "byte offset") || strstr(why, "at most")),
                              "cut %zu: %s (%s)", cut, ghm_strerror(ret), why);
        }
    }
    ghm_test_tmpdir_remove();
}
END_TEST

/* Large binary clouds, which the reader copies on several threads: the same values back, with
 * normals only (the float path) and with colours too (the converting path), and of two bad
 * values the first one named. */
START_TEST(test_large_binary)
{
    ghm_test_tmpdir_make();
    char why[256];
    for (int rgb = 0; rgb <= 1; rgb++) {
        GhmPointCloud *pc = NULL, *back = NULL;
        ck_assert_int_eq(ghm_pointcloud_create(300000, 1, rgb, &pc), GHM_OK);
        for (size_t i = 0; i < pc->n * 3; i++) {
            pc->xyz[i] = (float)cos((double)i) * 50.0f;
            pc->normals[i] = i % 3 == 0 ? 1.0f : 0.0f; /* unit, as the reader keeps them */
            if (rgb)
                pc->rgb[i] = (uint8_t)(i * 13);
        }
        ck_assert_int_eq(ghm_pointcloud_save_ply(pc, ghm_test_tmp("big.ply"), 0, why, sizeof why),
                         GHM_OK);
        back = load_expect(ghm_test_tmp("big.ply"), GHM_OK, why, sizeof why);
        ck_assert_uint_eq(back->n, pc->n);
        ck_assert_mem_eq(back->xyz, pc->xyz, pc->n * 3 * sizeof(float));
        ck_assert_mem_eq(back->normals, pc->normals, pc->n * 3 * sizeof(float));
        if (rgb)
            ck_assert_mem_eq(back->rgb, pc->rgb, pc->n * 3);
        ghm_pointcloud_free(&back);
        pc->xyz[3 * 280000 + 2] = NAN; /* the later of two, on another thread's records */
        pc->normals[3 * 250001 + 1] = INFINITY;
        ck_assert_int_eq(ghm_pointcloud_save_ply(pc, ghm_test_tmp("big.ply"), 0, why, sizeof why),
                         GHM_OK);
        expect_bad(ghm_test_tmp("big.ply"), GHM_ERR_FORMAT, "vertex 250001: ny is infinite");
        ghm_pointcloud_free(&pc);
    }
    ghm_test_tmpdir_remove();
}
END_TEST

START_TEST(test_binary_lies)
{
    ghm_test_tmpdir_make();
    /* a huge count in a binary file: refused before any allocation */
    const char *lie = "ply\nformat binary_little_endian 1.0\nelement vertex 353535235358\n"
                      "property float x\nproperty float y\nproperty float z\nend_header\n"
                      "0123456789ab";
    write_text(ghm_test_tmp("lie.ply"), lie);
    expect_bad(ghm_test_tmp("lie.ply"), GHM_ERR_TRUNCATED, "byte offset 138, inside vertex 1 of");
    /* trailing bytes after the last element */
    uint8_t buf[8192];
    size_t n = mixed_binary(buf, 0);
    buf[n] = 0x42;
    write_bytes(ghm_test_tmp("extra.ply"), buf, n + 1);
    expect_bad(ghm_test_tmp("extra.ply"), GHM_ERR_FORMAT, "after the last element");

    /* A big-endian file that claims to be little endian: the face list count (int32 1) reads
     * as 2^24 and overruns the file. */
    Bytes w = {.big = 1};
    const char *head = "ply\nformat binary_little_endian 1.0\nelement face 1\n"
                       "property list int int v\nelement vertex 1\nproperty float x\n"
                       "property float y\nproperty float z\nend_header\n";
    put_i32(&w, 1);
    put_i32(&w, 0);
    for (int k = 0; k < 3; k++)
        put_f32(&w, 1.0f);
    memcpy(buf, head, strlen(head));
    memcpy(buf + strlen(head), w.b, w.n);
    write_bytes(ghm_test_tmp("endian1.ply"), buf, strlen(head) + w.n);
    expect_bad(ghm_test_tmp("endian1.ply"), GHM_ERR_TRUNCATED, "face 0");
    /* and a coordinate whose swapped bytes form a NaN (bits 0x3f80ffff -> 0xffff803f) */
    const char *head2 = "ply\nformat binary_little_endian 1.0\nelement vertex 1\n"
                        "property float x\nproperty float y\nproperty float z\nend_header\n";
    Bytes w2 = {.big = 1};
    uint32_t bits = 0x3f80ffffu;
    float f;
    memcpy(&f, &bits, 4);
    put_f32(&w2, 1.0f);
    put_f32(&w2, f);
    put_f32(&w2, 1.0f);
    memcpy(buf, head2, strlen(head2));
    memcpy(buf + strlen(head2), w2.b, w2.n);
    write_bytes(ghm_test_tmp("endian2.ply"), buf, strlen(head2) + w2.n);
    expect_bad(ghm_test_tmp("endian2.ply"), GHM_ERR_FORMAT, "y is nan");
    ghm_test_tmpdir_remove();
}
END_TEST

/* An application that sets a locale with a decimal comma (de_DE) still gets its clouds read
 * and written with a decimal point. The locale is compiled into the scratch folder with
 * localedef (glibc's, from Debian's locales package: scripts/setup.sh installs it). */
START_TEST(test_decimal_comma_locale)
{
    ghm_test_tmpdir_make();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1",
             ghm_test_tmpdir());
    ck_assert_msg(system(cmd) == 0, "localedef cannot make de_DE.UTF-8 (run scripts/setup.sh)");
    setenv("LOCPATH", ghm_test_tmpdir(), 1);
    ck_assert_ptr_nonnull(setlocale(LC_ALL, "de_DE.UTF-8"));
    char probe[16];
    snprintf(probe, sizeof probe, "%.1f", 0.5);
    ck_assert_str_eq(probe, "0,5"); /* the locale is in force */
    const char *xyz = "0.5 1.25 -2.5\n1e-3 2 3\n";
    GhmPointCloud *pc = NULL, *back = NULL;
    char why[256];
    ck_assert_int_eq(ghm_pointcloud_decode((const uint8_t *)xyz, strlen(xyz), &pc, why, sizeof why),
                     GHM_OK);
    ck_assert_uint_eq(pc->n, 2);
    ck_assert_float_eq(pc->xyz[0], 0.5f);
    ck_assert_float_eq(pc->xyz[1], 1.25f);
    ck_assert_float_eq(pc->xyz[2], -2.5f);
    ck_assert_float_eq(pc->xyz[3], 1e-3f);
    ck_assert_int_eq(ghm_pointcloud_save_ply(pc, ghm_test_tmp("comma.ply"), 1, why, sizeof why),
                     GHM_OK);
    snprintf(cmd, sizeof cmd, "grep -q '^0.5 1.25 -2.5$' '%s'", ghm_test_tmp("comma.ply"));
    ck_assert_int_eq(system(cmd), 0);
    back = load_expect(ghm_test_tmp("comma.ply"), GHM_OK, why, sizeof why);
    ck_assert_mem_eq(back->xyz, pc->xyz, 6 * sizeof(float));
    snprintf(probe, sizeof probe, "%.1f", 0.5);
    ck_assert_str_eq(probe, "0,5"); /* and the application's locale is back */
    setlocale(LC_ALL, "C");
    unsetenv("LOCPATH");
    ghm_pointcloud_free(&pc);
    ghm_pointcloud_free(&back);
    ghm_test_tmpdir_remove();
}
END_TEST

static Suite *pointcloud_suite(void)
{
    Suite *s = suite_create("pointcloud");
    TCase *ply = tcase_create("ply");
    tcase_add_test(ply, test_sample_clouds);
    tcase_add_test(ply, test_mixed_layouts);
    tcase_add_test(ply, test_write_round_trip);
    tcase_add_test(ply, test_empty_vertex_element);
    tcase_add_test(ply, test_large_binary);
    suite_add_tcase(s, ply);
    TCase *xyz = tcase_create("xyz");
    tcase_add_test(xyz, test_xyz_three_columns);
    tcase_add_test(xyz, test_xyz_six_columns);
    tcase_add_test(xyz, test_xyz_bad);
    tcase_add_test(xyz, test_xyz_large);
    tcase_add_test(xyz, test_decimal_comma_locale);
    suite_add_tcase(s, xyz);
    TCase *bad = tcase_create("bad");
    tcase_add_test(bad, test_bad_samples);
    tcase_add_test(bad, test_bad_headers);
    tcase_add_test(bad, test_bad_ascii_bodies);
    tcase_add_test(bad, test_binary_truncations);
    tcase_add_test(bad, test_binary_lies);
    suite_add_tcase(s, bad);
    return s;
}

int main(void) { return ghm_test_main(pointcloud_suite()); }
