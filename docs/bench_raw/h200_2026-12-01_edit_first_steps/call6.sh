#!/usr/bin/env bash
# s59 call 6 (one H200): old 2c7fbf3 / new (+ the enclosure test on the device, labels kept there
# at every radius): PLYs and counts old / new, CPU = CUDA, rounds in turns,
# single-op edits' process time, prof_new.patch timers, ctest voxel|edit|dynmap, memcheck.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o /tmp/srcp
tar -xf .dev/c59/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcp && patch -s -d /tmp/srcp -p1 < .dev/c59/prof_new.patch
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/srcp /tmp/bp $A -DGEOHASH_TESTS=OFF >/tmp/build_p.log 2>&1 || echo FAIL p) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 2000000 /tmp/A2.ply /tmp/B2.ply > /dev/null 2>&1
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
for v in o n; do
  /tmp/b$v/geohash-match $EDIT -o /tmp/e_$v.ply > /tmp/e_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 128 /tmp/A.ply --intersect /tmp/B.ply --add $D/kitten.ply --subtract /tmp/B.ply -o /tmp/f_$v.ply > /tmp/f_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 300 $D/kitten.ply --add $D/bunny.ply --subtract /tmp/B.ply -o /tmp/g_$v.ply > /tmp/g_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 512 /tmp/A2.ply --subtract /tmp/B2.ply --intersect $D/bunny.ply --add /tmp/B2.ply -o /tmp/h_$v.ply > /tmp/h_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 128 $D/bunny.ply --subtract $D/kitten.ply --intersect $D/kitten.ply -o /tmp/i_$v.ply > /tmp/i_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply -o /tmp/j_$v.ply > /tmp/j_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 48 /tmp/far_60000.ply --subtract /tmp/far_60000.15.ply --add /tmp/far_60000.15.ply -o /tmp/k_$v.ply > /tmp/k_$v.json 2>&1
done
/tmp/bn/geohash-match voxel edit --backend cpu --grid 48 /tmp/far_60000.ply --subtract /tmp/far_60000.15.ply --add /tmp/far_60000.15.ply -o /tmp/k_cpu.ply > /dev/null 2>&1
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
/tmp/bn/geohash-match voxel edit --backend cpu --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply -o /tmp/j_cpu.ply > /dev/null 2>&1
for f in e f g h i j k; do
  cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"
  [ "$(counts /tmp/${f}_o.json)" = "$(counts /tmp/${f}_n.json)" ] && echo "same counts old / new: $f $(counts /tmp/${f}_n.json | cut -c1-120)"
done | tee /tmp/o/ab.txt
for f in e j k; do cmp /tmp/${f}_cpu.ply /tmp/${f}_n.ply && echo "CPU PLY = CUDA PLY: $f"; done | tee -a /tmp/o/ab.txt
el checks
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (up %.2f probe %.2f vox %.2f look %.2f seeds %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["voxelize"], s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
DENSE="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
for r in 1 2 3 4 5 6 7 8; do
  order="o n"; [ $((r % 2)) = 0 ] && order="n o"
  for v in $order; do
    echo "round $r $v: $(/tmp/b$v/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
    echo "round $r $v dense: $(/tmp/b$v/geohash-match $DENSE -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
    for op in subtract intersect add; do
      s=$(date +%s%N)
      /tmp/b$v/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --$op /tmp/B.ply -o /tmp/x.ply > /tmp/x.json
      echo "round $r $v one $op: process $(( ($(date +%s%N) - s) / 1000 )) us: $(steps /tmp/x.json)"
    done
    s=$(date +%s%N)
    /tmp/b$v/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply -o /tmp/x.ply > /tmp/x.json
    echo "round $r $v one sparse intersect: process $(( ($(date +%s%N) - s) / 1000 )) us: $(steps /tmp/x.json)"
  done
done | tee -a /tmp/o/ab.txt
for r in 1 2 3; do GHM_PROF=1 /tmp/bp/geohash-match $EDIT -o /tmp/x.ply > /tmp/o/prof_$r.json 2> /tmp/o/prof_$r.txt; done
for r in 1 2 3; do
  GHM_PROF=1 /tmp/bp/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply -o /tmp/x.ply > /tmp/o/ps_$r.json 2> /tmp/o/ps_$r.txt
done
(cd /tmp/bn && ./check_voxel_cuda 2>&1 | tail -3)
el edits
cd /tmp/bn
timeout 300 ctest -j 16 -R 'voxel|edit|dynmap' -LE slow --timeout 200 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
cd - > /dev/null
timeout 120 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/m.ply > /tmp/o/mc_edit.txt 2>&1
el "memcheck edit rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_edit.txt | tail -1)"
timeout 150 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 256 /tmp/A.ply --intersect $D/bunny.ply --subtract /tmp/B.ply -o /tmp/m2.ply > /tmp/o/mc_sparse.txt 2>&1
el "memcheck sparse edit rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_sparse.txt | tail -1)"
tar czf $OUT/call6.tgz -C /tmp o
el done
