#!/usr/bin/env bash
# s59 call 1 (one H200): HEAD 2c7fbf3 with host timers (prof.patch): where the first subtract's
# extra time goes (timers, nsys if present), and steps by a dense 160k-point intersect.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o /tmp/srcp
tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcp && patch -s -d /tmp/srcp -p1 < .dev/c59/prof.patch
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
($B /tmp/srcp /tmp/bp $A >/tmp/build_p.log 2>&1 || { echo FAIL p; tail -30 /tmp/build_p.log; }) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
which nsys ncu; nvidia-smi --query-gpu=name,driver_version --format=csv
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
DENSE="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect /tmp/B.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect /tmp/B.ply --intersect /tmp/A.ply --subtract /tmp/B.ply"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (up %.2f probe %.2f vox %.2f look %.2f seeds %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["voxelize"], s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"][1:]))' "$1"; }
for r in 1 2 3 4 5; do
  echo "round $r edit: $(/tmp/bn/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
  echo "round $r dense: $(/tmp/bn/geohash-match $DENSE -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json)"
done | tee /tmp/o/steps.txt
for r in 1 2 3; do GHM_PROF=1 /tmp/bp/geohash-match $EDIT -o /tmp/x.ply > /tmp/o/prof_$r.json 2> /tmp/o/prof_$r.txt; done
for r in 1 2; do GHM_PROF=1 /tmp/bp/geohash-match $DENSE -o /tmp/x.ply > /tmp/o/profd_$r.json 2> /tmp/o/profd_$r.txt; done
el edits
if which nsys > /dev/null; then
  nsys profile -t cuda,osrt -o /tmp/o/rep --force-overwrite true /tmp/bn/geohash-match $EDIT -o /tmp/x.ply > /tmp/o/nsys_run.txt 2>&1
  nsys stats -r cuda_api_sum /tmp/o/rep.nsys-rep > /tmp/o/api_sum.txt 2>&1
  nsys stats -r cuda_api_trace -f csv /tmp/o/rep.nsys-rep > /tmp/o/api_trace.csv 2>&1
  nsys stats -r cuda_gpu_trace -f csv /tmp/o/rep.nsys-rep > /tmp/o/gpu_trace.csv 2>&1
  rm -f /tmp/o/rep.nsys-rep /tmp/o/rep.sqlite
  el nsys
fi
tar czf $OUT/call1.tgz -C /tmp o
el done
