#!/usr/bin/env bash
# s44 call 4: voxel --sweep --gpus 2 (steps dealt to two devices) against --gpus 1, 2 x H200:
# lines identical, whole-process times on 160k- and 10M-point bunny pairs (call 5: timed with
# python, sweeps of 2 and of many steps, so that the difference is the steps' time).
set -u
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_new.log" 2>&1 || { tail -30 "$OUT/build_new.log"; exit 1; }
el build
B=/tmp/bn/geohash-match
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/a160k.ply /tmp/b160k.ply
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 10000000 /tmp/a10m.ply /tmp/b10m.ply
el pairs
strip() { sed -E 's/"timings_ms":\{[^}]*\},?//' "$1"; }
{
for case in "a160k 256 2" "a160k 256 1000" "a10m 1024 2" "a10m 1024 100"; do
  set -- $case; a=/tmp/$1.ply; b=/tmp/${1/a/b}.ply
  for rep in 1 2; do
    for g in 1 2; do
      w=$(python3 -c "import subprocess,sys,time; t=time.time(); r=subprocess.run(sys.argv[1:], stdout=open('/tmp/out.$g','w'), stderr=open('/tmp/err.$g','w')).returncode; print('rc %d, %.3f s' % (r, time.time()-t))" $B voxel --backend cuda --json --grid $2 --sweep $3 --rotate-b 0,0,30 --gpus $g $a $b)
      echo "$1 grid $2 sweep $3 --gpus $g round $rep: $w, $(wc -l < /tmp/out.$g) lines, step ms median $(python3 -c "import json,sys,statistics; print(statistics.median(json.loads(l)['timings_ms']['step'] for l in open('/tmp/out.$g')))")"
      head -c 300 /tmp/err.$g
    done
    strip /tmp/out.1 > /tmp/l1; strip /tmp/out.2 > /tmp/l2
    cmp -s /tmp/l1 /tmp/l2 && echo "  lines identical" || echo "  LINES DIFFER"
  done
done
} > $OUT/sweep.txt 2>&1
el sweep; cat $OUT/sweep.txt
