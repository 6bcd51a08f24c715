#!/usr/bin/env bash
# s61 call 6 (one H200): old aed7b57 / new (pull_orphans capped by the fills' levels too, and
# only the side given as rows refilled): PLYs old = new, CUDA = CPU, r2 timings, fill tests.
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
declare -A C=(
  [e]="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply"
  [r2]="voxel edit --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
  [r3]="voxel edit --json --grid 256 /tmp/A.ply --intersect $S3"
  [kb]="voxel edit --json --grid 256 $D/kitten.ply --intersect $D/bunny.ply --subtract $D/bunny.ply"
  [r8]="voxel edit --json --rounds 8 --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
)
for c in e r2 r3 kb r8; do
  for v in o n; do /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/${c}_$v.ply > /tmp/${c}_$v.json 2>&1 || echo "rc $? $c $v"; done
  cmp /tmp/${c}_o.ply /tmp/${c}_n.ply && echo "old CUDA PLY = new CUDA PLY: $c"
done | tee /tmp/o/ab.txt
for c in r2 r8; do
  /tmp/bn/geohash-match ${C[$c]} --backend cpu -o /tmp/${c}_cpu.ply > /dev/null 2>&1
  cmp /tmp/${c}_cpu.ply /tmp/${c}_n.ply && echo "new CPU PLY = new CUDA PLY: $c"
done | tee -a /tmp/o/ab.txt
el compared
for r in 1 2 3; do for v in o n; do
  /tmp/b$v/geohash-match ${C[r2]} --backend cuda -o /tmp/x.ply > /tmp/x.json
  echo "round $r $v r2: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][1]; t=s["timings_ms"]; print("%.2f fill %.2f conflicts %d" % (t["step"] - t["upload"], t["fill"], s["conflicts"]))' /tmp/x.json)"
done; done | tee -a /tmp/o/ab.txt
cd /tmp/bn
CK_FORK=no ./check_voxel_fill 2>&1 | tail -1
timeout 120 ctest -j 16 -R "voxel_fill|voxel_edit|voxel_cuda" -LE slow --timeout 100 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
cp -r /tmp/o/* $OUT/
