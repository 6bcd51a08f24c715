/*
 * geohash_scan.c - a query's votes counted without the reference's signature table, for a
 * reference that answers one query (ghm_matcher_create_for_one_query): every reference basis's
 * signatures are computed as the table's build computes them, and each is looked up among the
 * query's (the query bases holding each signature, a list per signature slot: a few hundred
 * kilobytes that stay in cache). A (reference basis, query basis) cell gets one vote per
 * signature the two share, which is the count the table's look-ups give it (each basis's
 * signatures are distinct, on both sides), so the best cells, the votes cast and the answer are
 * the same. What it saves is the table itself: the sort and the hash of every (signature,
 * basis) pair, about 7 ms of a one-shot 640x400 pair's 45 on 2 cores, and its memory. A second
 * query pays the signatures again, where the table would be read: several queries want the
 * table (ghm_matcher_create). The host only: a device votes with its table.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "geohash_internal.h"

/* The query's signatures by slot (key_slot): the query bases holding each, ascending. */
typedef struct QueryLists {
    uint32_t *start; /* key space + 1: slot k's bases are basis[start[k] .. start[k + 1]) */
    uint32_t *basis;
} QueryLists;

/* One thread's part of the scan. */
typedef struct Scan {
    uint64_t *seen;    /* de-duplicates a basis's signatures (ghmi_basis_signatures) */
    uint64_t *present; /* the slots of every signature this thread met: the table's keys */
    uint32_t *sigs;    /* one reference basis's signatures */
    uint32_t *count;   /* m: that basis's votes per query basis, 0 between bases */
    uint32_t *touched; /* the query bases it voted for */
    uint32_t *best;    /* m x CAND_PER_ROW: the best cells this thread counted, votes */
    uint32_t *who;     /* and reference basis ids */
    uint64_t votes, entries;
} Scan;

static void query_lists_free(QueryLists *q)
{
    free(q->start);
    free(q->basis);
}

/* A counting sort of the query's signatures by slot, bases in ascending order within one. */
static int query_lists(const GhmGeoVoter *v, size_t m, size_t space, QueryLists *q)
{
    const GhmGeoRef *r = v->ref;
    size_t n = v->offsets[m];
    q->start = calloc(space + 1, sizeof *q->start);
    q->basis = malloc((n ? n : 1) * sizeof *q->basis);
    if (!q->start || !q->basis)
        return GHM_ERR_NOMEM;
    for (size_t s = 0; s < n; s++)
        q->start[key_slot(v->keys[s], &r->p, r->nbins) + 1]++;
    for (size_t k = 0; k < space; k++)
        q->start[k + 1] += q->start[k];
    for (size_t b = 0; b < m; b++) /* each slot's cursor runs to its end: moved back after */
        for (uint32_t s = v->offsets[b]; s < v->offsets[b + 1]; s++)
            q->basis[q->start[key_slot(v->keys[s], &r->p, r->nbins)]++] = (uint32_t)b;
    memmove(q->start + 1, q->start, space * sizeof *q->start);
    q->start[0] = 0;
    return GHM_OK;
}

static void scan_free(Scan *s)
{
    free(s->seen);
    free(s->present);
    free(s->sigs);
    free(s->count);
    free(s->touched);
    free(s->best);
    free(s->who);
}

static int scan_alloc(Scan *s, size_t words, size_t max_coded, size_t m)
{
    s->seen = calloc(words, sizeof *s->seen);
    s->present = calloc(words, sizeof *s->present);
    s->sigs = malloc((max_coded ? max_coded : 1) * sizeof *s->sigs);
    s->count = calloc(m ? m : 1, sizeof *s->count);
    /* m + 1: the list is written one past its end where a vote adds no basis to it */
    s->touched = malloc((m + 1) * sizeof *s->touched);
    s->best = calloc((m ? m : 1) * CAND_PER_ROW, sizeof *s->best);
    s->who = calloc((m ? m : 1) * CAND_PER_ROW, sizeof *s->who);
    return s->seen && s->present && s->sigs && s->count && s->touched && s->best && s->who
               ? GHM_OK
               : GHM_ERR_NOMEM;
}

/* Cell (votes, id) offered to a best list, which holds no cell of id yet. */
static void offer(uint32_t *best, uint32_t *who, uint32_t votes, uint32_t id)
{
    if (ghmi_geo_beats(votes, id, best[CAND_PER_ROW - 1], who[CAND_PER_ROW - 1]))
        ghmi_geo_raise(best, who, CAND_PER_ROW - 1, votes, id);
}

/* Reference basis id's signatures, their votes for the query bases that share them, and the
 * cells those make, each offered once with its final count. */
static void scan_basis(const GhmGeoRef *r, const QueryLists *q, uint32_t id, Scan *s)
{
    uint32_t key = r->basis_keys[id];
    const GhmiCodedGrid *g = &r->grids[ghmi_geo_level_of(r, key)];
    size_t k = ghmi_basis_signatures(&r->bpts[key >> 16], &r->bpts[key & 0xFFFF], g, &r->p,
                                     r->nbins, s->seen, s->sigs);
    uint32_t *restrict count = s->count, *restrict touched_at = s->touched;
    const uint32_t *start = q->start, *basis = q->basis;
    size_t touched = 0;
    uint64_t votes = 0;
    for (size_t i = 0; i < k; i++) {
        uint32_t slot = key_slot(s->sigs[i], &r->p, r->nbins);
        s->present[slot >> 6] |= 1ull << (slot & 63);
        uint32_t j = start[slot], end = start[slot + 1];
        votes += end - j;
        for (; j < end; j++) { /* a basis's first vote puts it on the list, without a branch */
            uint32_t b = basis[j];
            touched_at[touched] = b;
            touched += count[b]++ == 0;
        }
    }
    s->votes += votes;
    s->entries += k;
    for (size_t t = 0; t < touched; t++) {
        uint32_t b = touched_at[t];
        offer(s->best + (size_t)b * CAND_PER_ROW, s->who + (size_t)b * CAND_PER_ROW, count[b],
              id);
        count[b] = 0;
    }
}

/* The threads' best lists merged into row_best (each reference basis was one thread's, so
 * every cell is offered once), and their counts into st. */
static void merge(GhmGeoVoter *v, size_t m, Scan *sc, size_t words, GhmGeoCandidate *row_best,
                  GhmGeoStats *st)
{
    int nt = v->nthreads;
    for (size_t b = 0; b < m; b++) {
        uint32_t *best = sc[0].best + b * CAND_PER_ROW, *who = sc[0].who + b * CAND_PER_ROW;
        for (int t = 1; t < nt; t++)
            for (int i = 0; i < CAND_PER_ROW && sc[t].best[b * CAND_PER_ROW + i]; i++)
                offer(best, who, sc[t].best[b * CAND_PER_ROW + i],
                      sc[t].who[b * CAND_PER_ROW + i]);
        ghmi_geo_row_cells(v, b, best, who, row_best);
    }
    size_t keys = 0;
    for (size_t w = 0; w < words; w++) {
        uint64_t any = 0;
        for (int t = 0; t < nt; t++)
            any |= sc[t].present[w];
        keys += (size_t)__builtin_popcountll(any);
    }
    st->votes = st->ref_entries = 0;
    for (int t = 0; t < nt; t++) {
        st->votes += sc[t].votes;
        st->ref_entries += sc[t].entries;
    }
    st->ref_keys = keys;
}

int ghmi_geo_scan_votes(GhmGeoVoter *v, size_t m, GhmGeoCandidate *row_best, GhmGeoStats *st)
{
    const GhmGeoRef *r = v->ref;
    size_t space = key_space(&r->p, r->nbins), words = seen_words64(&r->p, r->nbins);
    size_t max_coded = 0;
    for (size_t l = 0; l < r->nlevels; l++)
        max_coded = r->grids[l].n > max_coded ? r->grids[l].n : max_coded;
    int nt = v->nthreads;
    QueryLists q = {NULL, NULL};
    Scan *sc = calloc((size_t)nt, sizeof *sc);
    int ret = sc ? query_lists(v, m, space, &q) : GHM_ERR_NOMEM;
    for (int t = 0; t < nt && ret == GHM_OK; t++)
        ret = scan_alloc(&sc[t], words, max_coded, m);
    if (ret == GHM_OK) {
#pragma omp parallel num_threads(nt)
        {
            Scan *s = &sc[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 64)
            for (size_t id = 0; id < r->nbases; id++)
                scan_basis(r, &q, (uint32_t)id, s);
        }
        merge(v, m, sc, words, row_best, st);
    }
    for (int t = 0; sc && t < nt; t++)
        scan_free(&sc[t]);
    free(sc);
    query_lists_free(&q);
    return ret;
}
