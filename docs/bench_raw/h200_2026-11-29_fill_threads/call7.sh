#!/usr/bin/env bash
# s47 call 7: the threshold of the fill's thread path: a level takes it past T x nwarps voxels,
# T = 1 (new, call 6), 4 (t4), 16 (t16); against old (b42309e): PLYs, edit rounds with the
# fill's time (prof builds), bench voxel, three rounds in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xf .dev/c47/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
for t in 1 4 16; do
  mkdir -p /tmp/t$t && tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/t$t
  sed -i "s/end\[c\] - start\[c\] > nwarps/end[c] - start[c] > $t * nwarps/" /tmp/t$t/kernels/vision/voxel/labels.cu
  grep -c "> $t \* nwarps" /tmp/t$t/kernels/vision/voxel/labels.cu
  python3 .dev/c47/prof.py /tmp/t$t
done
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
for t in 1 4 16; do ($B /tmp/t$t /tmp/b$t $A >/tmp/build_t$t.log 2>&1 || echo FAIL t$t) & done
wait
tail -n 2 /tmp/build*.log > $OUT/builds.txt
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"]) for s in j["steps"]))' "$1"; }
bin() { case $1 in old) echo /tmp/bo/geohash-match;; *) echo /tmp/b${1#t}/geohash-match;; esac; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for v in old t1 t4 t16; do $(bin $v) ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1; $(bin $v) voxel --backend cuda --grid 512 data/pointclouds/bunny.ply data/pointclouds/kitten.ply -o /tmp/v_$v.ply > /dev/null 2>&1; done
for v in t1 t4 t16; do cmp /tmp/e_old.ply /tmp/e_$v.ply && cmp /tmp/v_old.ply /tmp/v_$v.ply && echo "same PLYs as old: $v"; done | tee $OUT/ab.txt
for r in 1 2 3; do
  order="old t1 t4 t16"; [ $((r % 2)) = 0 ] && order="t16 t4 t1 old"
  for v in $order; do
    echo "round $r $v: $($(bin $v) $EDIT -o /tmp/x.ply 2>/tmp/prof_$v.txt > /tmp/x.json; steps /tmp/x.json | cut -c1-150) fills: $(grep -o 'fill [0-9.]*' /tmp/prof_$v.txt | tr '\n' ' ')"
    echo "== bench $v: $($(bin $v) bench voxel --backend cuda --grid 256 --reps 10 --points 160000,1280000 | grep -v "^points\|^bench" | awk '{print "fill", $12, "step", $15}' | tr '\n' ' ')"
  done
done | tee -a $OUT/ab.txt
