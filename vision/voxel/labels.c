/*
 * labels.c - the voxel labels on the CPU path: barrier labels, seed votes (parallel over voxels,
 * each voxel gathering from its neighbours, so no atomics and the same answer for any number of
 * threads) and the breadth-first fill with conflict rounds (see ghm_voxel.h). The device twin is
 * kernels/vision/voxel/labels.cu.
 */
#include <math.h>
#include <stdlib.h>

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
 * against the plane's normal; at an intersection that is the paper's unit step . normal. */
static uint8_t seed_vote(const GhmVoxelGrid *g, const GhmiSide *s, size_t v, const double *len,
                         double t_out, double t_in, uint8_t *ring)
{
    int in = 0, out = 0;
    const int nn = s->hood.n;
    double c[3];
    ghm_voxel_centre(g, s->keys[v], c);
    for (int k = 0; k < nn; k++) {
        uint32_t x = s->nbr[(size_t)nn * v + (size_t)k];
        if (x == GHM_NOT_FOUND || !s->barrier[x])
            continue;
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

/* One breadth-first fill from the live seeds. Each voxel it reaches takes the label of the
 * nearest seed in neighbour steps, ties going to the smallest seed id: a rule that does not
 * depend on the order of the work, so a parallel (level-synchronous, atomic-min) fill gives the
 * same labels. The FIFO queue finishes level L before it starts on level L + 1, so a voxel's
 * seed is settled before the voxel is expanded. */
static void fill_once(GhmiSide *s, uint32_t *queue, uint32_t *level)
{
    size_t K = s->K, head = 0, tail = 0, nn = (size_t)s->hood.n;
    for (size_t v = 0; v < K; v++) {
        level[v] = GHM_NOT_FOUND;
        if (s->barrier[v])
            continue;
        s->label[v] = GHM_VOXEL_UNKNOWN;
        s->sid[v] = GHM_NOT_FOUND;
        if (s->seed[v] != NO_SEED) {
            s->label[v] = s->seed[v];
            s->sid[v] = (uint32_t)v;
            level[v] = 0;
            queue[tail++] = (uint32_t)v;
        }
    }
    while (head < tail) {
        uint32_t v = queue[head++];
        for (size_t k = 0; k < nn; k++) {
            uint32_t u = s->nbr[nn * v + k];
            if (u == GHM_NOT_FOUND || s->barrier[u])
                continue;
            if (level[u] == GHM_NOT_FOUND) {
                level[u] = level[v] + 1;
                queue[tail++] = u;
            } else if (level[u] != level[v] + 1 || s->sid[u] <= s->sid[v])
                continue;
            s->label[u] = s->label[v];
            s->sid[u] = s->sid[v];
        }
    }
}

/* Inside next to outside away from the crossing: drops the seeds of both; returns the pairs. */
static size_t find_conflicts(GhmiSide *s, uint8_t *drop)
{
    size_t pairs = 0;
    for (size_t v = 0; v < s->K; v++) {
        uint8_t l = s->label[v];
        if (s->ring[v] || s->barrier[v] || (l != GHM_VOXEL_INSIDE && l != GHM_VOXEL_OUTSIDE))
            continue;
        for (int k = 0; k < s->hood.n; k++) {
            uint32_t u = s->nbr[(size_t)s->hood.n * v + (size_t)k];
            if (u == GHM_NOT_FOUND || s->ring[u] || s->barrier[u] || s->label[u] == l ||
                (s->label[u] != GHM_VOXEL_INSIDE && s->label[u] != GHM_VOXEL_OUTSIDE))
                continue;
            drop[s->sid[v]] = drop[s->sid[u]] = 1;
            pairs += u > v; /* each pair once */
        }
    }
    return pairs;
}

int ghmi_voxel_fill(GhmiSide *s, const GhmVoxelOptions *opt, int *rounds)
{
    uint32_t *queue = malloc((s->K + 1) * sizeof *queue);
    uint32_t *level = malloc((s->K + 1) * sizeof *level);
    uint8_t *drop = calloc(s->K + 1, 1);
    if (!queue || !level || !drop) {
        free(queue);
        free(level);
        free(drop);
        return GHM_ERR_NOMEM;
    }
    int r = 0;
    for (;;) {
        fill_once(s, queue, level);
        r++;
        s->conflicts = find_conflicts(s, drop);
        if (s->conflicts == 0 || r == opt->max_rounds)
            break;
        for (size_t v = 0; v < s->K; v++)
            if (drop[v])
                s->seed[v] = NO_SEED;
    }
    s->seeds = 0;
    for (size_t v = 0; v < s->K; v++)
        s->seeds += s->seed[v] != NO_SEED;
    *rounds = r > *rounds ? r : *rounds;
    free(queue);
    free(level);
    free(drop);
    return GHM_OK;
}

