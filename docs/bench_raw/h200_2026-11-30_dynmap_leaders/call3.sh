#!/usr/bin/env bash
# s56 call 3 (one H200): the duplicate table with fingerprints, fused with the hash (L0: slots
# the power of two >= 2n; L1: n + n/4 slots) against 057e302; ctest, memcheck, racecheck on L0.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/bins /tmp/o && tar -xf .dev/c56/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
mkdir -p /tmp/srcv && tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcv
sed -i "s/^#define DYN_LEADER_LOAD 0/#define DYN_LEADER_LOAD 1/" /tmp/srcv/kernels/hashing/dynmap.cu
grep -c "define DYN_LEADER_LOAD 1" /tmp/srcv/kernels/hashing/dynmap.cu
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/srcv /tmp/bv $A -DGEOHASH_TESTS=OFF >/tmp/build_v.log 2>&1 || echo FAIL v) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
cp /tmp/bo/geohash-match /tmp/bins/old; cp /tmp/bn/geohash-match /tmp/bins/L0; cp /tmp/bv/geohash-match /tmp/bins/L1
cd /tmp/bn
timeout 200 ctest -j 16 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap' -LE slow --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 120 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap > /tmp/o/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$c.txt | tail -1)"
done
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench dynmap --backend cuda --quick > /tmp/o/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc.txt | tail -1)"
for round in 1 2 3; do
  for b in old L0 L1; do
    timeout 60 /tmp/bins/$b bench dynmap --backend cuda --reps 3 > /tmp/o/dyn_${b}_$round.txt 2>&1 || echo "rc $? $b"
  done
  el round $round
done
cd /tmp/o
for b in old L0 L1; do
  printf "%-4s ins " $b; for r in 1 2 3; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $9}'; printf "| "; done
  printf " erase "; for r in 1 2 3; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $10}'; printf "| "; done
  printf " fill "; sed -n 3,10p dyn_${b}_1.txt | awk '{printf "%s ", $5}'; echo
done | tee /tmp/o/table.txt
for b in old L0 L1; do echo "== $b sizes"; sed -n '/item sizes/,$p' dyn_${b}_1.txt | head -24 | awk '{print $1,$2,$5}' | tr '\n' ';'; echo; done
timeout 100 ncu -k regex:'hash_leader|leader_final|leader_kernel|hash_kernel' --launch-skip 2 -c 2 /tmp/bins/L0 bench dynmap --backend cuda --reps 1 > /tmp/o/ncu_L0.txt 2>&1
timeout 100 ncu -k regex:'hash_leader|leader_final|leader_kernel|hash_kernel' --launch-skip 3 -c 3 /tmp/bins/old bench dynmap --backend cuda --reps 1 > /tmp/o/ncu_old.txt 2>&1
timeout 100 ncu -k regex:'hash_leader|leader_final' --launch-skip 2 -c 2 /tmp/bins/L1 bench dynmap --backend cuda --reps 1 > /tmp/o/ncu_L1.txt 2>&1
grep -hE "^  [a-z_]+.*\(|Duration" /tmp/o/ncu_*.txt | sed 's/(.*//' | paste - - | awk '{print $1, $(NF-1), $NF}'
tar czf $OUT/call3.tgz -C /tmp o
el done
