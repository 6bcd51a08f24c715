#!/usr/bin/env bash
# s33 call 1: where the default map's 2^26 build at load 0.95 spends its time (ncu durations of
# every kernel of the bench's cuckoo builds; full set of the 8-slot insert kernel).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/logs
bash scripts/device_build.sh .dev/debs . /tmp/b -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build
cd /tmp/b
./geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 3 > "$OUT/bench.txt" 2>&1
el bench; grep "^map" "$OUT/bench.txt"
timeout 240 ncu --metrics gpu__time_duration.sum --csv ./geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 1 > /tmp/logs/ncu_times.csv 2>&1
el "ncu times rc $?"
python3 - <<'PY' > "$OUT/kernel_times.txt"
import csv
rows=[r for r in csv.reader(open('/tmp/logs/ncu_times.csv')) if len(r)>10]
hdr=rows[0]; ki=hdr.index('Kernel Name'); vi=hdr.index('Metric Value'); ii=hdr.index('ID')
for r in rows[1:]:
    print(r[ii], r[ki][:70], r[vi])
PY
head -120 "$OUT/kernel_times.txt"
timeout 200 ncu --set full --kernel-name-base demangled -k regex:'insert_bucketed_kernel<8' -c 1 -o /tmp/logs/prof ./geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 26 --max-log2 26 --reps 1 >/tmp/logs/ncu.log 2>&1
el "ncu full rc $?"
ncu -i /tmp/logs/prof.ncu-rep --page details > "$OUT/ncu_insert8.txt" 2>&1
grep -E "Duration|Achieved Occupancy|Registers Per|Memory Throughput|DRAM Throughput|L2 Hit|L1/TEX Hit|Theoretical Occ|Warp Cycles Per Issued|Issue Slots|Eligible" "$OUT/ncu_insert8.txt" | head -30
tar czf "$OUT/logs.tgz" -C /tmp logs --exclude=prof.ncu-rep
el done
