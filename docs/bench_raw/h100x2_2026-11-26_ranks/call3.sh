#!/usr/bin/env bash
# Where a find of the split map goes, old (1e18a75) and new (stable multisplit): per-step times
# (--verbose) and ncu's duration of the count, split and unsplit kernels.
set -u
export NCCL_NVLS_ENABLE=0
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
exec > >(tee "$OUT/log.txt") 2>&1
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old
cp scripts/device_build.sh /tmp/device_build.sh
for t in . /tmp/old; do sed -i "s/ -Werror//" $t/CMakeLists.txt; done
bash /tmp/device_build.sh .dev/debs . /tmp/b -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || tail -30 "$OUT/build.log"
bash /tmp/device_build.sh .dev/debs /tmp/old /tmp/bo -DGEOHASH_MPI=OFF >"$OUT/build_old.log" 2>&1 || tail -30 "$OUT/build_old.log"
el build
for rep in 1 2; do
for v in /tmp/bo /tmp/b; do
  echo "== $v --gpus 2 --verbose"
  $v/geohash-match bench distmap --gpus 2 --log2 28 --reps 2 --verbose 2>&1 | grep -E "dist map|split|one map"
done
done
el steps
for v in /tmp/bo /tmp/b; do
  echo "== ncu $v"
  timeout 200 ncu --kernel-name regex:"count_kernel|split_kernel|unsplit_kernel" --launch-count 9 \
     --section SpeedOfLight $v/geohash-match bench distmap --gpus 2 --log2 27 --reps 1 2>&1 |
     grep -E "split_kernel|count_kernel|unsplit_kernel|Duration|Memory Throughput|DRAM Throughput"
done
el ncu
