#!/usr/bin/env bash
# s61 call 2 (one H200): old aed7b57 / new (labels.c and labels.cu: a round after the first
# refills only the voxels whose seed was dropped, by pull passes; check_voxel_fill). Labels
# must not change: PLYs old = new on CUDA, new CUDA = new CPU; 6 rounds in turns; ctest; sanitizers.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o
tar -xf .dev/c61/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds S3=.dev/c61/s12000.ply
EDIT="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
declare -A C=(
  [e]="$EDIT"
  [r2]="voxel edit --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
  [r3]="voxel edit --json --grid 256 /tmp/A.ply --intersect $S3"
  [r3s]="voxel edit --json --grid 256 /tmp/A.ply --subtract $S3 --add $D/bunny.ply"
  [j]="voxel edit --json --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add /tmp/B.ply --intersect $D/bunny.ply --add $D/kitten.ply"
  [sub]="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply"
  [kb]="voxel edit --json --grid 256 $D/kitten.ply --intersect $D/bunny.ply --subtract $D/bunny.ply"
  [vm]="voxel --json --grid 256 $D/kitten.ply $D/bunny.ply"
)
for c in e r2 r3 r3s j sub kb vm; do
  for v in o n; do /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/${c}_$v.ply > /tmp/${c}_$v.json 2>&1 || echo "rc $? $c $v"; done
  cmp /tmp/${c}_o.ply /tmp/${c}_n.ply && echo "old CUDA PLY = new CUDA PLY: $c"
done | tee /tmp/o/ab.txt
el compared old new
for c in r2 r3 r3s j kb; do
  /tmp/bn/geohash-match ${C[$c]} --backend cpu -o /tmp/${c}_cpu.ply > /dev/null 2>&1
  cmp /tmp/${c}_cpu.ply /tmp/${c}_n.ply && echo "new CPU PLY = new CUDA PLY: $c"
done | tee -a /tmp/o/ab.txt
el compared cpu
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s r%d %.2f (probe %.2f look %.2f seeds %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["radius"], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for r in 1 2 3 4 5 6; do
  order="o n"; [ $((r % 2)) = 0 ] && order="n o"
  for v in $order; do for c in r2 r3 e sub; do
    /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/x.ply > /tmp/x.json 2>&1
    echo "round $r $v $c: $(steps /tmp/x.json)"
  done; done
done | tee -a /tmp/o/ab.txt
el rounds
cd /tmp/bn
CK_FORK=no ./check_voxel_fill 2>&1 | tail -2
timeout 300 ctest -j 16 -LE slow --timeout 250 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
cd - > /dev/null
timeout 150 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 /tmp/A.ply --intersect $D/bunny.ply --subtract $S3 -o /tmp/m.ply > /tmp/o/mc.txt 2>&1
el "memcheck rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc.txt | tail -1)"
CK_RUN_CASE=cuda CK_FORK=no timeout 100 compute-sanitizer --tool memcheck /tmp/bn/check_voxel_fill > /tmp/o/mc_fill.txt 2>&1
el "memcheck fill rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_fill.txt | tail -1)"
CK_RUN_CASE=cuda CK_FORK=no timeout 100 compute-sanitizer --tool racecheck /tmp/bn/check_voxel_fill > /tmp/o/rc_fill.txt 2>&1
el "racecheck fill rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc_fill.txt | tail -1)"
grep -E "Checks|Failures" /tmp/o/mc_fill.txt | tail -2
timeout 100 compute-sanitizer --tool racecheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 96 /tmp/A.ply --intersect $D/bunny.ply -o /tmp/m.ply > /tmp/o/rc.txt 2>&1
el "racecheck rc $? $(grep 'RACECHECK SUMMARY' /tmp/o/rc.txt | tail -1)"
cp -r /tmp/o/* $OUT/
