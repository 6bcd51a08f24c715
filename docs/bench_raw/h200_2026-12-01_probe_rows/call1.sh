#!/usr/bin/env bash
# s64 call 1 (one H200): old f79c620 / mid e12021d (the probe's run borrows the cloud-alone run's
# voxel table) / new 12ad4be (+ the probe's radius-1 neighbours by its rows, no nbr array):
# PLYs old = mid = new (CUDA) = new CPU; 6 rounds in turns of the 256^3 edits; the voxel mode
# at 256 (old / new); ctest -LE slow; memchecks.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/mid /tmp/o
tar -xf .dev/c64/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar -xf .dev/c64/mid.tar -C /tmp/mid && sed -i "s/ -Werror//" /tmp/mid/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/mid /tmp/bm $A -DGEOHASH_TESTS=OFF >/tmp/build_mid.log 2>&1 || echo FAIL mid) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
for S in 60000 60000.15; do python3 -c 'import sys
head, body = open(sys.argv[1]).read().split("end_header\n")
print(head + "end_header")
for line in body.split("\n")[:-1]:
    v = line.split()
    print(float(v[0]) + float(sys.argv[2]), *v[1:])' $D/kitten.ply $S > /tmp/far_$S.ply; done
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
J="voxel edit --backend cuda --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply"
K="voxel edit --backend cuda --json --grid 48 /tmp/far_60000.ply --subtract /tmp/far_60000.15.ply --add /tmp/far_60000.15.ply"
counts() { python3 -c '
import json, sys
print([[s[k] for k in ("probed", "inside", "unknown", "cloud_voxels", "radius", "added", "erased", "relabelled", "voxels")] for s in json.load(open(sys.argv[1]))["steps"]])' "$1"; }
for v in o m n; do
  /tmp/b$v/geohash-match $EDIT -o /tmp/e_$v.ply > /tmp/e_$v.json 2>&1
  /tmp/b$v/geohash-match $J -o /tmp/j_$v.ply > /tmp/j_$v.json 2>&1
  /tmp/b$v/geohash-match $K -o /tmp/k_$v.ply > /tmp/k_$v.json 2>&1
  /tmp/b$v/geohash-match voxel --backend cuda --grid 256 /tmp/A.ply /tmp/B.ply -o /tmp/v_$v.ply > /dev/null 2>&1
  for f in e j k; do echo "counts $v $f: $(counts /tmp/${f}_$v.json)"; done
done | tee /tmp/o/ab.txt
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
/tmp/bn/geohash-match ${J/cuda --json/cpu} -o /tmp/j_cpu.ply > /dev/null 2>&1
/tmp/bn/geohash-match ${K/cuda --json/cpu} -o /tmp/k_cpu.ply > /dev/null 2>&1
{ for f in e j k; do
    cmp /tmp/${f}_cpu.ply /tmp/${f}_n.ply && echo "new CPU PLY = new CUDA PLY: $f"
    cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && cmp /tmp/${f}_o.ply /tmp/${f}_m.ply && echo "old = mid = new CUDA PLY: $f"
  done
  cmp /tmp/v_o.ply /tmp/v_n.ply && echo "voxel mode old = new PLY"; } | tee -a /tmp/o/ab.txt
el checks
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (up %.2f probe %.2f vox %.2f look %.2f seeds %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["voxelize"], s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
vt() { python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["timings_ms"]
print(" ".join("%s %.3f" % (k, v) for k, v in t.items()))' "$1"; }
DENSE="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
for r in 1 2 3 4 5 6; do
  order="o m n"; [ $((r % 2)) = 0 ] && order="n m o"
  for v in $order; do
    echo "round $r $v: $(/tmp/b$v/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
    echo "round $r $v dense: $(/tmp/b$v/geohash-match $DENSE -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
    for op in subtract intersect add; do
      /tmp/b$v/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --$op /tmp/B.ply -o /tmp/x.ply > /tmp/x.json
      echo "round $r $v one $op: $(steps /tmp/x.json)"
    done
    /tmp/b$v/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply -o /tmp/x.ply > /tmp/x.json
    echo "round $r $v one sparse intersect: $(steps /tmp/x.json)"
    [ $v = m ] && continue
    /tmp/b$v/geohash-match voxel --backend cuda --json --grid 256 /tmp/A.ply /tmp/B.ply > /tmp/x.json
    echo "round $r $v voxel mode: $(vt /tmp/x.json)"
  done
done | tee -a /tmp/o/ab.txt
el edits
cd /tmp/bn
timeout 400 ctest -j 16 -LE slow --timeout 300 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
cd - > /dev/null
timeout 120 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/m.ply > /tmp/o/mc_edit.txt 2>&1
el "memcheck edit rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_edit.txt | tail -1)"
timeout 150 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 256 /tmp/A.ply --intersect $D/bunny.ply --subtract /tmp/B.ply -o /tmp/m2.ply > /tmp/o/mc_sparse.txt 2>&1
el "memcheck sparse edit rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_sparse.txt | tail -1)"
cp /tmp/o/ab.txt /tmp/o/ctest.txt $OUT/ 2>/dev/null
tar czf $OUT/call1.tgz -C /tmp o
el done
