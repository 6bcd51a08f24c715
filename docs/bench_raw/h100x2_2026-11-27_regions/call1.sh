#!/usr/bin/env bash
# The split map after the grouped insert and the bucket regions: old 1896b0a (grouped insert,
# whole-table second buckets) and new (the working tree) built side by side (no MPI), then
# check_dist_map of new and `bench distmap --gpus 2 --log2 28` (and 26), old and new in turns.
set -u
export NCCL_NVLS_ENABLE=0
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
mkdir -p /tmp/srcold && tar xJf .dev/old-src.tar.xz -C /tmp/srcold && sed -i "s/ -Werror//" /tmp/srcold/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/srcold /tmp/bold > $OUT/build_old.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/bnew > $OUT/build_new.log 2>&1
wait; tail -1 $OUT/build_new.log; tail -1 $OUT/build_old.log; el builds
(cd /tmp/bnew && timeout 200 ./check_dist_map 2>&1 | tail -1); el check_dist_map
for round in 1 2; do
  for s in old new; do
    echo "== round $round $s 2^28" >> $OUT/distmap.txt
    timeout 150 /tmp/b$s/geohash-match bench distmap --gpus 2 --log2 28 >> $OUT/distmap.txt 2>&1
    el "$round $s"
  done
done
for s in old new; do
  echo "== $s 2^26" >> $OUT/distmap.txt
  timeout 100 /tmp/b$s/geohash-match bench distmap --gpus 2 --log2 26 >> $OUT/distmap.txt 2>&1
done
cat $OUT/distmap.txt | grep -v "^ *$" | cut -c1-150
