#!/usr/bin/env bash
# s46 call 8: HEAD (an empty list gets an array on the device): the voxel edit CLI tests with
# the CUDA same-set case (now emptying the set), memcheck of that sequence, PLYs CPU vs CUDA.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/prev && tar -xf .dev/c46/prev.tar -C /tmp/prev && sed -i "s/ -Werror//" /tmp/prev/CMakeLists.txt
(bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || echo FAIL new) &
(bash scripts/device_build.sh .dev/debs /tmp/prev /tmp/bp -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_prev.log" 2>&1 || echo FAIL prev) &
wait
cd /tmp/bn && timeout 200 ctest -j 8 -R 'cli.voxel_edit|voxel_edit|faults_cuda' -LE slow --output-on-failure > $OUT/ctest.txt 2>&1; grep "tests passed\|Failed\|\*\*\*" $OUT/ctest.txt | head
cd - > /dev/null
python3 -c '
import sys
head, body = open(sys.argv[1]).read().split("end_header\n")
print(head + "end_header")
for line in body.split("\n")[:-1]:
    v = line.split()
    print(float(v[0]) + 1.5, *v[1:])' data/pointclouds/kitten.ply > /tmp/apart.ply
SEQ="--grid 64 /tmp/apart.ply --intersect data/pointclouds/kitten.ply --intersect data/pointclouds/bunny.ply --add data/pointclouds/bunny.ply --intersect data/pointclouds/kitten.ply"
echo "== HEAD~1:" > $OUT/empty_cuda.txt
/tmp/bp/geohash-match voxel edit --backend cuda $SEQ -o /tmp/p.ply >> $OUT/empty_cuda.txt 2>&1; echo "rc $?" >> $OUT/empty_cuda.txt
echo "== HEAD:" >> $OUT/empty_cuda.txt
/tmp/bn/geohash-match voxel edit --backend cuda $SEQ -o /tmp/g.ply >> $OUT/empty_cuda.txt 2>&1; echo "rc $?" >> $OUT/empty_cuda.txt
cat $OUT/empty_cuda.txt
/tmp/bn/geohash-match voxel edit --backend cpu $SEQ -o /tmp/c.ply > /dev/null && cmp /tmp/c.ply /tmp/g.ply && echo "empty-set sequence: CPU and CUDA PLYs identical" | tee -a $OUT/empty_cuda.txt
timeout 120 compute-sanitizer --tool memcheck --leak-check no /tmp/bn/geohash-match voxel edit --backend cuda $SEQ -o /tmp/m.ply > $OUT/memcheck.txt 2>&1; tail -1 $OUT/memcheck.txt
