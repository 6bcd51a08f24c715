#!/usr/bin/env bash
# Device call 1 (nvidia-h100-x1): build, the CUDA and image tests after stop 28's last commits,
# then `bench tables` on the CUDA backend and the 16-core CPU backend.
set -x
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/env.txt
git log -1 --format=%H >> $OUT/env.txt
(cd /tmp/b && ctest -R 'hash_cuda|faults_cuda|voxel_cuda|image|cli.bad_image' --output-on-failure) > $OUT/ctest.log 2>&1
tail -5 $OUT/ctest.log
B=/tmp/b/geohash-match
$B bench tables --backend cuda --threads 16 --reps 5 --grid 128,512,1024 --spheres 10000000 \
   --json-out $OUT/tables_cuda.json > $OUT/tables_cuda.txt 2>&1
cat $OUT/tables_cuda.txt
$B bench tables --backend cpu --threads 16 --reps 5 --grid 128,512,1024 \
   --json-out $OUT/tables_cpu16.json > $OUT/tables_cpu16.txt 2>&1
cat $OUT/tables_cpu16.txt
