#!/usr/bin/env bash
# The committed tree: CUDA dynmap suites, memcheck of check_dynmap's cuda case, bench dynmap.
set -x
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bf > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
(cd /tmp/bf && timeout 300 ctest -R 'dynmap|faults_cuda|voxel_edit_cuda' -j8 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed|Passed" $OUT/ctest.log | tail -12
(cd /tmp/bf && CK_RUN_CASE=cuda CK_DEFAULT_TIMEOUT=600 timeout 400 compute-sanitizer --tool memcheck ./check_dynmap > $OUT/memcheck.log 2>&1; echo "memcheck rc $?")
tail -3 $OUT/memcheck.log
timeout 120 /tmp/bf/geohash-match bench dynmap --backend cuda --reps 3 > $OUT/bench_final.txt 2>&1
sed -n 1,10p $OUT/bench_final.txt
