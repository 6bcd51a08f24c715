#!/usr/bin/env bash
# s50 call 6 (H200): the stop's final tree, every ctest case but the slow ones (CUDA included),
# memcheck of check_hash_cuda's and check_map's linear cases.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
el build
cd /tmp/bn
timeout 480 ctest -LE slow -j8 > $OUT/ctest.txt 2>&1; grep "tests passed\|Failed\|\*\*\*Failed\|Timeout" $OUT/ctest.txt | head -20
el ctest
