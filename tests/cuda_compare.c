/* cuda_compare.c - what the check_*_cuda.c suites that compare the CUDA backend with the CPU's
 * share: a CPU and a CUDA context of one seed, input shapes, device copies and array checks. */
#include "cuda_compare.h"

#include <stdlib.h>
#include <string.h>

#include "hash_internal.h"
#include "test_support.h"

size_t cap_size(size_t n)
{
    const char *small = getenv("GHM_TEST_SMALL");
    return small && *small && *small != '0' && n > 10000 ? 10000 : n;
}

void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(p);
    return p;
}

Backends backends(uint64_t seed)
{
    Backends b = {NULL, NULL};
    GhmContextOptions opt = ghm_context_defaults();
    opt.seed = seed;
    opt.backend = GHM_BACKEND_CPU;
    ck_assert_int_eq(ghm_context_create(&opt, &b.cpu), GHM_OK);
    opt.backend = GHM_BACKEND_CUDA;
    ck_assert_int_eq(ghm_context_create(&opt, &b.gpu), GHM_OK);
    ck_assert_str_eq(ghm_context_backend_name(b.gpu), "cuda");
    return b;
}

void backends_free(Backends *b)
{
    ghm_context_free(&b->cpu);
    ghm_context_free(&b->gpu);
}

Input make_input(size_t n, size_t distinct, uint64_t seed)
{
    static const uint32_t extreme[] = {0, 1, 0xFFFFFFFEu, 0xFFFFFFFFu, 0x80000000u,
                                       0x7FFFFFFFu, 2, 0xFFFFFFFDu};
    Input in = {n, xmalloc(n * 4), xmalloc(n * 4), xmalloc((2 * n + 8) * 4), 2 * n + 8};
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        size_t c = distinct ? rng_next(&s) % distinct : i;
        in.keys[i] = c < 5 ? extreme[c] : ghmi_permute32((uint32_t)c, (uint32_t)seed);
        in.values[i] = rng_next(&s);
    }
    /* Absent queries: counters past every key's under the same permutation, so never a key;
     * one that hits an extreme key (which are not permutation outputs) is moved on. */
    for (size_t i = 0; i < n; i++) {
        in.queries[i] = in.keys[(i * 7919) % n];
        uint32_t a = ghmi_permute32((uint32_t)(i + n + 16), (uint32_t)seed);
        for (int e = 0; e < 5; e++)
            if (a == extreme[e])
                a = ghmi_permute32((uint32_t)(i + 3 * n + 16), (uint32_t)seed);
        in.queries[n + i] = a;
    }
    memcpy(in.queries + 2 * n, extreme, sizeof extreme);
    return in;
}

void free_input(Input *in)
{
    free(in->keys);
    free(in->values);
    free(in->queries);
}

uint32_t *to_device(GhmContext *gpu, const uint32_t *host, size_t n)
{
    void *d = NULL;
    ck_assert_int_eq(ghm_buffer_alloc(gpu, n * 4, &d), GHM_OK);
    ck_assert_int_eq(ghm_buffer_upload(gpu, d, host, n * 4), GHM_OK);
    return d;
}

/* One assertion per array, not per element: Check logs every passing assertion, and millions
 * of them made this suite spend minutes writing its log. */
void assert_same(const uint32_t *cpu, const uint32_t *gpu, size_t n, const char *what)
{
    size_t bad = 0, at = 0;
    for (size_t i = 0; i < n; i++)
        if (cpu[i] != gpu[i] && bad++ == 0)
            at = i;
    ck_assert_msg(bad == 0, "%s: %zu of %zu differ, first [%zu]: cpu %u, cuda %u", what, bad, n,
                  at, n ? cpu[at] : 0, n ? gpu[at] : 0);
}

GhmMapOptions map_options(GhmMapLayout layout, double load, int hashes)
{
    GhmMapOptions opt = ghm_map_defaults();
    opt.layout = layout;
    opt.load_factor = load;
    opt.hash_functions = hashes;
    return opt;
}
