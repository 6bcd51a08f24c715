#!/usr/bin/env bash
# s57 call 11 (one H200): after the review's mend of the contact loop (61111e8): the edits' PLYs
# and counts against old 1e17580, CPU = CUDA, ctest voxel|edit, the voxel mode's PLYs.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o
tar -xf .dev/c57/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
counts() { python3 -c '
import json, sys
print([[s[k] for k in ("probed", "inside", "unknown", "cloud_voxels", "radius", "added", "erased", "relabelled", "voxels")] for s in json.load(open(sys.argv[1]))["steps"]])' "$1"; }
for v in o n; do
  /tmp/b$v/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/e_$v.ply > /tmp/e_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply -o /tmp/j_$v.ply > /tmp/j_$v.json 2>&1
  /tmp/b$v/geohash-match voxel --backend cuda --grid 256 $D/bunny.ply $D/kitten.ply -o /tmp/vbk_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel --backend cuda --grid 256 /tmp/A.ply /tmp/B.ply -o /tmp/vab_$v.ply > /dev/null 2>&1
done
for f in e j; do
  cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"
  [ "$(counts /tmp/${f}_o.json)" = "$(counts /tmp/${f}_n.json)" ] && echo "same counts old / new: $f"
done | tee /tmp/o/ab.txt
for f in vbk vab; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"; done | tee -a /tmp/o/ab.txt
cd /tmp/bn
timeout 200 ctest -j 16 -R 'voxel|edit' -LE slow --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed" /tmp/o/ctest.txt | head
tar czf $OUT/call11.tgz -C /tmp o
el done
