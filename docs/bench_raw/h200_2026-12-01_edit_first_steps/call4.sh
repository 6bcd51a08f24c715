#!/usr/bin/env bash
# s59 call 4 (one H200): why voxel_cuda.cuda failed in call 3 (its output).
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
[ -x /tmp/bn/check_voxel_cuda ] || bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > /tmp/o/build.log 2>&1 || tail -30 /tmp/o/build.log
cd /tmp/bn && cmake --build . --target check_voxel_cuda > /dev/null 2>&1
./check_voxel_cuda 2>&1 | tail -20
