#!/usr/bin/env bash
# s52 call 1 (one H200): the CPU finds as a software pipeline (chaining, bucketed cuckoo) -
# 2b6b173 (old) / working tree (new) side by side; the new tree's ctests that compare the CPU
# maps' answers with the CUDA ones; findbench (2^24 keys) old / new in turns, 2 and 16 threads.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
F="-DCMAKE_CUDA_ARCHITECTURES=90"
mkdir -p /tmp/old && tar -xf .dev/c52/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F -DGEOHASH_TESTS=OFF > $OUT/build_old.log 2>&1 &
po=$!
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1
wait $po || { tail -30 $OUT/build_old.log; exit 1; }
tail -3 $OUT/build_new.log
el build
{
lscpu | grep -E "Model name|^CPU\(s\)|L3"
cd /tmp/bn
timeout 300 ctest -j 4 -R 'hash_cuda|^map\.|find_pipe|multimap|index|tables_cuda|geohash_cuda|voxel_cuda|faults_cuda' -LE slow 2>&1 | grep "tests passed\|Failed\|\*\*\*\|Not Run"; el ctest
cd - > /dev/null
gcc -O2 -o /tmp/fb docs/bench_raw/h200_2026-11-29_linear_windows/findbench.c -Ihashing -I/tmp/bn/include -L/tmp/bn -lgeohash || exit 1
for rep in 1 2 3; do
  for T in 2 16; do
    for cfg in "chaining 0.8" "chaining 0.95" "cuckoo 0.8" "cuckoo 0.95"; do
      for v in bo bn; do
        echo -n "round $rep T=$T $v "; T=$T LD_LIBRARY_PATH=/tmp/$v timeout 60 /tmp/fb $cfg 5
      done
    done
  done
done
el bench
} 2>&1 | tee $OUT/call1.txt
