#!/usr/bin/env bash
# check.sh - the committed tree (HEAD) against 445b5ea (.dev/old-src.tar.xz): device.sh with one
# bench round and no ncu.
set -u
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/src_old /tmp/logs && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
if [ ! -x /tmp/b_old/geohash-match ]; then
(bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old -DGEOHASH_TESTS=OFF >/tmp/logs/build_old.log 2>&1; echo "old rc $?" >>/tmp/logs/build_old.log) &
fi
bash scripts/device_build.sh .dev/debs . /tmp/b >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build new
cd /tmp/b
timeout 240 ctest -j8 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap' -LE slow --timeout 230 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >/tmp/logs/memcheck_dynmap.log 2>&1
el "memcheck check_dynmap rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_dynmap.log | tail -1)" | tee -a "$OUT/summary.txt"
timeout 100 compute-sanitizer --tool memcheck ./geohash-match bench dynmap --backend cuda --quick >/tmp/logs/memcheck_bench.log 2>&1
el "memcheck bench quick rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_bench.log | tail -1)" | tee -a "$OUT/summary.txt"
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench dynmap --backend cuda --quick >/tmp/logs/racecheck_bench.log 2>&1
el "racecheck bench quick rc $? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' /tmp/logs/racecheck_bench.log | tail -1)" | tee -a "$OUT/summary.txt"
wait; tail -qn1 /tmp/logs/build_old.log 2>/dev/null; el builds done
for round in 1; do
  for v in old new; do
    bin=/tmp/b_$v/geohash-match; [ $v = new ] && bin=/tmp/b/geohash-match
    timeout 150 $bin bench dynmap --backend cuda --reps 3 >"$OUT/dyn_${v}_$round.txt" 2>&1
    el "bench $v $round rc $?"
  done
done
for v in old new; do echo "== $v"; sed -n 1,12p "$OUT/dyn_${v}_1.txt" | cut -c1-120; done
tar czf "$OUT/logs.tgz" -C /tmp logs
el all done
