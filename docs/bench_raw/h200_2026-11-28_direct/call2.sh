#!/usr/bin/env bash
# s41 call 2: where the split map's build goes on 2 x H200 (ebe3c62): one map's build of 2^27 and
# 2^28 keys (bench hash), the split and count kernels' durations under ncu, NVLink's rates
# (nvlink_probe.cu: peer copy, kernel stores one way and both ways).
set -u
export NCCL_NVLS_ENABLE=0 PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvcc -O2 -arch=sm_90 -o /tmp/nvlink_probe .dev/c41/nvlink_probe.cu && /tmp/nvlink_probe > $OUT/nvlink.txt 2>&1 &
F="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn $F >"$OUT/build_new.log" 2>&1 || { tail -30 "$OUT/build_new.log"; exit 1; }
el build
wait
cat $OUT/nvlink.txt
cd /tmp/bn || exit 1
timeout 120 ./geohash-match bench hash --backend cuda --scheme cuckoo --min-log2 27 --max-log2 28 --reps 3 --seed 1 2>&1 | grep -E "load 0.80" > $OUT/hash.txt
cat $OUT/hash.txt; el hash
timeout 200 ncu -k regex:"split_kernel|count_kernel|insert|group|dedup|clear" --metrics gpu__time_duration.sum ./geohash-match bench distmap --gpus 2 --log2 28 --reps 1 > $OUT/ncu.txt 2>&1
grep -E "split_kernel|count_kernel|insert|group|dedup|clear|gpu__time_duration|Context|Device" $OUT/ncu.txt | head -120 > $OUT/ncu_short.txt
el ncu; head -80 $OUT/ncu_short.txt
