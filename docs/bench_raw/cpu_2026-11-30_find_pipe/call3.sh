#!/usr/bin/env bash
# s52 call 3 (one H200 host, its 16-core Xeon): CPU finds of larger tables, libraries built
# CPU-only: bo = 2b6b173 (batches of 32), ring = de57fab (per key, 12 apart), ring32 (32 apart),
# bp32 = the working tree with batches of 32 pipelined; fb2 at 2^24 and 2^26 keys, 2 / 16 threads.
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
C="-DGEOHASH_CUDA=OFF -DGEOHASH_TESTS=OFF"
mk() { bash scripts/device_build.sh .dev/debs $2 /tmp/b_$1 $C > $OUT/build_$1.log 2>&1 || { tail $OUT/build_$1.log; exit 1; }; }
mkdir -p /tmp/t_bo /tmp/t_ring /tmp/t_ring32 /tmp/t_bp32
tar -xf .dev/c52/old.tar -C /tmp/t_bo; tar -xf .dev/c52/ring.tar -C /tmp/t_ring; tar -xf .dev/c52/ring.tar -C /tmp/t_ring32
sed -i "s/^#define GHMI_PIPE_DIST .*/#define GHMI_PIPE_DIST 32/; s/^#define GHMI_PIPE_RING 32 /#define GHMI_PIPE_RING 128 /" /tmp/t_ring32/hashing/cpu_find_pipe.h
grep -n "define GHMI_PIPE" /tmp/t_ring32/hashing/cpu_find_pipe.h
cp -r * /tmp/t_bp32/ 2>/dev/null; sed -i "s/^#define GHMI_PIPE_DIST .*/#define GHMI_PIPE_DIST 32/" /tmp/t_bp32/hashing/cpu_find_pipe.h
for v in bo ring ring32 bp32; do sed -i "s/ -Werror//" /tmp/t_$v/CMakeLists.txt; mk $v /tmp/t_$v & done; wait
ls /tmp/b_*/libgeohash.so || exit 1
el build
gcc -O2 -o /tmp/fb2 .dev/c52/fb2.c -Ihashing -I/tmp/b_bp32/include -L/tmp/b_bp32 -lgeohash || exit 1
{
for rep in 1 2; do
  for LG in 26 24; do
    for T in 16 2; do
      for cfg in "cuckoo 0.8" "chaining 0.8"; do
        for v in bo ring ring32 bp32; do
          echo -n "round $rep LG=$LG T=$T $v "; LG=$LG T=$T LD_LIBRARY_PATH=/tmp/b_$v timeout 90 /tmp/fb2 $cfg 3
        done
      done
    done
  done
done
el bench
} 2>&1 | tee $OUT/call3.txt
