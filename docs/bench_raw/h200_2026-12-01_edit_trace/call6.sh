#!/usr/bin/env bash
# s63 call 6 (one H200): the edit's enclosure test as a loop of resident blocks that stop once
# the answer is found, a voxel's look-ups stopping at its first cloud voxel; old 6875ea2.
# PLYs old = new; the seven-step edit's steps in turns; ncu of the kernel; ctests; sanitizers.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o && tar -xf .dev/c63/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
K="voxel edit --json --grid 128 $D/kitten.ply --subtract $D/bunny.ply --intersect $D/bunny.ply"
for c in E K; do
  for v in o n; do /tmp/b$v/geohash-match ${!c} --backend cuda -o /tmp/${c}_$v.ply > /tmp/${c}_$v.json 2>&1 || echo "rc $? $c $v"; done
  cmp /tmp/${c}_o.ply /tmp/${c}_n.ply && echo "PLYs o = n: $c"
done 2>&1 | tee /tmp/o/ab.txt
for r in 1 2 3 4; do for v in o n; do
  /tmp/b$v/geohash-match $E --backend cuda -o /tmp/x.ply > /tmp/x.json
  echo "round $r $v: $(python3 -c 'import json,sys; print(" | ".join("%.2f edit %.3f" % (s["timings_ms"]["step"] - s["timings_ms"]["upload"], s["timings_ms"]["edit"]) for s in json.load(open(sys.argv[1]))["steps"][1:]))' /tmp/x.json)"
done; done | tee -a /tmp/o/ab.txt
el timed
M="--metrics gpu__time_duration.sum --csv --print-units base -k regex:encloses"
for v in o n; do timeout 100 ncu $M /tmp/b$v/geohash-match $E --backend cuda -o /tmp/x.ply 2>/dev/null | grep encloses | awk -F'","' '{print $NF}' | tr '\n' ' '; echo " $v encloses ns"; done | tee -a /tmp/o/ab.txt
cd /tmp/bn
timeout 150 ctest -j 16 -R "voxel_edit|voxel_cuda|edit" -LE slow --timeout 140 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
ls /tmp/bn | grep -i "check_voxel_edit\|check_edit" | head -3
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool /tmp/bn/geohash-match voxel edit --grid 96 $D/kitten.ply --subtract $D/bunny.ply --backend cuda -o /tmp/y.ply 2>&1 | tail -1
done | tee /tmp/o/sanitizer.txt; el sanitizers
cp /tmp/o/* $OUT/
