#!/usr/bin/env bash
# s65 call 8 (one H200): m = 373a390 (add by one insert and an in-place merge), n = 8afc509 (+
# subtract and intersect by one visit of the set's buckets). PLYs m = n, CUDA = CPU and the
# steps' counts CUDA = CPU (E, F, J, K, L); memcheck of three CUDA edits, racecheck of a
# subtract; E and F in turns (6 rounds); then ctest -LE slow, the whole suite, on n.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o /tmp/sm
tar -xf .dev/c65/mid.tar -C /tmp/sm && sed -i "s/ -Werror//" /tmp/sm/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/sm /tmp/bm $A -DGEOHASH_TESTS=OFF >/tmp/build_m.log 2>&1 || echo FAIL m) &
$B . /tmp/bn $A >/tmp/build_n.log 2>&1 || { echo FAIL new; grep -B2 -A10 error /tmp/build_n.log | head -40; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
F="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
J="voxel edit --json --grid 200 $D/kitten.ply --intersect $D/bunny.ply --add /tmp/B.ply --intersect /tmp/B.ply --add $D/kitten.ply --intersect $D/kitten.ply"
K="voxel edit --json --grid 256 /tmp/A.ply --add /tmp/B.ply --add $D/bunny.ply --add /tmp/B.ply"
L="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --subtract /tmp/B.ply --add $D/bunny.ply --subtract $D/kitten.ply --add /tmp/A.ply --subtract /tmp/B.ply"
for x in E F J K L; do
  for v in m n; do /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/${x}_$v.ply > /tmp/${x}_$v.json 2>&1 || echo "rc $? $x $v"; done
  /tmp/bn/geohash-match ${!x} --backend cpu -o /tmp/${x}_cpu.ply > /tmp/${x}_cpu.json
  cmp /tmp/${x}_m.ply /tmp/${x}_n.ply && echo "$x: PLYs m = n"
  cmp /tmp/${x}_n.ply /tmp/${x}_cpu.ply && echo "$x: CUDA PLY = CPU PLY"
  python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
keys = ("voxels", "added", "erased", "relabelled")
sa = [[s.get(k) for k in keys] for s in a["steps"]]
sb = [[s.get(k) for k in keys] for s in b["steps"]]
print(sys.argv[3], "step counts CUDA = CPU" if sa == sb else "step counts differ %s %s" % (sa, sb))' /tmp/${x}_n.json /tmp/${x}_cpu.json $x
done | tee /tmp/o/edit.txt
for x in F J L; do
  timeout 60 compute-sanitizer --tool memcheck /tmp/bn/geohash-match ${!x} --backend cuda -o /tmp/m.ply > /tmp/o/mc_$x.txt 2>&1
  el "memcheck $x rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$x.txt | tail -1)"
done
timeout 60 compute-sanitizer --tool racecheck /tmp/bn/geohash-match voxel edit --grid 128 /tmp/A.ply --subtract /tmp/B.ply --intersect /tmp/B.ply --backend cuda -o /tmp/m.ply > /tmp/o/rc_cut.txt 2>&1
el "racecheck cut rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc_cut.txt | tail -1)"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for round in 1 2 3 4 5 6; do
  order="m n"; [ $((round % 2)) = 0 ] && order="n m"
  for v in $order; do for x in F E; do
    /tmp/b$v/geohash-match ${!x} --backend cuda -o /tmp/x.ply > /tmp/x.json
    echo "round $round $v $x: $(steps /tmp/x.json)"
  done; done
done | tee -a /tmp/o/edit.txt > /dev/null
el edits
tar czf $OUT/call8a.tgz -C /tmp o
(cd /tmp/bn && timeout 175 ctest -j 16 -LE slow --timeout 170 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head -20
tar czf $OUT/call8.tgz -C /tmp o
el done
