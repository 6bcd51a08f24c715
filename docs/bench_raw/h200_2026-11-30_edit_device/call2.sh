#!/usr/bin/env bash
# s57 call 2 (one H200): where a voxel edit's fill goes (globaltimer per phase, fill_timers.patch)
# and ncu kernel durations of a repeated subtract.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o /tmp/srcv
tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcv
patch -d /tmp/srcv -p1 < .dev/c57/fill_timers.patch > /dev/null || echo PATCH FAIL
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
($B /tmp/srcv /tmp/bv $A >/tmp/build_v.log 2>&1 || { echo FAIL v; tail -20 /tmp/build_v.log; }) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el build
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
for r in 1 2; do /tmp/bv/geohash-match $EDIT -o /tmp/x.ply > /tmp/o/fill_$r.txt 2>&1; done
grep FILLSUM /tmp/o/fill_2.txt
el fill
ncu --metrics gpu__time_duration.sum --csv /tmp/bn/geohash-match voxel edit --backend cuda --grid 256 /tmp/A.ply --subtract /tmp/B.ply --subtract /tmp/B.ply -o /tmp/y.ply > /tmp/o/ncu_sub.csv 2>/tmp/o/ncu_err.txt
el ncu rc $?
python3 - <<'PY' | tee /tmp/o/ncu_sub_summary.txt
import csv, collections
rows = [r for r in csv.reader(open('/tmp/o/ncu_sub.csv')) if len(r) > 10]
h = rows[0]; rows = rows[1:]
iname = h.index('Kernel Name'); ival = h.index('Metric Value'); iid = h.index('ID')
ks = [(int(r[iid]), r[iname].split('(')[0][:60], float(r[ival].replace(',', ''))) for r in rows]
n = len(ks); print('kernels', n)
# the last third of the launches ~ the repeated subtract: print every launch of the last 45 %
for i, name, ns in ks[int(n * 0.55):]:
    print(i, name, '%.1f us' % (ns / 1e3))
PY
tar czf $OUT/call2.tgz -C /tmp o
el done
