#!/usr/bin/env bash
# s52 call 2 (one H200 host, its 16-core Xeon): CPU finds, four libraries built CPU-only:
# bo = 2b6b173 (batches of 32), ring = de57fab (a ring, a stage per key 12 apart), bp8 / bp16 =
# the working tree (batches of 8 / 16 keys pipelined: batch b in stage 0 while b - 1 is in stage
# 1 ...); fb2 (findbench with 2^LG keys) in turns, LG 24 and 18, 2 and 16 threads.
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
C="-DGEOHASH_CUDA=OFF -DGEOHASH_TESTS=OFF"
mk() { # name src
  bash scripts/device_build.sh .dev/debs $2 /tmp/b_$1 $C > $OUT/build_$1.log 2>&1 || { tail $OUT/build_$1.log; exit 1; }
}
mkdir -p /tmp/t_bo /tmp/t_ring && tar -xf .dev/c52/old.tar -C /tmp/t_bo && tar -xf .dev/c52/ring.tar -C /tmp/t_ring
for B in 8 16; do mkdir -p /tmp/t_bp$B && cp -r CMakeLists.txt cmake hashing vision src kernels tests scripts /tmp/t_bp$B/ 2>/dev/null; cp -r * /tmp/t_bp$B/ 2>/dev/null; sed -i "s/^#define GHMI_PIPE_DIST .*/#define GHMI_PIPE_DIST $B/" /tmp/t_bp$B/hashing/cpu_find_pipe.h; done
for v in bo ring bp8 bp16; do sed -i "s/ -Werror//" /tmp/t_$v/CMakeLists.txt; mk $v /tmp/t_$v & done; wait
ls /tmp/b_*/libgeohash.so || exit 1
el build
gcc -O2 -o /tmp/fb2 .dev/c52/fb2.c -Ihashing -I/tmp/b_bp16/include -L/tmp/b_bp16 -lgeohash || exit 1
{
for rep in 1 2; do
  for LG in 24 18; do
    R=5; [ $LG = 18 ] && R=41
    for T in 2 16; do
      for cfg in "chaining 0.8" "chaining 0.95" "cuckoo 0.8" "cuckoo 0.95"; do
        for v in bo ring bp8 bp16; do
          echo -n "round $rep LG=$LG T=$T $v "; LG=$LG T=$T LD_LIBRARY_PATH=/tmp/b_$v timeout 60 /tmp/fb2 $cfg $R
        done
      done
    done
  done
done
el bench
} 2>&1 | tee $OUT/call2.txt
