#!/usr/bin/env bash
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
el built
B=/tmp/b/geohash-match
for fo in "16 14" "18 16" "20 18" "21 20"; do set -- $fo
  echo "== fill 2^$1 ops 2^$2"; $B bench dynmap --backend cuda --reps 5 --fill-log2 $1 --ops-log2 $2 2>&1 | sed -n '2,4p;/baseline/p' | cut -c1-130
done
el dyn
$B bench voxel --backend cuda --reps 10 --points 160000 --grid 128 2>&1 | tail -4
$B bench voxel --backend cuda --reps 5 --points 10000000 --grid 1024 2>&1 | tail -4
el all
