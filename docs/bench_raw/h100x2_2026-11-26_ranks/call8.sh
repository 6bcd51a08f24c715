#!/usr/bin/env bash
# The fault walks of the split map and the ranked one on CUDA; check_dist_map (2 GPUs, then 1).
set -u
export NCCL_NVLS_ENABLE=0
exec > >(tee "$OUT/log.txt") 2>&1
sed -i "s/ -Werror//" CMakeLists.txt
NC=$(python3 -c "import nvidia.nccl as n; print(list(n.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH=$NC/lib:${LD_LIBRARY_PATH:-}
bash scripts/device_build.sh .dev/debs . /tmp/b6 -DNCCL_ROOT=$NC -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || tail -30 "$OUT/build.log"
cd /tmp/b6 || exit 1
CK_RUN_CASE=cuda timeout 300 ./check_faults_cuda 2>&1 | grep -E "split map|F:|Checks"
for i in 1 2; do timeout 120 ./check_dist_map 2>&1 | tail -2; done
CUDA_VISIBLE_DEVICES=0 timeout 120 ./check_dist_map 2>&1 | tail -2
