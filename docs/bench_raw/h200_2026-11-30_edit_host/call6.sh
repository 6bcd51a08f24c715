#!/usr/bin/env bash
# s55 call 6 (one H200): the final tree with its tests: ctest (not slow), compute-sanitizer
# memcheck of a four-step edit, and the edit's PLYs on CUDA and the CPU.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > $OUT/build.log 2>&1; echo "build rc $?"
cd /tmp/bn && timeout 400 ctest -j 16 -LE slow --timeout 300 > $OUT/ctest.txt 2>&1; echo "ctest rc $?"
grep -E "tests passed|\*\*\*Failed|Failed  |Timeout" $OUT/ctest.txt | head -20
cd - > /dev/null
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
N=/tmp/bn/geohash-match
for b in cuda cpu; do $N voxel edit --backend $b --grid 128 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply -o /tmp/e_$b.ply > /dev/null; done
cmp /tmp/e_cuda.ply /tmp/e_cpu.ply && echo "same PLY cpu / cuda (grid 128)"
timeout 200 compute-sanitizer --tool memcheck --leak-check full $N voxel edit --backend cuda --grid 128 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply -o /tmp/m.ply > $OUT/memcheck.txt 2>&1; tail -2 $OUT/memcheck.txt
