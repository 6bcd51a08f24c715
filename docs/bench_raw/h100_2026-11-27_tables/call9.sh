#!/usr/bin/env bash
# After the review's split and helpers (bd8c36b): the CUDA suites that reach the changed code
# (voxel_cuda: ghmi_voxel_key_bits; hash_cuda, map: ghmi_prime_capacity) and bench tables on
# CUDA with the 10M spheres at 1024^3 (the device layout through the voxel helpers).
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b > $OUT/build.log 2>&1 || tail -20 $OUT/build.log
(cd /tmp/b && timeout 300 ctest -R 'voxel_cuda|hash_cuda|map\.|cli.bench_tables' -j4 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed" $OUT/ctest.log
timeout 200 /tmp/b/geohash-match bench tables --backend cuda --threads 16 --reps 3 --grid 1024 --spheres 10000000 > $OUT/tables.txt 2>&1
grep -E "^two|^cuckoo|^robin-hood " $OUT/tables.txt
