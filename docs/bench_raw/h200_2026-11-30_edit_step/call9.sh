#!/usr/bin/env bash
# s58 call 9 (one H200): HEAD after the review's last mends (the rows launchers' shared checks,
# the voxel suites' helpers): ctest voxel_cuda + the CUDA edit test, an edit's PLY / counts
# against call 8's old (93e2865), memcheck of the far edit (rows kernel).
set -u
export PATH=/usr/local/cuda/bin:$PATH
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
sed -i "s/ -Werror//" CMakeLists.txt
mkdir -p /tmp/old /tmp/o
tar -xf .dev/c58/old.tar -C /tmp/old && sed -i "s/ -Werror//" /tmp/old/CMakeLists.txt
B="bash scripts/device_build.sh .dev/debs"
A="-DCMAKE_CUDA_ARCHITECTURES=90 -DGEOHASH_MPI=OFF"
($B /tmp/old /tmp/bo $A -DGEOHASH_TESTS=OFF >/tmp/build_old.log 2>&1 || echo FAIL old) &
$B . /tmp/bn $A >/tmp/build_new.log 2>&1 || { echo FAIL new; tail -20 /tmp/build_new.log; }
wait; el builds
D=data/pointclouds
for S in 60000 60000.15; do python3 -c 'import sys
head, body = open(sys.argv[1]).read().split("end_header\n")
print(head + "end_header")
for line in body.split("\n")[:-1]:
    v = line.split()
    print(float(v[0]) + float(sys.argv[2]), *v[1:])' $D/kitten.ply $S > /tmp/far_$S.ply; done
for v in o n; do
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 200 $D/kitten.ply --subtract $D/bunny.ply --add $D/kitten.ply --intersect $D/bunny.ply -o /tmp/j_$v.ply > /tmp/j_$v.json 2>&1
  /tmp/b$v/geohash-match voxel edit --json --backend cuda --grid 48 /tmp/far_60000.ply --subtract /tmp/far_60000.15.ply --add /tmp/far_60000.15.ply -o /tmp/k_$v.ply > /tmp/k_$v.json 2>&1
done
for f in j k; do cmp /tmp/${f}_o.ply /tmp/${f}_n.ply && echo "same PLY old / new: $f"; done | tee /tmp/o/ab.txt
cd /tmp/bn
timeout 200 ctest -R 'voxel_cuda|voxel_edit_cuda' --timeout 190 > /tmp/o/ctest.txt 2>&1; el ctest rc $?
grep -E "tests passed|Failed|\*\*\*Failed|Timeout" /tmp/o/ctest.txt | head
cd - > /dev/null
timeout 60 compute-sanitizer --tool memcheck /tmp/bn/geohash-match voxel edit --backend cuda --grid 48 /tmp/far_60000.ply --subtract /tmp/far_60000.15.ply --add /tmp/far_60000.15.ply -o /tmp/m.ply > /tmp/o/mc_far.txt 2>&1
el "memcheck far rc $? $(grep 'ERROR SUMMARY' /tmp/o/mc_far.txt | tail -1)"
tar czf $OUT/call9.tgz -C /tmp o
el done
