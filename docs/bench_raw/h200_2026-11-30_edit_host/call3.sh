#!/usr/bin/env bash
# s55 call 3 (one H200): a repeated voxel edit step's parts (prof2.py's timing lines on a copy
# of the tree), 3 rounds of the seven-step edit; JSON step timings.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/pt && tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/pt && python3 .dev/c55/prof2.py /tmp/pt
bash scripts/device_build.sh .dev/debs /tmp/pt /tmp/bp -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_prof.log 2>&1; echo "prof rc $?"
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for r in 1 2 3; do
  echo "== round $r"
  /tmp/bp/geohash-match $EDIT -o /tmp/p.ply > /tmp/p.json 2> /tmp/p.err
  grep "PROF2" /tmp/p.err | cut -c1-240
  python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
for s in j["steps"]: print(s["op"], json.dumps({k: round(v, 3) for k, v in s["timings_ms"].items()}))' /tmp/p.json
done > $OUT/prof2.txt 2>&1
cat $OUT/prof2.txt | tail -45
