#!/usr/bin/env bash
# s56 call 1 (one H200): HEAD's bench dynmap (baseline on this machine) and ncu --set full of
# the 2^23 insert's leader, leader_final, plan and write kernels (atomic64, 2x buckets).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
el build
cd /tmp/b
timeout 200 ./geohash-match bench dynmap --backend cuda --reps 3 > $OUT/bench.txt 2>&1; el bench rc $?
head -14 $OUT/bench.txt
timeout 300 ncu --set full -k regex:'leader_kernel|leader_final|plan_kernel|write_kernel' --launch-skip 4 -c 4 -o /tmp/prof ./geohash-match bench dynmap --backend cuda --reps 1 >/tmp/ncu.log 2>&1
el ncu rc $?; tail -3 /tmp/ncu.log
ncu -i /tmp/prof.ncu-rep --page details > $OUT/ncu_details.txt 2>&1
ncu -i /tmp/prof.ncu-rep --page raw --csv > $OUT/ncu_raw.csv 2>&1
grep -E "^  [a-z_]+\(|Duration|Achieved Occupancy|Registers Per|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Hit|L2 Hit|Warp Cycles Per Issued|Issue Slots Busy" $OUT/ncu_details.txt | sed 's/(DynRef.*//' | head -60
el done
