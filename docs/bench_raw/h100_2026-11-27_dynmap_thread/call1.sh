#!/usr/bin/env bash
# call 1: f88df63 verified on the GPU (dynmap cuda ctests, memcheck of the long lists case),
# ncu of the find and the insert's plan kernel, one bench round.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/logs
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build
cd /tmp/b
timeout 200 ctest -j8 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap' -LE slow --timeout 190 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed|dynmap" "$OUT/ctest.log" | head -20
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda_lists timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >/tmp/logs/memcheck_lists.log 2>&1
el "memcheck cuda_lists rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_lists.log | tail -1)" | tee -a "$OUT/summary.txt"
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >/tmp/logs/memcheck_cuda.log 2>&1
el "memcheck cuda rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_cuda.log | tail -1)" | tee -a "$OUT/summary.txt"
timeout 150 ./geohash-match bench dynmap --backend cuda --reps 3 >"$OUT/bench.txt" 2>&1
el bench rc $?; sed -n 1,12p "$OUT/bench.txt" | cut -c1-130
timeout 200 ncu --set full -k regex:'find_kernel|plan_kernel' --launch-skip 1 -c 3 -o /tmp/logs/prof ./geohash-match bench dynmap --backend cuda --reps 1 >/tmp/logs/ncu.log 2>&1
el ncu rc $?
ncu -i /tmp/logs/prof.ncu-rep --page details > "$OUT/ncu_details.txt" 2>&1
ncu -i /tmp/logs/prof.ncu-rep --page raw --csv > /tmp/logs/ncu_raw.csv 2>&1
grep -E "Duration|Achieved Occupancy|Registers Per|Memory Throughput|DRAM Throughput|L2 Hit|L1/TEX Hit|Theoretical Occ|Stall|Warp Cycles Per Issued|Issue Slots|Eligible" "$OUT/ncu_details.txt" | head -60
cp /tmp/logs/prof.ncu-rep "$OUT/" 2>/dev/null
tar czf "$OUT/logs.tgz" -C /tmp logs --exclude=prof.ncu-rep
el done
