#!/usr/bin/env bash
# The grouped insert, final: old (46e19c4) and new (working tree) built side by side with the peers'
# harness (BGHT 7584547, cuCollections dc0f9fc, headers in .dev/peers); CUDA tests and sanitizers
# of new; old, new and the peers at 2^26 keys, seed 1, in turns.
set -u
R=$PWD; t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -2; } > $OUT/env.txt
mkdir -p /tmp/srcold && tar xJf .dev/old-src.tar.xz -C /tmp/srcold && sed -i "s/ -Werror//" /tmp/srcold/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/srcold /tmp/bold > $OUT/build_old.log 2>&1 &
bash scripts/peers/run.sh build .dev/peers /tmp/pb > $OUT/build_peers.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/bnew > $OUT/build_new.log 2>&1
wait; tail -1 $OUT/build_new.log; tail -1 $OUT/build_old.log; ls -la /tmp/pb/bench_peers; el builds
(cd /tmp/bnew && timeout 240 ctest -R 'hash_cuda|faults_cuda|map\.|cli.bench_hash' -j4 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head; el ctest
(cd /tmp/bnew && GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 150 compute-sanitizer --tool memcheck ./check_hash_cuda > $OUT/memcheck_hash.txt 2>&1; echo "memcheck rc $?")
tail -2 $OUT/memcheck_hash.txt; el memcheck
(cd /tmp/bnew && GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool racecheck ./check_hash_cuda > $OUT/racecheck_hash.txt 2>&1; echo "racecheck rc $?")
tail -2 $OUT/racecheck_hash.txt; el racecheck
for round in 1 2; do
  for s in old new; do
    echo "== round $round $s" >> $OUT/hash.txt
    timeout 100 /tmp/b$s/geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 3 >> $OUT/hash.txt 2>&1
  done
  echo "== round $round peers" >> $OUT/peers.txt
  timeout 150 /tmp/pb/bench_peers 26 1 3 >> $OUT/peers.txt 2>&1
  el "round $round"
done
grep -E "==|^map +bucketed" $OUT/hash.txt | sed -E "s/  +/ /g" | cut -c1-100
grep -E "==|bcht|static_map|ceiling|insert|failed" $OUT/peers.txt | cut -c1-140 | head -60
