#!/bin/bash
# s36 call 4 (nvidia-h100-x1): the committed tree (auto backend for image queries) against
# 3e19c46 (before the workers): the CLI cases that need a device, then 100 copies of a 640x480
# PNG query against butterfly.jpg with the default backend, old/new interleaved, 3 rounds, and
# 100 processes of one pair each (default backend) as the baseline, in the same call.
set -u
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi -L; nproc
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > $OUT/build_new.txt 2>&1 &
p1=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1 &
p2=$!
wait $p1; echo "new build rc $?"; wait $p2; echo "old build rc $?"
ctest --test-dir /tmp/bn -R 'cli\.(auto|cuda|multi|search|pair)' -j8 --output-on-failure > $OUT/ctest.txt 2>&1; echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*|Skipped" $OUT/ctest.txt | head
mkdir -p /tmp/q100 && for i in $(seq -w 1 100); do cp data/pairs/dev_00_query.png /tmp/q100/q$i.png; done
R=data/images/butterfly.jpg
ms() { local t0=$(date +%s%N); "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc lines $(wc -l < /tmp/run.out)"; }
for r in 1 2 3; do
  for v in bo bn; do echo "round $r $v default: $(ms /tmp/$v/geohash-match $R /tmp/q100)"; done
done
/tmp/bn/geohash-match --verbose $R /tmp/q100/q001.png /tmp/q100/q002.png 2>&1 >/dev/null | grep -i "runs on"
for n in 10 1000; do
  mkdir -p /tmp/q$n && for i in $(seq 1 $n); do ln -sf $PWD/data/pairs/dev_00_query.png /tmp/q$n/q$(printf %04d $i).png; done
  for b in cpu cuda; do echo "$n queries $b: $(ms /tmp/bn/geohash-match --backend $b $R /tmp/q$n)"; done
done
t0=$(date +%s%N); for f in /tmp/q100/*.png; do /tmp/bn/geohash-match $R $f > /dev/null; done; echo "100 processes, default backend: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
cd $OUT && tar -czf logs.tgz build_new.txt build_old.txt ctest.txt && rm -f build_new.txt build_old.txt ctest.txt
