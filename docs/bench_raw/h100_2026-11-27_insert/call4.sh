#!/usr/bin/env bash
# old (46e19c4), mid (97dc370: grouped) and new (working tree: grouped + deferred) side by side
set -u
R=$PWD; t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
for v in old mid; do
  if [ ! -x /tmp/b$v/geohash-match ]; then
    mkdir -p /tmp/src$v && tar xJf .dev/$v-src.tar.xz -C /tmp/src$v && sed -i "s/ -Werror//" /tmp/src$v/CMakeLists.txt
    bash scripts/device_build.sh .dev/debs /tmp/src$v /tmp/b$v > $OUT/build_$v.log 2>&1 &
  fi
done
bash scripts/device_build.sh .dev/debs . /tmp/bnew > $OUT/build_new.log 2>&1
wait; tail -1 $OUT/build_new.log; el builds
(cd /tmp/bnew && timeout 240 ctest -R 'hash_cuda|faults_cuda|map\.' -j4 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head; el ctest
for round in 1 2; do for s in old mid new; do
  echo "== round $round $s: bench hash cuckoo 2^26" >> $OUT/hash.txt
  timeout 100 /tmp/b$s/geohash-match bench hash --backend cuda --scheme cuckoo --min-log2 26 --max-log2 26 --reps 3 >> $OUT/hash.txt 2>&1
done; done
for s in old mid new; do
  echo "== $s: bench hash cuckoo 2^22..2^25" >> $OUT/hash.txt
  timeout 100 /tmp/b$s/geohash-match bench hash --backend cuda --scheme cuckoo --min-log2 22 --max-log2 25 --reps 3 >> $OUT/hash.txt 2>&1
done; el hash
grep -E "==|^map +bucketed" $OUT/hash.txt | sed -E "s/  +/ /g" | cut -c1-100
ncu --kernel-name regex:"insert|count_kernel|scatter|dedup_marked" --launch-count 30 \
    --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct \
    --csv /tmp/bnew/geohash-match bench hash --backend cuda --scheme cuckoo --min-log2 26 --max-log2 26 --reps 1 > $OUT/ncu_new.csv 2>$OUT/ncu_new.err
python3 - $OUT/ncu_new.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; rows = rows[1:]
ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value"); ii = h.index("ID")
cur = None
for r in rows:
    if r[ii] != cur:
        cur = r[ii]; print(); print(r[ii], r[ki][:40], end="")
    print(" | %s=%s" % (r[mi].split("__")[1][:20], r[vi]), end="")
print()
PY
el ncu
