#!/usr/bin/env bash
# s62 call 5 (one H200): old 86b2b9d / new (HEAD: GhmVoxelInfo.levels dropped, the review's
# mends): PLYs, the voxel mode's surface fill and the edits' fills in turns, voxel ctests,
# memcheck.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o
tar -xf .dev/c62/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
declare -A C=(
  [e]="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
  [r2]="voxel edit --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
  [vm]="voxel --json --grid 512 $D/bunny.ply $D/kitten.ply"
  [sw]="voxel --json --grid 256 --sweep 20 --rotate-b 0,0,30 /tmp/A.ply /tmp/B.ply"
)
for c in e r2 vm sw; do
  for v in o n; do /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/${c}_$v.ply > /tmp/${c}_$v.json 2>&1 || echo "rc $? $c $v"; done
  cmp /tmp/${c}_o.ply /tmp/${c}_n.ply && echo "PLYs o = n: $c"
done 2>&1 | tee /tmp/o/ab.txt
python3 -c 'import json,sys
def L(p):
    out = []
    for line in open(p):
        j = json.loads(line); j.pop("timings_ms", None); out.append(j)
    return out
a, b = L(sys.argv[1]), L(sys.argv[2])
print("sweep lines o = n" if a == b and len(a) > 1 else "sweep lines DIFFER %d %d" % (len(a), len(b)))' /tmp/sw_o.json /tmp/sw_n.json | tee -a /tmp/o/ab.txt
for r in 1 2 3 4 5; do for v in o n; do
  /tmp/b$v/geohash-match ${C[vm]} --backend cuda > /tmp/x.json
  echo "round $r $v vm: $(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["timings_ms"]; print("step %.3f fill %.3f" % (t["step"], t["fill"]))' /tmp/x.json)"
  /tmp/b$v/geohash-match ${C[e]} --backend cuda -o /tmp/x.ply > /tmp/x.json
  echo "round $r $v e: $(python3 -c 'import json,sys
for i,s in enumerate(json.load(open(sys.argv[1]))["steps"][1:]):
    t=s["timings_ms"]; print("s%d %.2f fill %.3f |" % (i+1, t["step"] - t.get("upload",0), t["fill"]), end=" ")' /tmp/x.json)"
done; done | tee -a /tmp/o/ab.txt
el timed
cd /tmp/bn
timeout 150 ctest -j 16 -R "voxel|edit|fill" -LE slow --timeout 140 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
CK_FORK=no timeout 100 compute-sanitizer --tool memcheck ./check_voxel_fill 2>&1 | tail -1 | tee /tmp/o/sanitizer.txt
CK_FORK=no timeout 100 compute-sanitizer --tool memcheck ./check_voxel_cuda 2>&1 | tail -1 | tee -a /tmp/o/sanitizer.txt
el sanitizers
cp -r /tmp/o/* $OUT/
