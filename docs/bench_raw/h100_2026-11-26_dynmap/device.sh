#!/usr/bin/env bash
# dynmap old (d361188) / new (working tree) / new without the L2 hints, same call.
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/src_old && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
el build new
(for v in old; do bash scripts/device_build.sh .dev/debs /tmp/src_$v /tmp/b_$v >"$OUT/build_$v.log" 2>&1; echo "$v rc $?" >>"$OUT/build_$v.log"; done) &
BP=$!
cd /tmp/b
timeout 300 ctest -j6 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap' -LE slow --timeout 280 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head
CK_RUN_CASE=cuda CK_VERBOSITY=verbose timeout 200 ./check_faults_cuda >"$OUT/faults_cuda.log" 2>&1; el faults rc $?; grep -h "faults_cuda:" "$OUT/faults_cuda.log" | head -20
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >"$OUT/memcheck_dynmap.log" 2>&1
el "memcheck check_dynmap rc $? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck_dynmap.log" | tail -1)"
timeout 100 compute-sanitizer --tool memcheck ./geohash-match bench dynmap --backend cuda --quick >"$OUT/memcheck_bench.log" 2>&1
el "memcheck bench quick rc $? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck_bench.log" | tail -1)"
timeout 120 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum --launch-count 21 ./geohash-match bench dynmap --backend cuda --reps 1 > "$OUT/ncu_new.txt" 2>&1
el ncu; grep -E "^  [a-z_]+.*\(|gpu__time_duration" "$OUT/ncu_new.txt" | paste - - | awk '{print $1, $(NF-1), $(NF)}' | tr '\n' ';'; echo
timeout 120 compute-sanitizer --tool memcheck --leak-check full ./geohash-match voxel edit --backend cuda --grid 64 -o /tmp/m.ply $R/data/pointclouds/kitten.ply --subtract $R/data/pointclouds/bunny.ply >"$OUT/memcheck_edit.log" 2>&1
el "memcheck voxel edit rc $? $(grep -h 'ERROR SUMMARY' "$OUT/memcheck_edit.log" | tail -1)"
wait $BP; tail -qn1 "$OUT"/build_old.log; el builds done
cd $R
mkdir -p /tmp/ve && (cd /tmp/ve && python3 $R/scripts/voxel_pair.py $R/data/pointclouds/bunny_mesh.off --points 160000 A.ply B.ply >/dev/null 2>&1)
for round in 1 2; do
  for v in old new; do
    bin=/tmp/b_$v/geohash-match; [ $v = new ] && bin=/tmp/b/geohash-match
    $bin bench dynmap --backend cuda --reps 3 --json-out "$OUT/dyn_${v}_$round.json" >"$OUT/dyn_${v}_$round.txt" 2>&1
    el "bench $v $round rc $?"
    (cd /tmp/ve && $bin voxel edit --backend cuda --json --grid 256 -o e_$v.ply A.ply --subtract B.ply --add B.ply >"$OUT/edit_${v}_$round.json" 2>&1)
  done
done
cmp /tmp/ve/e_old.ply /tmp/ve/e_new.ply && echo "edit: old and new PLY identical"
for v in old new; do echo "== $v"; sed -n 2,30p "$OUT/dyn_${v}_2.txt" | cut -c1-110; python3 -c "
import json; j=json.load(open('$OUT/edit_${v}_2.json')); print('edit', j['set']['voxels'], [(s['op'], round(s['timings_ms']['step'],1), round(s['timings_ms']['classify'],1), round(s['timings_ms']['edit'],1)) for s in j['steps']])"; done
el all done
mkdir -p "$OUT/keep" && cd "$OUT" && tar czf keep/logs.tgz *.log *.txt *.json && rm -f *.json dyn_*.txt; true
