#!/usr/bin/env bash
# s67 call 4 (one H200): o = ec8254d (stop 66's HEAD); y = the working tree: an insert's pool
# (none for an empty table), the appending thread linking a slab of it and then claiming its
# slots without a look; n = y but looking at the slab it linked (call 2's). ctest of the dynmap
# / tables / fault / edit cases on y, memcheck of check_dynmap's CUDA cases and of bench dynmap
# --quick, racecheck of it; the edit PLYs o = y on CUDA; the driver's wall times and bench
# dynmap o n y y n o.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
W=$PWD
mkdir -p /tmp/o /tmp/so /tmp/sn /tmp/sy
for v in o n y; do
  t=head; [ $v != o ] && t=new_$v
  tar -xf .dev/c67/$t.tar -C /tmp/s$v && sed -i "s/ -Werror//" /tmp/s$v/CMakeLists.txt
  ln -s $W/data /tmp/s$v/data
done
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
(cd /tmp/so && bash scripts/device_build.sh $W/.dev/debs . /tmp/bo $A -DGEOHASH_TESTS=OFF > /tmp/build_o.log 2>&1 || echo FAIL o) &
(cd /tmp/sn && bash scripts/device_build.sh $W/.dev/debs . /tmp/bn $A -DGEOHASH_TESTS=OFF > /tmp/build_n.log 2>&1 || echo FAIL n) &
(cd /tmp/sy && bash scripts/device_build.sh $W/.dev/debs . /tmp/by $A > /tmp/build_y.log 2>&1) || { echo FAIL y; grep -B2 -A10 error /tmp/build_y.log | head -40; }
wait; el builds
for v in o n y; do
  gcc -std=c11 -O2 -I/tmp/s$v/hashing -I/tmp/b$v/include .dev/c67/prof_dyn.c /tmp/b$v/libgeohash.so -Wl,-rpath,/tmp/b$v -o /tmp/prof_$v || echo FAIL driver $v
done
(cd /tmp/by && timeout 200 ctest -j 16 -R 'dynmap|tables|faults_cuda|voxel_edit|edit' -LE slow --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | tail -8
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 120 compute-sanitizer --tool memcheck --leak-check full /tmp/by/check_dynmap > /tmp/o/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$c.txt | tail -1)"
done
timeout 90 compute-sanitizer --tool racecheck /tmp/by/geohash-match bench dynmap --backend cuda --quick > /tmp/o/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc.txt | tail -1)"
timeout 90 compute-sanitizer --tool memcheck /tmp/by/geohash-match bench dynmap --backend cuda --quick > /tmp/o/mc_bench.txt 2>&1
el "memcheck bench rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_bench.txt | tail -1)"
python3 /tmp/sy/scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
L="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --subtract /tmp/B.ply --add $D/bunny.ply --subtract $D/kitten.ply --add /tmp/A.ply --subtract /tmp/B.ply"
for x in E L; do
  for v in o y; do /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/${x}_$v.ply > /tmp/o/${x}_$v.json 2>&1 || echo "rc $? $x $v"; done
  cmp /tmp/${x}_o.ply /tmp/${x}_y.ply && echo "$x: CUDA PLYs o = y"
done | tee /tmp/o/edit.txt
el edits
for v in o y y o o y; do
  k=$((${k:-0} + 1)); /tmp/b$v/geohash-match $E --backend cuda -o /tmp/E.ply > /tmp/o/Et_${v}_$k.json 2>&1 || echo "rc $? E $v"
done
el "edit times"
unset k
for v in o n y y n o; do
  for var in atomic64 accel32 accel8; do echo "== $v"; timeout 60 /tmp/prof_$v $var 2 4 2>&1; done >> /tmp/o/wall_$v.txt
done
el wall
for v in o n y y n o; do
  k=$((${k:-0} + 1))
  timeout 110 /tmp/b$v/geohash-match bench dynmap --backend cuda --reps 3 --json-out /tmp/o/dyn_${v}_$k.json > /tmp/o/dyn_${v}_$k.txt 2>&1 || echo "rc $? $v"
  el "dyn $v $k"
done
tar czf $OUT/call4.tgz -C /tmp o
el done
