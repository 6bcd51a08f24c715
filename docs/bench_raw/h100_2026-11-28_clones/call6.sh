#!/bin/bash
# s37 call 6 (nvidia-h100-x1): the review's mends (uncommitted tree on fed63b3+): a CUDA clone on
# the same device builds from the source's arrays in place (no host round trip); the default
# thread count from the library. CUDA suites that clone, memcheck of check_tables_cuda, the
# video mode's CUDA workers' lines against one worker (40 Megamind frames as YUV4MPEG2).
set -u
exec > >(tee $OUT/log.txt) 2>&1
nvidia-smi -L; nproc
sed -i "s/ -Werror//" CMakeLists.txt
bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF > $OUT/build_new.txt 2>&1; echo "build rc $?"
export GHM_TEST_DATA=$PWD/data
ctest --test-dir /tmp/bn -R 'tables_cuda|match|geohash_cuda|context|cli\.(auto|cuda|multi|search|pair)' -j8 --output-on-failure > $OUT/ctest.txt 2>&1; echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*" $OUT/ctest.txt | head
R=data/video/megamind_frame050.png; V=.dev/s37/mega40.y4m
strip() { python3 -c "
import json,sys
for l in open(sys.argv[1]):
    d=json.loads(l); d.pop('timings_ms',None); print(json.dumps(d,sort_keys=True))" $1; }
for j in 1 4 8; do /tmp/bn/geohash-match --backend cuda --json --jobs $j $R $V > /tmp/v$j.json 2>/tmp/err; echo "cuda jobs $j rc $? lines $(wc -l < /tmp/v$j.json) found $(grep -c '"found":true' /tmp/v$j.json)"; strip /tmp/v$j.json > /tmp/s$j.txt; done
cmp -s /tmp/s1.txt /tmp/s4.txt && cmp -s /tmp/s1.txt /tmp/s8.txt && echo "1, 4, 8 CUDA workers: the same lines" || echo "CUDA workers DIFFER"
mkdir -p /tmp/q && for i in $(seq -w 1 40); do cp data/pairs/dev_00_query.png /tmp/q/q$i.png; done
/tmp/bn/geohash-match --backend cuda --jobs 1 data/images/butterfly.jpg /tmp/q > /tmp/c1.txt; /tmp/bn/geohash-match --backend cuda --jobs 4 data/images/butterfly.jpg /tmp/q > /tmp/c4.txt; cmp -s /tmp/c1.txt /tmp/c4.txt && echo "40 image queries, 1 and 4 CUDA workers: the same lines" || echo "image queries DIFFER"
cd /tmp/bn
GHM_TEST_SMALL=1 CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --leak-check full ./check_tables_cuda > $OUT/memcheck_tables.log 2>&1; echo "memcheck tables rc $?"; tail -2 $OUT/memcheck_tables.log
CK_FORK=no CK_RUN_CASE=cuda timeout 200 compute-sanitizer --tool memcheck --leak-check full ./check_match > $OUT/memcheck_match.log 2>&1; echo "memcheck match rc $?"; tail -2 $OUT/memcheck_match.log
cd $OUT && tar -czf logs.tgz build_new.txt ctest.txt memcheck_*.log && rm -f build_new.txt ctest.txt memcheck_*.log
