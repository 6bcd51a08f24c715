#!/usr/bin/env bash
# call 7: the CUDA map's marks always cleared: initcheck of every table's bench, the tables'
# tests, and the default map's build against a0ff382 (no speed claimed, a regression check).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/src_old /tmp/logs && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
A=-DCMAKE_CUDA_ARCHITECTURES=90
(bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old $A -DGEOHASH_TESTS=OFF >/tmp/logs/build_old.log 2>&1; echo "old rc $?" >>/tmp/logs/build_old.log) &
bash scripts/device_build.sh .dev/debs . /tmp/b $A >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build new
cd /tmp/b
timeout 250 ctest -j8 -R 'hash_cuda|^map\.|index|^set|multimap|faults_cuda|dynmap\.cuda' -LE slow --timeout 240 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head -20
for s in cuckoo all; do
timeout 280 compute-sanitizer --tool initcheck --print-limit 50 ./geohash-match bench hash --backend cuda --scheme $s --quick >/tmp/logs/initcheck_$s.log 2>&1
el "initcheck bench hash $s rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/initcheck_$s.log | tail -1)" | tee -a "$OUT/summary.txt"
grep -A1 "Uninitialized" /tmp/logs/initcheck_$s.log | grep " at " | sed 's/+0x.*//; s/(.*//' | sort | uniq -c | tee -a "$OUT/summary.txt"
done
wait; tail -qn1 /tmp/logs/build_old.log; el builds done
B="bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 3"
for round in 1 2; do for v in old new; do
  bin=/tmp/b_$v/geohash-match; [ $v = new ] && bin=/tmp/b/geohash-match
  timeout 100 $bin $B >/tmp/logs/cuckoo_${v}_$round.txt 2>&1; el "cuckoo $v $round rc $?"
  grep -E "^map" /tmp/logs/cuckoo_${v}_$round.txt | cut -c1-100 | tee -a "$OUT/summary.txt"
done; done
tar czf "$OUT/logs.tgz" -C /tmp logs
el done
