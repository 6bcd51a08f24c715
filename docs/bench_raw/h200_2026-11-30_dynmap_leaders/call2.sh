#!/usr/bin/env bash
# s56 call 2 (one H200): the insert's variants against 057e302: walk kernels' block size
# (256/128/64), the leaders' bucket heads loaded ahead (H), the write over a list of the left
# items (L). ctest + memcheck + racecheck on the all-on default (H1 L1 256).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
R=$PWD
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/bins && tar -xf .dev/c56/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
cp /tmp/bo/geohash-match /tmp/bins/old; cp /tmp/bn/geohash-match /tmp/bins/H1L1T256
tests() {
cd /tmp/bn
timeout 200 ctest -j 16 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap' -LE slow --timeout 190 > $OUT/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.txt | head
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 120 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap > /tmp/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' /tmp/mc_$c.txt | tail -1)" | tee -a $OUT/summary.txt
done
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench dynmap --backend cuda --quick > /tmp/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/rc.txt | tail -1)" | tee -a $OUT/summary.txt
}
tests > /tmp/tests.log 2>&1 &
TP=$!
mkdir -p /tmp/srcv && tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcv
$B /tmp/srcv /tmp/bv $A -DGEOHASH_TESTS=OFF >/tmp/build_v.log 2>&1 || echo FAIL v
F=/tmp/srcv/kernels/hashing/dynmap_cuda_internal.cuh; cp $F /tmp/cuh
for v in "0 0 256" "0 0 128" "0 0 64" "1 0 256" "0 1 256" "1 1 128" "1 1 64"; do
  set -- $v
  cp /tmp/cuh $F
  sed -i "s/^#define DYN_HEADS_AHEAD 1/#define DYN_HEADS_AHEAD $1/; s/^#define DYN_WRITE_LIST 1/#define DYN_WRITE_LIST $2/; s/^#define DYN_WALK_THREADS 256/#define DYN_WALK_THREADS $3/" $F
  cmake --build /tmp/bv --target geohash-match >/tmp/b_$1$2$3.log 2>&1 || echo "FAIL $v"
  cp /tmp/bv/geohash-match /tmp/bins/H$1L$2T$3
done
el variants; ls /tmp/bins
wait $TP; cat /tmp/tests.log; el tests
cd /tmp/bn
for round in 1 2; do
  for b in old H0L0T256 H0L0T128 H0L0T64 H1L0T256 H0L1T256 H1L1T256 H1L1T128 H1L1T64; do
    timeout 60 /tmp/bins/$b bench dynmap --backend cuda --reps 3 > $OUT/dyn_${b}_$round.txt 2>&1 || echo "rc $? $b"
  done
  el round $round
done
cd $OUT
for b in old H0L0T256 H0L0T128 H0L0T64 H1L0T256 H0L1T256 H1L1T256 H1L1T128 H1L1T64; do
  printf "%-9s ins " $b; for r in 1 2; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $9}'; printf "| "; done
  printf " erase "; sed -n 3,10p dyn_${b}_1.txt | awk '{printf "%s ", $10}'; printf " fill "; sed -n 3,4p dyn_${b}_1.txt | awk '{printf "%s ", $5}'; echo
done | tee $OUT/table.txt
el done
