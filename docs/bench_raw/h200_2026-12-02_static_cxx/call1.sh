#!/usr/bin/env bash
# s72 call 1 (one H200): o = ca6bce6 (stop 71's end), f = 3120604 (the C++ runtime linked into
# the program). Builds both; ctest subset on f; the 46 pairs' JSON o = f on cpu, cuda, default;
# --version and one-shot pairs (default backend, --backend cpu) o against f.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); R=/tmp/o; mkdir -p $R
el() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a $R/log.txt; }
W=$PWD
for v in o f; do
  t=head; [ $v = o ] && t=base
  mkdir -p /tmp/s$v && tar -xf .dev/c72/$t.tar -C /tmp/s$v && sed -i "s/ -Werror//" /tmp/s$v/CMakeLists.txt
  ln -s $W/data /tmp/s$v/data
done
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
(cd /tmp/so && bash scripts/device_build.sh $W/.dev/debs . /tmp/bo $A > /tmp/build_o.log 2>&1 || echo FAIL o) &
(cd /tmp/sf && bash scripts/device_build.sh $W/.dev/debs . /tmp/bf $A > /tmp/build_f.log 2>&1) || { echo FAIL f; grep -B2 -A10 error /tmp/build_f.log | head -40; }
wait; el builds
(readelf -d /tmp/bo/geohash-match | grep NEEDED; echo ---; readelf -d /tmp/bf/geohash-match | grep NEEDED) > $R/needed.txt
cat $R/needed.txt
(cd /tmp/bf && timeout 240 ctest -j 16 -R 'geohash|match|cli|edge|feature|tables|dynmap|voxel|video' -LE slow --timeout 200 > $R/ctest_f.txt 2>&1; el ctest f rc $?)
grep -E "tests passed|Failed|\*\*\*" $R/ctest_f.txt | tail -12
for be in cpu cuda; do
  timeout 120 python3 .dev/c72/same.py /tmp/bo/geohash-match /tmp/bf/geohash-match --backend $be > $R/same_$be.txt 2>&1
  el "same $be: $(tail -1 $R/same_$be.txt)"
done
timeout 60 python3 .dev/c72/same.py /tmp/bo/geohash-match /tmp/bf/geohash-match > $R/same_default.txt 2>&1
el "same default: $(tail -1 $R/same_default.txt)"
timeout 60 python3 .dev/c72/version.py /tmp/bo/geohash-match /tmp/bf/geohash-match 200 > $R/version.txt 2>&1
el "$(cat $R/version.txt)"
timeout 150 python3 .dev/c72/ab.py /tmp/bo/geohash-match /tmp/bf/geohash-match 2 > $R/ab_default.txt 2>&1
el "ab default: $(tail -1 $R/ab_default.txt)"
timeout 150 python3 .dev/c72/ab.py /tmp/bo/geohash-match /tmp/bf/geohash-match 2 --backend cpu --threads 2 > $R/ab_cpu2.txt 2>&1
el "ab cpu --threads 2: $(tail -1 $R/ab_cpu2.txt)"
tar czf $OUT/call1.tgz -C /tmp o
el done
