#!/usr/bin/env bash
# s47 call 9: call 8 with the threads path compiled into a second instantiation of the fill
# kernel, launched for a pair with a cloud given as rows (the edit's probe); against old
# (b42309e): PLYs, bench voxel and edit rounds in turns, the fill's time (prof build), ctests,
# memcheck.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/pt && tar -xf .dev/c47/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/pt && python3 .dev/c47/prof.py /tmp/pt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B . /tmp/bn $A >/tmp/build_new.log 2>&1 || echo FAIL new) &
($B /tmp/pt /tmp/bp $A >/tmp/build_prof.log 2>&1 || echo FAIL prof) &
wait
tail -n 2 /tmp/build*.log > $OUT/builds.txt
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"]) for s in j["steps"]))' "$1"; }
bin() { case $1 in old) echo /tmp/bo/geohash-match;; new) echo /tmp/bn/geohash-match;; esac; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for v in old new; do
  $(bin $v) ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1
  $(bin $v) voxel edit --backend cuda --grid 128 /tmp/A.ply --intersect /tmp/B.ply --add data/pointclouds/kitten.ply --subtract /tmp/B.ply -o /tmp/f_$v.ply > /dev/null 2>&1
  for g in 256 512; do $(bin $v) voxel --backend cuda --grid $g data/pointclouds/bunny.ply data/pointclouds/kitten.ply -o /tmp/v${g}_$v.ply > /dev/null 2>&1; $(bin $v) voxel --backend cuda --grid $g /tmp/A.ply /tmp/B.ply -o /tmp/w${g}_$v.ply > /dev/null 2>&1; done
done
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
for f in e f v256 v512 w256 w512; do cmp /tmp/${f}_old.ply /tmp/${f}_new.ply && echo "same PLY old / new: $f"; done | tee $OUT/ab.txt
cmp /tmp/e_cpu.ply /tmp/e_new.ply && echo "CPU PLY = CUDA PLY (e)" | tee -a $OUT/ab.txt
for r in 1 2 3; do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for v in $order; do
    echo "round $r $v: $($(bin $v) $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json | cut -c1-200)"
    echo "== bench $v: $($(bin $v) bench voxel --backend cuda --grid 256 --reps 10 --points 160000,1280000 | grep -v "^points\|^bench" | awk '{print "fill", $12, "step", $15}' | tr '\n' ' ')"
  done
done | tee -a $OUT/ab.txt
for r in 1 2; do /tmp/bp/geohash-match $EDIT -o /tmp/p.ply 2>&1 >/dev/null | grep "PROF alone" | cut -c1-200; done > $OUT/prof.txt
cd /tmp/bn && timeout 200 ctest -j 8 -R 'voxel|edit|normals' -LE slow > $OUT/ctest.txt 2>&1; grep "tests passed\|Failed\|\*\*\*" $OUT/ctest.txt | head
cd - > /dev/null
timeout 120 compute-sanitizer --tool memcheck --leak-check no /tmp/bn/geohash-match voxel --backend cuda --grid 512 data/pointclouds/bunny.ply data/pointclouds/kitten.ply > $OUT/memcheck.txt 2>&1; tail -1 $OUT/memcheck.txt
