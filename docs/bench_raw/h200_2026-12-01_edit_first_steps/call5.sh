#!/usr/bin/env bash
# s59 call 5 (one H200): the fixed test_sparse_flag; prof_new.patch timers (normals check and
# intersect's listing broken down) on one sparse and one dense intersect.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o /tmp/srcp
tar --exclude=./.dev -cf - . | tar -xf - -C /tmp/srcp && patch -s -d /tmp/srcp -p1 < .dev/c59/prof_new.patch
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/srcp /tmp/bp $A -DGEOHASH_TESTS=OFF >/tmp/build_p.log 2>&1 || { echo FAIL p; tail -30 /tmp/build_p.log; }) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
(cd /tmp/bn && ./check_voxel_cuda 2>&1 | tail -3)
el test
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
for r in 1 2 3; do
  GHM_PROF=1 /tmp/bp/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect $D/bunny.ply -o /tmp/x.ply > /tmp/o/ps_$r.json 2> /tmp/o/ps_$r.txt
  GHM_PROF=1 /tmp/bp/geohash-match voxel edit --backend cuda --json --grid 256 /tmp/A.ply --intersect /tmp/B.ply -o /tmp/x.ply > /tmp/o/pd_$r.json 2> /tmp/o/pd_$r.txt
done
nproc; el done
tar czf $OUT/call5.tgz -C /tmp o
