#!/usr/bin/env bash
# s67 call 5 (one H200): o = ec8254d (stop 66's HEAD), f = the working tree (call 4's n: an
# insert's pool, the appending thread linking a slab of it and then looking at it; no pool and
# no atomic for it in an empty table; the write's walk to the list's end only after appends).
# ctest of the CUDA list / edit / tables cases on f, check_dynmap's cuda case under memcheck,
# racecheck of bench dynmap --quick; the edit PLYs o = f on CUDA; bench dynmap o f f o.
# Everything is written to $OUT as it comes.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $OUT/log.txt; }
W=$PWD
mkdir -p /tmp/so /tmp/sf
for v in o f; do
  t=head; [ $v != o ] && t=new_f
  tar -xf .dev/c67/$t.tar -C /tmp/s$v && sed -i "s/ -Werror//" /tmp/s$v/CMakeLists.txt
  ln -s $W/data /tmp/s$v/data
done
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
(cd /tmp/so && bash scripts/device_build.sh $W/.dev/debs . /tmp/bo $A -DGEOHASH_TESTS=OFF > /tmp/build_o.log 2>&1 || echo FAIL o) &
(cd /tmp/sf && bash scripts/device_build.sh $W/.dev/debs . /tmp/bf $A > /tmp/build_f.log 2>&1) || { echo FAIL f; grep -B2 -A10 error /tmp/build_f.log | head -40; }
wait; el builds
(cd /tmp/bf && timeout 60 ctest -j 16 -R 'dynmap.cuda_lists|voxel_edit_cuda|tables_cuda' --timeout 55 > $OUT/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.txt | tail -8
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 60 compute-sanitizer --tool memcheck --leak-check full /tmp/bf/check_dynmap > $OUT/mc_cuda.txt 2>&1
el "memcheck cuda rc $? $(grep 'ERROR SUMMARY' $OUT/mc_cuda.txt | tail -1)"
timeout 60 compute-sanitizer --tool racecheck /tmp/bf/geohash-match bench dynmap --backend cuda --quick > $OUT/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' $OUT/rc.txt | tail -1)"
python3 /tmp/sf/scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
L="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --subtract /tmp/B.ply --add $D/bunny.ply --subtract $D/kitten.ply --add /tmp/A.ply --subtract /tmp/B.ply"
for x in E L; do
  for v in o f; do /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/${x}_$v.ply > $OUT/${x}_$v.json 2>&1 || echo "rc $? $x $v"; done
  cmp /tmp/${x}_o.ply /tmp/${x}_f.ply && echo "$x: CUDA PLYs o = f"
done | tee $OUT/edit.txt
el edits
for v in o f f o; do
  k=$((${k:-0} + 1))
  timeout 40 /tmp/b$v/geohash-match bench dynmap --backend cuda --reps 3 --json-out $OUT/dyn_${v}_$k.json > $OUT/dyn_${v}_$k.txt 2>&1 || echo "rc $? $v"
  el "dyn $v $k"
done
el done
