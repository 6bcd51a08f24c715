#!/usr/bin/env bash
# s33 call 6: linear probing's find with warps that refill their lanes (experiment): n0 = the
# thread per key (restructured, same kernel), r64 = refill with chunks of 64 keys a warp,
# r64b8 = the same capped at 8 blocks an SM; in turns, two rounds, 2^26 at every load.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/logs6; mkdir -p $L
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/r64 -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF "-DCMAKE_CUDA_FLAGS=-DOPEN_REFILL" >$L/build_r64.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/r64b8 -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF "-DCMAKE_CUDA_FLAGS=-DOPEN_REFILL -DFIND_MINB=8" >$L/build_r64b8.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 >$L/build.log 2>&1 || { tail -40 $L/build.log; exit 1; }
wait
el build
B="bench hash --backend cuda --seed 1 --scheme linear --min-log2 26 --max-log2 26 --reps 3"
for r in 1 2; do for v in b r64 r64b8; do
  /tmp/$v/geohash-match $B > $L/lin_${v}_$r.txt 2>&1
  echo "round $r $v"; grep "^map" $L/lin_${v}_$r.txt
done; done | tee $OUT/linear_ab.txt
el bench
cd /tmp/b
timeout 200 ctest -j8 -R 'hash_cuda|^map\.' -LE slow --timeout 190 > $L/ctest.log 2>&1
el "ctest (n0) rc $?"; grep -E "tests passed" $L/ctest.log
tar czf $OUT/logs.tgz -C /tmp logs6
el done
