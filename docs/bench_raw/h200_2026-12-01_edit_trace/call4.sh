#!/usr/bin/env bash
# s63 call 4 (one H200): where a voxel edit step's time goes on the device: an nsys trace of the
# seven-step edit at 256^3 (its kernels, copies and the host's API calls, in time order).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
which nsys || ls /usr/local/cuda/bin | grep -i nsys; ls -d /opt/nvidia/nsight-systems* /usr/local/cuda/nsight-systems* 2>/dev/null
NSYS=$(which nsys 2>/dev/null || ls /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
echo "nsys: $NSYS"
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/o
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
el builds
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
E="voxel edit --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
/tmp/bn/geohash-match $E --backend cuda -o /tmp/x.ply > /tmp/o/edit.json
python3 -c 'import json,sys; [print(i, s["op"] if "op" in s else "", {k: round(v, 3) for k, v in s["timings_ms"].items()}) for i, s in enumerate(json.load(open(sys.argv[1]))["steps"])]' /tmp/o/edit.json
if [ -n "$NSYS" ]; then
  timeout 200 $NSYS profile -o /tmp/o/edit --trace=cuda,osrt --force-overwrite true /tmp/bn/geohash-match $E --backend cuda -o /tmp/x.ply > /tmp/o/edit_nsys.json 2>/tmp/o/nsys.log; el "nsys rc $?"
  timeout 200 $NSYS stats -r cuda_gpu_trace -f csv -o /tmp/o/gpu /tmp/o/edit.nsys-rep > /dev/null 2>&1; el "stats rc $?"
  timeout 200 $NSYS stats -r cuda_api_trace -f csv -o /tmp/o/api /tmp/o/edit.nsys-rep > /dev/null 2>&1; el "stats rc $?"
  ls -la /tmp/o
  python3 -c 'import json,sys; [print(i, {k: round(v, 3) for k, v in s["timings_ms"].items()}) for i, s in enumerate(json.load(open(sys.argv[1]))["steps"])]' /tmp/o/edit_nsys.json
  gzip -9 /tmp/o/gpu*.csv /tmp/o/api*.csv
  cp /tmp/o/gpu*.csv.gz /tmp/o/api*.csv.gz /tmp/o/edit.json /tmp/o/edit_nsys.json $OUT/
fi
el done
