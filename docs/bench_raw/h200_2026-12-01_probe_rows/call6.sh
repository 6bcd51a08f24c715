#!/usr/bin/env bash
# s64 call 6 (one H200): call 5 again, twelve rounds, no tests: p = 6d002b7 (the code of 581efe5) against n = ee1a128 (the enclosure
# test first over one voxel a row): PLYs p = n and CUDA = CPU; the seven-step edit in turns (6
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/prev /tmp/o
tar -xf .dev/c64/prev5.tar -C /tmp/prev && sed -i "s/ -Werror//" /tmp/prev/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/prev /tmp/bp $A -DGEOHASH_TESTS=OFF >/tmp/build_prev.log 2>&1 || echo FAIL prev) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
J="voxel edit --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply"
for v in p n; do
  /tmp/b$v/geohash-match $E --backend cuda -o /tmp/e_$v.ply > /dev/null
  /tmp/b$v/geohash-match $J --backend cuda -o /tmp/j_$v.ply > /dev/null
done
/tmp/bn/geohash-match $E --backend cpu -o /tmp/e_cpu.ply > /dev/null
{ cmp /tmp/e_p.ply /tmp/e_n.ply && cmp /tmp/j_p.ply /tmp/j_n.ply && echo "PLYs p = n (two edits)"
  cmp /tmp/e_cpu.ply /tmp/e_n.ply && echo "seven-step edit: CUDA PLY = CPU PLY"; } | tee /tmp/o/edit.txt
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for round in 1 2 3 4 5 6 7 8 9 10 11 12; do
  order="p n"; [ $((round % 2)) = 0 ] && order="n p"
  for v in $order; do
    /tmp/b$v/geohash-match $E --backend cuda -o /tmp/x.ply > /tmp/x.json
    echo "round $round $v: $(steps /tmp/x.json)"
  done
done | tee -a /tmp/o/edit.txt
el edits
cp /tmp/o/* $OUT/
el done
