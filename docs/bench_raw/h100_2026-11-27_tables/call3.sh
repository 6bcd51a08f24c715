#!/usr/bin/env bash
# Experiment: the bucketed map's second (and third) bucket inside the ~4 MB region of its first
# (kernels/hashing/map_ref.cuh), so that a grouped insert's evictions stay in L2 too. Old =
# 1896b0a (main before this session), new = the working tree (also: Robin Hood's prime table
# size). CUDA tests of new, memcheck, then bench hash cuckoo 2^22..2^26 and robin-hood 2^26,
# old and new in turns, seed 1.
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
mkdir -p /tmp/srcold && tar xJf .dev/old-src.tar.xz -C /tmp/srcold && sed -i "s/ -Werror//" /tmp/srcold/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/srcold /tmp/bold > $OUT/build_old.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/bnew > $OUT/build_new.log 2>&1
wait; tail -1 $OUT/build_new.log; tail -1 $OUT/build_old.log; el builds
(cd /tmp/bnew && timeout 300 ctest -R 'hash_cuda|faults_cuda|map\.|voxel_cuda|geohash_cuda|cli.bench_hash' -j4 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head; el ctest
(cd /tmp/bnew && GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 150 compute-sanitizer --tool memcheck ./check_hash_cuda > $OUT/memcheck_hash.txt 2>&1; echo "memcheck rc $?")
tail -2 $OUT/memcheck_hash.txt; el memcheck
for round in 1 2; do
  for s in old new; do
    echo "== round $round $s" >> $OUT/hash.txt
    timeout 150 /tmp/b$s/geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 22 --max-log2 26 --reps 3 >> $OUT/hash.txt 2>&1
  done
  el "round $round"
done
for s in old new; do
  echo "== $s" >> $OUT/robin.txt
  timeout 200 /tmp/b$s/geohash-match bench hash --backend cuda --seed 1 --scheme robin-hood --min-log2 26 --max-log2 26 --reps 3 >> $OUT/robin.txt 2>&1
done
el robin
grep -E "==|^map +bucketed" $OUT/hash.txt | sed -E "s/  +/ /g" | cut -c1-110
grep -E "==|^map|^coherent" $OUT/robin.txt | sed -E "s/  +/ /g" | cut -c1-120
