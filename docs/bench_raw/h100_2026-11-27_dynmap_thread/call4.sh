#!/usr/bin/env bash
# call 4: linear probing's windows (8 slots from the probe's sector, and variants) and the
# dynmap insert's claims from the look-up's first slab with room, against 38427ce.
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
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed|Passed" "$OUT/ctest.log" | head -20
for c in cuda cuda_lists; do
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=$c timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >/tmp/logs/memcheck_$c.log 2>&1
el "memcheck dynmap $c rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_$c.log | tail -1)" | tee -a "$OUT/summary.txt"
done
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck ./check_hash_cuda >/tmp/logs/memcheck_hash.log 2>&1
el "memcheck hash_cuda rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_hash.log | tail -1)" | tee -a "$OUT/summary.txt"
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench dynmap --backend cuda --quick >/tmp/logs/racecheck_bench.log 2>&1
el "racecheck bench dynmap quick rc $? $(grep -h 'RACECHECK SUMMARY' /tmp/logs/racecheck_bench.log | tail -1)" | tee -a "$OUT/summary.txt"
wait; tail -qn1 /tmp/logs/build_old.log; el builds done
B="bench hash --backend cuda --seed 1 --scheme linear --min-log2 26 --max-log2 26 --reps 3"
for round in 1 2; do
  for v in old new; do
    bin=/tmp/b_$v/geohash-match; [ $v = new ] && bin=/tmp/b/geohash-match
    timeout 150 $bin bench dynmap --backend cuda --reps 3 >"$OUT/dyn_${v}_$round.txt" 2>&1; el "dyn $v $round rc $?"
    timeout 100 $bin $B >"$OUT/lin_${v}_$round.txt" 2>&1; el "lin $v $round rc $?"
  done
done
for v in old new; do echo "== dyn $v"; sed -n 3,10p "$OUT/dyn_${v}_1.txt" | awk '{print $1,$3,$6,$7,$8,$9,$10}'; sed -n 3,10p "$OUT/dyn_${v}_2.txt" | awk '{print $9}' | tr '\n' ' '; echo; done
for f in lin_old_1 lin_new_1 lin_old_2 lin_new_2; do echo "== $f"; grep -E "^map" "$OUT/$f.txt" | cut -c1-110; done
timeout 200 ncu --section SpeedOfLight -k regex:'hash|leader|plan|first_slab|take|write|finish' -c 24 ./geohash-match bench dynmap --backend cuda --reps 1 >"$OUT/ncu_insert.txt" 2>&1
el ncu rc $?; grep -E "^  [a-z_]+.*\(|Duration" "$OUT/ncu_insert.txt" | sed 's/(DynRef.*) (/ (/; s/, Context.*//' | paste - - | awk '{print $1, $2, $(NF-1), $NF}' | head -30
cd "$R"
for wa in "16 4" "4 4" "8 8"; do
  set -- $wa
  sed -i "s/^enum { OPEN_WINDOW = [0-9]*, OPEN_ALIGN = [0-9]* };/enum { OPEN_WINDOW = $1, OPEN_ALIGN = $2 };/" kernels/hashing/map_open.cu
  grep -c "OPEN_WINDOW = $1, OPEN_ALIGN = $2" kernels/hashing/map_open.cu
  cmake --build /tmp/b --target geohash-match >/tmp/logs/build_w$1_$2.log 2>&1; el "build w$1 a$2 rc $?"
  timeout 100 /tmp/b/geohash-match $B >"$OUT/lin_w$1_a$2.txt" 2>&1
  echo "== w$1 a$2"; grep -E "^map" "$OUT/lin_w$1_a$2.txt" | cut -c1-110
done
tar czf "$OUT/logs.tgz" -C /tmp logs
el done
