/*
 * voxel_output.c - what the voxel mode writes: the labelled voxels as PLY (of an intersection,
 * or of an edited set) and a preview image. See ghm_voxel.h and ghm_voxel_edit.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghm_image.h"
#include "ghm_voxel.h"
#include "ghm_voxel_edit.h"

void ghm_voxel_label_colour(int label, uint8_t rgb[3])
{
    static const uint8_t colours[4][3] = {
        {200, 200, 200}, /* outside: light grey */
        {40, 90, 235},   /* inside: blue */
        {40, 200, 60},   /* intersection: green */
        {225, 40, 40},   /* unknown: red */
    };
    int l = label >= 0 && label < 4 ? label : GHM_VOXEL_UNKNOWN;
    memcpy(rgb, colours[l], 3);
}

/* The comment line that records the grid (scripts/voxel_truth.py reads it back). */
static void grid_comment(const GhmVoxelGrid *g, char *buf, size_t size)
{
    snprintf(buf, size, "grid origin %.9g %.9g %.9g voxel_size %.9g dims %d %d %d", g->origin[0],
             g->origin[1], g->origin[2], g->voxel_size, g->dims[0], g->dims[1], g->dims[2]);
}

int ghm_voxel_save_ply(const GhmVoxelResult *r, const char *path, int ascii, char *why,
                       size_t why_size)
{
    if (!r || !path) {
        if (why && why_size)
            snprintf(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    size_t n = r->side[0].voxels + r->side[1].voxels;
    float *xyz = malloc((3 * n + 1) * sizeof *xyz);
    uint8_t *bytes = malloc(5 * n + 1); /* cloud, label, red, green, blue */
    if (!xyz || !bytes) {
        free(xyz);
        free(bytes);
        if (why && why_size)
            snprintf(why, why_size, "out of memory");
        return GHM_ERR_NOMEM;
    }
    size_t o = 0;
    for (int c = 0; c < 2; c++)
        for (size_t v = 0; v < r->side[c].voxels; v++, o++) {
            double centre[3];
            ghm_voxel_centre(&r->grid, r->side[c].keys[v], centre);
            for (int k = 0; k < 3; k++)
                xyz[3 * o + (size_t)k] = (float)centre[k];
            bytes[5 * o] = (uint8_t)c;
            bytes[5 * o + 1] = r->side[c].labels[v];
            ghm_voxel_label_colour(r->side[c].labels[v], bytes + 5 * o + 2);
        }
    const GhmPlyColumn cols[] = {
        {"x", GHM_PLY_FLOAT, xyz, 12},        {"y", GHM_PLY_FLOAT, xyz + 1, 12},
        {"z", GHM_PLY_FLOAT, xyz + 2, 12},    {"cloud", GHM_PLY_UCHAR, bytes, 5},
        {"label", GHM_PLY_UCHAR, bytes + 1, 5}, {"red", GHM_PLY_UCHAR, bytes + 2, 5},
        {"green", GHM_PLY_UCHAR, bytes + 3, 5}, {"blue", GHM_PLY_UCHAR, bytes + 4, 5},
    };
    char grid[256];
    grid_comment(&r->grid, grid, sizeof grid);
    const char *comments[] = {"geohash-match voxel: one vertex per occupied voxel; cloud 0 = A, "
                              "1 = B; label 0 outside, 1 inside, 2 intersection, 3 unknown",
                              grid, NULL};
    int ret = ghm_ply_write(path, ascii, n, cols, (int)(sizeof cols / sizeof cols[0]), comments,
                            why, why_size);
    free(xyz);
    free(bytes);
    return ret;
}

int ghm_voxel_edit_save_ply(const GhmVoxelResult *r, const char *path, int ascii, char *why,
                            size_t why_size)
{
    if (!r || !path) {
        if (why && why_size)
            snprintf(why, why_size, "invalid arguments");
        return GHM_ERR_INVALID;
    }
    const GhmVoxelSide *s = &r->side[0];
    size_t n = s->voxels;
    float *xyz = malloc((3 * n + 1) * sizeof *xyz);
    uint8_t *bytes = malloc(4 * n + 1); /* label, red, green, blue */
    if (!xyz || !bytes) {
        free(xyz);
        free(bytes);
        if (why && why_size)
            snprintf(why, why_size, "out of memory");
        return GHM_ERR_NOMEM;
    }
    for (size_t v = 0; v < n; v++) {
        double centre[3];
        ghm_voxel_centre(&r->grid, s->keys[v], centre);
        for (int k = 0; k < 3; k++)
            xyz[3 * v + (size_t)k] = (float)centre[k];
        bytes[4 * v] = s->labels[v];
        ghm_voxel_label_colour(s->labels[v], bytes + 4 * v + 1);
    }
    const GhmPlyColumn cols[] = {
        {"x", GHM_PLY_FLOAT, xyz, 12},          {"y", GHM_PLY_FLOAT, xyz + 1, 12},
        {"z", GHM_PLY_FLOAT, xyz + 2, 12},      {"count", GHM_PLY_UINT, s->counts, 4},
        {"nx", GHM_PLY_FLOAT, s->normals, 12},  {"ny", GHM_PLY_FLOAT, s->normals + 1, 12},
        {"nz", GHM_PLY_FLOAT, s->normals + 2, 12}, {"label", GHM_PLY_UCHAR, bytes, 4},
        {"red", GHM_PLY_UCHAR, bytes + 1, 4},   {"green", GHM_PLY_UCHAR, bytes + 2, 4},
        {"blue", GHM_PLY_UCHAR, bytes + 3, 4},
    };
    char grid[256];
    grid_comment(&r->grid, grid, sizeof grid);
    const char *comments[] = {"geohash-match voxel edit: one vertex per voxel of the set; label "
                              "0 surface, 1 interior, 2 cut",
                              grid, NULL};
    int ret = ghm_ply_write(path, ascii, n, cols, (int)(sizeof cols / sizeof cols[0]), comments,
                            why, why_size);
    free(xyz);
    free(bytes);
    return ret;
}

/* Among voxels at the same depth the more telling label is drawn. */
static int priority(int label)
{
    static const int p[4] = {0, 2, 3, 1};
    return p[label & 3];
}

int ghm_voxel_preview(const GhmVoxelResult *r, int axis, int max_side, struct GhmRgbImage **out)
{
    if (!r || !out || axis < 0 || axis > 2 || max_side < 1)
        return GHM_ERR_INVALID;
    const GhmVoxelGrid *g = &r->grid;
    int au = (axis + 1) % 3, av = (axis + 2) % 3; /* u x v = axis: a right-handed view */
    int nu = g->dims[au], nv = g->dims[av], nw = g->dims[axis];
    int big = nu > nv ? nu : nv, scale = max_side / big > 1 ? max_side / big : 1;
    int32_t *depth = malloc((size_t)nu * (size_t)nv * sizeof *depth);
    uint8_t *lab = malloc((size_t)nu * (size_t)nv);
    GhmRgbImage *img = NULL;
    int ret = depth && lab ? ghm_rgb_image_create(nu * scale, nv * scale, &img) : GHM_ERR_NOMEM;
    if (ret < 0)
        goto done;
    for (size_t i = 0; i < (size_t)nu * (size_t)nv; i++)
        depth[i] = -1;
    for (int c = 0; c < 2; c++)
        for (size_t v = 0; v < r->side[c].voxels; v++) {
            uint32_t key = r->side[c].keys[v], q[3];
            q[0] = key % (uint32_t)g->dims[0];
            q[1] = (key / (uint32_t)g->dims[0]) % (uint32_t)g->dims[1];
            q[2] = key / (uint32_t)g->dims[0] / (uint32_t)g->dims[1];
            size_t cell = (size_t)q[av] * (size_t)nu + q[au];
            int32_t w = (int32_t)q[axis];
            uint8_t l = r->side[c].labels[v];
            if (w > depth[cell] || (w == depth[cell] && priority(l) > priority(lab[cell]))) {
                depth[cell] = w;
                lab[cell] = l;
            }
        }
    for (int y = 0; y < nv; y++)
        for (int x = 0; x < nu; x++) {
            size_t cell = (size_t)y * (size_t)nu + (size_t)x;
            uint8_t rgb[3] = {24, 24, 28};
            if (depth[cell] >= 0) {
                ghm_voxel_label_colour(lab[cell], rgb);
                double shade = 0.4 + 0.6 * (depth[cell] + 1.0) / nw;
                for (int k = 0; k < 3; k++)
                    rgb[k] = (uint8_t)(rgb[k] * shade);
            }
            int py = (nv - 1 - y) * scale; /* v grows upwards */
            for (int dy = 0; dy < scale; dy++)
                for (int dx = 0; dx < scale; dx++)
                    ghm_rgb_image_set(img, x * scale + dx, py + dy, rgb[0], rgb[1], rgb[2]);
        }
    *out = img;
    img = NULL;
done:
    ghm_rgb_image_free(&img);
    free(depth);
    free(lab);
    return ret;
}
