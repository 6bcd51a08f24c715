#!/usr/bin/env bash
# s70 call 3 (one H200): o = 90f8c95, f = HEAD 3bbd642 (the final code: the load for one query
# added after call 2): ctest of geohash/match/cli on f; the 46 pairs' JSON o = f on the CPU and
# CUDA backends and the default; memcheck of a one-shot CUDA pair; --load-ref of a saved
# reference with one query, o = f on both backends. No timings.
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
/tmp/bf/geohash-match --backend cuda --save-ref /tmp/dune.ghm $H/refs/dune.jpg
for b in o f; do
  for be in cpu cuda; do
    /tmp/b$b/geohash-match --json --backend $be --load-ref /tmp/dune.ghm $H/queries/d029_photometric_dune.jpg | sed -e 's/"timings_ms":{[^}]*},\?//' > $R/load_${b}_$be.json
  done
done
for be in cpu cuda; do cmp $R/load_o_$be.json $R/load_f_$be.json && el "load-ref $be: o = f"; done
nproc > $R/nproc.txt
tar czf $OUT/call3.tgz -C /tmp o
el done
