#!/usr/bin/env bash
# s47 call 4: call 3 with the thread's loads, atomics and tests in separate passes (call 3's
# waited for each atomic); n2 = new, o2 = old, with two blocks per SM from 200 k voxels.
set -u
export PATH=/usr/local/cuda/bin:$PATH
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/pt /tmp/po /tmp/n2 /tmp/o2 && tar -xf .dev/c47/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/pt && python3 .dev/c47/prof.py /tmp/pt
tar -xf .dev/c47/old.tar -C /tmp/po && sed -i "s/ -Werror//" /tmp/po/CMakeLists.txt && python3 .dev/c47/prof.py /tmp/po
tar --exclude=./.dev --exclude=./data --exclude="./build*" -cf - . | tar -x -C /tmp/n2 && sed -i "s/total < 1000000 ? 1 : 2/total < 200000 ? 1 : 2/" /tmp/n2/kernels/vision/voxel/labels.cu && grep -c "total < 200000" /tmp/n2/kernels/vision/voxel/labels.cu
tar -xf .dev/c47/old.tar -C /tmp/o2 && sed -i "s/ -Werror//" /tmp/o2/CMakeLists.txt && sed -i "s/total < 1000000 ? 1 : 2/total < 200000 ? 1 : 2/" /tmp/o2/kernels/vision/voxel/labels.cu && grep -c "total < 200000" /tmp/o2/kernels/vision/voxel/labels.cu
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B . /tmp/bn $A >/tmp/build.log 2>&1 || echo FAIL new) &
($B /tmp/old /tmp/bo $A >/tmp/build_old.log 2>&1 || echo FAIL old) &
($B /tmp/pt /tmp/bp $A >/tmp/build_prof.log 2>&1 || echo FAIL prof) &
($B /tmp/po /tmp/bq $A >/tmp/build_prof_old.log 2>&1 || echo FAIL prof old) &
($B /tmp/n2 /tmp/b2 $A >/tmp/build_n2.log 2>&1 || echo FAIL n2) &
($B /tmp/o2 /tmp/bo2 $A >/tmp/build_o2.log 2>&1 || echo FAIL o2) &
wait
tail -n 3 /tmp/build*.log > $OUT/builds.txt
python3 scripts/voxel_pair.py data/pointclouds/bunny_mesh.off --points 160000 /tmp/A.ply /tmp/B.ply > /dev/null 2>&1
steps() { python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
print(" | ".join("%s %.1f (classify %.1f, edit %.1f)" % (s["op"], s["timings_ms"]["step"], s["timings_ms"]["classify"], s["timings_ms"]["edit"]) for s in j["steps"]))' "$1"; }
bin() { case $1 in old) echo /tmp/bo/geohash-match;; new) echo /tmp/bn/geohash-match;; n2) echo /tmp/b2/geohash-match;; o2) echo /tmp/bo2/geohash-match;; esac; }
EDIT="voxel edit --backend cuda --json --grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply"
for seq in "--grid 256 /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply" \
           "--grid 128 /tmp/A.ply --intersect /tmp/B.ply --add data/pointclouds/kitten.ply --subtract /tmp/B.ply" \
           "--grid 200 data/pointclouds/bunny.ply --add /tmp/B.ply --intersect /tmp/A.ply --subtract data/pointclouds/bunny.ply --add /tmp/A.ply" \
           "--grid 64 data/pointclouds/kitten.ply --subtract data/pointclouds/bunny.ply --add /tmp/A.ply"; do
  for v in old new n2 o2; do $(bin $v) voxel edit --backend cuda $seq -o /tmp/s_$v.ply > /dev/null; done
  /tmp/bn/geohash-match voxel edit --backend cpu $seq -o /tmp/s_cpu.ply > /dev/null
  cmp /tmp/s_old.ply /tmp/s_new.ply && cmp /tmp/s_old.ply /tmp/s_n2.ply && cmp /tmp/s_old.ply /tmp/s_o2.ply && cmp /tmp/s_cpu.ply /tmp/s_new.ply && echo "same PLYs (old, new, n2, o2 CUDA, new CPU): $seq" | tee -a $OUT/edit_ab.txt
done
# the voxel mode's PLY and labels, old and new
for v in old new n2; do $(bin $v) voxel --backend cuda --grid 256 /tmp/A.ply /tmp/B.ply -o /tmp/vm_$v.ply --json > /tmp/vm_$v.json; done
cmp /tmp/vm_old.ply /tmp/vm_new.ply && cmp /tmp/vm_old.ply /tmp/vm_n2.ply && echo "voxel mode PLY same" | tee -a $OUT/edit_ab.txt
for r in 1 2 3; do
  order="old new n2 o2"; [ $((r % 2)) = 0 ] && order="o2 n2 new old"
  for v in $order; do
    $(bin $v) $EDIT -o /tmp/$v.ply > /tmp/${v}.json
    echo "round $r $v: $(steps /tmp/${v}.json)"
  done
done | tee -a $OUT/edit_ab.txt | cut -c1-200
for r in 1 2; do for b in bq bp; do echo "== $b (bq: old, bp: new)"; /tmp/$b/geohash-match $EDIT -o /tmp/p.ply 2>&1 >/dev/null | grep "PROF alone"; done; done > $OUT/prof.txt
for r in 1 2; do
  for v in old new n2 o2; do
    echo "== round $r $v"; $(bin $v) bench voxel --backend cuda --grid 256 --reps 10 --points 160000,1280000
  done
done > $OUT/bench_voxel_ab.txt 2>&1
cd /tmp/bn && timeout 200 ctest -j 8 -R 'voxel|edit|normals' -LE slow > $OUT/ctest.txt 2>&1; grep "tests passed\|Failed\|\*\*\*" $OUT/ctest.txt | head
cd - > /dev/null
timeout 120 compute-sanitizer --tool memcheck --leak-check no /tmp/bn/geohash-match voxel edit --backend cuda --grid 128 -o /tmp/m.ply /tmp/A.ply --subtract /tmp/B.ply --add /tmp/B.ply --intersect data/pointclouds/bunny.ply > $OUT/memcheck.txt 2>&1; tail -1 $OUT/memcheck.txt
timeout 120 compute-sanitizer --tool racecheck /tmp/bn/geohash-match voxel --backend cuda --grid 128 /tmp/A.ply /tmp/B.ply > $OUT/racecheck.txt 2>&1; tail -1 $OUT/racecheck.txt; rm $OUT/racecheck.txt
cuobjdump -sass /tmp/bn/CMakeFiles/geohash_objects.dir/kernels/vision/voxel/labels.cu.o 2>/dev/null | awk '/Function : .*fill_kernel/{p=1} /Function : .*classify/{p=0} p' | grep -n "ATOMG\|BAR\|SHFL\|LDG" | awk '{print $1, $2, $3, $4}' > $OUT/sass_fill.txt
