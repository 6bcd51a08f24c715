#!/usr/bin/env bash
# s62 call 2 (one H200): old 86b2b9d / new (a refilled round's labels and conflict test over its
# orphans only, the whole passes compiled as before; an edit too sparse for its grid refused.
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
D=data/pointclouds S3=.dev/c62/s12000.ply
declare -A C=(
  [e]="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
  [r2]="voxel edit --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
  [r3]="voxel edit --json --grid 256 /tmp/A.ply --intersect $S3"
  [kb]="voxel edit --json --grid 256 $D/kitten.ply --intersect $D/bunny.ply --subtract $D/bunny.ply"
  [r8]="voxel edit --json --rounds 8 --grid 256 /tmp/A.ply --intersect $D/bunny.ply"
  [s5]="voxel edit --json --grid 512 /tmp/A.ply --intersect $S3"
  [vm]="voxel --json --grid 512 $D/bunny.ply $D/kitten.ply"
)
for c in e r2 r3 kb r8 vm; do
  for v in o n; do /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/${c}_$v.ply > /tmp/o/${c}_$v.json 2>&1 || echo "rc $? $c $v"; done
  cmp /tmp/${c}_o.ply /tmp/${c}_n.ply && echo "old CUDA PLY = new CUDA PLY: $c"
  python3 -c 'import json,sys
def cf(p):
    try: return [s.get("conflicts") for s in json.load(open(p))["steps"]]
    except Exception as e: return str(e)[:40]
print("conflicts", sys.argv[3], cf(sys.argv[1]), cf(sys.argv[2]))' /tmp/o/${c}_o.json /tmp/o/${c}_n.json $c
done 2>&1 | tee /tmp/o/ab.txt
for c in r2 r3 r8; do
  :
  /tmp/bn/geohash-match ${C[$c]} --backend cpu -o /tmp/${c}_cpu.ply > /tmp/o/${c}_cpu.json 2>&1
  cmp /tmp/${c}_cpu.ply /tmp/${c}_n.ply && echo "new CPU PLY = new CUDA PLY: $c"
done 2>&1 | tee -a /tmp/o/ab.txt
el compared
for v in o n; do for b in cuda cpu; do
  /tmp/b$v/geohash-match ${C[s5]} --backend $b -o /tmp/s5_$v$b.ply > /dev/null 2> /tmp/s5.err; echo "s5 $v $b rc $? $(head -c 300 /tmp/s5.err) $(ls /tmp/s5_$v$b.ply 2>&1 | tail -c 40)"
done; done 2>&1 | tee -a /tmp/o/ab.txt
for r in 1 2 3 4 5 6; do for v in o n; do for c in r2 r3 r8 e; do
  /tmp/b$v/geohash-match ${C[$c]} --backend cuda -o /tmp/x.ply > /tmp/x.json
  echo "round $r $v $c: $(python3 -c 'import json,sys
for i,s in enumerate(json.load(open(sys.argv[1]))["steps"][1:]):
    t=s["timings_ms"]; print("s%d %.2f fill %.2f c %s |" % (i+1, t["step"] - t.get("upload",0), t["fill"], s.get("conflicts")), end=" ")' /tmp/x.json)"
done; done; done | tee -a /tmp/o/ab.txt
el timed
cd /tmp/bn
CK_FORK=no ./check_voxel_fill 2>&1 | tail -1 | tee /tmp/o/fill.txt
timeout 240 ctest -j 16 -LE slow --timeout 200 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
timeout 120 ctest -j 16 -R "voxel_edit|voxel_fill|too_sparse" -L slow --timeout 110 > /tmp/o/ctest_slow.txt 2>&1; el ctest slow rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest_slow.txt | head
cd -
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool /tmp/bn/geohash-match voxel edit --grid 128 /tmp/A.ply --intersect $D/bunny.ply --rounds 6 --backend cuda -o /tmp/san.ply 2>&1 | tail -2
  (cd /tmp/bn && CK_FORK=no timeout 120 compute-sanitizer --tool $tool ./check_voxel_fill 2>&1 | tail -2)
done > /tmp/o/sanitizer.txt 2>&1; el sanitizers; cat /tmp/o/sanitizer.txt
cp -r /tmp/o/* $OUT/
