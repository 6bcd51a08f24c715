#!/usr/bin/env bash
# s66 call 2 (one H200): o = cca19fa (stop 65's HEAD), n = 7421699 (GhmDynmap's Accel8 on both
# backends). ctest of the dynmap / tables / fault / edit cases, memcheck of check_dynmap's CUDA
# cases, racecheck of bench dynmap --quick (all three variants) on n; the edit PLYs o = n on
# CUDA; bench dynmap in turns (o n n o).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
W=$PWD
mkdir -p /tmp/o /tmp/so /tmp/sn
for v in o n; do
  t=head; [ $v = n ] && t=new
  tar -xf .dev/c66/$t.tar -C /tmp/s$v && sed -i "s/ -Werror//" /tmp/s$v/CMakeLists.txt
  ln -s $W/data /tmp/s$v/data
done
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
(cd /tmp/so && bash scripts/device_build.sh $W/.dev/debs . /tmp/bo $A -DGEOHASH_TESTS=OFF > /tmp/build_o.log 2>&1 || echo FAIL o) &
(cd /tmp/sn && bash scripts/device_build.sh $W/.dev/debs . /tmp/bn $A > /tmp/build_n.log 2>&1) || { echo FAIL n; grep -B2 -A10 error /tmp/build_n.log | head -40; }
wait; el builds
(cd /tmp/bn && timeout 220 ctest -j 16 -R 'dynmap|tables|faults_cuda|voxel_edit|edit' -LE slow --timeout 210 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*|sec$" /tmp/o/ctest.txt | tail -22
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 150 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/check_dynmap > /tmp/o/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$c.txt | tail -1)"
done
timeout 100 compute-sanitizer --tool racecheck /tmp/bn/geohash-match bench dynmap --backend cuda --quick > /tmp/o/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc.txt | tail -1)"
timeout 100 compute-sanitizer --tool memcheck /tmp/bn/geohash-match bench dynmap --backend cuda --quick > /tmp/o/mc_bench.txt 2>&1
el "memcheck bench rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_bench.txt | tail -1)"
python3 /tmp/sn/scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
L="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --subtract /tmp/B.ply --add $D/bunny.ply --subtract $D/kitten.ply --add /tmp/A.ply --subtract /tmp/B.ply"
for x in E L; do
  for v in o n; do /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/${x}_$v.ply > /dev/null 2>&1 || echo "rc $? $x $v"; done
  cmp /tmp/${x}_o.ply /tmp/${x}_n.ply && echo "$x: CUDA PLYs o = n"
done | tee /tmp/o/edit.txt
el edits
for v in o n n o; do
  k=$((${k:-0} + 1))
  timeout 150 /tmp/b$v/geohash-match bench dynmap --backend cuda --reps 3 --json-out /tmp/o/dyn_${v}_$k.json > /tmp/o/dyn_${v}_$k.txt 2>&1 || echo "rc $? $v"
  el "dyn $v $k"
done
tar czf $OUT/call2.tgz -C /tmp o
el done
