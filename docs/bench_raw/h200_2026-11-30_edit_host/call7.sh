#!/usr/bin/env bash
# s55 call 7 (one H200): the final tree (+ the centre computed where a plane needs it in
# classify_kernel and contact_kernel) against 623a0c6: PLYs (edits, voxel mode at 256 and 512,
# CPU = CUDA), the seven-step edit in turns (4 rounds), bench voxel (3 rounds), ctest -LE slow,
# memcheck of an edit and of the voxel mode at 512.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xf .dev/c55/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B . /tmp/bn $A >/tmp/build_new.log 2>&1 || echo FAIL new) &
wait
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (up %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"], s["timings_ms"].get("upload", 0), s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for v in o n; do
  /tmp/b$v/geohash-match ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --intersect /tmp/B.ply --add data/pointclouds/kitten.ply --subtract /tmp/B.ply -o /tmp/f_$v.ply > /dev/null 2>&1
  for g in 256 512; do /tmp/b$v/geohash-match voxel --backend cuda --grid $g data/pointclouds/bunny.ply data/pointclouds/kitten.ply -o /tmp/v${g}_$v.ply > /dev/null 2>&1; /tmp/b$v/geohash-match voxel --backend cuda --grid $g /tmp/A.ply /tmp/B.ply -o /tmp/w${g}_$v.ply > /dev/null 2>&1; done
done
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
/tmp/bn/geohash-match voxel --backend cpu --grid 512 data/pointclouds/bunny.ply data/pointclouds/kitten.ply -o /tmp/v512_cpu.ply > /dev/null 2>&1
for f in e f v256 v512 w256 w512; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"; done | tee $OUT/ab.txt
cmp /tmp/e_cpu.ply /tmp/e_n.ply && echo "CPU PLY = CUDA PLY (edit)" | tee -a $OUT/ab.txt
cmp /tmp/v512_cpu.ply /tmp/v512_n.ply && echo "CPU PLY = CUDA PLY (voxel 512)" | tee -a $OUT/ab.txt
for r in 1 2 3 4; do
  order="o n"; [ $((r % 2)) = 0 ] && order="n o"
  for v in $order; do
    echo "round $r $v: $(/tmp/b$v/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
    [ $r -le 3 ] && echo "== bench $v: $(/tmp/b$v/geohash-match bench voxel --backend cuda --grid 256 --reps 10 --points 160000,1280000 | grep -v "^points\|^bench" | awk '{print "fill", $12, "step", $15}' | tr '\n' ' ')"
  done
done | tee -a $OUT/ab.txt
cd /tmp/bn && timeout 330 ctest -j 16 -LE slow --timeout 300 > $OUT/ctest.txt 2>&1; echo "ctest rc $?"
grep -E "tests passed|\*\*\*Failed|Failed  |Timeout" $OUT/ctest.txt | head
cd - > /dev/null
timeout 120 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply -o /tmp/m.ply > $OUT/memcheck_edit.txt 2>&1; tail -2 $OUT/memcheck_edit.txt
timeout 120 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel --backend cuda --grid 512 data/pointclouds/bunny.ply data/pointclouds/kitten.ply > $OUT/memcheck_voxel.txt 2>&1; tail -1 $OUT/memcheck_voxel.txt
