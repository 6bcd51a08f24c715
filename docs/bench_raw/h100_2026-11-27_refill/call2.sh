#!/usr/bin/env bash
# s33 call 2: ncu full set of the 8-slot insert and its dedup pass (2^26, load 0.95).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/logs2
if [ ! -x /tmp/b/geohash-match ]; then
  sed -i "s/ -Werror//" CMakeLists.txt
  bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >/tmp/logs2/build.log 2>&1 || { tail -40 /tmp/logs2/build.log; exit 1; }
fi
el build
cd /tmp/b
timeout 300 ncu --set full -k regex:'insert_bucketed_kernel|dedup_marked_kernel' --launch-skip 6 -c 2 -o /tmp/logs2/prof ./geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 1 >/tmp/logs2/ncu.log 2>&1
el "ncu full rc $?"; tail -3 /tmp/logs2/ncu.log
ncu -i /tmp/logs2/prof.ncu-rep --page details > "$OUT/ncu_insert8.txt" 2>&1
grep -E "^  [a-z_]+.*\(|Duration|Achieved Occupancy|Registers Per|Memory Throughput|DRAM Throughput|L2 Hit|L1/TEX Hit|Theoretical Occ|Warp Cycles Per Issued|Issue Slots|Eligible|Compute \(SM\)" "$OUT/ncu_insert8.txt" | head -40
el done
