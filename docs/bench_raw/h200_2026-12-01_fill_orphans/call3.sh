#!/usr/bin/env bash
# s61 call 3 (one H200): diagnosis of call 2 - old aed7b57 / new (refill by pull passes) /
# noinline (new with pull_orphans __noinline__): fill ms of a one-round subtract and of the
# sparse intersect with --rounds 1, 2, 4, 5 rounds in turns.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/ni /tmp/o
tar -xf .dev/c61/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
git ls-files -z | xargs -0 -I{} cp --parents {} /tmp/ni/ 2>/dev/null; cp -r .dev /tmp/ni/
sed -i 's/^static __device__ void pull_orphans/static __device__ __noinline__ void pull_orphans/' /tmp/ni/kernels/vision/voxel/labels.cu
grep -c "__noinline__ void pull_orphans" /tmp/ni/kernels/vision/voxel/labels.cu
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
(cd /tmp/ni && $B /tmp/ni /tmp/bi $A >/tmp/build_ni.log 2>&1 || { echo FAIL ni; tail /tmp/build_ni.log; }) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
D=data/pointclouds
fills() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" ".join("%.2f/%.2f" % (s["timings_ms"]["fill"], s["timings_ms"]["step"] - s["timings_ms"].get("upload", 0)) for s in j["steps"][1:]))' "$1"; }
for r in 1 2 3 4 5; do
  order="o n i"; [ $((r % 2)) = 0 ] && order="i n o"
  for v in $order; do
    /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply -o /tmp/x.ply > /tmp/x.json
    line="round $r $v: sub,add $(fills /tmp/x.json)"
    for k in 1 2 4; do
      /tmp/b$v/geohash-match voxel edit --json --backend cuda --rounds $k --grid 256 /tmp/A.ply --intersect $D/bunny.ply -o /tmp/y_${v}_$k.ply > /tmp/x.json
      line="$line | r2 rounds $k $(fills /tmp/x.json)"
    done
    echo "$line"
  done
done | tee /tmp/o/ab.txt
for k in 1 2 4; do cmp /tmp/y_o_$k.ply /tmp/y_n_$k.ply && cmp /tmp/y_o_$k.ply /tmp/y_i_$k.ply && echo "rounds $k: PLYs o = n = i"; done | tee -a /tmp/o/ab.txt
el done
cp -r /tmp/o/* $OUT/
