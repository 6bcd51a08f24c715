#!/usr/bin/env bash
# issue 14 cold start old/new + voxel edit breakdown (new)
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/src_old && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
el build new
bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old >"$OUT/build_old.log" 2>&1 || { tail -20 "$OUT/build_old.log"; }
el build old
nvidia-smi --query-gpu=name,persistence_mode,driver_version --format=csv
REF=$R/data/images/butterfly.jpg Q=$R/data/pairs/dev_00_query.png
ms() { local a=$(date +%s%N); "$@" >/dev/null 2>&1; local rc=$?; echo "$(( ($(date +%s%N) - a) / 1000000 )) rc$rc"; }
for v in old new; do b=/tmp/b/geohash-match; [ $v = old ] && b=/tmp/b_old/geohash-match; $b --backend cuda $REF $Q | head -2; done
for round in 1 2 3 4 5 6 7 8; do
  line="round $round:"
  line="$line old_cuda $(ms /tmp/b_old/geohash-match --backend cuda $REF $Q)"
  line="$line new_cuda $(ms /tmp/b/geohash-match --backend cuda $REF $Q)"
  line="$line new_eager $(CUDA_MODULE_LOADING=EAGER ms /tmp/b/geohash-match --backend cuda $REF $Q)"
  line="$line new_cpu $(ms /tmp/b/geohash-match --backend cpu $REF $Q)"
  line="$line new_auto $(ms /tmp/b/geohash-match $REF $Q)"
  echo "$line"
done | tee "$OUT/coldstart.txt"
/tmp/b/geohash-match --verbose --backend cuda $REF $Q 2>&1 | grep -iE "cuda|ms" | head -20
for i in 1 2 3; do
  a=$(date +%s%N); /tmp/b/geohash-match --verbose --backend cuda $REF $Q 2>&1 | grep -E "waited|started" | tr '\n' ' '; echo " total $(( ($(date +%s%N) - a) / 1000000 ))"
done
el coldstart done
cd /tmp/b
timeout 300 ctest -j8 -R 'cuda|context|auto_one_pair|device_too_old|voxel_edit|cli\.match|cli\.search|cli\.many' -LE slow --timeout 250 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head
cd $R
mkdir -p /tmp/ve && (cd /tmp/ve && python3 $R/scripts/voxel_pair.py $R/data/pointclouds/bunny_mesh.off --points 160000 A.ply B.ply >/dev/null 2>&1)
for round in 1 2; do
  (cd /tmp/ve && /tmp/b/geohash-match voxel edit --backend cuda --json --grid 256 -o e.ply A.ply --subtract B.ply --add B.ply >"$OUT/edit_$round.json" 2>&1)
  /tmp/b/geohash-match voxel edit --backend cuda --json --grid 256 $R/data/pointclouds/kitten.ply --subtract $R/data/pointclouds/bunny.ply >"$OUT/editk_$round.json" 2>&1
done
for f in "$OUT"/edit_2.json "$OUT"/editk_2.json; do python3 -c "
import json; j=json.load(open('$f')); [print(s['op'], s['probed'], s['radius'], {k: round(v,1) for k,v in s['timings_ms'].items()}) for s in j['steps']]"; done
el all done
cd "$OUT" && tar czf logs.tgz *.log *.txt *.json && rm -f *.json; true
