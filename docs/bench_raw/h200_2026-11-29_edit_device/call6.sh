#!/usr/bin/env bash
# s46 call 6: call 5 again on HEAD (the neighbours' choice once a voxel), without the prof and
# CPU rounds; bench voxel three rounds.
# the CUDA voxel edit five rounds in turns; PLYs; a timing build of new
# (prof.py); the CUDA ctests; memcheck of an edit.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/pt && tar -xf .dev/c46/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/pt && python3 .dev/c46/prof.py /tmp/pt
(bash scripts/device_build.sh .dev/debs . /tmp/bn -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build.log" 2>&1 || echo FAIL new) &
(bash scripts/device_build.sh .dev/debs /tmp/old /tmp/bo -DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF >"$OUT/build_old.log" 2>&1 || echo FAIL old) &
wait
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f, edit %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for r in 1 2 3 4 5; do
  order="old new"; [ $((r % 2)) = 0 ] && order="new old"
  for v in $order; do
    b=/tmp/bn/geohash-match; [ $v = old ] && b=/tmp/bo/geohash-match
    $b $EDIT -o /tmp/$v.ply > /tmp/${v}.json
    echo "round $r $v: $(steps /tmp/${v}.json)"
  done
done | tee $OUT/edit_ab.txt
cmp /tmp/old.ply /tmp/new.ply && echo "PLYs identical" | tee -a $OUT/edit_ab.txt
/tmp/bn/geohash-match ${EDIT/cuda/cpu} -o /tmp/cpu.ply > /dev/null && cmp /tmp/cpu.ply /tmp/new.ply && echo "CPU PLY identical" | tee -a $OUT/edit_ab.txt
for r in; do /tmp/bp/geohash-match $EDIT -o /tmp/p.ply 2>&1 >/dev/null | grep PROF | grep -v "PROF gc"; echo; done > $OUT/prof.txt
# more sequences: old and new CUDA PLYs, and the CPU's, identical
for seq in "--grid 128 /tmp/A.ply --intersect /tmp/B.ply --add data/pointclouds/kitten.ply --subtract /tmp/B.ply" \
           "--grid 200 data/pointclouds/bunny.ply --add /tmp/B.ply --intersect /tmp/A.ply --subtract data/pointclouds/bunny.ply --add /tmp/A.ply"; do
  /tmp/bo/geohash-match voxel edit --backend cuda $seq -o /tmp/s_old.ply > /dev/null
  /tmp/bn/geohash-match voxel edit --backend cuda $seq -o /tmp/s_new.ply > /dev/null
  /tmp/bn/geohash-match voxel edit --backend cpu $seq -o /tmp/s_cpu.ply > /dev/null
  cmp /tmp/s_old.ply /tmp/s_new.ply && cmp /tmp/s_cpu.ply /tmp/s_new.ply && echo "same PLYs: $seq" | tee -a $OUT/edit_ab.txt
done
for r in 1 2 3; do
  for v in old new; do
    b=/tmp/bn/geohash-match; [ $v = old ] && b=/tmp/bo/geohash-match
    echo "== round $r $v"; $b bench voxel --backend cuda --grid 256 --reps 10 --points 160000,1280000
  done
done > $OUT/bench_voxel_ab.txt 2>&1
for v in old new; do
  b=/tmp/bn/geohash-match; [ $v = old ] && b=/tmp/bo/geohash-match
  $b voxel --backend cuda --grid 256 --json /tmp/A.ply /tmp/B.ply -o /tmp/v$v.ply > /tmp/v$v.json
done
cmp /tmp/vold.ply /tmp/vnew.ply && echo "voxel mode PLYs identical" | tee -a $OUT/edit_ab.txt
cd /tmp/bn && timeout 240 ctest -j 8 -R 'voxel|edit|normals|dynmap.cuda' -LE slow > $OUT/ctest.txt 2>&1; grep "tests passed\|Failed\|\*\*\*" $OUT/ctest.txt | head
cd - > /dev/null
timeout 200 compute-sanitizer --tool memcheck --leak-check no /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 -o /tmp/m.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply > $OUT/memcheck.txt 2>&1; tail -2 $OUT/memcheck.txt
timeout 200 compute-sanitizer --tool racecheck /tmp/bn/geohash-match voxel --backend cuda --grid 128 /tmp/A.ply /tmp/B.ply -o /tmp/r.ply > $OUT/racecheck.txt 2>&1; tail -2 $OUT/racecheck.txt
