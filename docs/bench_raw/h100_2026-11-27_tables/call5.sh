#!/usr/bin/env bash
# Old (1896b0a) and new (the working tree) in turns: the coherent-hashing paper's 2D experiment
# (bench hash --scheme robin-hood at 2^26: 8192 x 8192 pixels), twice; the voxel step 2 x 10M
# points at 1024^3 (its multimap's map now has regions), twice.
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
mkdir -p /tmp/srcold && tar xJf .dev/old-src.tar.xz -C /tmp/srcold && sed -i "s/ -Werror//" /tmp/srcold/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/srcold /tmp/bold > $OUT/build_old.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/bnew > $OUT/build_new.log 2>&1
wait; el builds
for round in 1 2; do
  for s in old new; do
    echo "== round $round $s" >> $OUT/robin.txt
    timeout 120 /tmp/b$s/geohash-match bench hash --backend cuda --seed 1 --scheme robin-hood --min-log2 26 --max-log2 26 --reps 3 >> $OUT/robin.txt 2>&1
    echo "== round $round $s" >> $OUT/voxel.txt
    timeout 100 /tmp/b$s/geohash-match bench voxel --backend cuda --threads 16 --reps 5 --points 10000000 --grid 1024 >> $OUT/voxel.txt 2>&1
    el "$round $s"
  done
done
grep -E "==|^map|^coherent" $OUT/robin.txt | sed -E "s/  +/ /g" | cut -c1-120
grep -E "==|10000000" $OUT/voxel.txt
