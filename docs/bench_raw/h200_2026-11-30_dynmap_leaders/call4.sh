#!/usr/bin/env bash
# s56 call 4 (one H200): 057e302 (old), 3212c4f (prev: leaders with fingerprints) and the
# branch's head (new: + the insert's counts after the walk; the edit's spans on threads and
# the normals check beside the probe's run). PLYs, edit rounds in turns, bench dynmap in turns,
# ctest subset, memcheck, racecheck.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/prev /tmp/o
tar -xf .dev/c56/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar -xf .dev/c56/prev.tar -C /tmp/prev && sed -i "s/ -Werror//" /tmp/prev/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/prev /tmp/bp $A -DGEOHASH_TESTS=OFF >/tmp/build_prev.log 2>&1 || echo FAIL prev) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
for v in o n; do
  /tmp/b$v/geohash-match ${EDIT/--json/} -o /tmp/e_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --intersect /tmp/B.ply --add $D/kitten.ply --subtract /tmp/B.ply -o /tmp/f_$v.ply > /dev/null 2>&1
  /tmp/b$v/geohash-match voxel edit --backend cuda --grid 300 $D/kitten.ply --add $D/bunny.ply --subtract /tmp/B.ply -o /tmp/g_$v.ply > /dev/null 2>&1
done
/tmp/bn/geohash-match ${EDIT/cuda --json/cpu} -o /tmp/e_cpu.ply > /dev/null 2>&1
for f in e f g; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"; done | tee /tmp/o/ab.txt
cmp /tmp/e_cpu.ply /tmp/e_n.ply && echo "CPU PLY = CUDA PLY (edit)" | tee -a /tmp/o/ab.txt
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (up %.2f probe %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for r in 1 2 3 4 5 6; do
  order="o n"; [ $((r % 2)) = 0 ] && order="n o"
  for v in $order; do
    echo "round $r $v: $(/tmp/b$v/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
  done
done | tee -a /tmp/o/ab.txt
el edits
for round in 1 2; do
  for b in o p n; do
    timeout 60 /tmp/b$b/geohash-match bench dynmap --backend cuda --reps 3 > /tmp/o/dyn_${b}_$round.txt 2>&1 || echo "rc $? $b"
  done
  el dyn round $round
done
for b in o p n; do
  printf "%-2s ins " $b; for r in 1 2; do sed -n 3,10p /tmp/o/dyn_${b}_$r.txt | awk '{printf "%s ", $9}'; printf "| "; done
  printf " erase "; sed -n 3,10p /tmp/o/dyn_${b}_1.txt | awk '{printf "%s ", $10}'; printf " fill "; sed -n 3,10p /tmp/o/dyn_${b}_1.txt | awk '{printf "%s ", $5}'; echo
done | tee /tmp/o/dyn_table.txt
cd /tmp/bn
timeout 240 ctest -j 16 -R 'dynmap|faults_cuda|voxel|edit|cli.bench_dynmap' -LE slow --timeout 230 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 120 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap > /tmp/o/mc_$c.txt 2>&1
  el "memcheck dynmap $c rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$c.txt | tail -1)"
done
cd - > /dev/null
timeout 120 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply -o /tmp/m.ply > /tmp/o/mc_edit.txt 2>&1
el "memcheck edit rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_edit.txt | tail -1)"
timeout 100 compute-sanitizer --tool racecheck /tmp/bn/geohash-match bench dynmap --backend cuda --quick > /tmp/o/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc.txt | tail -1)"
tar czf $OUT/call4.tgz -C /tmp o
el done
