#!/usr/bin/env bash
# s43 call 3: call 2's CUDA edit timing again with the order of old and new alternated (in call
# 2 new always ran second), five rounds; builds reused when the machine kept them.
set -u
export PATH=/usr/local/cuda/bin:$PATH
if [ ! -x /tmp/bn/geohash-match ] || [ ! -x /tmp/bo/geohash-match ]; then
  sed -i "s/ -Werror//" CMakeLists.txt
  mkdir -p /tmp/old && tar -xf .dev/c43/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
  bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || exit 1
  bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_old.log" 2>&1 || exit 1
  echo rebuilt
fi
[ -s /tmp/A.ply ] || python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f, edit %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
for r in 1 2 3 4 5; do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for v in $order; do
    b=/tmp/bn/geohash-match; [ $v = old ] && b=/tmp/bo/geohash-match
    $b voxel edit --backend cuda --json --grid 256 -o /tmp/${v}.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply > /tmp/${v}.json
    echo "round $r $v: $(steps /tmp/${v}.json)"
  done
done | tee $OUT/edit_ab2.txt
cmp /tmp/old.ply /tmp/new.ply && echo "old and new PLY identical" | tee -a $OUT/edit_ab2.txt
