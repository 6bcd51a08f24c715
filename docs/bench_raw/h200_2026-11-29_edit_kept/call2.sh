#!/usr/bin/env bash
# s45 call 2: old (e491954) / new (a57fbe7: rebound sweeps, page-locked probe) / new with glibc's
# malloc thresholds raised (env), four rounds in turns; then a timing build (prof.py) of new.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/pt && tar -xf .dev/c45/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/pt && sed -i "s/ -Werror//" /tmp/pt/CMakeLists.txt && python3 .dev/c45/prof.py /tmp/pt
(bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || echo FAIL new) &
(bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_old.log" 2>&1 || echo FAIL old) &
(bash scripts/device_build.sh .dev/debs /tmp/pt /tmp/bp -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_prof.log" 2>&1 || echo FAIL prof) &
wait
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f, edit %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for r in 1 2 3 4; do
  order="old new env"; [ $((r % 2)) = 0 ] && order="env new old"
  for v in $order; do
    b=/tmp/bn/geohash-match; [ $v = old ] && b=/tmp/bo/geohash-match
    if [ $v = env ]; then
      MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296 $b $EDIT -o /tmp/$v.ply > /tmp/${v}.json
    else
      $b $EDIT -o /tmp/$v.ply > /tmp/${v}.json
    fi
    echo "round $r $v: $(steps /tmp/${v}.json)"
  done
done | tee $OUT/edit_ab.txt
cmp /tmp/old.ply /tmp/new.ply && cmp /tmp/old.ply /tmp/env.ply && echo "PLYs identical" | tee -a $OUT/edit_ab.txt
for r in 1 2; do
  /tmp/bp/geohash-match $EDIT -o /tmp/p.ply 2>&1 >/dev/null | grep PROF
  echo "-- env"
  MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=4294967296 /tmp/bp/geohash-match $EDIT -o /tmp/p.ply 2>&1 >/dev/null | grep PROF
done | tee $OUT/prof.txt
