#!/usr/bin/env bash
# final tree: build, CUDA ctests, compute-sanitizer memcheck of every suite with CUDA cases (in parallel), bench match x2
set -u
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/nb > $OUT/build.log 2>&1; el "build rc $?"
cd /tmp/nb
for t in check_geohash_cuda check_hash_cuda check_voxel_cuda check_faults_cuda check_dynmap check_match check_dist_map check_context; do
  ( GHM_TEST_SMALL=1 CK_FORK=no timeout 170 compute-sanitizer --tool memcheck --leak-check full ./$t > $OUT/memcheck_$t.log 2>&1; echo "rc $?" >> $OUT/memcheck_$t.log ) &
done
timeout 170 ctest -j4 -R 'cuda|match|geohash|context|dynmap|dist_map|voxel' -LE slow -E 'video' --timeout 160 > $OUT/ctest.log 2>&1; el "ctest rc $?"
grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.log | head -20
wait; el memcheck
for t in check_geohash_cuda check_hash_cuda check_voxel_cuda check_faults_cuda check_dynmap check_match check_dist_map check_context; do
  echo "$t: $(grep -h 'ERROR SUMMARY' $OUT/memcheck_$t.log | tail -1) $(grep -h 'Checks' $OUT/memcheck_$t.log | tail -1) $(tail -1 $OUT/memcheck_$t.log)"
done
cd -
for r in 1 2; do /tmp/nb/geohash-match bench match --backend cuda --threads 16 --reps 30 --no-baseline 2>&1 | grep total | sed -E 's/  +/ /g' | cut -c1-130; done
el all
