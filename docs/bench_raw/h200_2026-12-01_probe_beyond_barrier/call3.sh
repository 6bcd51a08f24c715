#!/usr/bin/env bash
# s60 call 3 (one H200): old 7f6cb12 / mid 07cb253 (the probe's spans one voxel beyond the
# barrier) / new 8d849e8 (+ the enclosure test by the probe's rows): new CUDA = new CPU (PLYs),
# new CUDA = this machine's CPU at grid 128 (kitten -/^ bunny), counts old / mid / new, 6 rounds
# in turns of the 256^3 edits, ctest -LE slow, memchecks.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/mid /tmp/o
tar -xf .dev/c60/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar -xf .dev/c60/mid.tar -C /tmp/mid && sed -i "s/ -Werror//" /tmp/mid/CMakeLists.txt
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
counts() { python3 -c '
import json, sys
print([[s[k] for k in ("probed", "inside", "unknown", "cloud_voxels", "radius", "added", "erased", "relabelled", "voxels")] for s in json.load(open(sys.argv[1]))["steps"]])' "$1"; }
for v in o m n; do
  /tmp/b$v/geohash-match $EDIT -o /tmp/e_$v.ply > /tmp/e_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply -o /tmp/j_$v.ply > /tmp/j_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 48 /tmp/far_60000.ply --subtract /tmp/far_60000.15.ply --add /tmp/far_60000.15.ply -o /tmp/k_$v.ply > /tmp/k_$v.json 2>&1
  for f in e j k; do echo "counts $v $f: $(counts /tmp/${f}_$v.json)"; done
done | tee /tmp/o/ab.txt
/tmp/bn/geohash-match voxel edit --backend cpu --grid 48 /tmp/far_60000.ply --subtract /tmp/far_60000.15.ply --add /tmp/far_60000.15.ply -o /tmp/k_cpu.ply > /dev/null 2>&1
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
/tmp/bn/geohash-match voxel edit --backend cpu --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply -o /tmp/j_cpu.ply > /dev/null 2>&1
/tmp/bn/geohash-match voxel edit --backend cuda --grid 128 $D/kitten.ply --subtract $D/bunny.ply -o /tmp/d128.ply > /dev/null 2>&1
/tmp/bn/geohash-match voxel edit --backend cuda --grid 128 $D/kitten.ply --intersect $D/bunny.ply -o /tmp/i128.ply > /dev/null 2>&1
{ for f in e j k; do cmp /tmp/${f}_cpu.ply /tmp/${f}_n.ply && echo "CPU PLY = CUDA PLY: $f"; done
  cmp /tmp/d128.ply .dev/c60/ndiff128.ply && echo "CUDA = local CPU: kitten - bunny at 128"
  cmp /tmp/i128.ply .dev/c60/ninter128.ply && echo "CUDA = local CPU: kitten ^ bunny at 128"; } | tee -a /tmp/o/ab.txt
el checks
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (up %.2f probe %.2f vox %.2f look %.2f seeds %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["voxelize"], s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
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
tar czf $OUT/call3.tgz -C /tmp o
el done
