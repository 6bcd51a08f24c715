#!/usr/bin/env bash
# s44 call 11 (one H200): the review's mend of map.cu (one attempt loop): check_hash_cuda and
# check_dist_map.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_new.log" 2>&1 || { tail -30 "$OUT/build_new.log"; exit 1; }
cd /tmp/bn && timeout 200 ./check_hash_cuda 2>&1 | tail -1 && timeout 60 ./check_dist_map 2>&1 | tail -1
