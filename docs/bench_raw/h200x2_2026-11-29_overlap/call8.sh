#!/usr/bin/env bash
# s44 call 8: the final tree's CUDA tests on 2 x H200: ctest of the hash tables, the split map,
# the fault injection, the voxel suites and CLI cases (2 devices), then compute-sanitizer
# memcheck of check_hash_cuda (GHM_TEST_SMALL) and of check_dist_map's CUDA case.
set -u
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_new.log" 2>&1 || { tail -30 "$OUT/build_new.log"; exit 1; }
el build
cd /tmp/bn || exit 1
timeout 330 ctest -j8 -R 'dist|map|faults|hash|voxel|cli.bench_distmap|cli.voxel' -E 'dynmap' -LE slow --timeout 320 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*Failed|Timeout" $OUT/ctest.log | head -20
CK_FORK=no CK_RUN_CASE=cuda timeout 150 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck_dist.txt" ./check_dist_map 2>&1 | tail -1
tail -1 $OUT/memcheck_dist.txt; el memcheck_dist
GHM_TEST_SMALL=1 CK_FORK=no timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck_hash.txt" ./check_hash_cuda 2>&1 | tail -1
tail -1 $OUT/memcheck_hash.txt; el memcheck_hash
