#!/usr/bin/env bash
# Merged main on the H100: new and old (f82c4cd) built side by side, the CUDA tests, memcheck,
# voxel edit CPU vs CUDA at 256^3, then device_compare old/new. Results under $OUT as they come.
set -u
R=$PWD
t0=$(date +%s)
el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/oldsrc && tar xJf .dev/old-src.tar.xz -C /tmp/oldsrc && cp -r data /tmp/oldsrc/ && sed -i "s/ -Werror//" /tmp/oldsrc/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
el build new
(bash scripts/device_build.sh .dev/debs /tmp/oldsrc /tmp/ob >"$OUT/build_old.log" 2>&1; echo "old build rc $?" >>"$OUT/build_old.log") &
OLDPID=$!
cd /tmp/b
timeout 200 ctest -j8 -R 'cuda|dynmap|faults|match$|context|voxel_edit|auto_one_pair|device_too_old' -LE slow --timeout 180 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|Failed|\*\*\*|Skipped|Not Run" "$OUT/ctest.log" | head -30
for t in check_dynmap check_match; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 120 compute-sanitizer --tool memcheck --leak-check full ./$t >"$OUT/memcheck_$t.log" 2>&1
  el "memcheck $t rc $? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck_$t.log" | tail -1)"
done
mkdir -p /tmp/ve && cd /tmp/ve
python3 $R/scripts/voxel_pair.py $R/data/pointclouds/bunny_mesh.off --points 160000 A.ply B.ply >/dev/null 2>&1
for be in cpu cuda cpu cuda; do
  /tmp/b/geohash-match voxel edit --backend $be --threads 16 --json --grid 256 -o e_$be.ply A.ply --subtract B.ply --add B.ply >"$OUT/edit_$be.json" 2>"$OUT/edit_$be.err"
  python3 -c "import json,sys; j=json.load(open('$OUT/edit_$be.json')); print('$be', j['set']['voxels'], [ (s['op'], s['timings_ms']) for s in j['steps']])" 2>&1 | cut -c1-600
done
cmp e_cpu.ply e_cuda.ply && echo "edit 256: CPU and CUDA PLY identical"
timeout 120 compute-sanitizer --tool memcheck --leak-check full /tmp/b/geohash-match voxel edit --backend cuda --grid 64 -o m.ply $R/data/pointclouds/kitten.ply --subtract $R/data/pointclouds/bunny.ply >"$OUT/memcheck_edit.log" 2>&1
el "memcheck voxel edit rc $? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck_edit.log" | tail -1)"
cd $R
wait $OLDPID; tail -1 "$OUT/build_old.log"
el old built
mkdir -p /tmp/new /tmp/old && cp /tmp/b/geohash-match /tmp/new/ && cp /tmp/ob/geohash-match /tmp/old/
bash scripts/device_compare.sh /tmp/old /tmp/new "$OUT/cmp"
for s in old new; do echo "== $s"; grep -hE 'ms \(median|^ +(160000|10000000) ' "$OUT/cmp/bench_$s.txt"; done
el compare done
for s in old new; do echo "== hash $s"; grep -hE '^(map|sorted|multimap|index) .*2\^2[46]' "$OUT/cmp/bench_$s.txt" | head -30; done
el all done
cd "$OUT" && tar czf logs.tgz *.log cmp 2>/dev/null; true
