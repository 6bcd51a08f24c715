#!/usr/bin/env bash
# s50 call 7 (2 x H200): stop 49's overlapped_send_arrays.patch (one process's overlapped build
# sizes each shard's send arrays for the other parts' pieces alone) against HEAD without it:
# check_dist_map and memcheck of its CUDA case on the new tree, then bench distmap --gpus 2 at
# 2^28, old / new in turns, three rounds.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$NC/lib:${LD_LIBRARY_PATH:-}
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DNCCL_ROOT=$NC -DGEOHASH_MPI=OFF"
mkdir -p /tmp/old && tar -xf .dev/c50/old7.tar -C /tmp/old
sed -i "s/ -Werror//" CMakeLists.txt /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo $F -DGEOHASH_TESTS=OFF > /tmp/build_old.log 2>&1 &
po=$!
bash scripts/device_build.sh .dev/debs . /tmp/bn $F > $OUT/build_new.log 2>&1 || { tail -20 $OUT/build_new.log; exit 1; }
wait $po || { tail -20 /tmp/build_old.log; exit 1; }
el build
{
cd /tmp/bn
timeout 200 ./check_dist_map 2>&1 | tail -1
CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --leak-check no ./check_dist_map 2>&1 | grep "ERROR SUMMARY\|Checks" | tail -2
el tests
for rep in 1 2 3; do
  for b in bo bn; do
    echo "== $b round $rep: $(timeout 90 /tmp/$b/geohash-match bench distmap --gpus 2 --log2 28 | grep -E "split map  |one map" | tr -s ' ' | tr '\n' '|')"
  done
done
el bench
} 2>&1 | tee $OUT/call7.txt
