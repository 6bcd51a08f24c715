#!/usr/bin/env bash
# s66 call 1 (one H200): HEAD cca19fa (stop 65's last commit, from .dev/c66/head.tar) on CUDA:
# the dynmap / tables / fault / edit ctests, memcheck of check_dynmap's CUDA cases and of CUDA
# edits, racecheck of a cut and of bench dynmap --quick, PLYs CUDA = CPU.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
W=$PWD
mkdir -p /tmp/o /tmp/sh
tar -xf .dev/c66/head.tar -C /tmp/sh && sed -i "s/ -Werror//" /tmp/sh/CMakeLists.txt
ln -s $W/data /tmp/sh/data
(cd /tmp/sh && bash scripts/device_build.sh $W/.dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > /tmp/build.log 2>&1) || { echo FAIL build; grep -B2 -A10 error /tmp/build.log | head -40; }
el build
python3 /tmp/sh/scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
F="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
J="voxel edit --json --grid 200 $D/kitten.ply --intersect $D/bunny.ply --add /tmp/B.ply --intersect /tmp/B.ply --add $D/kitten.ply --intersect $D/kitten.ply"
L="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --subtract /tmp/B.ply --add $D/bunny.ply --subtract $D/kitten.ply --add /tmp/A.ply --subtract /tmp/B.ply"
for x in E F J L; do
  /tmp/bn/geohash-match ${!x} --backend cuda -o /tmp/${x}_cuda.ply > /tmp/${x}_cuda.json 2>&1 || echo "rc $? $x cuda"
  /tmp/bn/geohash-match ${!x} --backend cpu -o /tmp/${x}_cpu.ply > /tmp/${x}_cpu.json 2>&1 || echo "rc $? $x cpu"
  cmp /tmp/${x}_cuda.ply /tmp/${x}_cpu.ply && echo "$x: CUDA PLY = CPU PLY"
done | tee /tmp/o/edit.txt
(cd /tmp/bn && timeout 200 ctest -j 16 -R 'dynmap|tables|faults_cuda|voxel_edit|edit|bench_dynmap' -LE slow --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head -20
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 100 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/check_dynmap > /tmp/o/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$c.txt | tail -1)"
done
for x in F L; do
  timeout 60 compute-sanitizer --tool memcheck /tmp/bn/geohash-match ${!x} --backend cuda -o /tmp/m.ply > /tmp/o/mc_$x.txt 2>&1
  el "memcheck $x rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$x.txt | tail -1)"
done
timeout 60 compute-sanitizer --tool racecheck /tmp/bn/geohash-match voxel edit --grid 128 /tmp/A.ply --subtract /tmp/B.ply --intersect /tmp/B.ply --add /tmp/B.ply --backend cuda -o /tmp/m.ply > /tmp/o/rc_cut.txt 2>&1
el "racecheck edit rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc_cut.txt | tail -1)"
timeout 60 compute-sanitizer --tool racecheck /tmp/bn/geohash-match bench dynmap --backend cuda --quick > /tmp/o/rc_bench.txt 2>&1
el "racecheck bench rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc_bench.txt | tail -1)"
tar czf $OUT/call1.tgz -C /tmp o
el done
