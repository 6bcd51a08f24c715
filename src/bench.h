/*
 * bench.h - the built-in benchmarks that `geohash-match bench WHAT` dispatches to (the table is
 * in cmd_bench.c). Each takes the arguments after WHAT (argv[0] is WHAT) and returns a
 * GHM_EXIT_* status.
 */
#ifndef GHM_BENCH_H
#define GHM_BENCH_H

int ghm_bench_hash(int argc, char **argv);  /* bench_hash.c: hash tables vs sort + search */
int ghm_bench_match(int argc, char **argv); /* bench_match.c: per-query time by stage */
int ghm_bench_video(int argc, char **argv); /* bench_video.c: decode / match / end-to-end */
int ghm_bench_voxel(int argc, char **argv); /* bench_voxel.c: voxel intersection per step */
int ghm_bench_dynmap(int argc, char **argv); /* bench_dynmap.c: GhmDynmap, paper's 6.1 */
int ghm_bench_distmap(int argc, char **argv); /* bench_distmap.c: GhmDistMap against GhmMap */

#endif /* GHM_BENCH_H */
