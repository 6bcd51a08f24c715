/*
 * normals_check.c - whether a cloud's normals can give labels (ghm_voxel_normals_check in
 * ghm_voxel.h). The labels take a surface's inside from its normals and trust them, so normals
 * that point inward, or that point either way from point to point (a normal estimated without
 * an orientation, as many tools leave it; PCL turns them all toward a viewpoint, the origin by
 * default, which for an object around the origin is inward), give wrong labels with no other
 * sign. Two facts about a surface with a consistent orientation make the test:
 *
 * - neighbouring voxels' mean normals agree (a positive dot product) except where two sides of
 *   a thin part meet: a few percent of the face-neighbour pairs (0-2 % for the bunny and kitten
 *   at 32-512 voxels, 4-10 % for the thin-crested parasaurolophus), against half of them when
 *   each normal's sign is a coin toss;
 * - at the voxel that lies farthest along a direction d (a point of the convex hull), the
 *   outward normal of a closed surface has a positive component along d. Of the 26 directions
 *   of the voxel steps, an outward cloud has all or nearly all such extremes agree; an inward
 *   one, none. An open patch abstains: its rim's normals are across the directions, its faces'
 *   split evenly.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_sort_internal.h"
#include "ghm_voxel.h"
#include "voxel_internal.h"

/* Past this share of disagreeing neighbour pairs the orientation is taken as mixed: between
 * what thin parts give (under 10 % at 32 voxels and finer) and what random signs give (50 %;
 * 51-55 % measured on a sphere at 32-512). */
#define MIXED_SHARE 0.3
/* Fewer pairs than this and the cloud is too small in the grid to tell (a cloud a few voxels
 * across beside a much larger one; the parasaurolophus at 16 voxels has 66 pairs, 29 % opposed,
 * where its crest's two sides meet): no verdict. With 200, random signs stay above 0.3 by four
 * standard deviations. */
#define LEAST_PAIRS 200
/* Inward when the extremes whose normals point inward are at least half of the 26 and outnumber
 * those pointing out 3 to 1. */
#define INWARD_RATIO 3
#define INWARD_LEAST 13

static int has_normal(const float *n) { return n[0] != 0.0f || n[1] != 0.0f || n[2] != 0.0f; }

static double dot3(const float *a, const float *b)
{
    return (double)a[0] * b[0] + (double)a[1] * b[1] + (double)a[2] * b[2];
}

/* Both passes run in chunks of the ascending voxels, one a thread at a time, their results
 * merged in chunk order, so that they are the one pass's (the check took 2.5 ms of a 62 k-voxel
 * edit's apply on one thread, 2026-11-29). */
enum { CHUNKS = 64, PARALLEL_LEAST = 16384 }; /* fewer voxels: one thread */

/* Chunk k's first: ghmi_chunk_at. */
static size_t chunk_at(size_t n, int k) { return ghmi_chunk_at(n, k, CHUNKS); }

/* The first index from `from` on whose key is not below want. */
static size_t lower_bound(const uint32_t *keys, size_t from, size_t n, uint32_t want)
{
    while (from < n) {
        size_t mid = from + (n - from) / 2;
        if (keys[mid] < want)
            from = mid + 1;
        else
            n = mid;
    }
    return from;
}

/* Voxels [lo, hi)'s face-neighbour pairs (+x, +y, +z) whose normals both exist, and their
 * disagreements. The keys ascend, so each axis's neighbour is found by a cursor that only moves
 * forward, started by a search. Counted in locals and stored once: the chunks' counts share
 * cache lines. */
static void pairs_of(const GhmVoxelGrid *g, const GhmVoxelSide *s, size_t lo, size_t hi,
                     size_t *pairs, size_t *disagree)
{
    const uint32_t nx = (uint32_t)g->dims[0], ny = (uint32_t)g->dims[1];
    const uint32_t step[3] = {1, nx, nx * ny};
    size_t cursor[3], np = 0, nd = 0;
    *pairs = *disagree = 0;
    if (lo >= hi)
        return;
    for (int a = 0; a < 3; a++)
        cursor[a] = lower_bound(s->keys, lo, s->voxels, s->keys[lo] + step[a]);
    for (size_t v = lo; v < hi; v++) {
        const float *nv = s->normals + 3 * v;
        int64_t xyz[3];
        ghmi_voxel_coords(g, s->keys[v], xyz);
        for (int a = 0; a < 3; a++) {
            if (xyz[a] + 1 >= g->dims[a]) /* the key + step would be another row or slice */
                continue;
            uint32_t want = s->keys[v] + step[a];
            size_t *w = &cursor[a];
            while (*w < s->voxels && s->keys[*w] < want)
                (*w)++;
            if (*w == s->voxels || s->keys[*w] != want)
                continue;
            const float *nw = s->normals + 3 * *w;
            if (!has_normal(nv) || !has_normal(nw))
                continue;
            np++;
            nd += dot3(nv, nw) < 0;
        }
    }
    *pairs = np, *disagree = nd;
}

/* The 13 step directions before (0, 0, 0) in voxelize order (-x first); their opposites are the
 * other 13. */
static void half_directions(int dir[13][3])
{
    for (int d = 0; d < 13; d++)
        dir[d][0] = d % 3 - 1, dir[d][1] = d / 3 % 3 - 1, dir[d][2] = d / 9 - 1;
}

/* The voxels reaching farthest along each of the 13 directions (hi) and against it (lo) among
 * voxels [from, to), the first on a tie; reach INT64_MIN / MAX where there are none. */
typedef struct Leaders {
    int64_t hi[13], lo[13];
    size_t hi_at[13], lo_at[13];
} Leaders;

static void leaders_of(const GhmVoxelGrid *g, const GhmVoxelSide *s, size_t from, size_t to,
                       Leaders *out)
{
    int dir[13][3];
    half_directions(dir);
    Leaders L; /* a local, stored once (see pairs_of) */
    for (int d = 0; d < 13; d++)
        L.hi[d] = INT64_MIN, L.lo[d] = INT64_MAX, L.hi_at[d] = L.lo_at[d] = 0;
    for (size_t v = from; v < to; v++) {
        int64_t xyz[3];
        ghmi_voxel_coords(g, s->keys[v], xyz);
        for (int d = 0; d < 13; d++) {
            int64_t r = dir[d][0] * xyz[0] + dir[d][1] * xyz[1] + dir[d][2] * xyz[2];
            if (r > L.hi[d])
                L.hi[d] = r, L.hi_at[d] = v;
            if (r < L.lo[d])
                L.lo[d] = r, L.lo_at[d] = v;
        }
    }
    *out = L;
}

/* For each of the 26 step directions d, the voxel farthest along d (the first key on a tie)
 * votes by the sign of its normal along d. The chunks' leaders of 13 directions and of their
 * opposites (the largest and the smallest reach along each) are merged in order, a later one
 * winning only by a strictly larger reach. */
static void extreme_votes(const GhmVoxelSide *s, const Leaders *part, int *out, int *in)
{
    Leaders L = part[0];
    for (int k = 1; k < CHUNKS; k++)
        for (int d = 0; d < 13; d++) {
            if (part[k].hi[d] > L.hi[d])
                L.hi[d] = part[k].hi[d], L.hi_at[d] = part[k].hi_at[d];
            if (part[k].lo[d] < L.lo[d])
                L.lo[d] = part[k].lo[d], L.lo_at[d] = part[k].lo_at[d];
        }
    int dir[13][3];
    half_directions(dir);
    *out = *in = 0;
    for (int d = 0; d < 13; d++)
        for (int sign = 1; sign >= -1; sign -= 2) {
            const float *n = s->normals + 3 * (sign > 0 ? L.hi_at[d] : L.lo_at[d]);
            double along = sign * (dir[d][0] * (double)n[0] + dir[d][1] * (double)n[1] +
                                   dir[d][2] * (double)n[2]);
            *out += along > 0;
            *in += along < 0;
        }
}

/* The first of the n sorted cells from chunk k's share on that starts a cell (a cell lies in
 * one chunk). */
static size_t cell_chunk_at(const uint32_t *cell, size_t n, int k)
{
    size_t i = chunk_at(n, k);
    while (i > 0 && i < n && cell[i] == cell[i - 1])
        i++;
    return i;
}

/* Sorted cells [lo, hi) summed into cs's cells from `out` on (keys, and sums of the voxels'
 * normals in cell order); returns how many cells; write 0: only counts them. */
static size_t sum_cells(const GhmVoxelSide *s, const uint32_t *cell, const uint32_t *voxel,
                        size_t lo, size_t hi, GhmVoxelSide *cs, size_t out, int write)
{
    size_t m = 0;
    for (size_t i = lo; i < hi; i++) {
        int first = i == lo || cell[i] != cell[i - 1];
        m += first;
        if (!write)
            continue;
        float *sum = cs->normals + 3 * (out + m - 1);
        for (int k = 0; k < 3; k++)
            sum[k] = (first ? 0.0f : sum[k]) + s->normals[3 * (size_t)voxel[i] + (size_t)k];
        cs->keys[out + m - 1] = cell[i];
    }
    return m;
}

/* A sparse cloud (radius > 1: about one point a voxel) has few face neighbours, so its voxels
 * are gathered into cells of f x f x f voxels (f its radius), each with the sum of its voxels'
 * normals, and the test runs on the cells: a coarser grid, its keys ascending as a side's do.
 * The voxels are sorted by cell with the hashing layer's stable radix sort, so a cell sums its
 * voxels' normals in key order (a qsort here took 3-4 ms of a 33 k-voxel edit's apply, H200).
 * The cells' keys and their sums come in chunks on the threads, each chunk's cells whole: on
 * one thread they took 1.3 of the check's 2.4 ms for a 33 k-voxel cloud (H200 host, 2026-12-01),
 * which ran past the edit's labels beside it. */
static int coarse_side(const GhmVoxelGrid *g, const GhmVoxelSide *s, int f, int threads,
                       GhmVoxelGrid *cg, GhmVoxelSide *cs)
{
    *cg = *g;
    for (int k = 0; k < 3; k++)
        cg->dims[k] = (g->dims[k] + f - 1) / f;
    const size_t n = s->voxels;
    uint32_t *cell = malloc((n + 1) * sizeof *cell), *voxel = malloc((n + 1) * sizeof *voxel);
    *cs = (GhmVoxelSide){.keys = malloc((n + 1) * sizeof *cs->keys),
                         .normals = malloc((3 * n + 1) * sizeof *cs->normals)};
    int ret = cell && voxel && cs->keys && cs->normals ? GHM_OK : GHM_ERR_NOMEM;
    threads = n >= PARALLEL_LEAST ? threads : 1;
    if (ret == GHM_OK) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t v = 0; v < n; v++) {
            int64_t xyz[3];
            ghmi_voxel_coords(g, s->keys[v], xyz);
            cell[v] = (uint32_t)(xyz[0] / f +
                                 cg->dims[0] * (xyz[1] / f + cg->dims[1] * (xyz[2] / f)));
            voxel[v] = (uint32_t)v;
        }
        ret = ghmi_cpu_sort_pairs(threads, cell, voxel, n);
    }
    size_t at[CHUNKS];
    if (ret == GHM_OK) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int k = 0; k < CHUNKS; k++)
            at[k] = sum_cells(s, cell, voxel, cell_chunk_at(cell, n, k),
                              cell_chunk_at(cell, n, k + 1), cs, 0, 0);
        cs->voxels = ghmi_chunk_starts(at, CHUNKS, 0);
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int k = 0; k < CHUNKS; k++)
            sum_cells(s, cell, voxel, cell_chunk_at(cell, n, k), cell_chunk_at(cell, n, k + 1),
                      cs, at[k], 1);
    }
    free(cell);
    free(voxel);
    return ret;
}

static void judge(const GhmVoxelGrid *g, const GhmVoxelSide *s, int threads,
                  GhmVoxelNormalsCheck *out)
{
    size_t pairs[CHUNKS], disagree[CHUNKS];
    Leaders lead[CHUNKS];
    /* both passes over a chunk in one parallel region: the team starts once */
#pragma omp parallel for num_threads(threads) schedule(static) \
    if (s->voxels >= PARALLEL_LEAST)
    for (int k = 0; k < CHUNKS; k++) {
        size_t lo = chunk_at(s->voxels, k), hi = chunk_at(s->voxels, k + 1);
        pairs_of(g, s, lo, hi, &pairs[k], &disagree[k]);
        leaders_of(g, s, lo, hi, &lead[k]);
    }
    for (int k = 1; k < CHUNKS; k++)
        pairs[0] += pairs[k], disagree[0] += disagree[k];
    out->pairs = pairs[0];
    out->disagree = pairs[0] ? (double)disagree[0] / (double)pairs[0] : 0.0;
    if (pairs[0] < LEAST_PAIRS)
        return;
    extreme_votes(s, lead, &out->extremes_out, &out->extremes_in);
    out->verdict = GHM_VOXEL_NORMALS_CONSISTENT;
    if (out->disagree > MIXED_SHARE)
        out->verdict = GHM_VOXEL_NORMALS_MIXED;
    else if (out->extremes_in >= INWARD_LEAST &&
             out->extremes_in > INWARD_RATIO * out->extremes_out)
        out->verdict = GHM_VOXEL_NORMALS_INWARD;
}

int ghmi_voxel_normals_check(const GhmVoxelGrid *g, const GhmVoxelSide *s, int threads,
                             GhmVoxelNormalsCheck *out)
{
    if (!g || !s || !out || (s->voxels && (!s->keys || !s->normals)))
        return GHM_ERR_INVALID;
    *out = (GhmVoxelNormalsCheck){.verdict = GHM_VOXEL_NORMALS_UNCHECKED};
    if (s->radius <= 1) {
        judge(g, s, threads, out);
        return GHM_OK;
    }
    GhmVoxelGrid cg;
    GhmVoxelSide cs;
    int ret = coarse_side(g, s, s->radius, threads, &cg, &cs);
    if (ret == GHM_OK)
        judge(&cg, &cs, threads, out);
    free(cs.keys);
    free(cs.normals);
    return ret;
}

int ghm_voxel_normals_check(const GhmVoxelGrid *g, const GhmVoxelSide *s,
                            GhmVoxelNormalsCheck *out)
{
    return ghmi_voxel_normals_check(g, s, 1, out);
}

int ghm_voxel_normals_fault(const GhmVoxelNormalsCheck *c, char *out, size_t size)
{
    int inward = c->verdict == GHM_VOXEL_NORMALS_INWARD;
    int mixed = c->verdict == GHM_VOXEL_NORMALS_MIXED;
    if (size && inward)
        snprintf(out, size, "its normals point inward (toward the middle at %d of the 26 voxels "
                 "farthest out)", c->extremes_in);
    else if (size && mixed)
        snprintf(out, size, "its normals point either way (%.0f %% of neighbouring voxels' "
                 "normals are opposed, as when normals are estimated without an orientation)",
                 100 * c->disagree);
    else if (size)
        out[0] = '\0';
    return inward || mixed;
}
