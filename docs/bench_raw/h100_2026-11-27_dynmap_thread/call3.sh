#!/usr/bin/env bash
# call 3: linear probing's find by windows of 4 (and 8) slots against 38427ce's slot by slot.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
R=$PWD
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/src_old /tmp/logs && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
A=-DCMAKE_CUDA_ARCHITECTURES=90
(bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old $A -DGEOHASH_TESTS=OFF >/tmp/logs/build_old.log 2>&1; echo "old rc $?" >>/tmp/logs/build_old.log) &
bash scripts/device_build.sh .dev/debs . /tmp/b $A >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build new
cd /tmp/b
timeout 250 ctest -j8 -R 'hash_cuda|^map\.|faults_cuda' -LE slow --timeout 240 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed|Passed" "$OUT/ctest.log" | head -20
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda CK_RUN_SUITE=hash_cuda timeout 200 compute-sanitizer --tool memcheck ./check_hash_cuda >/tmp/logs/memcheck_hash.log 2>&1
el "memcheck hash_cuda rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_hash.log | tail -1)" | tee -a "$OUT/summary.txt"
timeout 100 compute-sanitizer --tool initcheck ./geohash-match bench hash --backend cuda --scheme linear --quick >/tmp/logs/initcheck.log 2>&1
el "initcheck bench linear quick rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/initcheck.log | tail -1)" | tee -a "$OUT/summary.txt"
wait; tail -qn1 /tmp/logs/build_old.log; el builds done
B="bench hash --backend cuda --seed 1 --scheme linear --min-log2 26 --max-log2 26 --reps 3"
for round in 1 2; do
  for v in old new; do
    bin=/tmp/b_$v/geohash-match; [ $v = new ] && bin=/tmp/b/geohash-match
    timeout 100 $bin $B >"$OUT/lin_${v}_$round.txt" 2>&1; el "bench $v $round rc $?"
  done
done
for f in lin_old_1 lin_new_1 lin_old_2 lin_new_2; do echo "== $f"; grep -E "^map|absent +linear" "$OUT/$f.txt" | cut -c1-110; done
cd "$R"
sed -i 's/^enum { OPEN_WINDOW = 4 };/enum { OPEN_WINDOW = 8 };/' kernels/hashing/map_open.cu
cmake --build /tmp/b --target geohash-match >/tmp/logs/build_w8.log 2>&1; el "build w8 rc $?"
timeout 100 /tmp/b/geohash-match $B >"$OUT/lin_w8.txt" 2>&1
echo "== w8"; grep -E "^map|absent +linear" "$OUT/lin_w8.txt" | cut -c1-110
tar czf "$OUT/logs.tgz" -C /tmp logs
el done
