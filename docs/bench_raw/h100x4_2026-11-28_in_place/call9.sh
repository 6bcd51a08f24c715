#!/usr/bin/env bash
# s35 call 9 (4 x H100): the split map's find in place at 4 parts, where each GPU reads 3/4 of
# the keys over the links (the split path moves each key once): bench distmap --gpus 4 --log2 28,
# old = 949eba4 (before the find in place) and new = HEAD, in turns, twice.
set -u
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; nvidia-smi topo -m | head -6; } > $OUT/env.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 &
pn=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F >"$OUT/build_old.log" 2>&1 &
po=$!
wait $pn || { tail -30 "$OUT/build_new.log"; exit 1; }
wait $po || { tail -30 "$OUT/build_old.log"; exit 1; }
el build
{
for rep in 1 2; do
  for b in bo bn; do
    echo "== $b --gpus 4, round $rep"; timeout 60 /tmp/$b/geohash-match bench distmap --gpus 4 --log2 28 --reps 2 | grep -E "split|one map"
  done
done
} > "$OUT/distmap4.txt" 2>&1
el done; cat $OUT/distmap4.txt
