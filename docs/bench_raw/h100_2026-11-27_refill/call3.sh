#!/usr/bin/env bash
# s33 call 3: the bucketed insert with warps that refill their lanes, against HEAD (old), in
# turns; v1 = no register cap (grid from the occupancy API), v8 = capped at 32 registers.
# Tests of v1: the map's CUDA suites, memcheck of check_hash_cuda.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/logs3; mkdir -p $L
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >$L/build_old.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/b8 -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF -DCMAKE_CUDA_FLAGS=-DINSERT_MIN_BLOCKS=8 >$L/build_v8.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 >$L/build.log 2>&1 || { tail -40 $L/build.log; exit 1; }
wait
el build; ls -la /tmp/bo/geohash-match /tmp/b8/geohash-match /tmp/b/geohash-match | cut -c1-80
B="bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 3"
for r in 1 2; do
  for v in o 1 8; do
    case $v in o) bin=/tmp/bo;; 1) bin=/tmp/b;; 8) bin=/tmp/b8;; esac
    $bin/geohash-match $B > $L/bench_${v}_$r.txt 2>&1
    echo "round $r $v"; grep "^map *bucketed" $L/bench_${v}_$r.txt
  done
done | tee $OUT/bench_ab.txt
el bench
for v in o 1; do case $v in o) bin=/tmp/bo;; 1) bin=/tmp/b;; esac
  $bin/geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 20 --max-log2 25 --reps 3 > $L/small_$v.txt 2>&1
  echo "small $v"; grep "^map *bucketed" $L/small_$v.txt; done | tee $OUT/bench_small.txt
el small
cd /tmp/b
timeout 250 ctest -j8 -R 'hash_cuda|^map\.|faults_cuda|^index|^set\.|multimap|dist_map|geohash_cuda|voxel_cuda' -LE slow --timeout 240 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*|Failed" $OUT/ctest.log | head
GHM_TEST_SMALL=1 timeout 200 compute-sanitizer --tool memcheck ./check_hash_cuda > $L/memcheck.log 2>&1
el "memcheck rc $? $(grep -h 'ERROR SUMMARY' $L/memcheck.log | tail -1)" | tee -a $OUT/summary.txt
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench hash --backend cuda --quick --scheme cuckoo > $L/racecheck.log 2>&1
el "racecheck rc $? $(grep -h 'RACECHECK SUMMARY' $L/racecheck.log | tail -1)" | tee -a $OUT/summary.txt
timeout 100 ncu --set full -k regex:'insert_bucketed_kernel' --launch-skip 3 -c 1 -o $L/prof ./geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 1 >$L/ncu.log 2>&1
ncu -i $L/prof.ncu-rep --page details > $L/ncu_insert8.txt 2>&1
grep -E "Duration|Achieved Occupancy|Registers Per|Memory Throughput|L2 Hit|Theoretical Occ|Warp Cycles Per Issued|Issue Slots|Eligible Warps" $L/ncu_insert8.txt | head -20
rm -f $L/prof.ncu-rep
tar czf $OUT/logs.tgz -C /tmp logs3
el done
