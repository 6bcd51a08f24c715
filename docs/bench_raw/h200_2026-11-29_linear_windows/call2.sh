#!/usr/bin/env bash
# s50 call 2 (H200): linear probing with window-aligned homes and the CPU's whole-window compare:
# old (6b544c6) / new side by side: the map's CUDA ctests (tables and answers against the CPU's),
# memcheck of check_hash_cuda, bench hash --scheme linear at 2^26 in turns, two rounds.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
F="-DCMAKE_CUDA_ARCHITECTURES=90"
mkdir -p /tmp/old && tar -xf .dev/c50/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
($B . /tmp/bn $F > $OUT/build_new.log 2>&1 || echo FAIL new) &
($B /tmp/old /tmp/bo $F -DGEOHASH_TESTS=OFF > /tmp/build_old.log 2>&1 || echo FAIL old) &
wait
el build; tail -1 $OUT/build_new.log
{
cd /tmp/bn
timeout 400 ctest -R 'hash_cuda|^map\.|dist_map|faults_cuda|bench_hash|geohash_cuda|tables_cuda' 2>&1 | grep "tests passed\|Failed\|\*\*\*\|Not Run"; el ctest
CK_RUN_CASE=cuda timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --leak-check no ./check_hash_cuda > $OUT/memcheck_hash.txt 2>&1; grep "ERROR SUMMARY\|Checks" $OUT/memcheck_hash.txt | tail -2
el memcheck
cd - > /dev/null
for rep in 1 2; do
  for b in bo bn; do
    echo "== $b round $rep"
    timeout 120 /tmp/$b/geohash-match bench hash --backend cuda --seed 1 --scheme linear --min-log2 26 --max-log2 26 --reps 3 | grep "^map"
  done
done
el bench
} 2>&1 | tee $OUT/call2.txt
