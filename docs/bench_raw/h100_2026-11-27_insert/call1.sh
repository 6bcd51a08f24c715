#!/usr/bin/env bash
# old (HEAD in .dev/old-src.tar.xz) and new (working tree): tests of the grouped insert, bench hash, voxel 10M
set -u
R=$PWD; t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/oldsrc && tar xJf .dev/old-src.tar.xz -C /tmp/oldsrc && sed -i "s/ -Werror//" /tmp/oldsrc/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/nb > $OUT/build_new.log 2>&1 &
bash scripts/device_build.sh .dev/debs /tmp/oldsrc /tmp/ob > $OUT/build_old.log 2>&1 &
wait; tail -1 $OUT/build_new.log; tail -1 $OUT/build_old.log; el builds
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
(cd /tmp/nb && timeout 240 ctest -R 'hash_cuda|faults_cuda|map\.|cli.bench_hash' -j4 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed|\*\*\*|faults_cuda:.*grouped" $OUT/ctest.log | head; el ctest
B() { [ $1 = old ] && echo /tmp/ob/geohash-match || echo /tmp/nb/geohash-match; }
for round in 1 2; do for s in old new; do
  echo "== round $round $s: bench hash cuckoo 2^26" >> $OUT/hash.txt
  timeout 100 $(B $s) bench hash --backend cuda --scheme cuckoo --min-log2 26 --max-log2 26 --reps 3 >> $OUT/hash.txt 2>&1
  el "hash $round $s"
done; done
for s in old new; do
  echo "== $s: bench hash cuckoo 2^21..2^24" >> $OUT/hash.txt
  timeout 100 $(B $s) bench hash --backend cuda --scheme cuckoo --min-log2 21 --max-log2 24 --reps 3 >> $OUT/hash.txt 2>&1
  el "hash small $s"
done
for s in old new; do
  echo "== $s: bench voxel 2 x 10M at 1024^3" >> $OUT/voxel10m.txt
  timeout 60 $(B $s) bench voxel --backend cuda --threads 16 --reps 3 --points 10000000 --grid 1024 >> $OUT/voxel10m.txt 2>&1
done; el voxel10m
cd /tmp/nb && GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck ./check_hash_cuda > $OUT/memcheck_hash.txt 2>&1; echo "memcheck rc $?"; tail -3 $OUT/memcheck_hash.txt; el memcheck
grep -E "==|^map" $OUT/hash.txt | sed -E "s/  +/ /g" | cut -c1-160 | head -80
grep -vE "^$" $OUT/voxel10m.txt | sed -E 's/  +/ /g' | cut -c1-160 | head -20
