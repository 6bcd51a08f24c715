#!/usr/bin/env bash
# s62 call 4 (one H200): old 86b2b9d / n = HEAD (orphan labels and conflicts by two noinline
# calls in the kernel) / b = working tree (both inside pull_orphans, the caller's whole passes
# skipping a refilled side): PLYs, ncu fill durations, timers in turns; b's fill tests,
# voxel ctests and sanitizers.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o /tmp/vn
tar -xf .dev/c62/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar -xf .dev/c62/new.tar -C /tmp/vn && sed -i "s/ -Werror//" /tmp/vn/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/vn /tmp/bn $A -DGEOHASH_TESTS=OFF >/tmp/build_n.log 2>&1 || { echo FAIL n; tail -5 /tmp/build_n.log; }) &
$B . /tmp/bb $A >/tmp/build_b.log 2>&1 || { echo FAIL b; tail -20 /tmp/build_b.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
declare -A C=(
  [e]="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
  [r2]="voxel edit --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
  [r3]="voxel edit --json --grid 256 /tmp/A.ply --intersect .dev/c62/s12000.ply"
  [r8]="voxel edit --json --rounds 8 --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
  [vm]="voxel --json --grid 512 $D/bunny.ply $D/kitten.ply"
)
for c in e r2 r3 r8 vm; do
  for v in o n b; do /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/${c}_$v.ply > /dev/null 2>&1 || echo "rc $? $c $v"; done
  cmp /tmp/${c}_o.ply /tmp/${c}_n.ply && cmp /tmp/${c}_n.ply /tmp/${c}_b.ply && echo "PLYs o = n = b: $c"
done 2>&1 | tee /tmp/o/ab.txt
/tmp/bb/geohash-match ${C[r8]} --backend cpu -o /tmp/r8_cpu.ply > /dev/null 2>&1; cmp /tmp/r8_cpu.ply /tmp/r8_b.ply && echo "b CPU PLY = b CUDA PLY: r8" | tee -a /tmp/o/ab.txt
for v in o n b; do
  for c in e r2; do
  ncu --kernel-name regex:fill_kernel --metrics gpu__time_duration.sum /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/x.ply 2>&1 | grep -E "gpu__time_duration" | awk -v v=$v -v c=$c '{printf "%s %s ", $(NF-1), $NF} END {print " <- " v " fill_kernel, " c}'
  done
done | tee /tmp/o/ncu.txt
el ncu
for r in 1 2 3 4 5; do for v in o n b; do for c in e r2 r8; do
  /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/x.ply > /tmp/x.json
  echo "round $r $v $c: $(python3 -c 'import json,sys
for i,s in enumerate(json.load(open(sys.argv[1]))["steps"][1:]):
    t=s["timings_ms"]; print("s%d %.2f fill %.3f c %s |" % (i+1, t["step"] - t.get("upload",0), t["fill"], s["conflicts"]), end=" ")' /tmp/x.json)"
done; done; done | tee -a /tmp/o/ab.txt
el timed
cd /tmp/bb
CK_FORK=no ./check_voxel_fill 2>&1 | tail -1 | tee /tmp/o/fill.txt
timeout 150 ctest -j 16 -R "voxel|edit|fill|dynmap" -LE slow --timeout 140 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
cd -
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool /tmp/bb/geohash-match voxel edit --grid 128 /tmp/A.ply --intersect $D/bunny.ply --rounds 6 --backend cuda -o /tmp/san.ply 2>&1 | tail -1
  (cd /tmp/bb && CK_FORK=no timeout 100 compute-sanitizer --tool $tool ./check_voxel_fill 2>&1 | tail -1)
done 2>&1 | tee /tmp/o/sanitizer.txt; el sanitizers
cp -r /tmp/o/* $OUT/
