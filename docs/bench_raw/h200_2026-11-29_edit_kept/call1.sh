#!/usr/bin/env bash
# s45 call 1: voxel edit with the labels' two runs on rebound sweeps (new) against e491954 (old);
# five rounds alternated; PLYs compared; the CUDA voxel/edit ctests; memcheck of one edit.
set -u
export PATH=/usr/local/cuda/bin:$PATH
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/env.txt
git log -1 --format=%H >> $OUT/env.txt 2>/dev/null
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xf .dev/c45/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
cp -r data /tmp/old/ 2>/dev/null
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || { tail -30 $OUT/build.log; exit 1; }
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_old.log" 2>&1 || { tail -30 $OUT/build_old.log; exit 1; }
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f, edit %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
for r in 1 2 3 4 5; do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for v in $order; do
    b=/tmp/bn/geohash-match; [ $v = old ] && b=/tmp/bo/geohash-match
    $b voxel edit --backend cuda --json --grid 256 -o /tmp/${v}.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply > /tmp/${v}.json
    echo "round $r $v: $(steps /tmp/${v}.json)"
  done
done | tee $OUT/edit_ab.txt
cmp /tmp/old.ply /tmp/new.ply && echo "old and new PLY identical" | tee -a $OUT/edit_ab.txt
/tmp/bn/geohash-match voxel edit --backend cpu --json --grid 256 -o /tmp/cpu.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply > /tmp/cpu.json
cmp /tmp/cpu.ply /tmp/new.ply && echo "new CUDA and CPU PLY identical" | tee -a $OUT/edit_ab.txt
cd /tmp/bn && timeout 300 ctest -j 8 -R 'voxel|edit|normals' -LE slow > $OUT/ctest.txt 2>&1; tail -5 $OUT/ctest.txt
cd - > /dev/null
timeout 200 compute-sanitizer --tool memcheck --leak-check no /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 -o /tmp/m.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply > $OUT/memcheck.txt 2>&1; tail -3 $OUT/memcheck.txt
