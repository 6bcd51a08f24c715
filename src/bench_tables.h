/*
 * bench_tables.h - the key sets of `geohash-match bench tables` (bench_tables_keys.c), which
 * bench_tables.c measures every GhmMap scheme on: the product's own keys and queries, laid out
 * as the backend's pipeline lays them out (bench_tables.c's opening comment says how).
 */
#ifndef GHM_BENCH_TABLES_H
#define GHM_BENCH_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include "ghm_context.h"
#include "ghm_pointcloud.h"

enum { GHM_TABLES_MAX = 2 };

/* One table of a key set and the look-ups asked of it. */
typedef struct GhmTablesTable {
    uint32_t *keys, *values; /* host: n keys ascending, their ranks */
    uint32_t *queries;       /* host: nq keys */
    size_t n, nq;
} GhmTablesTable;

typedef struct GhmTablesKeySet {
    char name[2112]; /* room for two --pair paths */
    double load;     /* the pipeline's load factor for this table */
    double present;  /* share of the queries whose key is in the table (set when measured) */
    long grid;       /* voxel key sets; 0 for signatures */
    size_t voxels[2]; /* voxels of A and B; signatures: [0] the reference's entries */
    int radius[2];
    GhmTablesTable t[GHM_TABLES_MAX];
    int ntables;
} GhmTablesKeySet;

/* One step of the voxel pipeline on ctx's backend (B moved by pose, or not when NULL) at `grid`
 * voxels along the longest side: its voxels as keys, their hoods as queries. GHM_ERR_* from the
 * voxel pipeline, GHM_ERR_NOMEM. */
int ghm_tables_voxel_keys(GhmContext *ctx, const GhmPointCloud *a, const GhmPointCloud *b,
                          const double *pose, long grid, GhmTablesKeySet *ks);

/* The matcher's signature table of the image `ref`, queried by the entries of `query`. Errors
 * are reported here (one line naming the file); returns GHM_OK or a GHM_ERR_* code. */
int ghm_tables_signature_keys(GhmContext *ctx, const char *ref, const char *query,
                              GhmTablesKeySet *ks);

/* A turned 90 degrees about the z axis through the centre of its bounding box. */
void ghm_tables_turn_pose(const GhmPointCloud *a, double m[16]);

void ghm_tables_keys_free(GhmTablesKeySet *ks);

#endif /* GHM_BENCH_TABLES_H */
