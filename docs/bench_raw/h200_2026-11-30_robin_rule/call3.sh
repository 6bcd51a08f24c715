#!/usr/bin/env bash
# s51 call 3 (one H200): the Robin Hood rule in the CUDA find (absent keys stop at a younger
# resident) - HEAD (old) / working tree (new) side by side; the new tree's CUDA map ctests and
# memcheck; bench hash robin-hood and robin-hood-random at 2^26 in turns, two rounds.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
F="-DCMAKE_CUDA_ARCHITECTURES=90"
mkdir -p /tmp/old && tar -xf .dev/c51/old3.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F -DGEOHASH_TESTS=OFF > $OUT/build_old.log 2>&1 &
po=$!
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1
wait $po || { tail -30 $OUT/build_old.log; exit 1; }
tail -3 $OUT/build_new.log
el build
{
cd /tmp/bn
timeout 300 ctest -j 4 -R 'hash_cuda|^map\.|faults_cuda|tables_cuda|geohash_cuda|voxel_cuda' -LE slow 2>&1 | grep "tests passed\|Failed\|\*\*\*\|Not Run"; el ctest
GHM_TEST_SMALL=1 timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --leak-check no ./check_hash_cuda > $OUT/memcheck.txt 2>&1; grep "ERROR SUMMARY\|Checks" $OUT/memcheck.txt; el memcheck
cd - > /dev/null
for rep in 1 2; do
  for v in bo bn; do
    for s in robin-hood robin-hood-random; do
      echo "== $v $s round $rep"
      timeout 150 /tmp/$v/geohash-match bench hash --backend cuda --seed 1 --scheme $s --min-log2 26 --max-log2 26 --reps 3 | grep -E "^map|coherent|^absent +$s "
    done
  done
done
el bench
} 2>&1 | tee $OUT/call3.txt
