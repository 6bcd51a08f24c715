#!/bin/bash
# call 1 (nvidia-h100-x1): old (d9ac2ed) and new built side by side; CUDA match/geohash tests,
# memcheck, the dev tier on CUDA, bench match old/new in turns
set -u
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi -L
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xJf .dev/old-src.tar.xz -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
t0=$(date +%s)
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > $OUT/build_new.txt 2>&1 &
p1=$!
bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF -DGEOHASH_TESTS=OFF > $OUT/build_old.txt 2>&1 &
p2=$!
wait $p1; echo "new build rc $?"; wait $p2; echo "old build rc $?"; echo "build $(( $(date +%s) - t0 )) s"
export GHM_TEST_DATA=$PWD/data
ctest --test-dir /tmp/bn -R 'geohash|match|cli\.(pair|match|multi|search)' -j8 --output-on-failure > $OUT/ctest.txt 2>&1; echo "ctest rc $?"; tail -3 $OUT/ctest.txt
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda compute-sanitizer --tool memcheck --leak-check full /tmp/bn/check_geohash_cuda > $OUT/memcheck_geohash.txt 2>&1; tail -3 $OUT/memcheck_geohash.txt
compute-sanitizer --tool memcheck /tmp/bn/geohash-match --backend cuda data/images/butterfly.jpg data/pairs/dev_00_query.png > $OUT/memcheck_cli.txt 2>&1; tail -2 $OUT/memcheck_cli.txt
# the dev tier and two fresh sets on both backends: CUDA gives the CPU's answers
for b in cpu cuda; do
  for set in hard s11 n6; do
    python3 scripts/score_hard.py --opencv off --pairs --backend $b --tool /tmp/bn/geohash-match .dev/sets/$set/truth.json > $OUT/score_${set}_$b.txt 2>&1
    echo "$set $b: $(grep -E 'all positives|false matches' $OUT/score_${set}_$b.txt | tr -s ' |*' ' ' | tr '\n' ' ')"
  done
done
for r in 1 2; do
  for v in bo bn; do
    /tmp/$v/geohash-match bench match --backend cuda --reps 30 --no-baseline --json-out $OUT/bench_${v}_$r.json > $OUT/bench_${v}_$r.txt 2>&1
    echo "== $v round $r"; grep -E "ms|query" $OUT/bench_${v}_$r.txt | head -12
  done
done
