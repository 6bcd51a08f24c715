#!/usr/bin/env bash
# s66 call 5 (one H200): n = 941887f (Accel8; ghm_dynmap_erase_if; the CPU edit's intersect by it).
# The dynmap / fault / edit / tables ctests with the slow edit cases, memcheck of check_dynmap's
# CUDA cases, the four edits' CUDA PLY = CPU PLY.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
W=$PWD
mkdir -p /tmp/o /tmp/sn
tar -xf .dev/c66/new.tar -C /tmp/sn && sed -i "s/ -Werror//" /tmp/sn/CMakeLists.txt
ln -s $W/data /tmp/sn/data
(cd /tmp/sn && bash scripts/device_build.sh $W/.dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > /tmp/build_n.log 2>&1) || { echo FAIL n; grep -B2 -A10 error /tmp/build_n.log | head -40; }
el build
python3 /tmp/sn/scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
F="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
J="voxel edit --json --grid 200 $D/kitten.ply --intersect $D/bunny.ply --add /tmp/B.ply --intersect /tmp/B.ply --add $D/kitten.ply --intersect $D/kitten.ply"
L="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --subtract /tmp/B.ply --add $D/bunny.ply --subtract $D/kitten.ply --add /tmp/A.ply --subtract /tmp/B.ply"
for x in E F J L; do
  /tmp/bn/geohash-match ${!x} --backend cuda -o /tmp/${x}_cuda.ply > /dev/null 2>&1 || echo "rc $? $x cuda"
  /tmp/bn/geohash-match ${!x} --backend cpu -o /tmp/${x}_cpu.ply > /dev/null 2>&1 || echo "rc $? $x cpu"
  cmp /tmp/${x}_cuda.ply /tmp/${x}_cpu.ply && echo "$x: CUDA PLY = CPU PLY"
done | tee /tmp/o/edit.txt
el edits
(cd /tmp/bn && timeout 230 ctest -j 16 -R 'dynmap|faults_cuda|voxel_edit|edit|tables_cuda' --timeout 220 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*|sec$" /tmp/o/ctest.txt | tail -24
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 100 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/check_dynmap > /tmp/o/mc_cuda.txt 2>&1
el "memcheck cuda rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_cuda.txt | tail -1)"
tar czf $OUT/call5.tgz -C /tmp o
el done
