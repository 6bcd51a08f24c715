#!/bin/bash
# s37 call 1 (nvidia-h100-x1): matcher clones by copy (ghm_multimap_clone, ghm_index_clone,
# ghm_geo_ref_clone) against 44ef6fd (clones rebuilt every table): CUDA tests and memcheck of
# the clones, 100 image queries old/new interleaved, the workers sweep, 100 processes.
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
ctest --test-dir /tmp/bn -R 'hash_cuda|match|multimap|index|geohash|cli\.(auto|cuda|multi|search|pair)' -j8 --output-on-failure > $OUT/ctest.txt 2>&1; echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.txt | head
mkdir -p /tmp/q100 && for i in $(seq -w 1 100); do cp data/pairs/dev_00_query.png /tmp/q100/q$i.png; done
R=data/images/butterfly.jpg
ms() { local t0=$(date +%s%N); "$@" > /tmp/run.out 2>/tmp/run.err; local rc=$?; echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms rc $rc lines $(wc -l < /tmp/run.out)"; }
/tmp/bo/geohash-match --backend cpu --jobs 1 $R /tmp/q100 > /tmp/ref.out
for r in 1 2 3; do
  for v in bo bn; do
    for b in default cuda; do
      a=""; [ $b = cuda ] && a="--backend cuda"
      echo "round $r $v $b: $(ms /tmp/$v/geohash-match $a $R /tmp/q100)"
      [ $v = bn ] && { cmp -s /tmp/run.out /tmp/ref.out && echo "  same lines as old --jobs 1" || echo "  DIFFERENT: $(diff /tmp/run.out /tmp/ref.out | head -3)"; }
    done
  done
done
for n in 2 4 8 16 32 64 100; do
  mkdir -p /tmp/s$n && for i in $(seq 1 $n); do ln -sf $PWD/data/pairs/dev_00_query.png /tmp/s$n/q$(printf %03d $i).png; done
  for j in 1 2 4 8 16; do
    t=""; for r in 1 2 3; do t="$t $(ms /tmp/bn/geohash-match --backend cpu --jobs $j $R /tmp/s$n | cut -d' ' -f1)"; done
    echo "new n $n jobs $j ms:$t"
  done
done
for r in 1 2; do t0=$(date +%s%N); for f in /tmp/q100/*.png; do /tmp/bn/geohash-match $R $f > /dev/null; done; echo "100 processes, default backend: $(( ($(date +%s%N) - t0) / 1000000 )) ms"; done
cd /tmp/bn
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 280 compute-sanitizer --tool memcheck --leak-check full ./check_hash_cuda > $OUT/memcheck_hash.log 2>&1; echo "memcheck hash rc $?"; tail -3 $OUT/memcheck_hash.log
CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --leak-check full ./check_match > $OUT/memcheck_match.log 2>&1; echo "memcheck match rc $?"; tail -3 $OUT/memcheck_match.log
cd $OUT && tar -czf logs.tgz build_new.txt build_old.txt ctest.txt memcheck_*.log && rm -f build_new.txt build_old.txt ctest.txt memcheck_*.log
