#!/usr/bin/env bash
# s60 call 4 (one H200): the review's rows_in mend. prev b54d334 / new: PLYs of three edits and
# a voxel-mode run prev = new, new CUDA = new CPU, ctest voxel|edit (CUDA cases), memcheck.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/prev /tmp/o
tar -xf .dev/c60/prev.tar -C /tmp/prev && sed -i "s/ -Werror//" /tmp/prev/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/prev /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL prev) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
python3 -c 'for i in range(40):
    for j in range(40): print(i / 40, j / 40, 0.5, 0, 0, 1)' > /tmp/plane.xyz
for v in o n; do
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/e_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/j_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 64 $D/kitten.ply --subtract /tmp/plane.xyz -o /tmp/p_$v.ply > /tmp/p_$v.txt 2>&1; echo "refusal $v rc $?: $(tail -c 120 /tmp/p_$v.txt)"
  /tmp/b$v/geohash-match voxel --backend cuda --grid 256 -o /tmp/v_$v.ply /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
done
/tmp/bn/geohash-match voxel edit --backend cpu --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/j_cpu.ply > /dev/null 2>&1
for f in e j v; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY prev / new: $f"; done
cmp /tmp/j_cpu.ply /tmp/j_n.ply && echo "CPU PLY = CUDA PLY: j"
el checks
cd /tmp/bn && timeout 300 ctest -j 16 -R "voxel|edit|dynmap" -LE slow --timeout 250 > /tmp/o/ctest.txt 2>&1; el "ctest rc $?"
grep -E "tests passed|Failed|Timeout" /tmp/o/ctest.txt | head
cd - > /dev/null
timeout 150 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 256 /tmp/A.ply --intersect $D/bunny.ply --subtract /tmp/B.ply -o /tmp/m2.ply > /tmp/o/mc.txt 2>&1
el "memcheck rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc.txt | tail -1)"
tar czf $OUT/call4.tgz -C /tmp o
