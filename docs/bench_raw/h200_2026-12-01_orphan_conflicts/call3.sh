#!/usr/bin/env bash
# s62 call 3 (one H200): one-round fills old 86b2b9d / new / variant c (the refilled sides as a
# bitmask in a register): fill kernel durations by ncu, the seven-step edit's fill timers.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o /tmp/vc
tar -xf .dev/c62/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar -xf .dev/c62/new.tar -C /tmp/vc && sed -i "s/ -Werror//" /tmp/vc/CMakeLists.txt
(cd /tmp/vc && patch -p1) < .dev/c62/variant_c.patch || echo FAIL patch
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/vc /tmp/bc $A >/tmp/build_c.log 2>&1 || { echo FAIL c; tail -5 /tmp/build_c.log; }) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
R2="voxel edit --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
for v in o n c; do
  ncu --kernel-name regex:fill_kernel --metrics gpu__time_duration.sum /tmp/b$v/geohash-match $E --backend cuda -o /tmp/e_$v.ply 2>&1 | grep -E "gpu__time_duration" | awk -v v=$v '{printf "%s ", $NF} END {print " <- " v " fill_kernel us, e"}'
  ncu --kernel-name regex:fill_kernel --metrics gpu__time_duration.sum /tmp/b$v/geohash-match $R2 --backend cuda -o /tmp/r2_$v.ply 2>&1 | grep -E "gpu__time_duration" | awk -v v=$v '{printf "%s ", $NF} END {print " <- " v " fill_kernel us, r2"}'
done | tee /tmp/o/ncu.txt
cmp /tmp/e_o.ply /tmp/e_n.ply && cmp /tmp/e_n.ply /tmp/e_c.ply && cmp /tmp/r2_o.ply /tmp/r2_c.ply && echo "PLYs o = n = c"
el ncu
for r in 1 2 3 4 5 6; do for v in o n c; do
  /tmp/b$v/geohash-match $E --backend cuda -o /tmp/x.ply > /tmp/x.json
  echo "round $r $v e: $(python3 -c 'import json,sys
for i,s in enumerate(json.load(open(sys.argv[1]))["steps"][1:]):
    t=s["timings_ms"]; print("s%d %.2f fill %.3f |" % (i+1, t["step"] - t.get("upload",0), t["fill"]), end=" ")' /tmp/x.json)"
  /tmp/b$v/geohash-match $R2 --backend cuda -o /tmp/x.ply > /tmp/x.json
  echo "round $r $v r2: $(python3 -c 'import json,sys
for i,s in enumerate(json.load(open(sys.argv[1]))["steps"][1:]):
    t=s["timings_ms"]; print("s%d %.2f fill %.3f |" % (i+1, t["step"] - t.get("upload",0), t["fill"]), end=" ")' /tmp/x.json)"
done; done | tee -a /tmp/o/ab.txt
el timed
cp -r /tmp/o/* $OUT/
