#!/usr/bin/env bash
# s65 call 4 (one H200): a device edit step's host timeline. HEAD with a temporary trace
# (.dev/c65/trace3.patch: every GHM_CUDA call, launch check and host wait timed; not committed),
# built with -g; the F sequence (sub, add, int by the 160 k-point B, twice) traced.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
git apply .dev/c65/trace3.patch || { echo patch failed; exit 1; }
mkdir -p /tmp/o
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF -DCMAKE_C_FLAGS=-g -DCMAKE_CXX_FLAGS=-g -DCMAKE_CUDA_FLAGS=-g"
$B . /tmp/bt3 $A >/tmp/build.log 2>&1 || { echo FAIL build; tail -20 /tmp/build.log; }
el build
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
G=/tmp/bt3/geohash-match
F="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
for r in 1 2 3; do
  GHM_TRACE_WAITS=1 $G $F --backend cuda -o /tmp/x.ply > /tmp/x$r.json 2> /tmp/tr$r.txt
  $G $F --backend cuda -o /tmp/x.ply > /tmp/y$r.json
done
python3 - <<'PY' > /tmp/o/steps.txt
import json
for r in (1, 2, 3):
  for x in 'xy':
    j = json.load(open('/tmp/%s%d.json' % (x, r)))
    print(x, r, " | ".join("%s %.2f (fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))
PY
python3 .dev/c65/timeline.py $G /tmp/tr3.txt 3 6 > /tmp/o/timeline3.txt 2>&1
python3 .dev/c65/timeline.py $G /tmp/tr2.txt 3 4 6 > /tmp/o/timeline2.txt 2>&1
el traced
cp /tmp/o/steps.txt /tmp/o/timeline2.txt /tmp/o/timeline3.txt $OUT/
el done
