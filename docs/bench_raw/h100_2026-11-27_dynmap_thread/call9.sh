#!/usr/bin/env bash
# call 9: the review's mend (dyn_holds_after_fence compares the head through dyn_quad_slots).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/logs
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build
cd /tmp/b
timeout 250 ctest -j8 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap' -LE slow --timeout 240 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head
for c in cuda cuda_lists; do
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >/tmp/logs/memcheck_$c.log 2>&1
el "memcheck dynmap $c rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_$c.log | tail -1)" | tee -a "$OUT/summary.txt"
done
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench dynmap --backend cuda --quick >/tmp/logs/racecheck.log 2>&1
el "racecheck bench dynmap quick rc $? $(grep -h 'RACECHECK SUMMARY' /tmp/logs/racecheck.log | tail -1)" | tee -a "$OUT/summary.txt"
el done
