#!/usr/bin/env bash
# s43 call 5: does a result array on transparent huge pages (huge.patch: 2 MiB aligned,
# MADV_HUGEPAGE when GHM_HUGE is set) make the CUDA pipeline's downloads into fresh host memory
# cheaper? Same binary, GHM_HUGE unset / set in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
rm -rf /tmp/prof; mkdir -p /tmp/prof && tar --exclude=./build* --exclude=./.dev --exclude=./data --exclude=./.git -cf - . | tar -xf - -C /tmp/prof
cd /tmp/prof && patch -p1 < "$OLDPWD/.dev/c43/huge.patch" > /dev/null && sed -i "s/ -Werror//" CMakeLists.txt && cd "$OLDPWD"
bash scripts/device_build.sh .dev/debs /tmp/prof /tmp/bh -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
[ -s /tmp/A.ply ] || python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
for r in 1 2 3 4; do
  for h in "" 1; do
    echo "== round $r huge=${h:-no}"
    GHM_HUGE=$h /tmp/bh/geohash-match voxel edit --backend cuda --json --grid 256 -o /tmp/p.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply 2>&1 >/tmp/p.json | grep 'n=1389849\|n=893742'
    python3 -c 'import json; j=json.load(open("/tmp/p.json")); print([ (s["op"], round(s["timings_ms"]["step"],1), round(s["timings_ms"]["classify"],1)) for s in j["steps"]])'
  done
done | tee $OUT/huge.txt
