#!/usr/bin/env bash
# s67 call 2 (one H200): o = ec8254d (stop 66's HEAD), n = the working tree (an insert's pool:
# slabs handed out before the look-up, appended in the plan kernel), x = n with the plan kernel
# at 6 blocks a multiprocessor (__launch_bounds__, 40 registers). ctest of the dynmap / tables /
# fault / edit cases on n, memcheck of check_dynmap's CUDA cases and of bench dynmap --quick,
# racecheck of it, the edit PLYs o = n on CUDA; the driver's wall times o n x in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
W=$PWD
mkdir -p /tmp/o /tmp/so /tmp/sn /tmp/sx
for v in o n x; do
  t=head; [ $v != o ] && t=new
  tar -xf .dev/c67/$t.tar -C /tmp/s$v && sed -i "s/ -Werror//" /tmp/s$v/CMakeLists.txt
  ln -s $W/data /tmp/s$v/data
done
sed -i 's/^static __global__ void plan_kernel(/static __global__ void __launch_bounds__(THREADS, 6) plan_kernel(/' /tmp/sx/kernels/hashing/dynmap.cu
grep -c "launch_bounds__(THREADS, 6) plan_kernel" /tmp/sx/kernels/hashing/dynmap.cu
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
(cd /tmp/so && bash scripts/device_build.sh $W/.dev/debs . /tmp/bo $A -DGEOHASH_TESTS=OFF > /tmp/build_o.log 2>&1 || echo FAIL o) &
(cd /tmp/sx && bash scripts/device_build.sh $W/.dev/debs . /tmp/bx $A -DGEOHASH_TESTS=OFF > /tmp/build_x.log 2>&1 || echo FAIL x) &
(cd /tmp/sn && bash scripts/device_build.sh $W/.dev/debs . /tmp/bn $A > /tmp/build_n.log 2>&1) || { echo FAIL n; grep -B2 -A10 error /tmp/build_n.log | head -40; }
wait; el builds
for v in o n x; do
  gcc -std=c11 -O2 -I/tmp/s$v/hashing -I/tmp/b$v/include .dev/c67/prof_dyn.c /tmp/b$v/libgeohash.so -Wl,-rpath,/tmp/b$v -o /tmp/prof_$v || echo FAIL driver $v
done
(cd /tmp/bn && timeout 200 ctest -j 16 -R 'dynmap|tables|faults_cuda|voxel_edit|edit' -LE slow --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*|sec$" /tmp/o/ctest.txt | tail -22
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 120 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/check_dynmap > /tmp/o/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$c.txt | tail -1)"
done
timeout 90 compute-sanitizer --tool racecheck /tmp/bn/geohash-match bench dynmap --backend cuda --quick > /tmp/o/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc.txt | tail -1)"
timeout 90 compute-sanitizer --tool memcheck /tmp/bn/geohash-match bench dynmap --backend cuda --quick > /tmp/o/mc_bench.txt 2>&1
el "memcheck bench rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_bench.txt | tail -1)"
python3 /tmp/sn/scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
L="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --subtract /tmp/B.ply --add $D/bunny.ply --subtract $D/kitten.ply --add /tmp/A.ply --subtract /tmp/B.ply"
for x in E L; do
  for v in o n; do /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/${x}_$v.ply > /tmp/o/${x}_$v.json 2>&1 || echo "rc $? $x $v"; done
  cmp /tmp/${x}_o.ply /tmp/${x}_n.ply && echo "$x: CUDA PLYs o = n"
done | tee /tmp/o/edit.txt
el edits
for v in o n x x n o; do
  for var in atomic64 accel32 accel8; do
    echo "== $v"; timeout 60 /tmp/prof_$v $var 2 4 2>&1
  done >> /tmp/o/wall_$v.txt
  el "wall $v"
done
tar czf $OUT/call2.tgz -C /tmp o
el done
