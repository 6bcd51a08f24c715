#!/usr/bin/env bash
# s34 call 1 (experiment): Robin Hood's find reading the home slot beside the max-age entry
# (GHM_RH_FIND=1) and also two ages at a time (=2) against HEAD's (=0); linear probing's find
# skipping the window's sector before the probe (GHM_LIN_FIND=1). One binary, env-selected.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/logs1; mkdir -p $L
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 >$L/build.log 2>&1 || { tail -40 $L/build.log; exit 1; }
el build
G=/tmp/b/geohash-match
for r in 1 2; do for v in 0 1 2; do
  GHM_RH_FIND=$v $G bench hash --backend cuda --seed 1 --scheme robin-hood --min-log2 26 --max-log2 26 --reps 3 > $L/rh_${v}_$r.txt 2>&1
  echo "round $r rh v$v"; grep -E "^map|^coherent" $L/rh_${v}_$r.txt | cut -c1-125
done; done | tee $OUT/rh_ab.txt
el rh
for r in 1 2; do for v in 0 1; do
  GHM_LIN_FIND=$v $G bench hash --backend cuda --seed 1 --scheme linear --min-log2 26 --max-log2 26 --reps 3 > $L/lin_${v}_$r.txt 2>&1
  echo "round $r linear v$v"; grep -E "^map" $L/lin_${v}_$r.txt | cut -c1-125
done; done | tee $OUT/lin_ab.txt
el lin
for seed in 2 3; do for v in 0 2; do
  GHM_RH_FIND=$v $G bench hash --backend cuda --seed $seed --scheme robin-hood --min-log2 26 --max-log2 26 --reps 3 > $L/rhs${seed}_${v}.txt 2>&1
  echo "seed $seed rh v$v"; grep -E "^coherent|0.99" $L/rhs${seed}_${v}.txt | cut -c1-125
done; done | tee $OUT/rh_seeds.txt
el seeds
cd /tmp/b
for v in 2; do
  GHM_RH_FIND=$v GHM_LIN_FIND=1 timeout 200 ctest -j8 -R 'hash_cuda|^map\.' -LE slow --timeout 190 > $L/ctest_$v.log 2>&1
  el "ctest v$v rc $?"; grep -E "tests passed|\*\*\*" $L/ctest_$v.log
done | tee $OUT/ctest.txt
tar czf $OUT/logs.tgz -C /tmp logs1
el done
