#!/usr/bin/env bash
# ncu per-kernel times and memory traffic of one 2^26 bucketed build at load 0.8, old and new
set -u
t0=$(date +%s)
if [ ! -x /tmp/nb/geohash-match ] || [ ! -x /tmp/ob/geohash-match ]; then
  sed -i "s/ -Werror//" CMakeLists.txt
  mkdir -p /tmp/oldsrc && tar xJf .dev/old-src.tar.xz -C /tmp/oldsrc && sed -i "s/ -Werror//" /tmp/oldsrc/CMakeLists.txt
  bash scripts/device_build.sh .dev/debs . /tmp/nb > $OUT/build_new.log 2>&1 &
  bash scripts/device_build.sh .dev/debs /tmp/oldsrc /tmp/ob > $OUT/build_old.log 2>&1 &
  wait
fi
echo "ready $(( $(date +%s) - t0 )) s"
for s in ob nb; do
  ncu --kernel-name regex:"insert|count_kernel|scatter|scan_kernel|dedup|fixup|reset" --launch-count 12 \
      --metrics gpu__time_duration.sum,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_atom.sum \
      --csv /tmp/$s/geohash-match bench hash --backend cuda --scheme cuckoo --min-log2 26 --max-log2 26 --reps 1 > $OUT/ncu_$s.csv 2>$OUT/ncu_$s.err
  echo "$s $(( $(date +%s) - t0 )) s"
  python3 - $OUT/ncu_$s.csv <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
h = rows[0]; rows = rows[1:]
ki = h.index("Kernel Name"); mi = h.index("Metric Name"); vi = h.index("Metric Value"); ii = h.index("ID")
cur = None
for r in rows:
    if r[ii] != cur:
        cur = r[ii]; print(); print(r[ii], r[ki][:60], end="")
    print(" | %s=%s" % (r[mi].split("__")[1][:28], r[vi]), end="")
print()
PY
done
