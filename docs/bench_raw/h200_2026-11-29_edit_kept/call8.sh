#!/usr/bin/env bash
# s45 call 8: kept arrays made by calloc (head = 9b3cb30) against made by malloc and zeroed on
# the threads (new, the working tree), the seven-step CUDA edit, five rounds in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/head && tar -xf .dev/c45/head.tar -C /tmp/head && sed -i "s/ -Werror//" /tmp/head/CMakeLists.txt
(bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || echo FAIL new) &
(bash scripts/device_build.sh .dev/debs /tmp/head /tmp/bh -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_head.log" 2>&1 || echo FAIL head) &
wait
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f, edit %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for r in 1 2 3 4 5; do
  order="head new"; [ $((r % 2)) = 0 ] && order="new head"
  for v in $order; do
    b=/tmp/bn/geohash-match; [ $v = head ] && b=/tmp/bh/geohash-match
    $b $EDIT -o /tmp/$v.ply > /tmp/${v}.json
    echo "round $r $v: $(steps /tmp/${v}.json)"
  done
done | tee $OUT/edit_ab.txt
cmp /tmp/head.ply /tmp/new.ply && echo "PLYs identical" | tee -a $OUT/edit_ab.txt
