#!/usr/bin/env bash
# s52 call 4 (one H200): ghm_keys.h and bench hash's coherent experiment in the paper's three
# orders - the tree built with CUDA; ctests keys, hash_cuda, map, the bench hash CLI case;
# bench hash robin-hood and robin-hood-random at 2^26 (the 8192 x 8192 sparse image), twice.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/build_new.log 2>&1 || { tail -30 $OUT/build_new.log; exit 1; }
el build
{
cd /tmp/bn
timeout 300 ctest -j 4 -R '^keys|hash_cuda|^map\.|bench_hash|tables_cuda' -LE slow 2>&1 | grep "tests passed\|Failed\|\*\*\*\|Not Run"; el ctest
cd - > /dev/null
for rep in 1 2; do
  for s in robin-hood robin-hood-random; do
    echo "== $s round $rep"
    timeout 200 /tmp/bn/geohash-match bench hash --backend cuda --seed 1 --scheme $s --min-log2 26 --max-log2 26 --reps 3 --json-out $OUT/${s}_$rep.json | grep -E "^coherent|^map"
  done
done
el bench
} 2>&1 | tee $OUT/call4.txt
