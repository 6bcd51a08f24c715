#!/usr/bin/env bash
# s33 call 7: Robin Hood with the max-age entries beside the slots (7 slots + an entry word a
# 64-byte block) against 3616ee1 (old, a table of its own), in turns, two rounds; the CUDA
# suites and memcheck of check_hash_cuda.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/logs7; mkdir -p $L
sed -i "s/ -Werror//" CMakeLists.txt
if [ ! -x /tmp/bo/geohash-match ]; then mkdir -p /tmp/old && tar xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >$L/build_old.log 2>&1 & fi
rm -rf /tmp/b
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 >$L/build.log 2>&1 || { tail -40 $L/build.log; exit 1; }
wait
el build
for r in 1 2; do for v in o n; do
  case $v in o) bin=/tmp/bo;; n) bin=/tmp/b;; esac
  for sc in robin-hood robin-hood-random; do
    $bin/geohash-match bench hash --backend cuda --seed 1 --scheme $sc --min-log2 26 --max-log2 26 --reps 3 > $L/rh_${sc}_${v}_$r.txt 2>&1
    echo "round $r $v $sc"; grep -E "^map|^coherent" $L/rh_${sc}_${v}_$r.txt | cut -c1-125
  done
done; done | tee $OUT/robin_ab.txt
el bench
cd /tmp/b
timeout 280 ctest -j8 -R 'hash_cuda|^map\.|faults_cuda|cli\.bench' -LE slow --timeout 270 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*|Failed" $OUT/ctest.log | head
GHM_TEST_SMALL=1 timeout 200 compute-sanitizer --tool memcheck ./check_hash_cuda > $L/memcheck.log 2>&1
el "memcheck rc $? $(grep -h 'ERROR SUMMARY' $L/memcheck.log | tail -1)" | tee -a $OUT/summary.txt
timeout 120 compute-sanitizer --tool initcheck ./geohash-match bench hash --backend cuda --quick --scheme robin-hood > $L/initcheck.log 2>&1
el "initcheck rc $? $(grep -h 'ERROR SUMMARY' $L/initcheck.log | tail -1)" | tee -a $OUT/summary.txt
tar czf $OUT/logs.tgz -C /tmp logs7
el done
