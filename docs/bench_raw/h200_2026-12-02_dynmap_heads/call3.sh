#!/usr/bin/env bash
# s72 call 3 (one H200): o = 7339753 (this stop's HEAD), f = the working tree (the insert's
# bucket heads read in the pass that resolves the leaders; one found empty there read again).
# ctest of the dynmap / tables / fault / edit cases on f; check_dynmap's cuda cases under
# memcheck, memcheck and racecheck of bench dynmap --quick, on f; the edit PLYs o = f on CUDA;
# bench dynmap o f f o.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); R=/tmp/o; mkdir -p $R
el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/log.txt; }
W=$PWD
for v in o f; do
  t=base; [ $v != o ] && t=new
  mkdir -p /tmp/s$v && tar -xf .dev/c72/$t.tar -C /tmp/s$v && sed -i "s/ -Werror//" /tmp/s$v/CMakeLists.txt
  ln -s $W/data /tmp/s$v/data
done
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
(cd /tmp/so && bash scripts/device_build.sh $W/.dev/debs . /tmp/bo $A > /tmp/build_o.log 2>&1 || echo FAIL o) &
(cd /tmp/sf && bash scripts/device_build.sh $W/.dev/debs . /tmp/bf $A > /tmp/build_f.log 2>&1) || { echo FAIL f; grep -B2 -A10 error /tmp/build_f.log | head -40; }
wait; el builds
(cd /tmp/bf && timeout 150 ctest -j 16 -R 'dynmap|tables|faults_cuda|voxel_edit|edit' -LE slow --timeout 140 > $R/ctest_f.txt 2>&1; el ctest f rc $?)
grep -E "tests passed|Failed|\*\*\*" $R/ctest_f.txt | tail -8
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 90 compute-sanitizer --tool memcheck --leak-check full /tmp/bf/check_dynmap > $R/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' $R/mc_$c.txt | tail -1)"
done
timeout 80 compute-sanitizer --tool racecheck /tmp/bf/geohash-match bench dynmap --backend cuda --quick > $R/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' $R/rc.txt | tail -1)"
timeout 80 compute-sanitizer --tool memcheck /tmp/bf/geohash-match bench dynmap --backend cuda --quick > $R/mc_bench.txt 2>&1
el "memcheck bench rc $? $(grep 'ERROR SUMMARY' $R/mc_bench.txt | tail -1)"
python3 /tmp/sf/scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
L="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --subtract /tmp/B.ply --add $D/bunny.ply --subtract $D/kitten.ply --add /tmp/A.ply --subtract /tmp/B.ply"
for x in E L; do
  for v in o f; do /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/${x}_$v.ply > $R/${x}_$v.json 2>&1 || echo "rc $? $x $v"; done
  cmp /tmp/${x}_o.ply /tmp/${x}_f.ply && echo "$x: CUDA PLYs o = f"
done | tee $R/edit.txt
el edits
for v in o f f o; do
  k=$((${k:-0} + 1))
  timeout 50 /tmp/b$v/geohash-match bench dynmap --backend cuda --reps 3 --json-out $R/dyn_${v}_$k.json > $R/dyn_${v}_$k.txt 2>&1 || echo "rc $? $v"
  el "dyn $v $k"
done
tar czf $OUT/call3.tgz -C /tmp o
el done
