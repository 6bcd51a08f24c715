#!/usr/bin/env bash
# s46 call 7: the final tree (HEAD: + the CPU's rows neighbours, the review, the edit fault
# walk) against old (9e9675f): the CUDA edit three rounds in turns, PLYs of old, new and the
# CPU on three sequences, the CUDA ctests with faults_cuda (the new voxel edit walk), memcheck.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old && tar -xf .dev/c46/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
(bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || echo FAIL new) &
(bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_old.log" 2>&1 || echo FAIL old) &
wait
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
(cd /tmp/bn && CK_RUN_CASE=cuda timeout 300 ./check_faults_cuda > $OUT/faults.txt 2>&1; echo "rc $?" >> $OUT/faults.txt) &
FPID=$!
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f, edit %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for seq in "--grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply" \
           "--grid 128 /tmp/A.ply --intersect /tmp/B.ply --add data/pointclouds/kitten.ply --subtract /tmp/B.ply" \
           "--grid 200 data/pointclouds/bunny.ply --add /tmp/B.ply --intersect /tmp/A.ply --subtract data/pointclouds/bunny.ply --add /tmp/A.ply"; do
  /tmp/bo/geohash-match voxel edit --backend cuda $seq -o /tmp/s_old.ply > /dev/null
  /tmp/bn/geohash-match voxel edit --backend cuda $seq -o /tmp/s_new.ply > /dev/null
  /tmp/bn/geohash-match voxel edit --backend cpu $seq -o /tmp/s_cpu.ply > /dev/null
  cmp /tmp/s_old.ply /tmp/s_new.ply && cmp /tmp/s_cpu.ply /tmp/s_new.ply && echo "same PLYs (old CUDA, new CUDA, new CPU): $seq" | tee -a $OUT/edit_ab.txt
done
wait $FPID
grep -E "voxel|Checks|rc " $OUT/faults.txt | head -8
for r in 1 2 3; do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for v in $order; do
    b=/tmp/bn/geohash-match; [ $v = old ] && b=/tmp/bo/geohash-match
    $b $EDIT -o /tmp/$v.ply > /tmp/${v}.json
    echo "round $r $v: $(steps /tmp/${v}.json)"
  done
done | tee -a $OUT/edit_ab.txt | cut -c1-200
cd /tmp/bn && timeout 200 ctest -j 8 -R 'voxel|edit|normals|dynmap.cuda' -LE slow > $OUT/ctest.txt 2>&1; grep "tests passed\|Failed\|\*\*\*" $OUT/ctest.txt | head
cd - > /dev/null
timeout 120 compute-sanitizer --tool memcheck --leak-check no /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 -o /tmp/m.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply > $OUT/memcheck.txt 2>&1; tail -1 $OUT/memcheck.txt
