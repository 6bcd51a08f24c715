/*
 * dist_map_create.c - a GhmDistMap's life (ghm_dist_map.h): its parts' maps and side streams
 * made and freed, the pairs it holds, and the arrays it hands out (ghm_dist_map_alloc_array).
 * Its bulk calls are dist_map.c's (one process) and dist_map_ranks.c's (one part per rank).
 */
#include "ghm_dist_map.h"

#include <stdlib.h>

#include "dist_map_internal.h"
#include "hash_family.h"

#define MAX_PARTS GHM_DIST_MAP_MAX_PARTS

int ghm_dist_map_create(GhmContext *const *ctx, int parts, const GhmMapOptions *opt,
                        GhmDistMap **out)
{
    if (!out)
        return GHM_ERR_INVALID;
    *out = NULL;
    if (!ctx || !opt || parts < 1 || parts > MAX_PARTS)
        return GHM_ERR_INVALID;
    for (int p = 0; p < parts; p++) {
        if (!ctx[p] || ctx[p]->backend != ctx[0]->backend)
            return GHM_ERR_INVALID;
        for (int q = 0; q < p; q++)
            if (ctx[q] == ctx[p])
                return GHM_ERR_INVALID;
    }
    if (!ctx[0]->backend->dist)
        return GHM_ERR_UNSUPPORTED;
    GhmDistMap *m = calloc(1, sizeof *m);
    if (!m)
        return GHM_ERR_NOMEM;
    m->parts = parts;
    m->ops = ctx[0]->backend->dist;
    if (m->ops->connect)
        m->ops->connect(ctx, parts);
    m->c = ghmi_dist_consts(ctx[0]->seed, parts);
    int ret = GHM_OK;
    for (int p = 0; p < parts && ret == GHM_OK; p++) {
        m->ctx[p] = ctx[p];
        ret = ghm_map_create(ctx[p], opt, &m->map[p]);
        if (ret == GHM_OK && parts > 1 && m->ops->side_open)
            ret = m->ops->side_open(ctx[p], &m->side[p]);
    }
    if (ret < 0) {
        ghm_dist_map_free(&m);
        return ret;
    }
    *out = m;
    return GHM_OK;
}

void ghm_dist_map_free(GhmDistMap **m)
{
    if (!m || !*m)
        return;
    if ((*m)->ranked)
        ghmi_dist_ranked_free(*m);
    for (int p = 0; p < (*m)->parts; p++) {
        if ((*m)->side[p])
            (*m)->ops->side_close((*m)->ctx[p], (*m)->side[p]);
        ghm_map_free(&(*m)->map[p]);
    }
    free(*m);
    *m = NULL;
}

size_t ghm_dist_map_part_size(const GhmDistMap *m, int p)
{
    GhmMapStats st;
    if (!m || p < 0 || p >= m->parts || ghm_map_stats(m->map[p], &st) < 0)
        return 0;
    return st.size;
}

size_t ghm_dist_map_size(const GhmDistMap *m)
{
    size_t total = 0;
    for (int p = 0; m && p < m->parts; p++)
        total += ghm_dist_map_part_size(m, p);
    return total;
}

int ghm_dist_map_alloc_array(GhmDistMap *m, int part, size_t bytes, void **out)
{
    if (out)
        *out = NULL;
    int status = !m || !out || part < 0 || part >= m->parts ? GHM_ERR_INVALID : GHM_OK;
    if (m && m->ranked) /* every rank takes part, a bad call's rank too */
        return ghmi_dist_ranked_alloc_array(m, status, bytes, out);
    return status < 0 ? status : ghm_buffer_alloc(m->ctx[part], bytes, out);
}

void ghm_dist_map_free_array(GhmDistMap *m, int part, void **p)
{
    int bad = !m || !p || part < 0 || part >= m->parts;
    if (m && m->ranked)
        ghmi_dist_ranked_free_array(m, bad ? NULL : *p);
    else if (!bad)
        ghm_buffer_free(m->ctx[part], p);
    if (p)
        *p = NULL;
}
