#!/usr/bin/env bash
set -u
t0=$(date +%s)
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bnew > $OUT/build_new.log 2>&1; tail -1 $OUT/build_new.log
echo "built $(( $(date +%s) - t0 )) s"
cd /tmp/bnew && GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 60 ./check_hash_cuda 2>&1 | tail -3
echo "small $(( $(date +%s) - t0 )) s"
CK_RUN_CASE=cuda timeout 110 ./check_hash_cuda 2>&1 | tail -3
echo "full $(( $(date +%s) - t0 )) s"
