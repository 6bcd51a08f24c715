#!/usr/bin/env bash
# GhmDistMap on 2 GPUs (issue 16): tests, memcheck, bench distmap at 2^26 and 2^28.
set -u
R=$PWD
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
nvidia-smi -L; nvidia-smi topo -m 2>/dev/null | head -5
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/b >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
el build
cd /tmp/b
./check_dist_map 2>&1 | tail -3
CK_RUN_CASE=cuda ./check_context 2>&1 | tail -1
timeout 120 compute-sanitizer --tool memcheck --leak-check full --log-file "$OUT/memcheck_dist.txt" env CK_FORK=no CK_RUN_CASE=cuda ./check_dist_map >/dev/null 2>&1
el "memcheck rc $?"; tail -2 "$OUT/memcheck_dist.txt"
timeout 120 compute-sanitizer --tool racecheck --log-file "$OUT/racecheck_dist.txt" env CK_FORK=no CK_RUN_CASE=cuda ./check_dist_map >/dev/null 2>&1
el "racecheck rc $?"; tail -2 "$OUT/racecheck_dist.txt"
{
for k in 26 28; do
  for rep in 1 2; do
    ./geohash-match bench distmap --gpus 2 --log2 $k --json-out "$OUT/distmap_2gpus_2e${k}_$rep.json"
  done
  ./geohash-match bench distmap --gpus 1 --parts 2 --log2 $k
done
./geohash-match bench distmap --gpus 2 --log2 28 --load 0.95 --reps 3
} 2>&1 | tee "$OUT/distmap.txt"
el bench
