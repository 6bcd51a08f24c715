#!/usr/bin/env bash
# s67 call 1 (one H200): where a GhmDynmap insert's time goes. HEAD (ec8254d) built, a driver
# (.dev/c67/prof_dyn.c) fills 2^25 6-word items and runs inserts / finds / erases / gc of 2^23;
# wall times per call, then ncu's per-kernel durations and DRAM / L2 traffic.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
W=$PWD
mkdir -p /tmp/o /tmp/sn
tar -xf .dev/c67/head.tar -C /tmp/sn && sed -i "s/ -Werror//" /tmp/sn/CMakeLists.txt
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
(cd /tmp/sn && bash scripts/device_build.sh $W/.dev/debs . /tmp/bn $A > /tmp/build_n.log 2>&1) || { echo FAIL; grep -B2 -A10 error /tmp/build_n.log | head -40; }
el build
gcc -std=c11 -O2 -I/tmp/sn/hashing -I/tmp/bn/include .dev/c67/prof_dyn.c /tmp/bn/libgeohash.so -Wl,-rpath,/tmp/bn -o /tmp/prof || echo FAIL driver
for v in atomic64 accel32 accel8; do
  for c in 1 2; do /tmp/prof $v $c 4 2>&1 | tee -a /tmp/o/wall.txt; done
done
el wall
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,lts__t_sectors.sum,sm__warps_active.avg.pct_of_peak_sustained_active
for v in atomic64 accel32; do
  timeout 200 ncu --clock-control none --metrics $M --print-units base --csv /tmp/prof $v 2 2 > /tmp/o/ncu_$v.csv 2>/tmp/o/ncu_$v.err
  el "ncu $v rc $?"
done
python3 - <<'PY' | tee /tmp/o/ncu_summary.txt
import csv, collections
for v in ('atomic64', 'accel32'):
    rows = [r for r in csv.reader(open('/tmp/o/ncu_%s.csv' % v)) if len(r) > 10]
    hdr = rows[0]; rows = rows[1:]
    ki = hdr.index('Kernel Name'); mi = hdr.index('Metric Name'); vi = hdr.index('Metric Value'); ii = hdr.index('ID')
    per = collections.OrderedDict()
    for r in rows:
        per.setdefault(r[ii], {'k': r[ki][:60]})[r[mi]] = r[vi]
    print('==', v, len(per), 'launches')
    for i, d in per.items():
        print('%4s %-60s %9s us dr %8.1f MB dw %8.1f MB l2hit %6s%% l2sec %8.1f M warps %s' % (i, d['k'], '%.1f' % (float(d['gpu__time_duration.sum'].replace(',', '')) / 1e3), float(d['dram__bytes_read.sum'].replace(',', '')) / 1e6, float(d['dram__bytes_write.sum'].replace(',', '')) / 1e6, d['lts__t_sector_hit_rate.pct'], float(d['lts__t_sectors.sum'].replace(',', '')) / 1e6, d['sm__warps_active.avg.pct_of_peak_sustained_active']))
PY
tar czf $OUT/call1.tgz -C /tmp o
el done
