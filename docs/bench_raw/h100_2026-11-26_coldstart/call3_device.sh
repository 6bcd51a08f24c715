#!/usr/bin/env bash
# issue 14: quick exit + voxel auto rule; old (9aa4215) vs new in one call
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
if [ ! -x /tmp/b/geohash-match ]; then
  bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
fi
cmake /tmp/b >/dev/null; cmake --build /tmp/b -j16 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
el build new
if [ ! -x /tmp/b_old/geohash-match ]; then
  mkdir -p /tmp/src_old && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
  bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old >"$OUT/build_old.log" 2>&1 || { tail -20 "$OUT/build_old.log"; }
fi
el build old
NEW=/tmp/b/geohash-match OLD=/tmp/b_old/geohash-match
cd /tmp/b
timeout 300 ctest -j8 -R 'cuda|context|auto|device_too_old|voxel_edit|cli\.match|cli\.search|cli\.multi|cli\.voxel' -LE slow --timeout 250 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head
mkdir -p /tmp/vp && cd /tmp/vp
for n in 160000 2000000; do [ -f A$n.ply ] || python3 $R/scripts/voxel_pair.py $R/data/pointclouds/bunny_mesh.off --points $n A$n.ply B$n.ply >/dev/null; done
for clean in 1 0; do
  GHM_CLEAN_EXIT=$clean timeout 120 compute-sanitizer --tool memcheck --leak-check full $NEW voxel edit --backend cuda --grid 64 -o /tmp/m$clean.ply $R/data/pointclouds/kitten.ply --subtract $R/data/pointclouds/bunny.ply >"$OUT/memcheck_edit_clean$clean.log" 2>&1
  el "memcheck edit GHM_CLEAN_EXIT=$clean rc $? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck_edit_clean$clean.log" | tail -1) $(grep -c 'leak' "$OUT/memcheck_edit_clean$clean.log") leak lines"
done
cmp /tmp/m0.ply /tmp/m1.ply && echo "quick exit: same PLY"
ms() { local a=$(date +%s%N); "$@" >/dev/null 2>&1; local rc=$?; echo "$(( ($(date +%s%N) - a) / 1000000 ))$([ $rc = 0 ] || echo rc$rc)"; }
REF=$R/data/images/butterfly.jpg Q=$R/data/pairs/dev_00_query.png
for round in 1 2 3 4 5 6; do
  echo "pair r$round: old_cuda $(ms $OLD --backend cuda $REF $Q) new_cuda $(ms $NEW --backend cuda $REF $Q) new_cuda_clean $(GHM_CLEAN_EXIT=1 ms $NEW --backend cuda $REF $Q) new_cpu $(ms $NEW --backend cpu $REF $Q)"
done | tee "$OUT/pair_proc.txt"
for cfg in "160000 128" "160000 256" "2000000 256" "2000000 1024"; do
  set -- $cfg; n=$1; g=$2
  for round in 1 2 3; do
    echo "voxel n=$n grid=$g r$round: old_cuda $(ms $OLD voxel --backend cuda --grid $g A$n.ply B$n.ply) new_cuda $(ms $NEW voxel --backend cuda --grid $g A$n.ply B$n.ply) new_cuda_clean $(GHM_CLEAN_EXIT=1 ms $NEW voxel --backend cuda --grid $g A$n.ply B$n.ply) new_cpu $(ms $NEW voxel --backend cpu --grid $g A$n.ply B$n.ply) new_auto $(ms $NEW voxel --grid $g A$n.ply B$n.ply)"
  done
done | tee "$OUT/voxel_proc.txt"
for g in 128 256; do
  for round in 1 2; do
    echo "edit n=160000 grid=$g r$round: old_cuda $(ms $OLD voxel edit --backend cuda --grid $g A160000.ply --subtract B160000.ply) new_cuda $(ms $NEW voxel edit --backend cuda --grid $g A160000.ply --subtract B160000.ply) new_cpu $(ms $NEW voxel edit --backend cpu --grid $g A160000.ply --subtract B160000.ply)"
  done
done | tee "$OUT/edit_proc.txt"
cd $R; mkdir -p /tmp/q100; for i in $(seq -w 1 100); do cp $Q /tmp/q100/q$i.png; done
for round in 1 2; do echo "100 queries r$round: old $(ms $OLD $REF /tmp/q100/*.png) new $(ms $NEW $REF /tmp/q100/*.png)"; done | tee "$OUT/q100.txt"
a=$(date +%s%N); for f in /tmp/q100/*.png; do $NEW $REF $f >/dev/null 2>&1; done; echo "100 processes (auto: cpu) $(( ($(date +%s%N) - a) / 1000000 )) ms"
a=$(date +%s%N); for f in /tmp/q100/*.png; do $NEW --backend cuda $REF $f >/dev/null 2>&1; done; echo "100 processes cuda $(( ($(date +%s%N) - a) / 1000000 )) ms"
el all done
