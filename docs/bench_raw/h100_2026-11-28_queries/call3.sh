#!/bin/bash
# s36 call 3 (nvidia-h100-x1): many image queries in one run matched by the video mode's workers
# (each decoding its own query) against HEAD (one query after another, decoded ahead on one
# thread); 100 copies of a 640x480 PNG query against butterfly.jpg, each run one process timed
# from spawn to exit, old/new interleaved, 3 rounds; and 100 processes of one pair each.
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
export GHM_TEST_DATA=$PWD/data
ctest --test-dir /tmp/bn -R 'cli\.(multi|search)|video\.|cuda' -LE slow -j8 > $OUT/ctest.txt 2>&1; echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*Failed" $OUT/ctest.txt | head
mkdir -p /tmp/q100 && for i in $(seq -w 1 100); do cp data/pairs/dev_00_query.png /tmp/q100/q$i.png; done
R=data/images/butterfly.jpg
ms() { local t0=$(date +%s%N); "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc lines $(wc -l < /tmp/run.out)"; }
/tmp/bn/geohash-match --backend cpu --jobs 1 $R /tmp/q100 > /tmp/ref.out
for r in 1 2 3; do
  for v in bo bn; do
    for b in cpu cuda auto; do
      echo "round $r $v $b: $(ms /tmp/$v/geohash-match --backend $b $R /tmp/q100)"
      [ $v = bn ] && { cmp -s /tmp/run.out /tmp/ref.out && echo "  same lines as --jobs 1 on the cpu" || echo "  DIFFERENT lines: $(diff /tmp/run.out /tmp/ref.out | head -3)"; }
    done
  done
done
for jobs in 2 4 8; do echo "new cuda --jobs $jobs: $(ms /tmp/bn/geohash-match --backend cuda --jobs $jobs $R /tmp/q100)"; done
for jobs in 4 8 16; do echo "new cpu --jobs $jobs: $(ms /tmp/bn/geohash-match --backend cpu --jobs $jobs $R /tmp/q100)"; done
t0=$(date +%s%N); for f in /tmp/q100/*.png; do /tmp/bn/geohash-match $R $f > /dev/null; done; echo "100 processes, default backend: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
t0=$(date +%s%N); for f in /tmp/q100/*.png; do /tmp/bn/geohash-match --backend cuda $R $f > /dev/null; done; echo "100 processes, cuda: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
cd $OUT && tar -czf logs.tgz build_new.txt build_old.txt ctest.txt && rm -f build_new.txt build_old.txt ctest.txt
