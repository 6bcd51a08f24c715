#!/usr/bin/env bash
# s46 call 3: a timing build of HEAD (prof.py: the check at 1/4/16 threads, add's and
# intersect's set parts) on the seven-step CUDA edit, twice.
set -u
export PATH=/usr/local/cuda/bin:$PATH
mkdir -p /tmp/pt && tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/pt && python3 .dev/c46/prof.py /tmp/pt && sed -i "s/ -Werror//" /tmp/pt/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/pt /tmp/bp -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_prof.log" 2>&1 || echo FAIL prof
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for r in 1 2; do /tmp/bp/geohash-match $EDIT -o /tmp/p.ply 2>&1 >/dev/null | grep PROF | grep -v "PROF gc"; echo; done | tee $OUT/prof.txt
