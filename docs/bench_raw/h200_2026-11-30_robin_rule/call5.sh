#!/usr/bin/env bash
# s51 call 5 (one H200): the Robin Hood rule in its own find kernel instantiation (random tables only):
# memcheck of check_hash_cuda; the Robin Hood rule only on the random sequence: bench hash
# robin-hood / robin-hood-random at 2^26, before the rule (4290d32^) and final, in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
F="-DCMAKE_CUDA_ARCHITECTURES=90"
mkdir -p /tmp/old && tar -xf .dev/c51/old4.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F -DGEOHASH_TESTS=OFF > $OUT/build_old.log 2>&1 &
po=$!
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1
wait $po || { tail -30 $OUT/build_old.log; exit 1; }
tail -2 $OUT/build_new.log
el build
{
for rep in 1 2; do
  for v in bo bn; do
    for s in robin-hood robin-hood-random; do
      echo "== $v $s round $rep"
      timeout 150 /tmp/$v/geohash-match bench hash --backend cuda --seed 1 --scheme $s --min-log2 26 --max-log2 26 --reps 3 | grep -E "^map|coherent"
    done
  done
done
el bench
cd /tmp/bn
GHM_TEST_SMALL=1 timeout 300 compute-sanitizer --tool memcheck --report-api-errors no --leak-check no ./check_hash_cuda > $OUT/memcheck.txt 2>&1; grep "ERROR SUMMARY\|Checks" $OUT/memcheck.txt; el memcheck
timeout 300 ctest -j 8 -R "hash_cuda|^map\.|faults_cuda" -LE slow > $OUT/ctest.txt 2>&1; grep -E "tests passed|Failed" $OUT/ctest.txt | head; el ctest
} 2>&1 | tee $OUT/call5.txt
