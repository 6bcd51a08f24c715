#!/usr/bin/env bash
# s43 call 2: voxel edit's step on the H200, old (e100cb8: finds against the empty set, add's
# changes on one thread) against new (this tree), side by side, CUDA and CPU backends, the 160k
# pair of the bunny mesh at 256^3 (A - B + B), three rounds in turns; the PLYs compared; the
# voxel/edit ctests (CUDA cases included) and dynmap.core alone (slow under -j12 before).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $OUT/env.txt 2>&1
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xf .dev/c43/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_old.log" 2>&1 || { tail -30 "$OUT/build_old.log"; exit 1; }
el build
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1 || echo "voxel_pair failed"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f, probe %.1f, labels %.1f, edit %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"], s["timings_ms"]["probe"], s["timings_ms"]["voxelize"] + s["timings_ms"]["lookup"] + s["timings_ms"]["seeds"] + s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
for be in cuda cpu; do
  for r in 1 2 3; do
    for v in old new; do
      b=/tmp/bn/geohash-match; [ $v = old ] && b=/tmp/bo/geohash-match
      s=$(date +%s%N)
      $b voxel edit --backend $be --json --grid 256 -o /tmp/${v}_$be.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply > /tmp/${v}_$be.json 2>>$OUT/edit_err.txt
      e=$(( ($(date +%s%N) - s) / 1000000 ))
      echo "$be round $r $v: process $e ms; $(steps /tmp/${v}_$be.json)"
    done
  done
done > $OUT/edit_ab.txt 2>&1
for be in cuda cpu; do cmp /tmp/old_$be.ply /tmp/new_$be.ply && echo "$be: old and new PLY identical"; done >> $OUT/edit_ab.txt 2>&1
cmp /tmp/new_cuda.ply /tmp/new_cpu.ply && echo "new: CUDA and CPU PLY identical" >> $OUT/edit_ab.txt 2>&1
el edits
cd /tmp/bn || exit 1
timeout 300 ctest -R 'voxel|edit|normals' -LE slow -j 8 --timeout 250 > $OUT/ctest.txt 2>&1
timeout 200 ctest -R 'dynmap.core' --timeout 190 > $OUT/ctest_dynmap.txt 2>&1
el ctest
cat $OUT/edit_ab.txt
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.txt $OUT/ctest_dynmap.txt | head -20
