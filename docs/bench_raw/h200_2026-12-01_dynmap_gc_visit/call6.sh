#!/usr/bin/env bash
# s65 call 6 (one H200): o = 4c3f698 (stop 64's HEAD), m = 7ff489e (the dynmap gc changes),
# n = f8bceba (+ intersect's erases in place through the set's device reference). ctest on n
# (dynmap, tables, voxel, edit; the slow edit tests too), memcheck of check_tables_cuda (small)
# and of two CUDA edits; PLYs o = m = n and CUDA = CPU; the F and E sequences in turns (8
# rounds); one bench dynmap of n.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o /tmp/so /tmp/sm
tar -xf .dev/c65/old.tar -C /tmp/so && sed -i "s/ -Werror//" /tmp/so/CMakeLists.txt
tar -xf .dev/c65/mid.tar -C /tmp/sm && sed -i "s/ -Werror//" /tmp/sm/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/so /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_o.log 2>&1 || echo FAIL o) &
($B /tmp/sm /tmp/bm $A -DGEOHASH_TESTS=OFF >/tmp/build_m.log 2>&1 || echo FAIL m) &
$B . /tmp/bn $A >/tmp/build_n.log 2>&1 || { echo FAIL new; grep -B2 -A10 error /tmp/build_n.log | head -40; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
F="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
J="voxel edit --grid 200 $D/kitten.ply --intersect $D/bunny.ply --add /tmp/B.ply --intersect /tmp/B.ply --add $D/kitten.ply --intersect $D/kitten.ply"
for x in E F J; do
  for v in o m n; do /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/${x}_$v.ply > /tmp/${x}_$v.out 2>&1 || echo "rc $? $x $v"; done
  /tmp/bn/geohash-match ${!x} --backend cpu -o /tmp/${x}_cpu.ply > /dev/null
  cmp /tmp/${x}_o.ply /tmp/${x}_m.ply && cmp /tmp/${x}_o.ply /tmp/${x}_n.ply && echo "$x: PLYs o = m = n"
  cmp /tmp/${x}_n.ply /tmp/${x}_cpu.ply && echo "$x: CUDA PLY = CPU PLY"
done | tee /tmp/o/edit.txt
(cd /tmp/bn && timeout 300 ctest -j 16 -R 'dynmap|tables|faults_cuda|voxel|edit' --timeout 280 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head
GHM_TEST_SMALL=1 CK_FORK=no timeout 150 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/check_tables_cuda > /tmp/o/mc_tables.txt 2>&1
el "memcheck tables rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_tables.txt | tail -1)"
timeout 120 compute-sanitizer --tool memcheck /tmp/bn/geohash-match $F --backend cuda -o /tmp/m.ply > /tmp/o/mc_F.txt 2>&1
el "memcheck F rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_F.txt | tail -1)"
timeout 120 compute-sanitizer --tool memcheck /tmp/bn/geohash-match $J --backend cuda -o /tmp/m.ply > /tmp/o/mc_J.txt 2>&1
el "memcheck J rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_J.txt | tail -1)"
timeout 120 compute-sanitizer --tool racecheck /tmp/bn/geohash-match voxel edit --grid 128 /tmp/A.ply --intersect /tmp/B.ply --backend cuda -o /tmp/m.ply > /tmp/o/rc_int.txt 2>&1
el "racecheck int rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc_int.txt | tail -1)"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for round in 1 2 3 4 5 6 7 8; do
  order="o m n"; [ $((round % 2)) = 0 ] && order="n m o"
  for v in $order; do for x in F E; do
    /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/x.ply > /tmp/x.json
    echo "round $round $v $x: $(steps /tmp/x.json)"
  done; done
done | tee -a /tmp/o/edit.txt > /dev/null
el edits
timeout 100 /tmp/bn/geohash-match bench dynmap --backend cuda --reps 3 > /tmp/o/dyn_n.txt 2>&1 || echo "rc $? dyn"
el dyn
tar czf $OUT/call6.tgz -C /tmp o
el done
