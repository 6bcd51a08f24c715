#!/usr/bin/env bash
# s59 call 8 (one H200): the review's commits (check_dynmap's reference runs in their own file,
# one device lower bound for GhmSorted and the enclosure test, widen's histograms by the same
# helper): the dynmap, sorted, table, voxel and edit ctests; PLYs old / new; memcheck.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o
tar -xf .dev/c59/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
for v in o n; do
  /tmp/b$v/geohash-match $EDIT -o /tmp/e_$v.ply > /tmp/e_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply -o /tmp/j_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 300 $D/kitten.ply --add $D/bunny.ply --subtract /tmp/B.ply -o /tmp/g_$v.ply > /dev/null 2>&1
done
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
for f in e j g; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"; done | tee /tmp/o/ab.txt
cmp /tmp/e_cpu.ply /tmp/e_n.ply && echo "CPU PLY = CUDA PLY: e" | tee -a /tmp/o/ab.txt
el checks
cd /tmp/bn
timeout 400 ctest -j 16 -R 'dynmap|sorted|tables_cuda|hash_cuda|^map|voxel|edit|faults_cuda' -LE slow --timeout 300 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
cd - > /dev/null
timeout 150 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 256 /tmp/A.ply --intersect $D/bunny.ply --subtract /tmp/B.ply -o /tmp/m2.ply > /tmp/o/mc_sparse.txt 2>&1
el "memcheck sparse edit rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_sparse.txt | tail -1)"
tar czf $OUT/call8.tgz -C /tmp o
el done
