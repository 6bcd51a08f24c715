#!/bin/bash
# s36 call 6 (nvidia-h100-x1): how many CPU workers a run of n image queries should have (each
# worker rebuilds the reference's tables on its thread before its first query): n 640x480
# copies against butterfly.jpg, --jobs 1, 2, 4, 8, 16, one process each, 3 rounds.
set -u
exec > >(tee $OUT/log.txt) 2>&1
nproc
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_new.txt 2>&1; echo "build rc $?"
R=data/images/butterfly.jpg
ms() { local t0=$(date +%s%N); "$@" > /tmp/run.out 2>/tmp/run.err; echo "$(( ($(date +%s%N) - t0) / 1000000 ))"; }
for n in 1 2 4 8 16 32 64; do
  mkdir -p /tmp/q$n && for i in $(seq 1 $n); do ln -sf $PWD/data/pairs/dev_00_query.png /tmp/q$n/q$(printf %03d $i).png; done
  for j in 1 2 4 8 16; do
    t=""; for r in 1 2 3; do t="$t $(ms /tmp/bn/geohash-match --backend cpu --jobs $j $R /tmp/q$n)"; done
    echo "n $n jobs $j ms:$t"
  done
done
