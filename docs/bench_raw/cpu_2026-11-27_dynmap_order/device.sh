#!/usr/bin/env bash
# Device call (nvidia-h100-x1): the CPU dynmap's insert and erase in bucket order. The new tree's
# dynmap, fault and voxel-edit suites (dynmap.cuda compares the CPU backend's answers with the
# CUDA backend's item by item), then `bench dynmap --backend cpu` on the machine's 16 cores,
# old (99a0cc2, .dev/old-src.tar.xz) and new in turns. Run twice: at 1fc4cb7 (the
# insert and erase in bucket order; files call1_*) and after the gc's batched release (call2_*).
set -x
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
mkdir -p /tmp/srcold && tar -xJf .dev/old-src.tar.xz -C /tmp/srcold
(cd /tmp/srcold && sed -i "s/ -Werror//" CMakeLists.txt && \
 bash scripts/device_build.sh $OLDPWD/.dev/debs . /tmp/bold > $OUT/build_old.log 2>&1) || tail -20 $OUT/build_old.log
(cd /tmp/b && timeout 400 ctest -R 'dynmap|faults|voxel_edit' -j8 --output-on-failure > $OUT/ctest.log 2>&1; echo "ctest rc $?")
grep -E "tests passed|Failed|\*\*\*|Passed" $OUT/ctest.log | tail -30
for r in 1 2; do
  for v in old new; do
    b=/tmp/b; [ $v = old ] && b=/tmp/bold
    timeout 200 $b/geohash-match bench dynmap --backend cpu --threads 16 --reps 3 \
      > $OUT/cpu16_${v}_r$r.txt 2>&1
  done
done
head -10 $OUT/cpu16_old_r2.txt $OUT/cpu16_new_r2.txt
