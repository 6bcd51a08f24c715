#!/usr/bin/env bash
# s55 call 8 (one H200): 623a0c6 (old) and the final tree built side by side (MPI, FFmpeg and
# tests off): one-shot pairs in turns (default backend, --backend cpu, cpu on 2 cores), 14
# rounds; the pairs' JSON old / new; bench match on the CPU in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p /tmp/old && tar -xf .dev/c55/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
(bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $A > /tmp/build_old.log 2>&1 || echo FAIL old) &
(bash scripts/device_build.sh .dev/debs . /tmp/bn $A > /tmp/build_new.log 2>&1 || echo FAIL new) &
wait
NB=/tmp/bn/geohash-match OB=/tmp/bo/geohash-match
ms() { local a=$(date +%s%N); "$@" >/dev/null 2>&1; local rc=$?; echo "$(( ($(date +%s%N) - a) / 100000 ))$([ $rc -le 1 ] || echo rc$rc)"; }
RI=data/images/rubberwhale1.png QI=data/pairs/dev_01_query.png
for round in $(seq 14); do
  echo "r$round (0.1 ms) pair auto: old $(ms $OB $RI $QI) new $(ms $NB $RI $QI) | pair cpu: old $(ms $OB --backend cpu $RI $QI) new $(ms $NB --backend cpu $RI $QI) | pair cpu on 2 cores: old $(ms taskset -c 0,1 $OB --backend cpu $RI $QI) new $(ms taskset -c 0,1 $NB --backend cpu $RI $QI)"
done | tee $OUT/pairs.txt
same=0; tot=0
for q in data/pairs/*.png data/pairs/*.jpg; do
  for b in OB NB; do ${!b} --json --backend cpu $RI $q | sed -E 's/"timings_ms":\{[^}]*\},?//' > /tmp/j$b.txt; done
  tot=$((tot+1)); cmp -s /tmp/jOB.txt /tmp/jNB.txt && same=$((same+1))
  for b in OB NB; do ${!b} --json $RI $q | sed -E 's/"timings_ms":\{[^}]*\},?//' > /tmp/g$b.txt; done
  tot=$((tot+1)); cmp -s /tmp/gOB.txt /tmp/gNB.txt && same=$((same+1))
done
echo "pairs' JSON identical old/new (cpu and default backend): $same of $tot" | tee -a $OUT/pairs.txt
for r in 1 2; do for b in OB NB; do echo "== $b round $r"; ${!b} bench match --backend cpu --reps 20 2>&1 | tail -3; done; done | tee $OUT/bench_match_cpu.txt
