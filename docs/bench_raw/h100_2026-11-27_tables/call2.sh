#!/usr/bin/env bash
# Device call 2 (nvidia-h100-x1): `bench tables` at the committed bench (the key sets of the
# product on the CUDA backend and the 16-core CPU backend), twice in turns.
set -x
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
git log -1 --format=%H > $OUT/env.txt
B=/tmp/b/geohash-match
P="--pair data/images/box_in_scene.png,data/images/box.png --pair data/images/Blender_Suzanne1.jpg,data/images/Blender_Suzanne2.jpg"
for r in 1 2; do
  $B bench tables --backend cuda --threads 16 --reps 5 --grid 128,512,1024 --spheres 10000000 \
     --cloud data/pointclouds/bunny.ply $P --json-out $OUT/tables_cuda_r$r.json > $OUT/tables_cuda_r$r.txt 2>&1
  $B bench tables --backend cpu --threads 16 --reps 5 --grid 128,512,1024 \
     --cloud data/pointclouds/bunny.ply $P --json-out $OUT/tables_cpu16_r$r.json > $OUT/tables_cpu16_r$r.txt 2>&1
done
cat $OUT/tables_cuda_r1.txt $OUT/tables_cpu16_r1.txt
grep -h "^cuckoo\|^robin-hood \|^two-level\|^chaining" $OUT/tables_cuda_r2.txt
