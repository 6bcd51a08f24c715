#!/usr/bin/env bash
# s57 call 1 (one H200): main (1e17580): the edit test's device half, the seven-step edit's
# per-stage timings (labels' voxelize / lookup / seeds / fill), nsys of a repeated subtract.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el build; which nsys ncu; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
(cd /tmp/bn && timeout 200 ctest -R 'voxel_edit' --timeout 190 > /tmp/o/ctest_edit.txt 2>&1; el ctest edit rc $?)
grep -E "tests passed|Failed|\*\*\*|Not Run" /tmp/o/ctest_edit.txt | head
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect $D/bunny.ply"
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
for s in j["steps"][1:]:
    t = s["timings_ms"]
    print("%s step %.2f up %.2f probe %.2f edit %.2f | %s" % (s["op"][:3], t["step"] - t.get("upload", 0), t.get("upload", 0), t["probe"], t["edit"], " ".join("%s %s" % (k, (round(v, 2) if isinstance(v, float) else v)) for k, v in t.items() if k not in ("step", "upload", "probe", "edit"))))
print(json.dumps(j["steps"][1]))' "$1"; }
for r in 1 2 3 4; do
  echo "round $r"; /tmp/bn/geohash-match $EDIT -o /tmp/x.ply > /tmp/x.json; steps /tmp/x.json
done | tee /tmp/o/steps.txt
el edits
if which nsys > /dev/null; then
  nsys profile -o /tmp/o/edit --force-overwrite true --trace cuda,osrt,nvtx /tmp/bn/geohash-match $EDIT -o /tmp/x.ply > /dev/null 2>&1
  nsys stats --report cuda_gpu_kern_sum,cuda_api_sum --format csv -o /tmp/o/edit /tmp/o/edit.nsys-rep > /dev/null 2>&1
  nsys stats --report cuda_gpu_trace --format csv -o /tmp/o/trace /tmp/o/edit.nsys-rep > /dev/null 2>&1
  el nsys; ls /tmp/o
fi
tar czf $OUT/call1.tgz -C /tmp o
el done
