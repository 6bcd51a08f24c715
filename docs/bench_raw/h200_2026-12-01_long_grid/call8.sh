#!/usr/bin/env bash
# s63 call 8 (one H200; run twice, the second time with tests/cli.sh taking a python3 that has
# NumPy): the new cli.voxel_long_grid_cuda_same (a stretched bunny pair's CPU and
# CUDA PLYs at 2048 and 4096, an edit at 2048) and the voxel ctests of the final tree.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el builds
cd /tmp/bn
timeout 300 ctest -j 16 -R "voxel|edit|grid" --timeout 290 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "long_grid|grid_too_large|cuda_same|tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head -20
cp /tmp/o/ctest.txt $OUT/
