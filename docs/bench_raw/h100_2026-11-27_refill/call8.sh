#!/usr/bin/env bash
# s33 call 8 (experiment): Robin Hood's find with warps that refill their lanes (RH_REFILL,
# chunks of 64 keys a warp, a probe a step) against the thread per key (HEAD), in turns, two
# rounds, both sequences at 2^26; hash_cuda on the refill build.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
L=/tmp/logs8; mkdir -p $L
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bb -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_TESTS=OFF >$L/build_base.log 2>&1 &
bash scripts/device_build.sh .dev/debs . /tmp/br -DCMAKE_CUDA_ARCHITECTURES=90 "-DCMAKE_CUDA_FLAGS=-DRH_REFILL" >$L/build_r.log 2>&1 || { tail -40 $L/build_r.log; exit 1; }
wait
el build
for r in 1 2; do for v in bb br; do for sc in robin-hood robin-hood-random; do
  /tmp/$v/geohash-match bench hash --backend cuda --seed 1 --scheme $sc --min-log2 26 --max-log2 26 --reps 3 > $L/rh_${sc}_${v}_$r.txt 2>&1
  echo "round $r $v $sc"; grep -E "^map|^coherent" $L/rh_${sc}_${v}_$r.txt | cut -c1-125
done; done; done | tee $OUT/robin_find_ab.txt
el bench
cd /tmp/br
timeout 200 ctest -j8 -R 'hash_cuda|^map\.' -LE slow --timeout 190 > $OUT/ctest_refill.log 2>&1
el "ctest (refill) rc $?"; grep -E "tests passed|\*\*\*" $OUT/ctest_refill.log
tar czf $OUT/logs.tgz -C /tmp logs8
el done
