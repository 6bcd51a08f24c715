#!/usr/bin/env bash
# Final figures: old (1896b0a, main before this session) and new (the working tree: regions,
# Robin Hood's prime size) and the peers' harness (BGHT 7584547, cuCollections dc0f9fc) in turns,
# twice, seed 1, 2^26 keys; check_hash_cuda with the regions test. (call5.sh: the coherent
# experiment and the voxel step.)
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $OUT/env.txt
mkdir -p /tmp/srcold && tar xJf .dev/old-src.tar.xz -C /tmp/srcold && sed -i "s/ -Werror//" /tmp/srcold/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/srcold /tmp/bold > $OUT/build_old.log 2>&1 &
bash scripts/peers/run.sh build .dev/peers /tmp/pb > $OUT/build_peers.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/bnew > $OUT/build_new.log 2>&1
wait; tail -1 $OUT/build_new.log; tail -1 $OUT/build_old.log; ls -la /tmp/pb/bench_peers; el builds
(cd /tmp/bnew && timeout 200 ctest -R 'hash_cuda' -j4 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed" $OUT/ctest.log | head -5; el ctest
for round in 1 2; do
  for s in old new; do
    echo "== round $round $s" >> $OUT/hash.txt
    timeout 100 /tmp/b$s/geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 3 >> $OUT/hash.txt 2>&1
  done
  echo "== round $round peers" >> $OUT/peers.txt
  timeout 150 /tmp/pb/bench_peers 26 1 3 >> $OUT/peers.txt 2>&1
  el "round $round"
done
grep -E "==|^map +bucketed" $OUT/hash.txt | sed -E "s/  +/ /g" | cut -c1-110
grep -E "==|bcht, bucket 8|static_map|ceiling" $OUT/peers.txt | cut -c1-140 | head -40
