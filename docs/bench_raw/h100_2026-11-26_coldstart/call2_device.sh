#!/usr/bin/env bash
# issue 14: process times of one-shot voxel runs cpu/cuda (old/new), exit cost, auto rule data
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
if [ ! -x /tmp/b/geohash-match ]; then
  sed -i "s/ -Werror//" CMakeLists.txt
  bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
fi
cmake --build /tmp/b -j16 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
el build new
if [ ! -x /tmp/b_old/geohash-match ]; then
  mkdir -p /tmp/src_old && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
  bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old >"$OUT/build_old.log" 2>&1 || { tail -20 "$OUT/build_old.log"; }
fi
el build old
NEW=/tmp/b/geohash-match OLD=/tmp/b_old/geohash-match
ls -la $OLD >/dev/null || exit 1
mkdir -p /tmp/vp && cd /tmp/vp
for n in 160000 2000000; do [ -f A$n.ply ] || python3 $R/scripts/voxel_pair.py $R/data/pointclouds/bunny_mesh.off --points $n A$n.ply B$n.ply >/dev/null; done
ms() { local a=$(date +%s%N); "$@" >/dev/null 2>&1; local rc=$?; echo "$(( ($(date +%s%N) - a) / 1000000 ))$([ $rc = 0 ] || echo rc$rc)"; }
for cfg in "160000 128" "160000 256" "160000 512" "2000000 256" "2000000 1024"; do
  set -- $cfg; n=$1; g=$2
  for round in 1 2 3; do
    echo "voxel n=$n grid=$g r$round: old_cuda $(ms $OLD voxel --backend cuda --grid $g A$n.ply B$n.ply) new_cuda $(ms $NEW voxel --backend cuda --grid $g A$n.ply B$n.ply) new_cpu $(ms $NEW voxel --backend cpu --grid $g A$n.ply B$n.ply)"
  done
done | tee "$OUT/voxel_proc.txt"
$NEW voxel --backend cuda --verbose --grid 256 A2000000.ply B2000000.ply 2>&1 | grep -iE "cuda|read|ms" | head -8
for g in 128 256; do
  for round in 1 2; do
    echo "edit n=160000 grid=$g r$round: new_cuda $(ms $NEW voxel edit --backend cuda --grid $g A160000.ply --subtract B160000.ply) new_cpu $(ms $NEW voxel edit --backend cpu --grid $g A160000.ply --subtract B160000.ply)"
  done
done | tee "$OUT/edit_proc.txt"
cat > /tmp/stamp.py <<'PY'
import subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
first = None
for line in p.stdout:
    if first is None: first = time.perf_counter()
p.wait(); t1 = time.perf_counter()
print(f"to first line {1e3*(first-t0):.0f} ms, then to exit {1e3*(t1-first):.0f} ms")
PY
REF=$R/data/images/butterfly.jpg Q=$R/data/pairs/dev_00_query.png
for i in 1 2 3 4; do echo "pair cuda new: $(python3 /tmp/stamp.py $NEW --backend cuda $REF $Q)  old: $(python3 /tmp/stamp.py $OLD --backend cuda $REF $Q)  cpu: $(python3 /tmp/stamp.py $NEW --backend cpu $REF $Q)"; done | tee "$OUT/exit.txt"
for i in 1 2 3; do echo "version: $(ms $NEW --version)"; done
el all done
