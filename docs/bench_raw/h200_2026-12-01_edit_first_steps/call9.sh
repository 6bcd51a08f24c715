#!/usr/bin/env bash
# s59 call 9 (one H200): the last review's kernel mend (voxel_at in voxelize.cu) against main
# before it (445a52d): PLYs old / new (edits and the voxel mode), CPU = CUDA, bench voxel in
# turns, ctest voxel|edit -LE slow.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o
tar -xf .dev/c59/main_pre.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
for v in o n; do
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/e_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/j_$v.ply > /dev/null 2>&1
  for g in 128 1024; do /tmp/b$v/geohash-match voxel --backend cuda --grid $g /tmp/A.ply /tmp/B.ply -o /tmp/v${g}_$v.ply > /dev/null 2>&1; done
  /tmp/b$v/geohash-match voxel --backend cuda --grid 256 $D/bunny.ply $D/kitten.ply -o /tmp/vs_$v.ply > /dev/null 2>&1
done
/tmp/bn/geohash-match voxel edit --backend cpu --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/e_cpu.ply > /dev/null 2>&1
for f in e j v128 v1024 vs; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"; done | tee /tmp/o/ab.txt
cmp /tmp/e_cpu.ply /tmp/e_n.ply && echo "CPU PLY = CUDA PLY: e" | tee -a /tmp/o/ab.txt
el checks
for r in 1 2; do for v in o n; do echo "round $r $v: $(/tmp/b$v/geohash-match bench voxel --backend cuda --grid 256 2>&1 | tail -3 | tr '\n' ' ')"; done; done | tee -a /tmp/o/ab.txt
el bench
cd /tmp/bn && timeout 150 ctest -j 16 -R 'voxel|edit' -LE slow --timeout 140 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
tar czf $OUT/call9.tgz -C /tmp o
