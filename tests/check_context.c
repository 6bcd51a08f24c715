/* check_context.c - the backend registry, contexts, backend memory and error strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_context.h"
#include "ghm_log.h"
#include "ghm_map.h"
#include "log_internal.h"
#include "test_support.h"

START_TEST(test_cpu_context)
{
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    ck_assert_str_eq(ghm_context_backend_name(ctx), "cpu");
    ck_assert_int_eq(ghm_context_backend(ctx), GHM_BACKEND_CPU);
    ck_assert_int_ge(ghm_context_threads(ctx), 1);
    ck_assert_uint_eq(ghm_context_seed(ctx), 1);
    char what[128];
    ghm_context_describe(ctx, what, sizeof what);
    ck_assert_ptr_nonnull(strstr(what, "CPU"));
    ghm_context_free(&ctx);
    ck_assert_ptr_null(ctx);
    ghm_context_free(&ctx); /* a second free of the nulled pointer is harmless */
    ghm_context_free(NULL);
}
END_TEST

START_TEST(test_bad_options)
{
    GhmContext *ctx = NULL;
    GhmContextOptions opt = ghm_context_defaults();
    opt.threads = -1;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_ERR_INVALID);
    ck_assert_ptr_null(ctx);
    opt = ghm_context_defaults();
    opt.backend = (GhmBackendKind)7;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_context_create(NULL, &ctx), GHM_ERR_INVALID);
    opt = ghm_context_defaults();
    opt.device = -1;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_ERR_INVALID);
    ck_assert_ptr_null(ctx);
}
END_TEST

/* A device that does not exist: CUDA asked for is GHM_ERR_NO_DEVICE and leaves CUDA usable for
 * the devices that do; AUTO takes the CPU; the CPU ignores the field. */
START_TEST(test_missing_device)
{
    int have = ghm_cuda_device_count();
    ck_assert_int_eq(have > 0, ghm_cuda_available());
    GhmContext *ctx = NULL;
    GhmContextOptions opt = ghm_context_defaults();
    opt.device = have;
    opt.backend = GHM_BACKEND_CUDA;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_ERR_NO_DEVICE);
    ck_assert_ptr_null(ctx);
    ck_assert_int_eq(ghm_cuda_device_count(), have);
    opt.backend = GHM_BACKEND_AUTO;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_OK);
    ck_assert_int_eq(ghm_context_backend(ctx), GHM_BACKEND_CPU);
    ck_assert_int_eq(ghm_context_device(ctx), -1);
    ghm_context_free(&ctx);
    opt.backend = GHM_BACKEND_CPU;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_OK);
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_cuda_absent_is_an_error)
{
    if (ghm_test_have_cuda())
        return; /* covered by the cuda case on a GPU machine */
    GhmContextOptions opt = ghm_context_defaults();
    opt.backend = GHM_BACKEND_CUDA;
    GhmContext *ctx = NULL;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_ERR_NO_DEVICE);
    ck_assert_ptr_null(ctx);
    opt.backend = GHM_BACKEND_AUTO;
    ck_assert_int_eq(ghm_context_create(&opt, &ctx), GHM_OK);
    ck_assert_str_eq(ghm_context_backend_name(ctx), "cpu");
    ghm_context_free(&ctx);
}
END_TEST

static void buffer_round_trip(GhmBackendKind kind)
{
    GhmContext *ctx = ghm_test_context(kind);
    enum { N = 1000 };
    uint32_t host[N], back[N];
    for (int i = 0; i < N; i++)
        host[i] = (uint32_t)i * 2654435761u;
    void *a = NULL, *b = NULL;
    ck_assert_int_eq(ghm_buffer_alloc(ctx, sizeof host, &a), GHM_OK);
    ck_assert_int_eq(ghm_buffer_alloc(ctx, sizeof host, &b), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(ctx, back, a, sizeof back), GHM_OK);
    for (int i = 0; i < N; i++)
        ck_assert_uint_eq(back[i], 0); /* alloc zeroes */
    ck_assert_int_eq(ghm_buffer_upload(ctx, a, host, sizeof host), GHM_OK);
    ck_assert_int_eq(ghm_buffer_copy(ctx, b, a, sizeof host), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(ctx, back, b, sizeof back), GHM_OK);
    ck_assert_mem_eq(host, back, sizeof host);
    ck_assert_int_eq(ghm_buffer_zero(ctx, b, sizeof host), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(ctx, back, b, sizeof back), GHM_OK);
    ck_assert_uint_eq(back[N - 1], 0);
    ck_assert_int_eq(ghm_context_sync(ctx), GHM_OK);
    ghm_buffer_free(ctx, &a);
    ghm_buffer_free(ctx, &b);
    ck_assert_ptr_null(a);
    ghm_buffer_free(ctx, &a);
    ghm_context_free(&ctx);
}

START_TEST(test_cpu_buffers) { buffer_round_trip(GHM_BACKEND_CPU); }
END_TEST

START_TEST(test_cuda_buffers)
{
    GHM_REQUIRE_CUDA();
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CUDA);
    ck_assert_str_eq(ghm_context_backend_name(ctx), "cuda");
    ghm_context_free(&ctx);
    buffer_round_trip(GHM_BACKEND_CUDA);
}
END_TEST

START_TEST(test_strerror)
{
    ck_assert_str_eq(ghm_strerror(GHM_OK), "success");
    ck_assert_str_eq(ghm_strerror(GHM_ERR_NO_DEVICE), "no CUDA device available");
    for (int e = GHM_OK; e >= GHM_ERR_BUILD_FAILED; e--)
        ck_assert_str_ne(ghm_strerror(e), "unknown error");
    ck_assert_str_eq(ghm_strerror(-1000), "unknown error");
    ck_assert_str_eq(ghm_strerror(5), "unknown error");
}
END_TEST

/* What the log callback received. */
static char logged[512];
static int log_calls;

static void capture(void *user, GhmLogLevel level, const char *message)
{
    ck_assert_ptr_eq(user, &log_calls);
    ck_assert_int_eq(level, GHM_LOG_ERROR);
    snprintf(logged, sizeof logged, "%s", message);
    log_calls++;
}

/* Messages reach the installed callback, one line each, and nowhere without one. */
START_TEST(test_log_callback)
{
    log_calls = 0;
    ck_assert_int_eq(ghmi_log(GHM_LOG_ERROR, "dropped %d", 1), 0);
    ghm_log_set_callback(capture, &log_calls);
    ck_assert_int_eq(ghmi_log(GHM_LOG_ERROR, "call %s failed at %d", "x", 7), 1);
    ck_assert_int_eq(log_calls, 1);
    ck_assert_str_eq(logged, "call x failed at 7");
    ghm_log_set_callback(NULL, NULL);
    ck_assert_int_eq(ghmi_log(GHM_LOG_ERROR, "dropped %d", 2), 0);
    ck_assert_int_eq(log_calls, 1);
}
END_TEST

/* A failing CUDA call is an error value for the caller and a log line (file, line, CUDA's
 * words) for a person, through the callback: the library itself prints nothing. */
START_TEST(test_cuda_error_logged)
{
    GHM_REQUIRE_CUDA();
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CUDA);
    log_calls = 0;
    ghm_log_set_callback(capture, &log_calls);
    void *p = NULL;
    ck_assert_int_eq(ghm_buffer_alloc(ctx, (size_t)1 << 50, &p), GHM_ERR_NOMEM); /* 1 PiB */
    ghm_log_set_callback(NULL, NULL);
    ck_assert_int_ge(log_calls, 1);
    ck_assert_ptr_nonnull(strstr(logged, "CUDA error"));
    ck_assert_ptr_nonnull(strstr(logged, ".cu"));
    ghm_context_free(&ctx);
}
END_TEST

START_TEST(test_cpu_wait_stream)
{
    ck_assert_int_eq(ghm_context_wait_stream(NULL, 1), GHM_ERR_INVALID);
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CPU);
    ck_assert_int_eq(ghm_context_wait_stream(ctx, 1), GHM_ERR_UNSUPPORTED);
    ghm_context_free(&ctx);
}
END_TEST

/* The three default-stream spellings are accepted, and device arrays used after the wait give
 * the map's answers (the wait leaves the context's stream working). */
START_TEST(test_cuda_wait_stream)
{
    GHM_REQUIRE_CUDA();
    GhmContext *ctx = ghm_test_context(GHM_BACKEND_CUDA);
    for (uintptr_t s = 0; s <= 2; s++)
        ck_assert_int_eq(ghm_context_wait_stream(ctx, s), GHM_OK);
    enum { N = 1000 };
    uint32_t keys[N], got[N];
    for (uint32_t i = 0; i < N; i++)
        keys[i] = i * 7919u + 3u;
    void *dk = NULL, *dout = NULL;
    GhmMap *map = NULL;
    GhmMapOptions opt = ghm_map_defaults();
    ck_assert_int_eq(ghm_buffer_alloc(ctx, sizeof keys, &dk), GHM_OK);
    ck_assert_int_eq(ghm_buffer_alloc(ctx, sizeof keys, &dout), GHM_OK);
    ck_assert_int_eq(ghm_buffer_upload(ctx, dk, keys, sizeof keys), GHM_OK);
    ck_assert_int_eq(ghm_context_wait_stream(ctx, 1), GHM_OK);
    ck_assert_int_eq(ghm_map_create(ctx, &opt, &map), GHM_OK);
    ck_assert_int_eq(ghm_map_build(map, dk, dk, N), GHM_OK); /* each key maps to itself */
    ck_assert_int_eq(ghm_context_wait_stream(ctx, 2), GHM_OK);
    ck_assert_int_eq(ghm_map_find(map, dk, N, dout), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(ctx, got, dout, sizeof got), GHM_OK);
    ck_assert_mem_eq(got, keys, sizeof keys);
    ghm_map_free(&map);
    ghm_buffer_free(ctx, &dk);
    ghm_buffer_free(ctx, &dout);
    ghm_context_free(&ctx);
}
END_TEST

/* Maps built and queried on every device from one thread, the calls interleaved: each context
 * works on its own device whatever the thread's current device was, with the same answers. */
START_TEST(test_cuda_devices_interleaved)
{
    GHM_REQUIRE_CUDA();
    enum { N = 20000, MAX_DEV = 8 };
    int n = ghm_cuda_device_count();
    n = n > MAX_DEV ? MAX_DEV : n;
    static uint32_t keys[N], got[MAX_DEV][N];
    for (uint32_t i = 0; i < N; i++)
        keys[i] = i * 2654435761u + 11u;
    GhmContext *ctx[MAX_DEV] = {NULL};
    GhmMap *map[MAX_DEV] = {NULL};
    GhmMapOptions mo = ghm_map_defaults();
    for (int d = 0; d < n; d++) {
        GhmContextOptions opt = ghm_context_defaults();
        opt.backend = GHM_BACKEND_CUDA;
        opt.device = d;
        ck_assert_int_eq(ghm_context_create(&opt, &ctx[d]), GHM_OK);
        ck_assert_int_eq(ghm_context_device(ctx[d]), d);
        ck_assert_int_eq(ghm_map_create(ctx[d], &mo, &map[d]), GHM_OK);
    }
    for (int d = 0; d < n; d++) /* host arrays: each map stages them on its own device */
        ck_assert_int_eq(ghm_map_build(map[d], keys, keys, N), GHM_OK);
    for (int d = n - 1; d >= 0; d--)
        ck_assert_int_eq(ghm_map_find(map[d], keys, N, got[d]), GHM_OK);
    for (int d = 0; d < n; d++) {
        ck_assert_mem_eq(got[d], keys, sizeof keys);
        ghm_map_free(&map[d]);
    }
    for (int d = 0; d < n; d++)
        ghm_context_free(&ctx[d]);
}
END_TEST

static Suite *context_suite(void)
{
    Suite *s = suite_create("context");
    TCase *core = tcase_create("core");
    tcase_add_test(core, test_cpu_context);
    tcase_add_test(core, test_bad_options);
    tcase_add_test(core, test_missing_device);
    tcase_add_test(core, test_cuda_absent_is_an_error);
    tcase_add_test(core, test_cpu_buffers);
    tcase_add_test(core, test_strerror);
    tcase_add_test(core, test_log_callback);
    tcase_add_test(core, test_cpu_wait_stream);
    suite_add_tcase(s, core);
    TCase *cuda = tcase_create("cuda");
    tcase_add_test(cuda, test_cuda_buffers);
    tcase_add_test(cuda, test_cuda_error_logged);
    tcase_add_test(cuda, test_cuda_wait_stream);
    tcase_add_test(cuda, test_cuda_devices_interleaved);
    suite_add_tcase(s, cuda);
    return s;
}

int main(void) { return ghm_test_main(context_suite()); }
