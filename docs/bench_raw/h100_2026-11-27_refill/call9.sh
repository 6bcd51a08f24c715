#!/usr/bin/env bash
# s33 call 9: the review's mends (one helper for the SM count and resident blocks, no marks for
# builds of distinct keys) on the GPU: CUDA suites, memcheck, initcheck, and the map bench
# against HEAD 4833c9b (old) once each, in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/logs9; mkdir -p $L
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >$L/build_old.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 >$L/build.log 2>&1 || { tail -40 $L/build.log; exit 1; }
wait
el build
cd /tmp/b
timeout 300 ctest -j8 -R 'hash_cuda|^map\.|faults_cuda|^index|^set\.|multimap|dist_map|geohash_cuda|voxel_cuda|dynmap|cli\.bench|cli\.voxel_edit' -LE slow --timeout 280 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*|Failed" $OUT/ctest.log | head
GHM_TEST_SMALL=1 timeout 200 compute-sanitizer --tool memcheck ./check_hash_cuda > $L/memcheck.log 2>&1
el "memcheck rc $? $(grep -h 'ERROR SUMMARY' $L/memcheck.log | tail -1)" | tee -a $OUT/summary.txt
timeout 150 compute-sanitizer --tool initcheck ./geohash-match bench hash --backend cuda --quick --scheme cuckoo > $L/initcheck.log 2>&1
el "initcheck rc $? $(grep -h 'ERROR SUMMARY' $L/initcheck.log | tail -1)" | tee -a $OUT/summary.txt
for v in o n; do case $v in o) bin=/tmp/bo;; n) bin=/tmp/b;; esac
  $bin/geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 24 --max-log2 26 --reps 3 > $L/bench_$v.txt 2>&1
  echo "== $v"; grep "^map *bucketed\|^index" $L/bench_$v.txt; done | tee $OUT/bench.txt
tar czf $OUT/logs.tgz -C /tmp logs9
el done
