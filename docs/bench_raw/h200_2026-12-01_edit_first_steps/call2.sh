#!/usr/bin/env bash
# s59 call 2 (one H200): is a first step's extra time the lazy loading of its kernels?
# HEAD 2c7fbf3 (+ prof.patch), CUDA_MODULE_LOADING=EAGER against the default, in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o /tmp/srcp
tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcp && patch -s -d /tmp/srcp -p1 < .dev/c59/prof.patch
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
[ -x /tmp/bp/geohash-match ] || $B /tmp/srcp /tmp/bp $A >/tmp/build_p.log 2>&1 || { echo FAIL p; tail -30 /tmp/build_p.log; }
el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
DENSE="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (probe %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for r in 1 2 3 4; do
  for m in LAZY EAGER; do
    s=$(date +%s%N)
    a=$(CUDA_MODULE_LOADING=$m /tmp/bp/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)
    echo "round $r $m edit ($(( ($(date +%s%N) - s) / 1000000 )) ms process): $a"
    a=$(CUDA_MODULE_LOADING=$m /tmp/bp/geohash-match $DENSE -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)
    echo "round $r $m dense: $a"
  done
done | tee /tmp/o/steps.txt
for m in LAZY EAGER; do GHM_PROF=1 CUDA_MODULE_LOADING=$m /tmp/bp/geohash-match $DENSE -o /tmp/x.ply > /tmp/o/profd_$m.json 2> /tmp/o/profd_$m.txt; done
el edits
tar czf $OUT/call2.tgz -C /tmp o
el done
