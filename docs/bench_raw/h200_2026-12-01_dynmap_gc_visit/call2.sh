#!/usr/bin/env bash
# s65 call 2 (one H200): where a device edit step's host time goes. HEAD with a temporary trace
# (.dev/c65/trace.patch: each host wait timed with its callers; not committed), built with -g;
# the F sequence (sub, add, int by the 160 k-point B, twice) traced; ncu kernel durations of
# A --subtract B --add B --intersect B --subtract B.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
git apply .dev/c65/trace.patch || { echo patch failed; exit 1; }
mkdir -p /tmp/o
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF -DCMAKE_C_FLAGS=-g -DCMAKE_CXX_FLAGS=-g -DCMAKE_CUDA_FLAGS=-g"
$B . /tmp/bt $A >/tmp/build.log 2>&1 || { echo FAIL build; tail -20 /tmp/build.log; }
el build
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
G=/tmp/bt/geohash-match
F="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
for r in 1 2 3; do
  GHM_TRACE_WAITS=1 $G $F --backend cuda -o /tmp/x.ply > /tmp/x$r.json 2> /tmp/tr$r.txt
done
python3 - <<'PY' > /tmp/o/steps.txt
import json
for r in (1, 2, 3):
    j = json.load(open('/tmp/x%d.json' % r))
    print(r, " | ".join("%s %.2f (fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))
PY
python3 .dev/c65/waits.py $G /tmp/tr3.txt > /tmp/o/waits3.txt 2>&1
python3 .dev/c65/waits.py $G /tmp/tr2.txt > /tmp/o/waits2.txt 2>&1
el traced
timeout 200 ncu --metrics gpu__time_duration.sum --csv --page raw $G voxel edit --backend cuda --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply -o /tmp/n.ply > /tmp/o/ncu_raw.csv 2> /tmp/o/ncu_err.txt
el "ncu rc $?"
python3 - <<'PY' > /tmp/o/ncu_kernels.txt
import csv
rows = [r for r in csv.reader(open('/tmp/o/ncu_raw.csv')) if len(r) > 5]
hdr = rows[0]; ki = hdr.index('Kernel Name'); ti = hdr.index('gpu__time_duration.sum')
for r in rows[2:]:
    print("%8s  %s" % (r[ti], r[ki][:110]))
PY
cp /tmp/o/steps.txt /tmp/o/waits2.txt /tmp/o/waits3.txt /tmp/o/ncu_kernels.txt $OUT/
head -c 3000 /tmp/tr3.txt > $OUT/tr3_head.txt
el done
