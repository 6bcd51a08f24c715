/*
 * map_group.h - the test hook of map_group.cu, which groups a large bucketed insert's pairs by
 * the table region of their first bucket. Plain C, so that host tests can reach the grouped path
 * with small tables (as device_memory.h's fault hooks); defined only in builds with CUDA.
 */
#ifndef GHM_MAP_GROUP_H
#define GHM_MAP_GROUP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* From now on, group the inserts of tables larger than min_table_bytes (0: the default, a few
 * times the device's L2 size) into regions of about region_bytes (0: the default, 4 MiB). Not
 * thread-safe: a test sets it before building and restores the defaults with (0, 0). */
void ghmi_map_group_tune(size_t min_table_bytes, size_t region_bytes);

#ifdef __cplusplus
}
#endif

#endif /* GHM_MAP_GROUP_H */
