#!/usr/bin/env bash
# s47 call 10: call 9 with the warps' levels as before (both clouds' voxels numbered together,
# the old loop), the threads' levels apart; against old (b42309e): PLYs, bench voxel and edit
# rounds in turns, the CUDA voxel ctests, memcheck of an edit.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xf .dev/c47/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B . /tmp/bn $A >/tmp/build_new.log 2>&1 || echo FAIL new) &
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
wait
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"]) for s in j["steps"]))' "$1"; }
bin() { case $1 in old) echo /tmp/bo/geohash-match;; new) echo /tmp/bn/geohash-match;; esac; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for v in old new; do
  $(bin $v) ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1
  $(bin $v) voxel --backend cuda --grid 512 data/pointclouds/bunny.ply data/pointclouds/kitten.ply -o /tmp/v512_$v.ply > /dev/null 2>&1
  $(bin $v) voxel --backend cuda --grid 256 /tmp/A.ply /tmp/B.ply -o /tmp/w256_$v.ply > /dev/null 2>&1
done
for f in e v512 w256; do cmp /tmp/${f}_old.ply /tmp/${f}_new.ply && echo "same PLY old / new: $f"; done | tee $OUT/ab.txt
for r in 1 2 3; do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for v in $order; do
    echo "round $r $v: $($(bin $v) $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json | cut -c1-200)"
    echo "== bench $v: $($(bin $v) bench voxel --backend cuda --grid 256 --reps 10 --points 160000,1280000 | grep -v "^points\|^bench" | awk '{print "fill", $12, "step", $15}' | tr '\n' ' ')"
  done
done | tee -a $OUT/ab.txt
cd /tmp/bn && timeout 100 ctest -j 8 -R 'voxel_cuda|voxel_edit_cuda|voxel_edit_json|voxel_normals' > $OUT/ctest.txt 2>&1; grep "tests passed\|Failed\|\*\*\*" $OUT/ctest.txt | head
cd - > /dev/null
timeout 60 compute-sanitizer --tool memcheck --leak-check no /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 -o /tmp/m.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply > $OUT/memcheck.txt 2>&1; tail -1 $OUT/memcheck.txt
