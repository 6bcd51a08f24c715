#!/usr/bin/env bash
# s54 call 1 (one H200): 69cc496 (old) and the new tree (the heap in huge pages, grid sampling in
# one pass) built side by side, FFmpeg and MPI off; the new tree's ctest without the slow cases
# (check_geohash_cuda compares the CPU grid sampling with the device's); one-shot pairs in turns
# (--version, default backend, --backend cpu, cpu on 2 cores); the pairs' JSON old/new; bench
# match on the CPU, old/new in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi -L; grep -m1 "model name" /proc/cpuinfo; nproc
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
mkdir -p /tmp/old && tar -xf .dev/c54/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
(bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_old.log 2>&1; echo "old rc $?") &
po=$!
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > $OUT/build_new.log 2>&1; echo "new rc $?"
wait $po
el build
(cd /tmp/bn && timeout 400 ctest -j 16 -LE slow --timeout 380 > $OUT/ctest.txt 2>&1; echo "ctest rc $?")
grep -E "tests passed|\*\*\*Failed|Failed  |Timeout" $OUT/ctest.txt | head -20
el ctest
NB=/tmp/bn/geohash-match OB=/tmp/bo/geohash-match
ms() { local a=$(date +%s%N); "$@" >/dev/null 2>&1; local rc=$?; echo "$(( ($(date +%s%N) - a) / 100000 ))$([ $rc -le 1 ] || echo rc$rc)"; }
RI=data/images/rubberwhale1.png QI=data/pairs/dev_01_query.png
for round in 1 2 3 4 5 6 7 8 9 10; do
  echo "r$round (0.1 ms) version: old $(ms $OB --version) new $(ms $NB --version) | pair auto: old $(ms $OB $RI $QI) new $(ms $NB $RI $QI) | pair cpu: old $(ms $OB --backend cpu $RI $QI) new $(ms $NB --backend cpu $RI $QI) | pair cpu on 2 cores: old $(ms taskset -c 0,1 $OB --backend cpu $RI $QI) new $(ms taskset -c 0,1 $NB --backend cpu $RI $QI)"
done | tee $OUT/pairs.txt
for b in OB NB; do /usr/bin/time -f "$b %e s %R minor faults %M KB" ${!b} --backend cpu $RI $QI > /dev/null; done 2>&1 | tee -a $OUT/pairs.txt
same=0; tot=0
for q in data/pairs/*.png data/pairs/*.jpg; do
  for b in OB NB; do ${!b} --json --backend cpu $RI $q | sed -E 's/"timings_ms":\{[^}]*\},?//' > /tmp/j$b.txt; done
  tot=$((tot+1)); cmp -s /tmp/jOB.txt /tmp/jNB.txt && same=$((same+1))
  for b in OB NB; do ${!b} --json $RI $q | sed -E 's/"timings_ms":\{[^}]*\},?//' > /tmp/g$b.txt; done
  tot=$((tot+1)); cmp -s /tmp/gOB.txt /tmp/gNB.txt && same=$((same+1))
done
echo "pairs' JSON identical old/new (cpu and default backend): $same of $tot" | tee -a $OUT/pairs.txt
el pairs
for r in 1 2; do for b in OB NB; do echo "== $b round $r"; ${!b} bench match --backend cpu --reps 20 2>&1 | tail -3; done; done | tee $OUT/bench_match_cpu.txt
el done
