#!/usr/bin/env bash
# s35 call 6 (H100): linear probing's window (and home alignment) of 4, 8 (committed) and 16
# slots, one tree built three ways (-DGHMI_OPEN_WINDOW), against old (949eba4): bench hash
# --scheme linear at 2^26 in turns, twice; then the cuckoo map's build at 2^27 and 2^28 (one
# GPU), for the split map's scaling model.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $OUT/env.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF"
pids=()
for w in 4 8 16; do
  bash scripts/device_build.sh .dev/debs . /tmp/w$w $F -DCMAKE_C_FLAGS=-DGHMI_OPEN_WINDOW=$w -DCMAKE_CUDA_FLAGS=-DGHMI_OPEN_WINDOW=$w >"$OUT/build_w$w.log" 2>&1 &
  pids+=($!)
done
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F >"$OUT/build_old.log" 2>&1 &
pids+=($!)
for p in "${pids[@]}"; do wait $p || { echo "a build failed"; tail -20 $OUT/build_*.log; exit 1; }; done
el build
{
for rep in 1 2; do
  for b in bo w4 w8 w16; do
    echo "== $b round $rep"; timeout 120 /tmp/$b/geohash-match bench hash --backend cuda --seed 1 --scheme linear --min-log2 26 --max-log2 26 --reps 3 | grep -E "map       linear|coherent"
  done
done
echo "== w8 cuckoo at 2^27, 2^28"
timeout 200 /tmp/w8/geohash-match bench hash --backend cuda --seed 1 --scheme cuckoo --min-log2 27 --max-log2 28 --reps 3 | grep -E "^map"
} > "$OUT/bench.txt" 2>&1
el bench; cat $OUT/bench.txt
