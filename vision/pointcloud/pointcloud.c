/*
 * pointcloud.c - the GhmPointCloud type (create, free), normals made unit length, and the
 * message helper, the "C" locale the readers and writers run in. A leaf that the readers (pointcloud_ply*.c, pointcloud_xyz.c) call; loading
 * (pointcloud_load.c) calls the readers and writing is in pointcloud_write.c. See
 * ghm_pointcloud.h.
 */
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "pointcloud_internal.h"

int ghmi_pc_fail(char *why, size_t why_size, int status, const char *fmt, ...)
{
    if (why && why_size > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, why_size, fmt, ap);
        va_end(ap);
    }
    return status;
}

int ghm_pointcloud_create(size_t n, int with_normals, int with_rgb, GhmPointCloud **out)
{
    if (!out)
        return GHM_ERR_INVALID;
    if (n > GHM_POINTCLOUD_MAX_POINTS)
        return GHM_ERR_TOO_LARGE;
    GhmPointCloud *pc = calloc(1, sizeof *pc);
    if (!pc)
        return GHM_ERR_NOMEM;
    pc->n = n;
    /* +1 so that an empty cloud still has valid (freeable) arrays */
    pc->xyz = calloc(3 * n + 1, sizeof *pc->xyz);
    if (with_normals)
        pc->normals = calloc(3 * n + 1, sizeof *pc->normals);
    if (with_rgb)
        pc->rgb = calloc(3 * n + 1, 1);
    if (!pc->xyz || (with_normals && !pc->normals) || (with_rgb && !pc->rgb)) {
        ghm_pointcloud_free(&pc);
        return GHM_ERR_NOMEM;
    }
    *out = pc;
    return GHM_OK;
}

void ghm_pointcloud_free(GhmPointCloud **pc)
{
    if (!pc || !*pc)
        return;
    free((*pc)->xyz);
    free((*pc)->normals);
    free((*pc)->rgb);
    free(*pc);
    *pc = NULL;
}

/* On the OpenMP threads for large clouds: a sweep's run takes the bounds of both clouds (the units
 * check, B's centre) before any step, and fmin / fmax called point by point on one thread took
 * 0.2 s for two clouds of 10M points on two cores. A NaN coordinate is passed over as fmin does. */
void ghm_pointcloud_bounds(const GhmPointCloud *pc, double lo[3], double hi[3])
{
    float l[3] = {INFINITY, INFINITY, INFINITY}, h[3] = {-INFINITY, -INFINITY, -INFINITY};
    const float *xyz = pc->xyz;
    size_t n = pc->n;
#pragma omp parallel for schedule(static) reduction(min : l[:3]) reduction(max : h[:3])        \
    if (n >= 2 * GHMI_PC_PARALLEL_POINTS)
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            float c = xyz[3 * i + (size_t)k];
            l[k] = c < l[k] ? c : l[k];
            h[k] = c > h[k] ? c : h[k];
        }
    for (int k = 0; k < 3; k++)
        lo[k] = l[k], hi[k] = h[k];
}

void ghm_pointcloud_drop_normals(GhmPointCloud *pc)
{
    if (!pc)
        return;
    free(pc->normals);
    pc->normals = NULL;
}

void ghmi_normalise(float *normals, size_t n)
{
#pragma omp parallel for schedule(static) if (n >= 2 * GHMI_PC_PARALLEL_POINTS)
    for (size_t i = 0; i < n; i++) {
        float *v = normals + 3 * i;
        float len2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        if (fabsf(len2 - 1.0f) <= 1e-6f || len2 == 0.0f)
            continue; /* already unit (most files), or no normal at all */
        double len = sqrt((double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2]);
        v[0] = (float)(v[0] / len);
        v[1] = (float)(v[1] / len);
        v[2] = (float)(v[2] / len);
    }
}

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

static void make_c_locale(void)
{
    c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
}

locale_t ghmi_pc_c_locale_enter(void)
{
    pthread_once(&c_locale_once, make_c_locale);
    return c_locale ? uselocale(c_locale) : (locale_t)0;
}

void ghmi_pc_c_locale_leave(locale_t previous)
{
    if (previous)
        uselocale(previous);
}
