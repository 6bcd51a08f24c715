#!/usr/bin/env bash
# s63 call 5 (one H200): a voxel subtract step's kernels (ncu durations at ncu's clocks): the
# edit of A by B alone against A alone (base); the step's wall time from --json.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
[ -x /tmp/bn/geohash-match ] || bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el builds
[ -f /tmp/A.ply ] || python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
M="--metrics gpu__time_duration.sum --csv --print-units base"
timeout 200 ncu $M /tmp/bn/geohash-match voxel edit --json --grid 256 /tmp/A.ply --backend cuda -o /tmp/x.ply > /tmp/o/base.csv 2>/tmp/o/base.err; el "ncu base rc $?"
timeout 200 ncu $M /tmp/bn/geohash-match voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --backend cuda -o /tmp/x.ply > /tmp/o/sub.csv 2>/tmp/o/sub.err; el "ncu sub rc $?"
wc -l /tmp/o/*.csv
gzip -9 /tmp/o/*.csv; cp /tmp/o/*.csv.gz $OUT/
for r in 1 2 3; do /tmp/bn/geohash-match voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --backend cuda -o /tmp/x.ply | python3 -c 'import json,sys; s=json.load(sys.stdin)["steps"][1]; print({k: round(v, 3) for k, v in s["timings_ms"].items()})'; done
el done
