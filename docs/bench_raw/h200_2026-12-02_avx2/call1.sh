#!/usr/bin/env bash
# s71 call 1 (one H200): o = f18cc5e (stop 70's end), f = HEAD (AVX2 clones of the floor()
# loops; MPI's calls in a module: the device builds have no MPI, so only the clones differ
# here). ctest subset on f; the 46 pairs' JSON o = f on cpu, cuda and the default; ab_ratio o f
# on 16 threads and with --threads 2; the CPU's flags.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); R=/tmp/o; mkdir -p $R
el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/log.txt; }
W=$PWD
for v in o f; do
  t=head; [ $v = o ] && t=base
  mkdir -p /tmp/s$v && tar -xf .dev/c71/$t.tar -C /tmp/s$v && sed -i "s/ -Werror//" /tmp/s$v/CMakeLists.txt
  ln -s $W/data /tmp/s$v/data
done
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
(cd /tmp/so && bash scripts/device_build.sh $W/.dev/debs . /tmp/bo $A > /tmp/build_o.log 2>&1 || echo FAIL o) &
(cd /tmp/sf && bash scripts/device_build.sh $W/.dev/debs . /tmp/bf $A > /tmp/build_f.log 2>&1) || { echo FAIL f; grep -B2 -A10 error /tmp/build_f.log | head -40; }
wait; el builds
grep -o -w -E "avx512f|avx2|sse4_1" /proc/cpuinfo | sort | uniq -c > $R/cpuflags.txt; lscpu | grep "Model name" >> $R/cpuflags.txt
(cd /tmp/bf && timeout 200 ctest -j 16 -R 'geohash|match|cli|edge|feature' -LE slow --timeout 190 > $R/ctest_f.txt 2>&1; el ctest f rc $?)
grep -E "tests passed|Failed|\*\*\*" $R/ctest_f.txt | tail -12
for be in cpu cuda; do
  timeout 120 python3 .dev/c71/same.py /tmp/bo/geohash-match /tmp/bf/geohash-match --backend $be > $R/same_$be.txt 2>&1
  el "same $be: $(tail -1 $R/same_$be.txt)"
done
timeout 60 python3 .dev/c71/same.py /tmp/bo/geohash-match /tmp/bf/geohash-match > $R/same_default.txt 2>&1
el "same default: $(tail -1 $R/same_default.txt)"
timeout 150 python3 .dev/c71/ab_ratio.py /tmp/bo/geohash-match /tmp/bf/geohash-match 2 > $R/ab_cpu16.txt 2>&1
el "ab 16 threads: $(tail -1 $R/ab_cpu16.txt)"
timeout 150 python3 .dev/c71/ab_ratio.py /tmp/bo/geohash-match /tmp/bf/geohash-match 2 --threads 2 > $R/ab_cpu2.txt 2>&1
el "ab --threads 2: $(tail -1 $R/ab_cpu2.txt)"
nproc > $R/nproc.txt
tar czf $OUT/call1.tgz -C /tmp o
el done
