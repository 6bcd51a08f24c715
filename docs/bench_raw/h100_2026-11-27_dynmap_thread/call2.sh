#!/usr/bin/env bash
# call 2: a thread per item (find, insert's look-up and claims, erase) against f88df63's teams.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/src_old /tmp/logs && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
A=-DCMAKE_CUDA_ARCHITECTURES=90
(bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old $A -DGEOHASH_TESTS=OFF >/tmp/logs/build_old.log 2>&1; echo "old rc $?" >>/tmp/logs/build_old.log) &
bash scripts/device_build.sh .dev/debs . /tmp/b $A >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build new
cd /tmp/b
timeout 200 ctest -j8 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap' -LE slow --timeout 190 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head -20
for c in cuda cuda_lists; do
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >/tmp/logs/memcheck_$c.log 2>&1
el "memcheck $c rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_$c.log | tail -1)" | tee -a "$OUT/summary.txt"
done
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench dynmap --backend cuda --quick >/tmp/logs/racecheck_bench.log 2>&1
el "racecheck bench quick rc $? $(grep -h 'RACECHECK SUMMARY\|ERROR SUMMARY' /tmp/logs/racecheck_bench.log | tail -1)" | tee -a "$OUT/summary.txt"
wait; tail -qn1 /tmp/logs/build_old.log; el builds done
for round in 1 2; do
  for v in old new; do
    bin=/tmp/b_$v/geohash-match; [ $v = new ] && bin=/tmp/b/geohash-match
    timeout 150 $bin bench dynmap --backend cuda --reps 3 >"$OUT/dyn_${v}_$round.txt" 2>&1
    el "bench $v $round rc $?"
  done
done
for v in old new; do echo "== $v"; sed -n 3,10p "$OUT/dyn_${v}_1.txt" | awk '{print $1,$3,$5,$6,$7,$8,$9,$10}'; sed -n 13,24p "$OUT/dyn_${v}_1.txt" | awk '{print $1,$2,$3,$4,$5}' | tr '\n' ';'; echo; done
timeout 200 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section ComputeWorkloadAnalysis -k regex:'find_kernel|plan_kernel|erase_kernel' --launch-skip 3 -c 4 /tmp/b/geohash-match bench dynmap --backend cuda --reps 1 >"$OUT/ncu_new.txt" 2>&1
el ncu rc $?; grep -E "^  [a-z_]+kernel|Duration|Registers Per|DRAM Throughput|Achieved Occ|Issue Slots Busy|Executed Ipc E" "$OUT/ncu_new.txt" | head -40
# the same kernels with their registers capped for a full SM
cd "$OLDPWD"
sed -i 's/^static __global__ void find_kernel/static __global__ __launch_bounds__(THREADS, 8) void find_kernel/; s/^static __global__ void erase_kernel/static __global__ __launch_bounds__(THREADS, 8) void erase_kernel/' kernels/hashing/dynmap_ops.cu
sed -i 's/^static __global__ void plan_kernel/static __global__ __launch_bounds__(THREADS, 8) void plan_kernel/' kernels/hashing/dynmap.cu
grep -c "launch_bounds__(THREADS, 8)" kernels/hashing/dynmap_ops.cu kernels/hashing/dynmap.cu
cmake --build /tmp/b --target geohash-match >/tmp/logs/build_b8.log 2>&1; el "build b8 rc $?"
timeout 150 /tmp/b/geohash-match bench dynmap --backend cuda --reps 3 >"$OUT/dyn_b8.txt" 2>&1
echo "== b8"; sed -n 3,10p "$OUT/dyn_b8.txt" | awk '{print $1,$3,$5,$6,$7,$8,$9,$10}'
tar czf "$OUT/logs.tgz" -C /tmp logs
el done
