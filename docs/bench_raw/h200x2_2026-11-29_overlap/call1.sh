#!/usr/bin/env bash
# s44 call 1: overlapped split-map build (own piece inserted while the others cross) vs c538064.
set -u
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; nvidia-smi topo -m; } > $OUT/env.txt 2>&1
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
mkdir -p /tmp/old && tar -xf .dev/c44/old.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 &
pn=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F >"$OUT/build_old.log" 2>&1 &
po=$!
wait $pn || { tail -30 "$OUT/build_new.log"; exit 1; }
wait $po || { tail -30 "$OUT/build_old.log"; exit 1; }
el build
cd /tmp/bn || exit 1
timeout 150 ./check_dist_map 2>&1 | tail -3; el check_dist_map
{
for rep in 1 2; do
  for b in bo bn; do
    echo "== $b --gpus 2, round $rep"; timeout 90 /tmp/$b/geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
  done
done
for k in 1 4 8; do
  echo "== bn GHM_SIDE_SPLIT_BLOCKS=$k"; GHM_SIDE_SPLIT_BLOCKS=$k timeout 90 /tmp/bn/geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split|one map"
done
echo "== bn --verbose"; timeout 90 /tmp/bn/geohash-match bench distmap --gpus 2 --log2 28 --verbose 2>&1 | grep -E "dist map (build|find),|split|one map" | head -12
} > "$OUT/distmap.txt" 2>&1
el distmap; cat $OUT/distmap.txt
CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --log-file "$OUT/memcheck.txt" ./check_dist_map 2>&1 | tail -1
tail -2 $OUT/memcheck.txt; el memcheck
timeout 250 ctest -j8 -R 'dist_map|distmap|faults_cuda|hash_cuda|map' -LE slow --timeout 240 > $OUT/ctest.log 2>&1
el "ctest rc $?"; grep -E "tests passed|\*\*\*|Failed|Timeout" $OUT/ctest.log | head -20
