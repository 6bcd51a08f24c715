#!/usr/bin/env bash
# s57 call 10 (one H200): the CUDA fault walk after the error fix, and the edit tests.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el build
cd /tmp/bn
timeout 300 ctest -j 16 -R 'faults_cuda|voxel_edit|dynmap' --timeout 290 --output-on-failure > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|faults_cuda: voxel|ck_assert|fail" /tmp/o/ctest.txt | head -20
tar czf $OUT/call10.tgz -C /tmp o
el done
