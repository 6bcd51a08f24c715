/* check_tables_cuda.c - the CUDA backend's GhmSet, GhmIndex, GhmSorted and GhmMultimap against
 * the CPU backend's: built on both from the same inputs (sizes 0..10^6, duplicates, extreme
 * keys, load factors, host and device arrays), each answer the same, clones included; plus the
 * device references (GhmDynmap's too) and the builds queued on the stream. The maps:
 * check_hash_cuda.c.
 * GHM_TEST_SMALL=1 caps sizes at 10^4 (for compute-sanitizer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_compare.h"
#include "ghm_dynmap.h"
#include "ghm_index.h"
#include "ghm_map.h"
#include "ghm_multimap.h"
#include "ghm_set.h"
#include "ghm_sorted.h"
#include "hash_internal.h"
#include "kernels/hashing/hash_refs.h"
#include "kernels/hashing/map_group.h"
#include "test_support.h"

/* ---- GhmSet, GhmIndex, GhmSorted ---------------------------------------------------------------- */

/* Each multimap replaced by its clone in its context; a clone into the other backend refused. */
static void replace_by_clones(Backends *b, GhmMultimap **mc, GhmMultimap **mg)
{
    GhmMultimap *cc = NULL, *cg = NULL;
    ck_assert_int_eq(ghm_multimap_clone(b->gpu, *mc, &cg), GHM_ERR_INVALID);
    ck_assert_ptr_null(cg);
    ck_assert_int_eq(ghm_multimap_clone(b->cpu, *mc, &cc), GHM_OK);
    ck_assert_int_eq(ghm_multimap_clone(b->gpu, *mg, &cg), GHM_OK);
    ghm_multimap_free(mc);
    ghm_multimap_free(mg);
    *mc = cc;
    *mg = cg;
}

/* As replace_by_clones, for indexes. */
static void replace_index_by_clones(Backends *b, GhmIndex **ic, GhmIndex **ig)
{
    GhmIndex *cc = NULL, *cg = NULL;
    ck_assert_int_eq(ghm_index_clone(b->cpu, *ig, &cc), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_index_clone(b->cpu, *ic, &cc), GHM_OK);
    ck_assert_int_eq(ghm_index_clone(b->gpu, *ig, &cg), GHM_OK);
    ghm_index_free(ic);
    ghm_index_free(ig);
    *ic = cc;
    *ig = cg;
}

static void compare_set_index(Backends *b, const Input *in, double load)
{
    GhmSet *sc = NULL, *sg = NULL;
    GhmIndex *ic = NULL, *ig = NULL;
    uint8_t *fc = xmalloc(in->nq), *fg = xmalloc(in->nq);
    uint32_t *oc = xmalloc(in->nq * 4), *og = xmalloc(in->nq * 4);
    ck_assert_int_eq(ghm_set_create(b->cpu, load, &sc), GHM_OK);
    ck_assert_int_eq(ghm_set_create(b->gpu, load, &sg), GHM_OK);
    ck_assert_int_eq(ghm_set_build(sc, in->keys, in->n), GHM_OK);
    ck_assert_int_eq(ghm_set_build(sg, in->keys, in->n), GHM_OK);
    size_t k = ghm_set_size(sc);
    ck_assert_uint_eq(ghm_set_size(sg), k);
    ck_assert_int_eq(ghm_set_contains(sc, in->queries, in->nq, fc), GHM_OK);
    memset(fg, 7, in->nq);
    ck_assert_int_eq(ghm_set_contains(sg, in->queries, in->nq, fg), GHM_OK);
    ck_assert_mem_eq(fc, fg, in->nq);
    ck_assert_int_eq(ghm_set_keys(sc, oc), GHM_OK);
    ck_assert_int_eq(ghm_set_keys(sg, og), GHM_OK);
    assert_same(oc, og, k, "set keys");

    ck_assert_int_eq(ghm_index_create(b->cpu, load, &ic), GHM_OK);
    ck_assert_int_eq(ghm_index_create(b->gpu, load, &ig), GHM_OK);
    ck_assert_int_eq(ghm_index_build(ic, in->keys, in->n), GHM_OK);
    ck_assert_int_eq(ghm_index_build(ig, in->keys, in->n), GHM_OK);
    replace_index_by_clones(b, &ic, &ig);
    ck_assert_uint_eq(ghm_index_size(ig), k);
    ck_assert_int_eq(ghm_index_ids(ic, in->queries, in->nq, oc), GHM_OK);
    ck_assert_int_eq(ghm_index_ids(ig, in->queries, in->nq, og), GHM_OK);
    assert_same(oc, og, in->nq, "index ids");
    /* id -> key for every id, and the key array */
    uint32_t *ids = xmalloc(k * 4), *back = xmalloc(k * 4), *arr = xmalloc(k * 4);
    for (size_t i = 0; i < k; i++)
        ids[i] = (uint32_t)(k - 1 - i);
    ck_assert_int_eq(ghm_index_keys(ig, ids, k, back), GHM_OK);
    const uint32_t *dkeys = NULL;
    ck_assert_int_eq(ghm_index_key_array(ig, &dkeys), GHM_OK);
    ck_assert_int_eq(ghm_buffer_download(b->gpu, arr, dkeys, k * 4), GHM_OK);
    ck_assert_int_eq(ghm_set_keys(sc, oc), GHM_OK);
    assert_same(oc, arr, k, "index key array");
    CHECK_EACH(k, back[i] == oc[k - 1 - i]);
    if (k) { /* an id out of range: GHM_ERR_INVALID, GHM_NOT_FOUND written */
        uint32_t bad[2] = {0, (uint32_t)k}, res[2];
        ck_assert_int_eq(ghm_index_keys(ig, bad, 2, res), GHM_ERR_INVALID);
        ck_assert_uint_eq(res[0], oc[0]);
        ck_assert_uint_eq(res[1], GHM_NOT_FOUND);
    }
    ghm_set_free(&sc);
    ghm_set_free(&sg);
    ghm_index_free(&ic);
    ghm_index_free(&ig);
    ck_assert_ptr_null(ig);
    free(ids);
    free(back);
    free(arr);
    free(fc);
    free(fg);
    free(oc);
    free(og);
}

START_TEST(test_set_index)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(6);
    const size_t sizes[] = {0, 1, 2, 1000, 1000000};
    for (int i = 0; i < 5; i++) {
        size_t n = cap_size(sizes[i]);
        Input uniq = make_input(n, 0, 60 + i);
        compare_set_index(&b, &uniq, 0.0);
        free_input(&uniq);
        Input dups = make_input(n, n / 3 + 1, 70 + i);
        compare_set_index(&b, &dups, 0.9);
        free_input(&dups);
    }
    backends_free(&b);
}
END_TEST

START_TEST(test_sorted)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(7);
    const size_t sizes[] = {0, 1, 2, 1000, 1000000};
    for (int i = 0; i < 5; i++)
        for (int dup = 0; dup < 2; dup++) {
            size_t n = cap_size(sizes[i]);
            Input in = make_input(n, dup ? n / 4 + 1 : 0, 80 + i);
            GhmSorted *sc = NULL, *sg = NULL;
            uint32_t *oc = xmalloc(in.nq * 4), *og = xmalloc(in.nq * 4);
            ck_assert_int_eq(ghm_sorted_create(b.cpu, &sc), GHM_OK);
            ck_assert_int_eq(ghm_sorted_create(b.gpu, &sg), GHM_OK);
            ck_assert_int_eq(ghm_sorted_build(sc, in.keys, in.values, n), GHM_OK);
            ck_assert_int_eq(ghm_sorted_build(sg, in.keys, in.values, n), GHM_OK);
            ck_assert_int_eq(ghm_sorted_find(sc, in.queries, in.nq, oc), GHM_OK);
            ck_assert_int_eq(ghm_sorted_find(sg, in.queries, in.nq, og), GHM_OK);
            assert_same(oc, og, in.nq, "sorted find");
            ghm_sorted_free(&sc);
            ghm_sorted_free(&sg);
            free(oc);
            free(og);
            free_input(&in);
        }
    backends_free(&b);
}
END_TEST

/* ---- GhmMultimap ---------------------------------------------------------------------------------- */

/* Like assert_same, but asserts once: Check logs every passing assertion, and a retrieve
 * compares millions of entries. */
/* ghm_multimap_retrieve on both backends: the same total (also when it is too large to copy),
 * offsets and values; device_io: keys, offsets and values_out in device memory. */
static void compare_retrieve(Backends *b, GhmMultimap *mc, GhmMultimap *mg, const uint32_t *q,
                             size_t nq, int device_io)
{
    uint32_t *oc = xmalloc((nq + 1) * 4), *og = xmalloc((nq + 1) * 4);
    size_t tc = 0, tg = 1;
    int rc = ghm_multimap_retrieve(mc, q, nq, oc, NULL, 0, &tc);
    ck_assert_int_eq(ghm_multimap_retrieve(mg, q, nq, og, NULL, 0, &tg), rc);
    ck_assert_uint_eq(tc, tg);
    ck_assert_int_eq(rc, tc ? GHM_ERR_TOO_LARGE : GHM_OK);
    if (tc < ((size_t)1 << 28)) { /* else the offsets do not fit 32 bits or the test's memory */
        assert_same(oc, og, nq + 1, "retrieve offsets (too small)");
        uint32_t *vc = xmalloc(tc * 4), *vg = xmalloc(tc * 4);
        ck_assert_int_eq(ghm_multimap_retrieve(mc, q, nq, oc, vc, tc, &tc), GHM_OK);
        memset(og, 0xA5, (nq + 1) * 4);
        if (device_io) {
            uint32_t *dq = to_device(b->gpu, q, nq), *dof = NULL, *dv = NULL;
            ck_assert_int_eq(ghm_buffer_alloc(b->gpu, (nq + 1) * 4, (void **)&dof), GHM_OK);
            ck_assert_int_eq(ghm_buffer_alloc(b->gpu, tc * 4, (void **)&dv), GHM_OK);
            ck_assert_int_eq(ghm_multimap_retrieve(mg, dq, nq, dof, dv, tc, &tg), GHM_OK);
            ck_assert_int_eq(ghm_buffer_download(b->gpu, og, dof, (nq + 1) * 4), GHM_OK);
            ck_assert_int_eq(ghm_buffer_download(b->gpu, vg, dv, tc * 4), GHM_OK);
            ghm_buffer_free(b->gpu, (void **)&dq);
            ghm_buffer_free(b->gpu, (void **)&dof);
            ghm_buffer_free(b->gpu, (void **)&dv);
        } else {
            ck_assert_int_eq(ghm_multimap_retrieve(mg, q, nq, og, vg, tc, &tg), GHM_OK);
        }
        ck_assert_uint_eq(tc, tg);
        assert_same(oc, og, nq + 1, "retrieve offsets");
        assert_same(vc, vg, tc, "retrieve values");
        free(vc);
        free(vg);
    }
    free(oc);
    free(og);
}

static void compare_multimap(Backends *b, const Input *in, double load, int device_io)
{
    GhmMultimap *mc = NULL, *mg = NULL;
    size_t nq = in->nq;
    uint32_t *fc = xmalloc(nq * 4), *cc = xmalloc(nq * 4);
    uint32_t *fg = xmalloc(nq * 4), *cg = xmalloc(nq * 4), *vg = xmalloc(in->n * 4);
    ck_assert_int_eq(ghm_multimap_create(b->cpu, load, &mc), GHM_OK);
    ck_assert_int_eq(ghm_multimap_create(b->gpu, load, &mg), GHM_OK);
    ck_assert_int_eq(ghm_multimap_build(mc, in->keys, in->values, in->n), GHM_OK);
    if (device_io) {
        uint32_t *dk = to_device(b->gpu, in->keys, in->n);
        uint32_t *dv = to_device(b->gpu, in->values, in->n);
        ck_assert_int_eq(ghm_multimap_build(mg, dk, dv, in->n), GHM_OK);
        ghm_buffer_free(b->gpu, (void **)&dk);
        ghm_buffer_free(b->gpu, (void **)&dv);
    } else {
        ck_assert_int_eq(ghm_multimap_build(mg, in->keys, in->values, in->n), GHM_OK);
    }
    /* What follows asks clones (the originals freed), which must answer as the originals. */
    replace_by_clones(b, &mc, &mg);
    ck_assert_uint_eq(ghm_multimap_keys(mg), ghm_multimap_keys(mc));
    ck_assert_int_eq(ghm_multimap_find(mc, in->queries, nq, fc, cc), GHM_OK);
    ck_assert_int_eq(ghm_multimap_find(mg, in->queries, nq, fg, cg), GHM_OK);
    assert_same(fc, fg, nq, "multimap first");
    assert_same(cc, cg, nq, "multimap count");
    memset(cg, 0xA5, nq * 4);
    ck_assert_int_eq(ghm_multimap_find(mg, in->queries, nq, NULL, cg), GHM_OK);
    assert_same(cc, cg, nq, "multimap count alone");
    const uint32_t *vc = NULL, *dvals = NULL;
    size_t nc = 0, ng = 0;
    ck_assert_int_eq(ghm_multimap_values(mc, &vc, &nc), GHM_OK);
    ck_assert_int_eq(ghm_multimap_values(mg, &dvals, &ng), GHM_OK);
    ck_assert_uint_eq(nc, ng);
    ck_assert_int_eq(ghm_buffer_download(b->gpu, vg, dvals, ng * 4), GHM_OK);
    assert_same(vc, vg, nc, "multimap values");
    /* The device reference answers as the bulk call does. */
    GhmMultimapRef ref;
    ck_assert_int_eq(ghm_cuda_multimap_ref(mg, &ref), GHM_OK);
    ck_assert_uint_eq(ref.num_keys, ghm_multimap_keys(mc));
    ck_assert_int_eq(ghm_cuda_multimap_ref_probe(b->gpu, &ref, in->queries, nq, fg, cg), GHM_OK);
    assert_same(fc, fg, nq, "multimap ref first");
    assert_same(cc, cg, nq, "multimap ref count");
    ck_assert_int_eq(ghm_cuda_multimap_ref(mc, &ref), GHM_ERR_INVALID); /* a CPU multimap */
    compare_retrieve(b, mc, mg, in->queries, nq, device_io);
    compare_retrieve(b, mc, mg, in->queries, 0, device_io);
    ghm_multimap_free(&mc);
    ghm_multimap_free(&mg);
    ck_assert_ptr_null(mg);
    free(fc);
    free(cc);
    free(fg);
    free(cg);
    free(vg);
}

START_TEST(test_multimap)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(8);
    const size_t sizes[] = {0, 1, 2, 1000, 1000000};
    for (int i = 0; i < 5; i++) {
        size_t n = cap_size(sizes[i]);
        Input uniq = make_input(n, 0, 90 + i);
        compare_multimap(&b, &uniq, 0.0, i == 3);
        free_input(&uniq);
        Input mult8 = make_input(n, n / 8 + 1, 95 + i); /* about 8 values per key */
        compare_multimap(&b, &mult8, 0.95, i == 4);
        free_input(&mult8);
    }
    Input one = make_input(cap_size(100000), 1, 99); /* a single key */
    compare_multimap(&b, &one, 0.5, 0);
    free_input(&one);
    backends_free(&b);
}
END_TEST

/* ---- device references ------------------------------------------------------------------------ */

START_TEST(test_refs)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(9);
    Input in = make_input(cap_size(100000), cap_size(100000) / 2, 110);
    uint32_t *bulk = xmalloc(in.nq * 4), *probed = xmalloc(in.nq * 4);
    for (int layout = 0; layout < 2; layout++) {
        GhmMapOptions opt = map_options((GhmMapLayout)layout, 0.9, 0);
        GhmMap *m = NULL;
        ck_assert_int_eq(ghm_map_create(b.gpu, &opt, &m), GHM_OK);
        ck_assert_int_eq(ghm_map_build(m, in.keys, in.values, in.n), GHM_OK);
        ck_assert_int_eq(ghm_map_find(m, in.queries, in.nq, bulk), GHM_OK);
        GhmMapRef ref;
        ck_assert_int_eq(ghm_cuda_map_ref(m, &ref), GHM_OK);
        ck_assert_int_eq(ghm_cuda_map_ref_probe(b.gpu, &ref, in.queries, in.nq, probed), GHM_OK);
        assert_same(bulk, probed, in.nq, "map ref");
        ghm_map_free(&m);
    }
    GhmIndex *ig = NULL, *ic = NULL;
    ck_assert_int_eq(ghm_index_create(b.gpu, 0.0, &ig), GHM_OK);
    ck_assert_int_eq(ghm_index_build(ig, in.keys, in.n), GHM_OK);
    ck_assert_int_eq(ghm_index_ids(ig, in.queries, in.nq, bulk), GHM_OK);
    GhmIndexRef iref;
    ck_assert_int_eq(ghm_cuda_index_ref(ig, &iref), GHM_OK);
    ck_assert_uint_eq(iref.size, ghm_index_size(ig));
    ck_assert_int_eq(ghm_cuda_map_ref_probe(b.gpu, &iref.map, in.queries, in.nq, probed), GHM_OK);
    assert_same(bulk, probed, in.nq, "index ref");
    ck_assert_int_eq(ghm_index_create(b.cpu, 0.0, &ic), GHM_OK);
    ck_assert_int_eq(ghm_cuda_index_ref(ic, &iref), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_cuda_index_ref(NULL, &iref), GHM_ERR_INVALID);
    GhmSet *sg = NULL;
    ck_assert_int_eq(ghm_set_create(b.gpu, 0.0, &sg), GHM_OK);
    ck_assert_int_eq(ghm_set_build(sg, in.keys, in.n), GHM_OK);
    ck_assert_int_eq(ghm_cuda_set_ref(sg, &iref), GHM_OK);
    ck_assert_uint_eq(iref.size, ghm_set_size(sg));
    ghm_set_free(&sg);
    ghm_index_free(&ig);
    ghm_index_free(&ic);
    free(bulk);
    free(probed);
    free_input(&in);
    backends_free(&b);
}
END_TEST

/* A GhmDynmap's reference describes the table (its buckets, item layout, the bucket of each
 * item, as ghm_dynmap_stats counts them); a refresh with nothing erased keeps its size; a
 * table of the CPU backend, or none, is refused. The visits through it: the voxel edit's
 * intersect (check_voxel_edit, the CPU and CUDA sets compared). */
START_TEST(test_dynmap_ref)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(10);
    GhmDynmapOptions opt = ghm_dynmap_defaults();
    opt.item_words = 6;
    opt.capacity = 50000;
    GhmDynmap *dg = NULL, *dc = NULL;
    ck_assert_int_eq(ghm_dynmap_create(b.gpu, &opt, &dg), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_create(b.cpu, &opt, &dc), GHM_OK);
    enum { N = 40000 };
    uint32_t *items = xmalloc((size_t)N * 6 * 4);
    for (uint32_t i = 0; i < N * 6; i++)
        items[i] = i / 6 * 7919u + i % 6 + 1;
    ck_assert_int_eq(ghm_dynmap_insert(dg, items, N, NULL, NULL), GHM_OK);
    GhmDynmapRef ref;
    GhmDynmapStats st;
    ck_assert_int_eq(ghm_cuda_dynmap_ref(dg, &ref), GHM_OK);
    ck_assert_int_eq(ghm_dynmap_stats(dg, &st), GHM_OK);
    ck_assert_uint_eq(ref.n_buckets, st.buckets);
    ck_assert_int_eq(ref.w, 6);
    ck_assert_int_eq(ref.kw, 6);
    ck_assert_uint_eq((size_t)ref.slots, st.slots_per_slab);
    ck_assert_int_eq(ghm_cuda_dynmap_refresh(dg), GHM_OK);
    ck_assert_uint_eq(ghm_dynmap_size(dg), N);
    ck_assert_int_eq(ghm_cuda_dynmap_ref(dc, &ref), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_cuda_dynmap_refresh(dc), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_cuda_dynmap_ref(NULL, &ref), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_cuda_dynmap_ref(dg, NULL), GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_cuda_dynmap_refresh(NULL), GHM_ERR_INVALID);
    free(items);
    ghm_dynmap_free(&dg);
    ghm_dynmap_free(&dc);
    backends_free(&b);
}
END_TEST

/* ---- builds queued on the stream --------------------------------------------------------- */

static uint32_t download_word(GhmContext *gpu, const uint32_t *d)
{
    uint32_t w = 0xA5A5A5A5u;
    ck_assert_int_eq(ghm_buffer_download(gpu, &w, d, sizeof w), GHM_OK);
    return w;
}

/* A queued multimap build answers as the CPU's: first through the pending reference (a probe
 * queued behind the build, the key count read on the device), then through the host API, which
 * settles it. keys must be below 2^key_bits (key_bits 0: any). staged: the pairs are written
 * into the multimap's own buffers (ghm_cuda_multimap_input), twice in a row, so that the sort
 * runs in place from either of its buffer pairs. */
static void compare_queued_multimap(Backends *b, const Input *in, int key_bits, int attempt,
                                    int staged)
{
    size_t n = in->n, nq = in->nq;
    GhmMultimap *mc = NULL, *mg = NULL;
    uint32_t *fc = xmalloc(nq * 4), *cc = xmalloc(nq * 4), *fg = xmalloc(nq * 4);
    uint32_t *cg = xmalloc(nq * 4), *kc = xmalloc(n * 4), *kg = xmalloc(n * 4);
    ck_assert_int_eq(ghm_multimap_create(b->cpu, 0.9, &mc), GHM_OK);
    ck_assert_int_eq(ghm_multimap_create(b->gpu, 0.9, &mg), GHM_OK);
    ck_assert_int_eq(ghm_multimap_build(mc, in->keys, in->values, n), GHM_OK);
    ck_assert_int_eq(ghm_multimap_find(mc, in->queries, nq, fc, cc), GHM_OK);
    uint32_t *dk = to_device(b->gpu, in->keys, n), *dv = to_device(b->gpu, in->values, n);
    uint32_t *dfail = NULL;
    ck_assert_int_eq(ghm_buffer_alloc(b->gpu, 4, (void **)&dfail), GHM_OK);
    GhmQueuedBuild q = {key_bits, attempt, (unsigned int *)dfail};
    GhmMultimapRef ref;
    for (int round = 0; round < (staged ? 2 : 1); round++) {
        const uint32_t *bk = dk, *bv = dv;
        if (staged) { /* the first round's values are wrong (reversed), the second's right */
            uint32_t *sk = NULL, *sv = NULL;
            for (size_t i = 0; i < n; i++)
                fg[i] = in->values[round ? i : n - 1 - i];
            ck_assert_int_eq(ghm_cuda_multimap_input(mg, n, &sk, &sv), GHM_OK);
            ck_assert_int_eq(ghm_buffer_upload(b->gpu, sk, in->keys, n * 4), GHM_OK);
            ck_assert_int_eq(ghm_buffer_upload(b->gpu, sv, fg, n * 4), GHM_OK);
            bk = bv = NULL;
        }
        ck_assert_int_eq(ghm_cuda_multimap_build_queued(mg, bk, bv, n, &q, &ref), GHM_OK);
    }
    ck_assert_uint_eq(ref.num_keys, n); /* the bound, until settled */
    ck_assert_int_eq(ghm_cuda_multimap_ref_probe(b->gpu, &ref, in->queries, nq, fg, cg), GHM_OK);
    assert_same(fc, fg, nq, "queued multimap ref first");
    assert_same(cc, cg, nq, "queued multimap ref count");
    ck_assert_uint_eq(download_word(b->gpu, dfail), 0);
    size_t k = download_word(b->gpu, ref.key_count);
    ck_assert_uint_eq(k, ghm_multimap_keys(mc));
    /* the distinct keys, ascending: run r's key */
    memcpy(kc, in->keys, n * 4);
    qsort(kc, n, 4, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || kc[i] != kc[i - 1])
            kc[u++] = kc[i];
    ck_assert_uint_eq(u, k);
    ck_assert_int_eq(ghm_buffer_download(b->gpu, kg, ref.keys, k * 4), GHM_OK);
    assert_same(kc, kg, k, "queued multimap keys");
    /* the host API settles it: same keys, answers and values */
    ck_assert_uint_eq(ghm_multimap_keys(mg), k);
    ck_assert_int_eq(ghm_multimap_find(mg, in->queries, nq, fg, cg), GHM_OK);
    assert_same(fc, fg, nq, "queued multimap first");
    assert_same(cc, cg, nq, "queued multimap count");
    const uint32_t *vc = NULL, *dvals = NULL;
    size_t nc = 0, ng = 0;
    ck_assert_int_eq(ghm_multimap_values(mc, &vc, &nc), GHM_OK);
    ck_assert_int_eq(ghm_multimap_values(mg, &dvals, &ng), GHM_OK);
    ck_assert_uint_eq(nc, ng);
    ck_assert_int_eq(ghm_buffer_download(b->gpu, fg, dvals, ng * 4), GHM_OK);
    assert_same(vc, fg, nc, "queued multimap values");
    ghm_cuda_multimap_ref(mg, &ref);
    ck_assert_uint_eq(ref.num_keys, k);
    ghm_buffer_free(b->gpu, (void **)&dk);
    ghm_buffer_free(b->gpu, (void **)&dv);
    ghm_buffer_free(b->gpu, (void **)&dfail);
    ghm_multimap_free(&mc);
    ghm_multimap_free(&mg);
    free(fc);
    free(cc);
    free(fg);
    free(cg);
    free(kc);
    free(kg);
}

START_TEST(test_queued_multimap)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(12);
    const size_t sizes[] = {0, 1, 1000, 300000};
    for (int i = 0; i < 4; i++) {
        size_t n = cap_size(sizes[i]);
        Input uniq = make_input(n, 0, 120 + i);
        compare_queued_multimap(&b, &uniq, 0, 0, 0);
        compare_queued_multimap(&b, &uniq, 0, 1, 1);
        free_input(&uniq);
        /* keys below 2^20 (about 4 values per key), sorted on 20 bits, constants of attempt 3 */
        Input small = make_input(n, n / 4 + 1, 125 + i);
        for (size_t j = 0; j < n; j++)
            small.keys[j] &= 0xFFFFFu;
        for (size_t j = 0; j < n; j++)
            small.queries[j] = small.keys[(j * 7919) % n];
        compare_queued_multimap(&b, &small, 20, 3, i == 2);
        free_input(&small);
    }
    /* arguments */
    GhmMultimap *mg = NULL, *mc = NULL;
    GhmQueuedBuild q = {33, 0, NULL};
    ck_assert_int_eq(ghm_multimap_create(b.gpu, 0.0, &mg), GHM_OK);
    ck_assert_int_eq(ghm_multimap_create(b.cpu, 0.0, &mc), GHM_OK);
    ck_assert_int_eq(ghm_cuda_multimap_build_queued(mg, NULL, NULL, 0, &q, NULL),
                     GHM_ERR_INVALID);
    q.key_bits = 0;
    ck_assert_int_eq(ghm_cuda_multimap_build_queued(mc, NULL, NULL, 0, &q, NULL),
                     GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_cuda_multimap_build_queued(mg, NULL, NULL, 5, &q, NULL),
                     GHM_ERR_INVALID);
    ck_assert_int_eq(ghm_cuda_multimap_build_queued(mg, NULL, NULL, 0, &q, NULL), GHM_OK);
    ck_assert_uint_eq(ghm_multimap_keys(mg), 0);
    ghm_multimap_free(&mg);
    ghm_multimap_free(&mc);
    backends_free(&b);
}
END_TEST

/* A queued map build of the first *count pairs (count on the device) answers as the CPU's build of
 * those pairs, duplicates and the extreme keys included. An impossible load fails: the device
 * word says so, the next host call reports it once and finds an empty map, and a later attempt
 * builds. */
START_TEST(test_queued_map)
{
    GHM_REQUIRE_CUDA();
    Backends b = backends(13);
    size_t n = cap_size(200000);
    Input in = make_input(n, n / 2, 130);
    uint32_t *oc = xmalloc(in.nq * 4), *og = xmalloc(in.nq * 4);
    uint32_t *dk = to_device(b.gpu, in.keys, n), *dv = to_device(b.gpu, in.values, n);
    uint32_t *dword = NULL;
    ck_assert_int_eq(ghm_buffer_alloc(b.gpu, 8, (void **)&dword), GHM_OK);
    for (int run = 0; run < 4; run++) { /* both layouts, then grouped (map_group.cu) */
        int layout = run & 1;
        ghmi_map_group_tune(run >= 2, run >= 2 ? 4096 : 0);
        size_t m = n / 3;
        uint32_t count = (uint32_t)m;
        ck_assert_int_eq(ghm_buffer_upload(b.gpu, dword + 1, &count, 4), GHM_OK);
        GhmMapOptions opt = map_options((GhmMapLayout)layout, 0.8, 0);
        GhmMap *mc = NULL, *mg = NULL;
        ck_assert_int_eq(ghm_map_create(b.cpu, &opt, &mc), GHM_OK);
        ck_assert_int_eq(ghm_map_create(b.gpu, &opt, &mg), GHM_OK);
        ck_assert_int_eq(ghm_map_build(mc, in.keys, in.values, m), GHM_OK);
        GhmQueuedBuild q = {0, layout, (unsigned int *)dword};
        GhmMapRef ref;
        ck_assert_int_eq(ghm_cuda_map_build_queued(mg, dk, dv, dword + 1, n, &q, &ref), GHM_OK);
        ck_assert_int_eq(ghm_map_find(mc, in.queries, in.nq, oc), GHM_OK);
        ck_assert_int_eq(ghm_cuda_map_ref_probe(b.gpu, &ref, in.queries, in.nq, og), GHM_OK);
        assert_same(oc, og, in.nq, "queued map ref");
        ck_assert_uint_eq(download_word(b.gpu, dword), 0);
        ck_assert_int_eq(ghm_map_find(mg, in.queries, in.nq, og), GHM_OK);
        assert_same(oc, og, in.nq, "queued map");
        GhmMapStats sc, sg;
        ck_assert_int_eq(ghm_map_stats(mc, &sc), GHM_OK);
        ck_assert_int_eq(ghm_map_stats(mg, &sg), GHM_OK);
        ck_assert_uint_eq(sc.size, sg.size);
        ck_assert_int_eq(sg.rebuilds, layout);
        ghm_map_free(&mc);
        ghm_map_free(&mg);
    }
    ghmi_map_group_tune(0, 0);
    /* two thesis functions at load 0.99 (distinct keys): the attempt fails */
    free_input(&in);
    in = make_input(n, 0, 131);
    ck_assert_int_eq(ghm_buffer_upload(b.gpu, dk, in.keys, n * 4), GHM_OK);
    ck_assert_int_eq(ghm_buffer_upload(b.gpu, dv, in.values, n * 4), GHM_OK);
    GhmMapOptions opt = map_options(GHM_MAP_THESIS, 0.99, 2);
    GhmMap *mg = NULL;
    uint32_t count = (uint32_t)n;
    ck_assert_int_eq(ghm_buffer_upload(b.gpu, dword + 1, &count, 4), GHM_OK);
    ck_assert_int_eq(ghm_buffer_zero(b.gpu, dword, 4), GHM_OK);
    ck_assert_int_eq(ghm_map_create(b.gpu, &opt, &mg), GHM_OK);
    GhmQueuedBuild q = {0, 0, (unsigned int *)dword};
    ck_assert_int_eq(ghm_cuda_map_build_queued(mg, dk, dv, dword + 1, n, &q, NULL), GHM_OK);
    ck_assert_uint_eq(download_word(b.gpu, dword), 1);
    ck_assert_int_eq(ghm_map_find(mg, in.keys, n, og), GHM_ERR_BUILD_FAILED);
    ck_assert_int_eq(ghm_map_find(mg, in.keys, n, og), GHM_OK);
    CHECK_EACH(n, og[i] == GHM_NOT_FOUND);
    count = 1;
    q.attempt = 1;
    ck_assert_int_eq(ghm_buffer_upload(b.gpu, dword + 1, &count, 4), GHM_OK);
    ck_assert_int_eq(ghm_cuda_map_build_queued(mg, dk, dv, dword + 1, n, &q, NULL), GHM_OK);
    ck_assert_int_eq(ghm_map_find(mg, in.keys, 1, og), GHM_OK);
    ck_assert_uint_eq(og[0], in.values[0]);
    ghm_map_free(&mg);
    ghm_buffer_free(b.gpu, (void **)&dk);
    ghm_buffer_free(b.gpu, (void **)&dv);
    ghm_buffer_free(b.gpu, (void **)&dword);
    free(oc);
    free(og);
    free_input(&in);
    backends_free(&b);
}
END_TEST

static Suite *tables_cuda_suite(void)
{
    Suite *s = suite_create("tables_cuda");
    TCase *tc = tcase_create("cuda");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_set_index);
    tcase_add_test(tc, test_sorted);
    tcase_add_test(tc, test_multimap);
    tcase_add_test(tc, test_refs);
    tcase_add_test(tc, test_dynmap_ref);
    tcase_add_test(tc, test_queued_multimap);
    tcase_add_test(tc, test_queued_map);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) { return ghm_test_main(tables_cuda_suite()); }
