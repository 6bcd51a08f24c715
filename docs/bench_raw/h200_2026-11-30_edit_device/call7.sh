#!/usr/bin/env bash
# s57 call 7 (one H200): the fill's blocks per SM (fill_bps.patch: env GHM_FILL_BPS_V for a
# probe's fill, GHM_FILL_BPS for the voxel mode's), HEAD + the patch.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
patch -p1 -s < .dev/c57/fill_bps.patch || echo PATCH FAIL
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el build
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (fill %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["fill"]) for s in j["steps"]))' "$1"; }
for b in 1 2 3 4 1 2 3 4; do
  GHM_FILL_BPS_V=$b /tmp/bn/geohash-match $EDIT -o /tmp/x_$b.ply > /tmp/x.json; echo "bps $b: $(steps /tmp/x.json)"
done | tee /tmp/o/bps.txt
for b in 1 2 3 4; do cmp /tmp/x_1.ply /tmp/x_$b.ply && echo "same $b"; done
for b in 1 2 3; do
  echo "voxel bps $b: $(GHM_FILL_BPS=$b timeout 100 /tmp/bn/geohash-match bench voxel --backend cuda --grid 256 --reps 10 | sed -n 3,5p | awk '{printf "%s %s | ", $14, $17}')"
  echo "voxel512 bps $b: $(GHM_FILL_BPS=$b timeout 100 /tmp/bn/geohash-match bench voxel --backend cuda --grid 512 --reps 5 --points 160000,1280000 | sed -n 3,4p | awk '{printf "%s %s | ", $14, $17}')"
done | tee -a /tmp/o/bps.txt
el done
