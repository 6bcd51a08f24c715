#!/usr/bin/env bash
# s44 call 10 (one H200, 16 cores): reading and sweeping 2 x 10M-point clouds, c538064 against
# the final tree (the PLY read in pieces and decoded on threads, the grid fit on threads):
# the JSON's read time and the whole process, 3 rounds in turns; lines compared.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
mkdir -p /tmp/old && tar -xf .dev/c44/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 &
pn=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F >"$OUT/build_old.log" 2>&1 &
po=$!
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 10000000 /tmp/a10m.ply /tmp/b10m.ply
wait $pn || { tail -30 "$OUT/build_new.log"; exit 1; }
wait $po
el build
(cd /tmp/bn && ctest -R 'pointcloud|file_io' > $OUT/ctest.log 2>&1; el "ctest rc $?"; grep -E "tests passed|\*\*\*Failed" $OUT/ctest.log)
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
{
for args in "--sweep 2" "--sweep 100"; do
  for rep in 1 2 3; do
    for b in bo bn; do
      s=$(date +%s%N)
      /tmp/$b/geohash-match voxel --backend cuda --json --grid 1024 --rotate-b 0,0,30 $args /tmp/a10m.ply /tmp/b10m.ply > /tmp/o.$b 2>/tmp/e.$b
      rc=$?; e=$(date +%s%N)
      echo "$args $b round $rep: rc $rc, $(( (e - s) / 1000000 )) ms, read $(head -1 /tmp/o.$b | python3 -c 'import json,sys; print(round(json.loads(sys.stdin.read())["timings_ms"]["read"]))') ms $(head -c 200 /tmp/e.$b)"
    done
    strip /tmp/o.bo > /tmp/l1; strip /tmp/o.bn > /tmp/l2
    cmp -s /tmp/l1 /tmp/l2 && echo "  lines identical" || echo "  LINES DIFFER"
  done
done
} > $OUT/read.txt 2>&1
el runs; cat $OUT/read.txt
