#!/usr/bin/env bash
# s41 call 5: the direct splits (ebe3c62 + line breaks) against bf2ad13 on 4 x H200: check_dist_map
# (parts on 3 devices), bench distmap 2^28 --gpus 4 and --gpus 2 old/new in turns twice.
set -u
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; nvidia-smi topo -m; } > $OUT/env.txt 2>&1
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
mkdir -p /tmp/old && tar -xJf .dev/c41/old-src.tar.xz -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 &
pn=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F >"$OUT/build_old.log" 2>&1 &
po=$!
wait $pn || { tail -30 "$OUT/build_new.log"; exit 1; }
wait $po || { tail -30 "$OUT/build_old.log"; exit 1; }
el build
cd /tmp/bn || exit 1
timeout 120 ./check_dist_map 2>&1 | tail -1; el check_dist_map
{
for rep in 1 2; do
  for g in 4 2; do
    for b in bo bn; do
      echo "== $b --gpus $g, round $rep"; timeout 100 /tmp/$b/geohash-match bench distmap --gpus $g --log2 28 | grep -E "split|one map"
    done
  done
done
echo "== bn --gpus 4 --verbose"; timeout 100 /tmp/bn/geohash-match bench distmap --gpus 4 --log2 28 --verbose 2>&1 | grep -E "dist map (build|find)," | head -8
} > "$OUT/distmap.txt" 2>&1
el distmap; cat $OUT/distmap.txt
