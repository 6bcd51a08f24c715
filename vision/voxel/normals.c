/*
 * normals.c - normal estimation for clouds without normals, per voxel: principal component
 * analysis of the points in a voxel and its neighbours (the 26, or the wider neighbourhood of a
 * sparse cloud), then a consistent orientation.
 *
 * The moments of each voxel are kept relative to its own centre (small numbers, no loss of
 * precision far from the origin) and shifted to the centre of the voxel being estimated, so the
 * 27-voxel sums cost 27 additions of 9 doubles rather than a pass over the points again.
 * Orientation: the sign of a PCA normal is arbitrary, so it is propagated breadth-first over
 * neighbouring voxels (each voxel takes the sign that agrees with the voxel it was reached from),
 * starting in each connected part at the voxel farthest from the cloud's centroid, whose normal
 * is turned away from the centroid. For a closed surface that makes all normals point outward;
 * for other shapes it is a heuristic, documented in ghm_voxel.h.
 *
 * The device twin (kernels/vision/voxel/normals.cu, the normals op) computes the same bits: the
 * same double operations in the same order, the centroid summed in the fixed chunked order of
 * centroid_sum(), each part's root found by union-find, and the breadth-first queue order
 * rebuilt level by level (see orient_kernel). Change one, change the other.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_map.h"
#include "voxel_internal.h"

/* Eigenvector of the smallest eigenvalue of the symmetric 3x3 matrix a (destroyed), by cyclic
 * Jacobi rotations; a few sweeps reach double precision for 3x3. */
static void smallest_eigenvector(double a[3][3], double out[3])
{
    double v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    static const int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
    for (int sweep = 0; sweep < 20; sweep++) {
        double off = a[0][1] * a[0][1] + a[0][2] * a[0][2] + a[1][2] * a[1][2];
        double diag = a[0][0] * a[0][0] + a[1][1] * a[1][1] + a[2][2] * a[2][2];
        if (off <= 1e-30 * diag || off == 0.0)
            break;
        for (int r = 0; r < 3; r++) {
            int p = pairs[r][0], q = pairs[r][1];
            if (a[p][q] == 0.0)
                continue;
            double theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
            double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
            for (int k = 0; k < 3; k++) {
                double akp = a[k][p], akq = a[k][q];
                a[k][p] = c * akp - s * akq;
                a[k][q] = s * akp + c * akq;
            }
            for (int k = 0; k < 3; k++) {
                double apk = a[p][k], aqk = a[q][k];
                a[p][k] = c * apk - s * aqk;
                a[q][k] = s * apk + c * aqk;
            }
            for (int k = 0; k < 3; k++) {
                double vkp = v[k][p], vkq = v[k][q];
                v[k][p] = c * vkp - s * vkq;
                v[k][q] = s * vkp + c * vkq;
            }
        }
    }
    int m = 0;
    for (int i = 1; i < 3; i++)
        if (a[i][i] < a[m][m])
            m = i;
    for (int k = 0; k < 3; k++)
        out[k] = v[k][m];
}

/* Adds the moments of a voxel whose centre lies at d from the centre of the sum. */
static void add_shifted(double acc[GHMI_MOMENTS], const double *m, double n, const double d[3])
{
    acc[0] += m[0] + n * d[0];
    acc[1] += m[1] + n * d[1];
    acc[2] += m[2] + n * d[2];
    acc[3] += m[3] + 2 * m[0] * d[0] + n * d[0] * d[0];
    acc[4] += m[4] + m[0] * d[1] + m[1] * d[0] + n * d[0] * d[1];
    acc[5] += m[5] + m[0] * d[2] + m[2] * d[0] + n * d[0] * d[2];
    acc[6] += m[6] + 2 * m[1] * d[1] + n * d[1] * d[1];
    acc[7] += m[7] + m[1] * d[2] + m[2] * d[1] + n * d[1] * d[2];
    acc[8] += m[8] + 2 * m[2] * d[2] + n * d[2] * d[2];
}

static void pca_normal(size_t v, double s, const uint32_t *counts, const double *moments,
                       const GhmiHood *hood, const uint32_t *nbr, float *normal)
{
    double acc[GHMI_MOMENTS] = {0}, zero[3] = {0, 0, 0};
    double n = counts[v];
    add_shifted(acc, moments + GHMI_MOMENTS * v, counts[v], zero);
    for (int k = 0; k < hood->n; k++) {
        uint32_t u = nbr[(size_t)hood->n * v + (size_t)k];
        if (u == GHM_NOT_FOUND)
            continue;
        double d[3] = {hood->step[k][0] * s, hood->step[k][1] * s, hood->step[k][2] * s};
        add_shifted(acc, moments + GHMI_MOMENTS * u, counts[u], d);
        n += counts[u];
    }
    normal[0] = normal[1] = normal[2] = 0.0f;
    if (n < 3)
        return;
    double m[3] = {acc[0] / n, acc[1] / n, acc[2] / n};
    double c[3][3] = {{acc[3] / n - m[0] * m[0], acc[4] / n - m[0] * m[1], acc[5] / n - m[0] * m[2]},
                      {0, acc[6] / n - m[1] * m[1], acc[7] / n - m[1] * m[2]},
                      {0, 0, acc[8] / n - m[2] * m[2]}};
    c[1][0] = c[0][1];
    c[2][0] = c[0][2];
    c[2][1] = c[1][2];
    double e[3];
    smallest_eigenvector(c, e);
    double len = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    if (len > 0)
        for (int k = 0; k < 3; k++)
            normal[k] = (float)(e[k] / len);
}

static void centre_of(const GhmVoxelGrid *g, uint32_t key, double c[3])
{
    ghm_voxel_centre(g, key, c);
}

/* Sorts voxel ids by descending distance from the centroid (ties by id, so runs repeat). */
typedef struct Far {
    double d2;
    uint32_t id;
} Far;

static int far_cmp(const void *a, const void *b)
{
    const Far *x = a, *y = b;
    if (x->d2 != y->d2)
        return x->d2 < y->d2 ? 1 : -1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static void orient(const GhmVoxelGrid *g, size_t K, const uint32_t *keys, int nn,
                   const uint32_t *nbr,
                   const double centroid[3], Far *order, uint32_t *queue, uint8_t *seen,
                   float *ref, float *normals)
{
    for (size_t r = 0; r < K; r++) {
        uint32_t root = order[r].id;
        if (seen[root])
            continue;
        double c[3];
        centre_of(g, keys[root], c);
        float *n = normals + 3 * (size_t)root;
        float out[3] = {(float)(c[0] - centroid[0]), (float)(c[1] - centroid[1]),
                        (float)(c[2] - centroid[2])};
        if (n[0] * out[0] + n[1] * out[1] + n[2] * out[2] < 0)
            n[0] = -n[0], n[1] = -n[1], n[2] = -n[2];
        int has = n[0] != 0 || n[1] != 0 || n[2] != 0;
        memcpy(ref + 3 * (size_t)root, has ? n : out, sizeof out);
        size_t head = 0, tail = 0;
        queue[tail++] = root;
        seen[root] = 1;
        while (head < tail) {
            uint32_t v = queue[head++];
            const float *rv = ref + 3 * (size_t)v;
            for (int k = 0; k < nn; k++) {
                uint32_t u = nbr[(size_t)nn * v + (size_t)k];
                if (u == GHM_NOT_FOUND || seen[u])
                    continue;
                float *nu = normals + 3 * (size_t)u;
                if (nu[0] * rv[0] + nu[1] * rv[1] + nu[2] * rv[2] < 0)
                    nu[0] = -nu[0], nu[1] = -nu[1], nu[2] = -nu[2];
                int hu = nu[0] != 0 || nu[1] != 0 || nu[2] != 0;
                memcpy(ref + 3 * (size_t)u, hu ? nu : rv, 3 * sizeof(float));
                seen[u] = 1;
                queue[tail++] = u;
            }
        }
    }
}

/* The sum over the voxels of centre * count + first moment (the cloud's points summed), in the
 * fixed order of voxel_internal.h (GHMI_CENTROID_CHUNK): sequential within chunks, then the
 * chunk sums the same way, so that a device summing one chunk per thread adds the same doubles
 * in the same order. */
static int centroid_sum(const GhmVoxelGrid *g, size_t K, const uint32_t *keys,
                        const uint32_t *counts, const double *moments, double out[3])
{
    const size_t C = GHMI_CENTROID_CHUNK;
    size_t n = (K + C - 1) / C;
    double *part = malloc((3 * n + 1) * sizeof *part);
    if (!part)
        return GHM_ERR_NOMEM;
    for (size_t j = 0; j < n; j++) {
        double p[3] = {0, 0, 0};
        for (size_t v = j * C; v < K && v < (j + 1) * C; v++) {
            double c[3];
            centre_of(g, keys[v], c);
            for (int k = 0; k < 3; k++)
                p[k] += c[k] * counts[v] + moments[GHMI_MOMENTS * v + (size_t)k];
        }
        memcpy(part + 3 * j, p, sizeof p);
    }
    while (n > 1) {
        size_t m = (n + C - 1) / C;
        for (size_t j = 0; j < m; j++) { /* reads indices >= j C >= j: in place is safe */
            double q[3] = {0, 0, 0};
            for (size_t i = j * C; i < n && i < (j + 1) * C; i++)
                for (int k = 0; k < 3; k++)
                    q[k] += part[3 * i + (size_t)k];
            memcpy(part + 3 * j, q, sizeof q);
        }
        n = m;
    }
    for (int k = 0; k < 3; k++)
        out[k] = n ? part[k] : 0.0;
    free(part);
    return GHM_OK;
}

int ghmi_voxel_estimate_normals(const GhmVoxelGrid *grid, size_t K, const uint32_t *keys,
                                const uint32_t *counts, const double *moments,
                                const GhmiHood *hood, const uint32_t *nbr, int threads,
                                float *normals)
{
    if (K == 0)
        return GHM_OK;
    double s = grid->voxel_size;
#pragma omp parallel for num_threads(threads) schedule(static) if (K > 4096)
    for (size_t v = 0; v < K; v++)
        pca_normal(v, s, counts, moments, hood, nbr, normals + 3 * v);

    double centroid[3] = {0, 0, 0}, total = 0;
    for (size_t v = 0; v < K; v++)
        total += counts[v];
    int ret = centroid_sum(grid, K, keys, counts, moments, centroid);
    if (ret < 0)
        return ret;
    for (int k = 0; k < 3; k++)
        centroid[k] /= total > 0 ? total : 1;

    Far *order = malloc(K * sizeof *order);
    uint32_t *queue = malloc(K * sizeof *queue);
    uint8_t *seen = calloc(K, 1);
    float *ref = malloc(3 * K * sizeof *ref);
    ret = GHM_ERR_NOMEM;
    if (order && queue && seen && ref) {
        for (size_t v = 0; v < K; v++) {
            double c[3];
            centre_of(grid, keys[v], c);
            order[v].id = (uint32_t)v;
            order[v].d2 = (c[0] - centroid[0]) * (c[0] - centroid[0]) +
                          (c[1] - centroid[1]) * (c[1] - centroid[1]) +
                          (c[2] - centroid[2]) * (c[2] - centroid[2]);
        }
        qsort(order, K, sizeof *order, far_cmp);
        orient(grid, K, keys, hood->n, nbr, centroid, order, queue, seen, ref, normals);
        ret = GHM_OK;
    }
    free(order);
    free(queue);
    free(seen);
    free(ref);
    return ret;
}
