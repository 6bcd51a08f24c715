#!/usr/bin/env bash
# Robin Hood's stash: CUDA tests (hash_cuda with the stash test, faults_cuda, map), memcheck of
# check_hash_cuda; then old (1896b0a) and new in turns, twice: bench hash robin-hood at 2^26
# (load 0.5..0.99 and the coherent 2D experiment) and robin-hood-random.
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
mkdir -p /tmp/srcold && tar xJf .dev/old-src.tar.xz -C /tmp/srcold && sed -i "s/ -Werror//" /tmp/srcold/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/srcold /tmp/bold > $OUT/build_old.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/bnew > $OUT/build_new.log 2>&1
wait; tail -1 $OUT/build_new.log; el builds
(cd /tmp/bnew && timeout 300 ctest -R 'hash_cuda|faults_cuda|map\.' -j4 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head; el ctest
(cd /tmp/bnew && GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 150 compute-sanitizer --tool memcheck ./check_hash_cuda > $OUT/memcheck_hash.txt 2>&1; echo "memcheck rc $?")
tail -2 $OUT/memcheck_hash.txt; el memcheck
for round in 1 2; do
  for s in old new; do
    for sch in robin-hood robin-hood-random; do
      echo "== round $round $s $sch" >> $OUT/robin.txt
      timeout 120 /tmp/b$s/geohash-match bench hash --backend cuda --seed 1 --scheme $sch --min-log2 26 --max-log2 26 --reps 3 >> $OUT/robin.txt 2>&1
    done
  done
  el "round $round"
done
grep -E "==|^map|^coherent" $OUT/robin.txt | sed -E "s/  +/ /g" | cut -c1-120
