#!/usr/bin/env bash
# dynmap insert with the look-up and claims in one walk and left items placed by rank (working
# tree) against the claims and warp store (old, .dev/old-src.tar.xz = 445b5ea), H100, one
# call: build both, the new tree's CUDA dynmap ctests and fault walk, memcheck, bench dynmap
# old / new in turns (two rounds), ncu kernel times of the new insert.
set -u
export PATH=/usr/local/cuda/bin:$PATH
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/src_old /tmp/logs && tar xJf .dev/old-src.tar.xz -C /tmp/src_old && sed -i "s/ -Werror//" /tmp/src_old/CMakeLists.txt
if [ ! -x /tmp/b_old/geohash-match ]; then
(bash scripts/device_build.sh .dev/debs /tmp/src_old /tmp/b_old -DGEOHASH_TESTS=OFF >/tmp/logs/build_old.log 2>&1; echo "old rc $?" >>/tmp/logs/build_old.log) &
fi
bash scripts/device_build.sh .dev/debs . /tmp/b >/tmp/logs/build.log 2>&1 || { tail -40 /tmp/logs/build.log; exit 1; }
el build new
cd /tmp/b
timeout 240 ctest -j8 -R 'dynmap|faults_cuda|voxel_edit|cli.bench_dynmap' -LE slow --timeout 230 >"$OUT/ctest.log" 2>&1
el ctest rc $?; grep -E "tests passed|\*\*\*|Failed" "$OUT/ctest.log" | head
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 150 compute-sanitizer --tool memcheck --leak-check full ./check_dynmap >/tmp/logs/memcheck_dynmap.log 2>&1
el "memcheck check_dynmap rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_dynmap.log | tail -1)" | tee -a "$OUT/summary.txt"
timeout 100 compute-sanitizer --tool memcheck ./geohash-match bench dynmap --backend cuda --quick >/tmp/logs/memcheck_bench.log 2>&1
el "memcheck bench quick rc $? $(grep -h 'ERROR SUMMARY' /tmp/logs/memcheck_bench.log | tail -1)" | tee -a "$OUT/summary.txt"
timeout 100 compute-sanitizer --tool racecheck ./geohash-match bench dynmap --backend cuda --quick >/tmp/logs/racecheck_bench.log 2>&1
el "racecheck bench quick rc $? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' /tmp/logs/racecheck_bench.log | tail -1)" | tee -a "$OUT/summary.txt"
wait; tail -qn1 /tmp/logs/build_old.log 2>/dev/null; el builds done
for round in 1 2; do
  for v in old new; do
    bin=/tmp/b_$v/geohash-match; [ $v = new ] && bin=/tmp/b/geohash-match
    timeout 150 $bin bench dynmap --backend cuda --reps 3 >"$OUT/dyn_${v}_$round.txt" 2>&1
    el "bench $v $round rc $?"
  done
done
cd /tmp/b && timeout 150 ncu --cache-control none --clock-control none --metrics gpu__time_duration.sum -k regex:"hash_kernel|leader|plan_kernel|first_slab|take_kernel|write_kernel|finish_kernel|init_supers" --launch-count 20 ./geohash-match bench dynmap --backend cuda --reps 1 > /tmp/logs/ncu_new.txt 2>&1
grep -E "^  [a-z_]+.*\(|gpu__time_duration" /tmp/logs/ncu_new.txt | paste - - | awk '{print $1, $(NF-1), $(NF)}' | tee -a "$OUT/summary.txt"
for v in old new; do echo "== $v"; sed -n 1,30p "$OUT/dyn_${v}_2.txt" | cut -c1-120; done
tar czf "$OUT/logs.tgz" -C /tmp logs
el all done
