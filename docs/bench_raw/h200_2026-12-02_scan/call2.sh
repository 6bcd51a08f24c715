#!/usr/bin/env bash
# s70 call 2 (one H200): o = 90f8c95, f = HEAD 15eb626 (call 1 ran 924c39c): call 1's checks on
# the final code (the scan's shared best-list helper, GhmMatchResult.ref_scanned, the list's room
# fix): ctest of geohash/match/cli on f; the 46 pairs' JSON o = f on the CPU and CUDA backends and
# the default; memcheck of a one-shot CUDA pair. No timings.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); R=/tmp/o; mkdir -p $R
el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/log.txt; }
W=$PWD
for v in o f; do
  t=head; [ $v = o ] && t=base
  mkdir -p /tmp/s$v && tar -xf .dev/c70/$t.tar -C /tmp/s$v && sed -i "s/ -Werror//" /tmp/s$v/CMakeLists.txt
  ln -s $W/data /tmp/s$v/data
done
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
(cd /tmp/so && bash scripts/device_build.sh $W/.dev/debs . /tmp/bo $A > /tmp/build_o.log 2>&1 || echo FAIL o) &
(cd /tmp/sf && bash scripts/device_build.sh $W/.dev/debs . /tmp/bf $A > /tmp/build_f.log 2>&1) || { echo FAIL f; grep -B2 -A10 error /tmp/build_f.log | head -40; }
wait; el builds
(cd /tmp/bf && timeout 200 ctest -j 16 -R 'geohash|match|cli|edge|feature' -LE slow --timeout 190 > $R/ctest_f.txt 2>&1; el ctest f rc $?)
grep -E "tests passed|Failed|\*\*\*" $R/ctest_f.txt | tail -12
for be in cpu cuda; do
  timeout 120 python3 .dev/c70/same.py /tmp/bo/geohash-match /tmp/bf/geohash-match --backend $be > $R/same_$be.txt 2>&1
  el "same $be: $(tail -1 $R/same_$be.txt)"
done
timeout 60 python3 .dev/c70/same.py /tmp/bo/geohash-match /tmp/bf/geohash-match > $R/same_default.txt 2>&1
el "same default: $(tail -1 $R/same_default.txt)"
H=.dev/c70/hard
for be in cuda; do
  timeout 90 compute-sanitizer --tool memcheck --leak-check full /tmp/bf/geohash-match --backend $be --json $H/refs/dune.jpg $H/queries/d029_photometric_dune.jpg > $R/mc_$be.txt 2>&1
  el "memcheck $be rc $? $(grep 'ERROR SUMMARY' $R/mc_$be.txt | tail -1)"
done
nproc > $R/nproc.txt
tar czf $OUT/call2.tgz -C /tmp o
el done
