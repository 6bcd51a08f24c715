#!/usr/bin/env bash
set -u
R=$PWD; t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
if [ ! -x /tmp/ob/geohash-match ]; then
  mkdir -p /tmp/oldsrc && tar xJf .dev/old-src.tar.xz -C /tmp/oldsrc && sed -i "s/ -Werror//" /tmp/oldsrc/CMakeLists.txt
  bash scripts/device_build.sh .dev/debs /tmp/oldsrc /tmp/ob > $OUT/build_old.log 2>&1 &
fi
bash scripts/device_build.sh .dev/debs . /tmp/nb > $OUT/build_new.log 2>&1
wait; tail -1 $OUT/build_new.log; el builds
(cd /tmp/nb && timeout 240 ctest -R 'hash_cuda|faults_cuda|map\.' -j4 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head; el ctest
B() { [ $1 = old ] && echo /tmp/ob/geohash-match || echo /tmp/nb/geohash-match; }
for round in 1 2; do for s in old new; do
  echo "== round $round $s: bench hash cuckoo 2^26" >> $OUT/hash.txt
  timeout 100 $(B $s) bench hash --backend cuda --scheme cuckoo --min-log2 26 --max-log2 26 --reps 3 >> $OUT/hash.txt 2>&1
done; done
for s in old new; do
  echo "== $s: bench hash cuckoo 2^22..2^24" >> $OUT/hash.txt
  timeout 100 $(B $s) bench hash --backend cuda --scheme cuckoo --min-log2 22 --max-log2 24 --reps 3 >> $OUT/hash.txt 2>&1
done; el hash
grep -E "==|^map +bucketed" $OUT/hash.txt | sed -E "s/  +/ /g" | cut -c1-100
bash .dev/g1/prof2.sh 2>&1 | grep -E "count|scatter|insert|dedup_marked"
