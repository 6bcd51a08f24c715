#!/usr/bin/env bash
# s55 call 2 (one H200): where a repeated voxel edit step's time goes now (prof.py's timing
# lines on a copy of the tree), the JSON steps, 2 rounds.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/pt && tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/pt && python3 .dev/c55/prof.py /tmp/pt
(bash scripts/device_build.sh .dev/debs /tmp/pt /tmp/bp -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_prof.log 2>&1; echo "prof rc $?")
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for r in 1 2; do
  /tmp/bp/geohash-match $EDIT -o /tmp/p.ply > /tmp/p.json 2> /tmp/p.err
  grep "PROF" /tmp/p.err | grep -v "check threads" | cut -c1-240
  python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
for s in j["steps"]: print(s["op"], json.dumps(s["timings_ms"]))' /tmp/p.json
done > $OUT/prof.txt 2>&1
cat $OUT/prof.txt | head -120
