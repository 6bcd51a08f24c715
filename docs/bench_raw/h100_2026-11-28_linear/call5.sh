#!/usr/bin/env bash
# s35 call 5 (H100): linear probing with window-aligned homes against the tree before it (old =
# 949eba4; the change touches only probe_family.h's linear home): the CUDA suites that compare
# every scheme's tables and answers with the CPU's, then bench hash
# --scheme linear at 2^26, old/new in turns, twice.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; } > $OUT/env.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 &
pn=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F >"$OUT/build_old.log" 2>&1 &
po=$!
wait $pn || { tail -30 "$OUT/build_new.log"; exit 1; }
wait $po || { tail -30 "$OUT/build_old.log"; exit 1; }
el build
cd /tmp/bn || exit 1
timeout 240 ctest -j4 -R 'hash_cuda|^map\.|dist_map|faults_cuda' -LE slow --timeout 230 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*|Failed|Timeout" $OUT/ctest.log | head
{
for rep in 1 2; do
  for b in bo bn; do
    echo "== $b round $rep"; timeout 120 /tmp/$b/geohash-match bench hash --backend cuda --seed 1 --scheme linear --min-log2 26 --max-log2 26 --reps 3
  done
done
} > "$OUT/bench_linear.txt" 2>&1
el bench; grep -v "^$" $OUT/bench_linear.txt | head -60
