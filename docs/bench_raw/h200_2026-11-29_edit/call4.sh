#!/usr/bin/env bash
# s43 call 4: where a CUDA voxel edit's classification goes: the tree with prof.patch (timing
# lines on stderr: the pipeline's device state created, stepped, freed; classify's parts).
set -u
export PATH=/usr/local/cuda/bin:$PATH
which nsys nsight-sys 2>&1 | head -2
mkdir -p /tmp/prof && tar --exclude=./build* --exclude=./.dev --exclude=./data --exclude=./.git -cf - . | tar -xf - -C /tmp/prof
cd /tmp/prof && patch -p1 < "$OLDPWD/.dev/c43/prof.patch" > /dev/null && sed -i "s/ -Werror//" CMakeLists.txt && cd "$OLDPWD"
bash scripts/device_build.sh .dev/debs /tmp/prof /tmp/bp -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
[ -s /tmp/A.ply ] || python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
for r in 1 2 3; do
  echo "== round $r"
  /tmp/bp/geohash-match voxel edit --backend cuda --json --grid 256 -o /tmp/p.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply 2>&1 >/tmp/p.json | grep PROF
  python3 -c 'import json; j=json.load(open("/tmp/p.json")); print([ (s["op"], round(s["timings_ms"]["classify"],1), round(s["timings_ms"]["edit"],1)) for s in j["steps"]])'
done | tee $OUT/prof.txt
