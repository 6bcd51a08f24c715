/*
 * labels.c - the voxel labels on the CPU path: barrier labels, seed votes (parallel over voxels,
 * each voxel gathering from its neighbours, so no atomics and the same answer for any number of
 * threads) and the breadth-first fill with conflict rounds (see ghm_voxel.h). The device twin is
 * kernels/vision/voxel/labels.cu.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "voxel_backend_internal.h"
#include "voxel_cpu_internal.h"

enum { NO_SEED = GHMI_VOXEL_NO_SEED };


/* The label of a barrier voxel: intersection, or the side of the other surface's plane. */
static uint8_t barrier_label(const GhmVoxelGrid *g, const GhmiSide *s, size_t v)
{
    if (s->cross[v] != GHM_NOT_FOUND)
        return GHM_VOXEL_INTERSECTION;
    double c[3];
    ghm_voxel_centre(g, s->keys[v], c);
    const float *pl = s->plane + 6 * v;
    double d = (c[0] - pl[0]) * pl[3] + (c[1] - pl[1]) * pl[4] + (c[2] - pl[2]) * pl[5];
    return d > 0 ? GHM_VOXEL_OUTSIDE : d < 0 ? GHM_VOXEL_INSIDE : GHM_VOXEL_UNKNOWN;
}

/* Seed votes of a voxel next to the barrier: for each barrier neighbour x, the step from the
 * other surface's plane point near x to this voxel, over the length of the step from x,
 * against the plane's normal; at an intersection that is the paper's unit step . normal. The
 * voxel's centre only once it has such a neighbour (most voxels of a probe have none). */
static uint8_t seed_vote(const GhmVoxelGrid *g, const GhmiSide *s, size_t v, const double *len,
                         double t_out, double t_in, uint8_t *ring)
{
    int in = 0, out = 0;
    const int nn = s->hood.n;
    double c[3] = {0, 0, 0};
    for (int k = 0; k < nn; k++) {
        uint32_t x = s->nbr[(size_t)nn * v + (size_t)k];
        if (x == GHM_NOT_FOUND || !s->barrier[x])
            continue;
        if (!*ring)
            ghm_voxel_centre(g, s->keys[v], c);
        *ring = 1;
        const float *pl = s->plane + 6 * (size_t)x;
        double dot = ((c[0] - pl[0]) * pl[3] + (c[1] - pl[1]) * pl[4] + (c[2] - pl[2]) * pl[5]) /
                     (len[k] * g->voxel_size);
        out += dot > t_out;
        in += dot < -t_in;
    }
    return in == out ? NO_SEED : in > out ? GHM_VOXEL_INSIDE : GHM_VOXEL_OUTSIDE;
}

/* Barrier labels, the ring of voxels next to the barrier, and the seeds among them. */
int ghmi_voxel_classify(const GhmVoxelGrid *g, GhmiSide *s, const GhmVoxelOptions *opt,
                        int threads)
{
    size_t K = s->K;
    const int nn = s->hood.n;
    s->label = malloc(K + 1);
    s->ring = calloc(K + 1, 1);
    s->seed = malloc(K + 1);
    s->sid = malloc((K + 1) * sizeof *s->sid);
    double *len = malloc((size_t)nn * sizeof *len);
    if (!s->label || !s->ring || !s->seed || !s->sid || !len) {
        free(len);
        return GHM_ERR_NOMEM;
    }
    for (int k = 0; k < nn; k++) {
        const int *d = s->hood.step[k];
        len[k] = sqrt((double)(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
#pragma omp parallel for num_threads(threads) schedule(static) if (K > GHMI_PARALLEL_MIN)
    for (size_t v = 0; v < K; v++) {
        s->seed[v] = NO_SEED;
        s->label[v] = GHM_VOXEL_UNKNOWN;
        if (s->barrier[v])
            s->label[v] = barrier_label(g, s, v);
        else
            s->seed[v] = seed_vote(g, s, v, len, opt->t_out, opt->t_in, &s->ring[v]);
    }
    free(len);
    return GHM_OK;
}

/* The fill's shared state: each voxel's breadth-first level and nearest seed, claimed and
 * lowered by atomics from the threads that expand its neighbours, and the queue of the voxels
 * reached, level after level. */
typedef struct Fill {
    _Atomic uint32_t *level; /* K: GHM_NOT_FOUND until reached */
    _Atomic uint32_t *sid;   /* K: the smallest id among the nearest seeds */
    uint32_t *queue;         /* K */
    atomic_size_t tail;      /* where the next level's voxels are appended */
} Fill;

/* A thread's new voxels, appended to the queue in runs (one atomic add a run): room for a run
 * and for the largest neighbourhood's voxels beyond it. */
enum { FILL_RUN = 256, FILL_ROOM = FILL_RUN + GHMI_VOXEL_HIST };

static void append(Fill *f, const uint32_t *v, size_t n)
{
    size_t at = atomic_fetch_add_explicit(&f->tail, n, memory_order_relaxed);
    memcpy(f->queue + at, v, n * sizeof *v);
}

static void lower_to(_Atomic uint32_t *p, uint32_t v)
{
    uint32_t cur = atomic_load_explicit(p, memory_order_relaxed);
    while (v < cur && !atomic_compare_exchange_weak_explicit(p, &cur, v, memory_order_relaxed,
                                                             memory_order_relaxed))
        ;
}

/* Expands voxel v of level L: a neighbour not reached yet joins level L + 1 (into out), and a
 * neighbour of level L + 1 keeps the smaller of its seed and v's. */
static void expand(const GhmiSide *s, Fill *f, uint32_t v, uint32_t L, uint32_t *out, size_t *n)
{
    const size_t nn = (size_t)s->hood.n;
    uint32_t id = atomic_load_explicit(&f->sid[v], memory_order_relaxed);
    for (size_t k = 0; k < nn; k++) {
        uint32_t u = s->nbr[nn * v + k];
        if (u == GHM_NOT_FOUND || s->barrier[u])
            continue;
        uint32_t lu = atomic_load_explicit(&f->level[u], memory_order_relaxed);
        if (lu == GHM_NOT_FOUND &&
            atomic_compare_exchange_strong_explicit(&f->level[u], &lu, L + 1,
                                                    memory_order_relaxed, memory_order_relaxed)) {
            out[(*n)++] = u;
            lu = L + 1;
        }
        if (lu == L + 1)
            lower_to(&f->sid[u], id);
    }
}

/* Level L's voxels, queue[lo, hi), expanded on the threads; their new voxels follow hi. The
 * queue comes in breadth-first order, so each voxel's row of neighbour ids (hood.n ids, 104
 * bytes at radius 1) is somewhere else in the table (93 MB for a 0.9 M-voxel probe): the row
 * FILL_AHEAD voxels on is fetched while this one expands (its load was a third of the fill's
 * samples). */
enum { FILL_AHEAD = 8 };

static void fill_level(const GhmiSide *s, Fill *f, size_t lo, size_t hi, uint32_t L, int threads)
{
    const size_t nn = (size_t)s->hood.n;
#pragma omp parallel num_threads(threads) if (hi - lo > GHMI_PARALLEL_MIN / 16)
    {
        uint32_t out[FILL_ROOM];
        size_t n = 0;
#pragma omp for schedule(dynamic, 256) nowait
        for (size_t i = lo; i < hi; i++) {
            if (i + FILL_AHEAD < hi) {
                const uint32_t *row = s->nbr + nn * f->queue[i + FILL_AHEAD];
                __builtin_prefetch(row);
                __builtin_prefetch(row + nn - 1);
            }
            expand(s, f, f->queue[i], L, out, &n);
            if (n >= FILL_RUN) {
                append(f, out, n);
                n = 0;
            }
        }
        append(f, out, n);
    }
}

/* One breadth-first fill from the live seeds. Each voxel it reaches takes the label of the
 * nearest seed in neighbour steps, ties going to the smallest seed id: a rule that does not
 * depend on the order of the work. So the fill goes level by level on the threads (each level
 * ends at the parallel loop's barrier, after which the next level's seeds are settled), the
 * voxels of a level in any order, claiming and lowering by atomics, and gives the labels of a
 * plain FIFO walk for any number of threads (as labels.cu does on the device). */
static void fill_once(GhmiSide *s, Fill *f, int threads)
{
    size_t K = s->K, seeds = 0;
    for (size_t v = 0; v < K; v++) {
        int seed = !s->barrier[v] && s->seed[v] != NO_SEED;
        atomic_store_explicit(&f->level[v], seed ? 0 : GHM_NOT_FOUND, memory_order_relaxed);
        atomic_store_explicit(&f->sid[v], seed ? (uint32_t)v : GHM_NOT_FOUND,
                              memory_order_relaxed);
        if (seed)
            f->queue[seeds++] = (uint32_t)v;
    }
    size_t lo = 0, hi = seeds;
    for (uint32_t L = 0; lo < hi; L++) {
        atomic_store_explicit(&f->tail, hi, memory_order_relaxed);
        fill_level(s, f, lo, hi, L, threads);
        lo = hi;
        hi = atomic_load_explicit(&f->tail, memory_order_relaxed);
    }
#pragma omp parallel for num_threads(threads) schedule(static) if (K > GHMI_PARALLEL_MIN)
    for (size_t v = 0; v < K; v++) {
        if (s->barrier[v])
            continue;
        uint32_t id = atomic_load_explicit(&f->sid[v], memory_order_relaxed);
        s->sid[v] = id;
        s->label[v] = id == GHM_NOT_FOUND ? GHM_VOXEL_UNKNOWN : s->seed[id];
    }
}

/* The orphans of a round after the first: the voxels whose nearest seed was dropped (drop[] is
 * every seed dropped so far; a voxel's seed was live in the last round), their level and seed
 * reset, listed in f->queue; returns how many. */
static size_t list_orphans(const GhmiSide *s, Fill *f, const _Atomic uint8_t *drop, int threads)
{
    const size_t K = s->K;
    atomic_store_explicit(&f->tail, 0, memory_order_relaxed);
#pragma omp parallel num_threads(threads) if (K > GHMI_PARALLEL_MIN)
    {
        uint32_t out[FILL_ROOM];
        size_t n = 0;
#pragma omp for schedule(static) nowait
        for (size_t v = 0; v < K; v++) {
            uint32_t id = atomic_load_explicit(&f->sid[v], memory_order_relaxed);
            if (s->barrier[v] || id == GHM_NOT_FOUND ||
                !atomic_load_explicit(&drop[id], memory_order_relaxed))
                continue;
            atomic_store_explicit(&f->level[v], GHM_NOT_FOUND, memory_order_relaxed);
            atomic_store_explicit(&f->sid[v], GHM_NOT_FOUND, memory_order_relaxed);
            out[n++] = (uint32_t)v;
            if (n >= FILL_RUN) {
                append(f, out, n);
                n = 0;
            }
        }
        append(f, out, n);
    }
    return atomic_load_explicit(&f->tail, memory_order_relaxed);
}

/* A voxel's (level, seed) as one number, UINT64_MAX when unreached: the fill's order. */
static uint64_t fill_state(const Fill *f, uint32_t v)
{
    uint32_t l = atomic_load_explicit(&f->level[v], memory_order_relaxed);
    return l == GHM_NOT_FOUND
               ? UINT64_MAX
               : (uint64_t)l << 32 | atomic_load_explicit(&f->sid[v], memory_order_relaxed);
}

/* One pass over the n orphans (f->queue): each one's smallest (level + 1, seed) among its
 * neighbours into best[], read for all before any is lowered (so no pass reads a half-written
 * pair), then the orphans lowered to it; returns how many were. */
static size_t pull_pass(const GhmiSide *s, Fill *f, size_t n, uint64_t *best, int threads)
{
    const size_t nn = (size_t)s->hood.n;
    size_t lowered = 0;
#pragma omp parallel for num_threads(threads) schedule(static) if (n > GHMI_PARALLEL_MIN)
    for (size_t i = 0; i < n; i++) {
        const uint32_t *row = s->nbr + nn * f->queue[i];
        uint64_t b = UINT64_MAX;
        for (size_t k = 0; k < nn; k++) {
            uint64_t c = row[k] == GHM_NOT_FOUND || s->barrier[row[k]]
                             ? UINT64_MAX
                             : fill_state(f, row[k]);
            c = c == UINT64_MAX ? c : c + ((uint64_t)1 << 32);
            b = c < b ? c : b;
        }
        best[i] = b;
    }
#pragma omp parallel for num_threads(threads) schedule(static) if (n > GHMI_PARALLEL_MIN) \
    reduction(+ : lowered)
    for (size_t i = 0; i < n; i++) {
        uint32_t u = f->queue[i];
        if (best[i] >= fill_state(f, u))
            continue;
        atomic_store_explicit(&f->level[u], (uint32_t)(best[i] >> 32), memory_order_relaxed);
        atomic_store_explicit(&f->sid[u], (uint32_t)best[i], memory_order_relaxed);
        lowered++;
    }
    return lowered;
}

/* A round after the first, by its orphans (list_orphans). Dropping seeds changes no other
 * voxel, since its nearest seed is still there, so only the orphans are filled again, from the
 * voxels around them, whose (level, seed) are final: an orphan's is the smallest
 * (level + 1, seed) of its neighbours (the breadth-first rule), found by passes (pull_pass)
 * until one lowers none. Conflicts keep dropping the seeds of a few pockets by the surface:
 * the 3.9 M-voxel probe of the 40 k-point bunny's intersect at 256^3 has 1.5-4.4 k orphans per
 * round, where a fill redoes all 3.9 M four times. *refilled is the orphans refilled (listed in
 * f->queue, their labels marked GHMI_VOXEL_ORPHAN for orphan_conflicts), 0 when the passes are
 * not worth it or not enough (more than K / orphans of them): the caller fills from the seeds
 * as in the first round; either way the labels are the same. For a volume only (a cloud given
 * as rows, as labels.cu's pull_orphans): a surface's rounds drop seeds whose regions run far
 * along it (the voxel mode's bunny.ply and kitten.ply at 512^3, radius 3: 2.8-16 k orphans of
 * 38 k, every refill ran out of passes), and its fill went from 137 to 177-204 ms on 2 cores. */
static int refill(GhmiSide *s, Fill *f, const _Atomic uint8_t *drop, int threads, size_t *refilled)
{
    const size_t orphans = list_orphans(s, f, drop, threads);
    const size_t passes = orphans ? s->K / orphans : 0;
    *refilled = 0;
    if (passes < 2)
        return GHM_OK;
    uint64_t *best = malloc(orphans * sizeof *best);
    if (!best)
        return GHM_ERR_NOMEM;
    size_t lowered = 1;
    for (size_t pass = 0; lowered && pass < passes; pass++)
        lowered = pull_pass(s, f, orphans, best, threads);
    free(best);
    if (lowered)
        return GHM_OK;
#pragma omp parallel for num_threads(threads) schedule(static) if (orphans > GHMI_PARALLEL_MIN)
    for (size_t i = 0; i < orphans; i++) {
        uint32_t u = f->queue[i], id = atomic_load_explicit(&f->sid[u], memory_order_relaxed);
        s->sid[u] = id;
        s->label[u] = (id == GHM_NOT_FOUND ? GHM_VOXEL_UNKNOWN : s->seed[id]) | GHMI_VOXEL_ORPHAN;
    }
    *refilled = orphans;
    return GHM_OK;
}

/* Inside next to outside away from the crossing, at voxel v: drops the seeds of both; returns
 * the pairs that are v's to count (u > v, or v refilled and u not: see orphan_conflicts). */
static size_t conflicts_at(const GhmiSide *s, uint32_t v, _Atomic uint8_t *drop)
{
    const uint8_t lv = s->label[v], l = lv & ~GHMI_VOXEL_ORPHAN;
    if (s->ring[v] || s->barrier[v] || (l != GHM_VOXEL_INSIDE && l != GHM_VOXEL_OUTSIDE))
        return 0;
    const uint32_t *row = s->nbr + (size_t)s->hood.n * v;
    size_t pairs = 0;
    for (int k = 0; k < s->hood.n; k++) {
        const uint32_t u = row[k];
        if (u == GHM_NOT_FOUND || s->ring[u] || s->barrier[u])
            continue;
        const uint8_t lu = s->label[u], m = lu & ~GHMI_VOXEL_ORPHAN;
        if (m == l || (m != GHM_VOXEL_INSIDE && m != GHM_VOXEL_OUTSIDE))
            continue;
        atomic_store_explicit(&drop[s->sid[v]], 1, memory_order_relaxed);
        atomic_store_explicit(&drop[s->sid[u]], 1, memory_order_relaxed);
        pairs += u > v || (lv & GHMI_VOXEL_ORPHAN && !(lu & GHMI_VOXEL_ORPHAN));
    }
    return pairs;
}

/* Every voxel's conflicts; returns the pairs. */
static size_t find_conflicts(const GhmiSide *s, _Atomic uint8_t *drop, int threads)
{
    size_t pairs = 0;
#pragma omp parallel for num_threads(threads) schedule(static) if (s->K > GHMI_PARALLEL_MIN) \
    reduction(+ : pairs)
    for (size_t v = 0; v < s->K; v++)
        pairs += conflicts_at(s, (uint32_t)v, drop);
    return pairs;
}

/* The conflicts after a refill of n orphans (f->queue, their labels marked GHMI_VOXEL_ORPHAN),
 * which are all there are: two voxels whose seeds survived the last round's test were no
 * conflict then (it dropped the seeds of every pair it found) and have the labels they had.
 * So only the orphans are tested, a pair of two counted by the larger, an orphan's pair with
 * another voxel by the orphan; then the marks are cleared. */
static size_t orphan_conflicts(GhmiSide *s, const Fill *f, size_t n, _Atomic uint8_t *drop,
                               int threads)
{
    size_t pairs = 0;
#pragma omp parallel for num_threads(threads) schedule(static) if (n > GHMI_PARALLEL_MIN) \
    reduction(+ : pairs)
    for (size_t i = 0; i < n; i++)
        pairs += conflicts_at(s, f->queue[i], drop);
    for (size_t i = 0; i < n; i++)
        s->label[f->queue[i]] &= (uint8_t)~GHMI_VOXEL_ORPHAN;
    return pairs;
}

int ghmi_voxel_fill(GhmiSide *s, const GhmVoxelOptions *opt, int threads, int *rounds)
{
    Fill f = {.level = malloc((s->K + 1) * sizeof *f.level),
              .sid = malloc((s->K + 1) * sizeof *f.sid),
              .queue = malloc((s->K + 1) * sizeof *f.queue)};
    _Atomic uint8_t *drop = malloc((s->K + 1) * sizeof *drop);
    int ret = f.level && f.sid && f.queue && drop ? GHM_OK : GHM_ERR_NOMEM;
    for (size_t v = 0; ret == GHM_OK && v < s->K; v++)
        atomic_init(&drop[v], 0);
    int r = 0;
    while (ret == GHM_OK) {
        size_t refilled = 0;
        if (r > 0 && s->rows && (ret = refill(s, &f, drop, threads, &refilled)) < 0)
            break;
        if (!refilled)
            fill_once(s, &f, threads);
        r++;
        s->conflicts = refilled ? orphan_conflicts(s, &f, refilled, drop, threads)
                                : find_conflicts(s, drop, threads);
        if (s->conflicts == 0 || r == opt->max_rounds)
            break;
        for (size_t v = 0; v < s->K; v++)
            if (atomic_load_explicit(&drop[v], memory_order_relaxed))
                s->seed[v] = NO_SEED;
    }
    s->seeds = 0;
    for (size_t v = 0; ret == GHM_OK && v < s->K; v++)
        s->seeds += s->seed[v] != NO_SEED;
    if (ret == GHM_OK)
        *rounds = r > *rounds ? r : *rounds;
    free((void *)f.level);
    free((void *)f.sid);
    free(f.queue);
    free((void *)drop);
    return ret;
}
