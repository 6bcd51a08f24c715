#!/usr/bin/env bash
# s60 call 2 (one H200): diagnosis only. Old 7f6cb12 and new (s60), both with the host timers of
# prof.patch (GHM_PROF=1): where a subtract's added 0.3 ms goes; and a run's only intersect by
# the sparse bunny.ply (fill 9.5 ms there, 1.2 ms repeated) with CUDA_MODULE_LOADING=EAGER.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
mkdir -p /tmp/old /tmp/new /tmp/o
tar -xf .dev/c60/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/new && sed -i "s/ -Werror//" /tmp/new/CMakeLists.txt
patch -s -d /tmp/old -p1 --fuzz 3 < .dev/c59/prof_new.patch || echo "FAIL patch old"
patch -s -d /tmp/new -p1 --fuzz 3 < .dev/c60/prof.patch || echo "FAIL patch new"
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B /tmp/new /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.2f (up %.2f probe %.2f vox %.2f look %.2f seeds %.2f fill %.2f edit %.2f)" % (s["op"][:3], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0), s["timings_ms"].get("upload", 0), s["timings_ms"]["probe"] - s["timings_ms"].get("upload", 0), s["timings_ms"]["voxelize"], s["timings_ms"]["lookup"], s["timings_ms"]["seeds"], s["timings_ms"]["fill"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
for r in 1 2 3; do for v in o n; do
  for op in subtract add; do
    GHM_PROF=1 /tmp/b$v/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --$op /tmp/B.ply --$op /tmp/B.ply -o /tmp/x.ply > /tmp/x.json 2> /tmp/o/prof_${v}_${op}_$r.txt
    echo "round $r $v $op: $(steps /tmp/x.json)"
  done
  for mode in LAZY EAGER; do
    CUDA_MODULE_LOADING=$mode GHM_PROF=1 /tmp/b$v/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply --intersect $D/bunny.ply -o /tmp/x.ply > /tmp/x.json 2> /tmp/o/prof_${v}_sparse_${mode}_$r.txt
    echo "round $r $v sparse $mode: $(steps /tmp/x.json)"
  done
done; done | tee /tmp/o/ab.txt
el done
tar czf $OUT/call2.tgz -C /tmp o
