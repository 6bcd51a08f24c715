#!/usr/bin/env bash
# s57 call 8 (one H200): host timers of add's parts (prof4.patch), add_changes on the context's
# threads and on one (GHM_ADD_T1).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
patch -p1 -s < .dev/c57/prof4.patch || echo PATCH FAIL
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el build
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
for r in 1 2 3; do
  for t in "" 1; do
    if [ -n "$t" ]; then export GHM_ADD_T1=1; else unset GHM_ADD_T1; fi; GHM_PROF=1 /tmp/bn/geohash-match $EDIT -o /tmp/x.ply > /dev/null 2> /tmp/o/p.txt
    echo "r$r t1=$t: $(grep -E 'PROF add ' /tmp/o/p.txt | tail -5 | awk '{printf "%s %s | ", $(NF-2), $(NF-1)}')"
  done
done
el done
