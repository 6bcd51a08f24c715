#!/usr/bin/env bash
# call 5: the tree to commit (linear probing's find by aligned windows of 8; the dynmap insert's
# claims from the look-up's first slab with room) against 38427ce, checked and measured; then
# an experiment, two keys a thread for linear probing's find.
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
R=$PWD
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/src_old /tmp/logs && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
A=-DCMAKE_CUDA_ARCHITECTURES=90
(bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old $A -DGEOHASH_TESTS=OFF >/tmp/logs/build_old.log 2>&1; echo "old rc $?" >>/tmp/logs/build_old.log) &
bash scripts/device_build.sh .dev/debs . /tmp/b $A >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build new
cd /tmp/b
timeout 250 ctest -j8 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap|hash_cuda|^map\.' -LE slow --timeout 240 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head -20
for c in cuda cuda_lists; do
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >/tmp/logs/memcheck_$c.log 2>&1
el "memcheck dynmap $c rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_$c.log | tail -1)" | tee -a /tmp/logs/summary.txt
done
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck ./check_hash_cuda >/tmp/logs/memcheck_hash.log 2>&1
el "memcheck hash_cuda rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_hash.log | tail -1)" | tee -a /tmp/logs/summary.txt
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench dynmap --backend cuda --quick >/tmp/logs/racecheck_bench.log 2>&1
el "racecheck bench dynmap quick rc $? $(grep -h 'RACECHECK SUMMARY' /tmp/logs/racecheck_bench.log | tail -1)" | tee -a /tmp/logs/summary.txt
timeout 100 compute-sanitizer --tool initcheck --kernel-name regex:open_ ./geohash-match bench hash --backend cuda --scheme linear --quick >/tmp/logs/initcheck_linear.log 2>&1
el "initcheck open_ kernels rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/initcheck_linear.log | tail -1)" | tee -a /tmp/logs/summary.txt
wait; tail -qn1 /tmp/logs/build_old.log; el builds done
B="bench hash --backend cuda --seed 1 --scheme linear --min-log2 26 --max-log2 26 --reps 3"
for round in 1 2; do
  for v in old new; do
    bin=/tmp/b_$v/geohash-match; [ $v = new ] && bin=/tmp/b/geohash-match
    timeout 150 $bin bench dynmap --backend cuda --reps 3 >/tmp/logs/dyn_${v}_$round.txt 2>&1; el "dyn $v $round rc $?"
    timeout 100 $bin $B >/tmp/logs/lin_${v}_$round.txt 2>&1; el "lin $v $round rc $?"
  done
done
for v in old new; do echo "== dyn $v"; sed -n 3,10p /tmp/logs/dyn_${v}_1.txt | awk '{print $1,$3,$7,$9,$10}'; sed -n 3,10p /tmp/logs/dyn_${v}_2.txt | awk '{print $7, $9}' | tr '\n' ' '; echo; done
for f in lin_old_1 lin_new_1 lin_old_2 lin_new_2; do echo "== $f"; grep -E "^map" /tmp/logs/$f.txt | cut -c1-110; done
cd "$R"
cp .dev/map_open_2key.cu kernels/hashing/map_open.cu
cmake --build /tmp/b >/tmp/logs/build_2key.log 2>&1; el "build 2key rc $?"
(cd /tmp/b && timeout 200 ctest -j8 -R 'hash_cuda|^map\.core' --timeout 190 >/tmp/logs/ctest_2key.log 2>&1; el "ctest 2key rc $?")
timeout 100 /tmp/b/geohash-match $B >/tmp/logs/lin_2key.txt 2>&1
echo "== 2key"; grep -E "^map" /tmp/logs/lin_2key.txt | cut -c1-110
sed -i 's/^static __global__ __launch_bounds__(256) void linear_find2_kernel(/static __global__ __launch_bounds__(256, 8) void linear_find2_kernel(/' kernels/hashing/map_open.cu
cmake --build /tmp/b --target geohash-match >/tmp/logs/build_2key_b8.log 2>&1; el "build 2key b8 rc $?"
timeout 100 /tmp/b/geohash-match $B >/tmp/logs/lin_2key_b8.txt 2>&1
echo "== 2key b8"; grep -E "^map" /tmp/logs/lin_2key_b8.txt | cut -c1-110
tar czf "$OUT/logs.tgz" -C /tmp logs
el done
