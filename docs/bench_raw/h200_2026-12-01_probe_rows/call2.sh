#!/usr/bin/env bash
# s64 call 2 (one H200): o = f79c620, m = 12ad4be (the probe's rows, the borrowed table),
# n = d42dd7b (+ the dynmap's CUDA gc over the buckets erases emptied slabs of): ctest, memcheck,
# racecheck; bench dynmap o / n in turns; the seven-step edit o / m / n in turns, PLYs equal;
# bench voxel o / n in turns (the classify kernel's rows path beside the voxel mode's).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/mid /tmp/o
tar -xf .dev/c64/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar -xf .dev/c64/mid2.tar -C /tmp/mid && sed -i "s/ -Werror//" /tmp/mid/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/mid /tmp/bm $A -DGEOHASH_TESTS=OFF >/tmp/build_mid.log 2>&1 || echo FAIL mid) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
(cd /tmp/bn && timeout 200 ctest -j 16 -R 'dynmap|faults|voxel_edit|voxel_cuda|cli.bench_dynmap' -LE slow --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?)
grep -E "tests passed|Failed|\*\*\*" /tmp/o/ctest.txt | head
for c in cuda cuda_lists; do
  GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 150 compute-sanitizer --tool memcheck --leak-check full /tmp/bn/check_dynmap > /tmp/o/mc_$c.txt 2>&1
  el "memcheck $c rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_$c.txt | tail -1)"
done
timeout 100 compute-sanitizer --tool racecheck /tmp/bn/geohash-match bench dynmap --backend cuda --quick > /tmp/o/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc.txt | tail -1)"
D=data/pointclouds
E="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
for v in o m n; do /tmp/b$v/geohash-match $E -o /tmp/e_$v.ply > /tmp/e_$v.json 2>&1 || echo "rc $? e $v"; done
cmp /tmp/e_o.ply /tmp/e_n.ply && cmp /tmp/e_m.ply /tmp/e_n.ply && echo "PLYs o = m = n: seven-step edit" | tee /tmp/o/edit.txt
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for round in 1 2 3 4; do
  order="o m n"; [ $((round % 2)) = 0 ] && order="n m o"
  for v in $order; do
    /tmp/b$v/geohash-match $E -o /tmp/x.ply > /tmp/x.json
    echo "round $round $v: $(steps /tmp/x.json)"
  done
done | tee -a /tmp/o/edit.txt
el edits
for round in 1 2; do
  for b in o n; do
    timeout 90 /tmp/b$b/geohash-match bench dynmap --backend cuda --reps 3 > /tmp/o/dyn_${b}_$round.txt 2>&1 || echo "rc $? $b"
    timeout 90 /tmp/b$b/geohash-match bench voxel --backend cuda --reps 10 > /tmp/o/vox_${b}_$round.txt 2>&1 || echo "rc $? vox $b"
  done
  el round $round
done
cd /tmp/o
for b in o n; do
  printf "%-2s gc " $b; for r in 1 2; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $11}'; printf "| "; done
  printf " erase "; for r in 1 2; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $10}'; printf "| "; done
  printf " ins "; for r in 1 2; do sed -n 3,10p dyn_${b}_$r.txt | awk '{printf "%s ", $9}'; printf "| "; done
  printf " slabs "; sed -n 3,10p dyn_${b}_1.txt | awk '{printf "%s ", $12}'; echo
done | tee /tmp/o/table.txt
for b in o n; do for r in 1 2; do echo "== vox $b $r"; cat vox_${b}_$r.txt; done; done
cp /tmp/o/table.txt /tmp/o/edit.txt $OUT/
tar czf $OUT/call2.tgz -C /tmp o
el done
